"""Several models per command, named with ``--model NAME=SPEC``: the parsing rule, duplicate
names (exit 2), single-model commands refusing a second ``--model``, and every model command
scoring each model of the real embedded model given twice under two names (slow)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from synthprobe.backends.refs import ModelRef, NameRegistry, model_refs, named_model, parse_model_ref
from synthprobe.cli import main
from synthprobe.commandline import add_model_args
from synthprobe.errors import InputError

EMBEDDED = "smollm2-135m-instruct"


@pytest.mark.parametrize(
    "text, ref",
    [
        ("fp32=smollm2-135m-instruct", ModelRef("smollm2-135m-instruct", "fp32")),
        ("base.v2=./ckpt/final", ModelRef("./ckpt/final", "base.v2")),
        ("a=openai:http://127.0.0.1:8000/v1?key=x", ModelRef("openai:http://127.0.0.1:8000/v1?key=x", "a")),
        # the part before the first '=' is not a name: one spec, as written
        ("openai:http://127.0.0.1:8000/v1?key=x", ModelRef("openai:http://127.0.0.1:8000/v1?key=x")),
        ("C:\\models\\a=b", ModelRef("C:\\models\\a=b")),
        ("org/model=v2", ModelRef("org/model=v2")),
        ("./final=1", ModelRef("./final=1")),
        ("HuggingFaceTB/SmolLM2-135M", ModelRef("HuggingFaceTB/SmolLM2-135M")),
    ],
)
def test_name_spec_rule(text, ref):
    assert parse_model_ref(text) == ref


def test_a_path_that_looks_named_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "final=1").mkdir()
    with pytest.raises(InputError, match=r"both NAME=SPEC and an existing path.*\./final=1"):
        parse_model_ref("final=1")
    with pytest.raises(InputError, match="model after '='"):
        parse_model_ref("fp32=")


def _args(*models: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    add_model_args(p, multiple=True)
    return p.parse_args([x for m in models for x in ("--model", m)])


def test_duplicate_names_are_refused():
    assert [r.name for r in model_refs(_args("a=x/y", "b=x/y").models)] == ["a", "b"]
    assert model_refs(_args().models) == [ModelRef(EMBEDDED)]
    for models in (("a=x/y", "a=x/z"), ("x/y", "x/y"), ("gpt2", "gpt2=p/q")):
        with pytest.raises(InputError, match="twice|both a name"):
            model_refs(_args(*models).models)
    names = NameRegistry()
    assert names.claim(ModelRef("./a/final"), "final") == "final"
    with pytest.raises(InputError, match="both called 'final'"):
        names.claim(ModelRef("./b/final"), "final")
    assert named_model({"name": "final", "params": 1}, ModelRef("x", "tuned")) == {
        "name": "tuned",
        "engine_name": "final",
        "params": 1,
    }


def test_help_points_to_the_rule_and_the_docs_state_it(capsys):
    from pathlib import Path

    with pytest.raises(SystemExit):
        main(["score", "gpt3", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "[NAME=]SPEC" in text and "docs/command-line.md#models" in text
    docs = Path(__file__).resolve().parents[2] / "docs" / "command-line.md"
    rule = " ".join(docs.read_text(encoding="utf-8").split("## Models", 1)[1].split("## ", 1)[0].split())
    assert "`openai:http://host/v1?x=y`" in rule and "`./a=b`" in rule and "error (exit 2)" in rule


@pytest.mark.parametrize("command", [["probe", "novel-words"], ["probe", "grammar"]])
def test_one_model_commands_refuse_a_second(command, tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main([*command, "--model", EMBEDDED, "--model", EMBEDDED, "--out", str(tmp_path / "o")])
    assert exc.value.code == 2
    assert "--model given twice" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_same_name_twice_exits_2_before_loading(tmp_path, capsys):
    out = tmp_path / "g.json"
    rc = main(
        [
            "score",
            "gpt3",
            "--model",
            f"a={EMBEDDED}",
            "--model",
            f"a={EMBEDDED}",
            "--tasks",
            "2D+",
            "--limit",
            "2",
            "--output",
            str(out),
            "--no-progress",
        ]
    )
    assert rc == 2 and not out.exists()
    assert "the name 'a' is given twice" in capsys.readouterr().err


# -- every model command, the real embedded model twice under two names --------------------------

TWO = ["--model", f"one={EMBEDDED}", "--model", f"two={EMBEDDED}", "--threads", "1", "--no-progress"]


def _names(path: Path) -> list[str]:
    return [e["model"]["name"] for e in json.loads(path.read_text())["models"]]


@pytest.mark.slow
def test_score_gpt3_scores_each_model(tmp_path):
    out = tmp_path / "g.json"
    assert (
        main(
            [
                "score",
                "gpt3",
                *TWO,
                "--tasks",
                "2D+,CL",
                "--shots",
                "0",
                "--limit",
                "4",
                "--output",
                str(out),
                "--no-cache",
            ]
        )
        == 0
    )
    doc = json.loads(out.read_text())
    assert _names(out) == ["one", "two"]
    rows = [e["results"]["gpt3"]["rows"] for e in doc["models"]]
    assert [r["accuracy"] for r in rows[0]] == [r["accuracy"] for r in rows[1]]
    pair = doc["comparisons"]["gpt3"]["pairs"][0]
    assert pair["n"] == 8 and pair["delta"] == 0 and set(pair["groups"]) == {"2D+ zero", "CL zero"}


@pytest.mark.slow
def test_score_deeparithmark_scores_each_model(tmp_path):
    out = tmp_path / "d.json"
    assert main(["score", "deeparithmark", *TWO, "--limit", "6", "--output", str(out), "--no-cache"]) == 0
    doc = json.loads(out.read_text())
    assert _names(out) == ["one", "two"]
    assert doc["comparisons"]["deeparithmark"]["pairs"][0]["n"] == 6
    assert "predictions" not in doc["models"][0]["results"]["deeparithmark"]


@pytest.mark.slow
def test_probe_steps_scores_each_model(tmp_path):
    out = tmp_path / "s.json"
    assert main(["probe", "steps", *TWO, "--limit", "1", "--output", str(out), "--no-cache"]) == 0
    doc = json.loads(out.read_text())
    assert _names(out) == ["one", "two"]
    a, b = (e["results"]["steps"]["summary"] for e in doc["models"])
    assert a["probes"] == b["probes"] > 0


@pytest.mark.slow
def test_probe_number_format_scores_each_model(tmp_path):
    out = tmp_path / "nf.json"
    assert (
        main(
            [
                "probe",
                "number-format",
                *TWO,
                "--n",
                "4",
                "--tasks",
                "4D+",
                "--gpt3-n",
                "3",
                "--output",
                str(out),
                "--no-cache",
            ]
        )
        == 0
    )
    assert _names(out) == ["one", "two"]


def test_sweep_takes_named_models_as_grid_labels(tmp_path, capsys):
    from synthprobe.sweep.grid import make_grid

    grid = make_grid(
        grid_file=None, models=[{"spec": "x/y", "label": "base"}, "x/z"], seeds=None, tasks=None, limit=None
    )
    assert [(m.label, m.spec) for m in grid.models] == [("base", "x/y"), ("x/z", "x/z")]
    out = tmp_path / "s.json"
    rc = main(["sweep", "--model", "a=x/y", "--model", "a=x/z", "--serial", "--output", str(out)])
    assert rc == 2 and not out.exists()
    assert "share the label 'a'" in capsys.readouterr().err


def test_two_unnamed_checkpoints_with_one_folder_name_are_refused_before_anything_loads(tmp_path, capsys):
    # two training runs' output folders, both called "final": the second used to be refused only
    # after the first had been loaded and scored
    for run in ("run-a", "run-b"):
        (tmp_path / run / "final").mkdir(parents=True)
        (tmp_path / run / "final" / "config.json").write_text("{}")  # a checkpoint folder
    out = tmp_path / "r.json"
    a, b = str(tmp_path / "run-a" / "final"), str(tmp_path / "run-b" / "final")
    assert main(["score", "deeparithmark", "--model", a, "--model", b, "--limit", "2", "--output", str(out)]) == 2
    captured = capsys.readouterr()
    assert "would both be shown as 'final'" in captured.err and "--model a=" in captured.err
    assert "plan:" not in captured.out + captured.err and not out.exists()
    with pytest.raises(InputError, match="both be shown as 'final'"):
        model_refs(_args("final=gpt2", a).models)
    assert [r.name for r in model_refs(_args(f"base={a}", f"tuned={b}").models)] == ["base", "tuned"]
