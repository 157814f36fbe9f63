"""The CLI fails loudly when a command module cannot be imported, and every exit status it
uses is defined in :mod:`synthprobe.errors`."""

from __future__ import annotations

import argparse

import pytest

from synthprobe import cli, errors


def test_a_missing_command_module_is_named_not_dropped(monkeypatch, capsys):
    monkeypatch.setattr(cli, "_ROOMS", {**cli._ROOMS, "synthprobe.no_such_cli": ("build",)})
    with pytest.raises(cli.MissingCommands, match=r"synthprobe\.no_such_cli"):
        cli.build_parser()
    for argv in (["build", "--help"], ["--help"], ["build", "deeparithmark", "--n", "10"]):
        assert cli.main(argv) == errors.EXIT_FAILED
        err = capsys.readouterr().err
        assert "synthprobe: error: cannot import the command module synthprobe.no_such_cli" in err
    # a verb the module does not add to runs without it
    assert cli.main(["cache", "info"]) == 0


def test_a_command_module_whose_own_import_breaks_is_named(monkeypatch, tmp_path, capsys):
    (tmp_path / "broken_room_cli.py").write_text("import a_package_that_is_not_installed\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(cli, "_ROOMS", {"broken_room_cli": ("score",), **cli._ROOMS})
    assert cli.main(["score", "--help"]) == errors.EXIT_FAILED
    err = capsys.readouterr().err
    assert "broken_room_cli" in err and "a_package_that_is_not_installed" in err


def test_every_listed_command_module_registers():
    parser, verbs = cli._build()
    assert {"deeparithmark", "gpt3"} <= set(verbs["build"].choices)
    assert {"deeparithmark", "gpt3"} <= set(verbs["score"].choices)


def test_a_command_line_registers_only_its_verb_and_gets_every_option_of_it():
    """``_ROOMS`` names every verb each module adds to: a verb's command line, which registers only
    the modules listed for it, gets the same sub-commands and options as the whole tree has."""

    def options(verb_parsers):
        return {
            what: sorted(o for a in p._actions for o in a.option_strings) for what, p in verb_parsers.choices.items()
        }

    _, every = cli._build()
    for verb in cli.VERBS:
        _, only = cli._build(verb)
        assert options(only[verb]) == options(every[verb]), verb
        assert not any(
            only[other].choices
            for other in cli.VERBS
            if other != verb and not any(verb in vs and other in vs for vs in cli._ROOMS.values())
        ), verb


def test_exit_statuses_are_defined_once():
    assert (errors.EXIT_FAILED, errors.EXIT_BAD_INPUT, errors.EXIT_INTERRUPTED, errors.EXIT_TERMINATED) == (
        1,
        2,
        130,
        143,
    )


def test_command_failed_exits_with_one_line(capsys):
    def fails(args):
        raise errors.CommandFailed("model x would not load")

    assert errors.run_command_line(fails, argparse.Namespace()) == errors.EXIT_FAILED
    assert capsys.readouterr().err == "synthprobe: error: model x would not load\n"
