"""One scoring shape: every benchmark's run settings are :class:`RunSettings` plus its own fields.

The four scoring configs (Deep Arithmark's ``ScoreConfig``, its step probe's ``StepsConfig``, its
twins' ``TwinsConfig``, GPT-3's ``EvalConfig``) subclass it and restate a shared field only to
change its default; the shared check refuses an out-of-range value naming the flag; the command
line's ``run_settings`` reads the same fields from any scoring command's arguments.
"""

from __future__ import annotations

import dataclasses

import pytest

from synthprobe.benchmarks.deeparithmark.scoring.score import ScoreConfig
from synthprobe.benchmarks.deeparithmark.step_probe.score import StepsConfig
from synthprobe.benchmarks.deeparithmark.twins.score import TwinsConfig
from synthprobe.benchmarks.gpt3.registry import resolve_tasks
from synthprobe.benchmarks.gpt3.scoring.score import EvalConfig
from synthprobe.errors import InputError
from synthprobe.scoring.settings import RunSettings

CONFIGS = (ScoreConfig, StepsConfig, TwinsConfig, EvalConfig)
SHARED = {f.name: f for f in dataclasses.fields(RunSettings)}


def _default(f: dataclasses.Field):
    return f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: c.__name__)
def test_each_benchmark_config_is_the_shared_settings_plus_its_own(config):
    assert issubclass(config, RunSettings)
    for f in dataclasses.fields(config):
        if f.name in SHARED:  # restated only to change the default
            restated = f.name in config.__dict__.get("__annotations__", {})
            assert not restated or _default(f) != _default(SHARED[f.name]), (config.__name__, f.name)


@pytest.mark.parametrize(
    ("settings", "flag", "least"),
    [
        (RunSettings(batch_size=0), "--batch-size", 1),
        (RunSettings(limit=0), "--limit", 1),
        (RunSettings(max_context=1), "--max-context", 2),
        (RunSettings(max_new_tokens=0), "--max-new-tokens", 1),
        (RunSettings(batch_size=True), "--batch-size", 1),
        (StepsConfig(limit=-3), "--limit", 1),
    ],
)
def test_check_run_refuses_out_of_range_naming_the_flag(settings, flag, least):
    with pytest.raises(InputError) as err:
        settings.check_run()
    assert err.value.field == flag
    assert f"expected an integer >= {least}" in str(err.value)


def test_gpt3_raises_the_least_context_and_validate_checks_the_shared_settings():
    tasks = resolve_tasks("2D+")
    with pytest.raises(InputError, match="expected an integer >= 8, got 7") as err:
        EvalConfig(tasks=tasks, max_context=7).validate()
    assert err.value.field == "--max-context"
    with pytest.raises(InputError) as err:
        EvalConfig(tasks=tasks, batch_size=0).validate()
    assert err.value.field == "--batch-size"
    # the defaults each benchmark chose are kept
    assert (EvalConfig(tasks=tasks).batch_size, EvalConfig(tasks=tasks).max_context) == (16, 2048)
    assert (StepsConfig().batch_size, StepsConfig().max_new_tokens) == (16, 16)
    assert (ScoreConfig().batch_size, ScoreConfig().max_context, ScoreConfig().save_items) == (32, 1024, False)


def test_every_scoring_command_reads_the_shared_settings_the_same_way():
    from synthprobe.cli import build_parser
    from synthprobe.commandline import run_settings

    common = ["--limit", "3", "--batch-size", "5", "--no-cache", "--max-context", "512"]
    for argv in (
        ["score", "deeparithmark", *common, "--max-new-tokens", "9"],
        ["score", "gpt3", *common, "--max-new-tokens", "9"],
        ["probe", "steps", *common, "--max-new-tokens", "9"],
        ["probe", "twins", "some/manifest", *common, "--max-new-tokens", "9"],
    ):
        args = build_parser().parse_args(argv)
        shared = run_settings(args)
        assert set(shared) == set(SHARED) - {"save_items"}, argv
        run = RunSettings(**shared)
        assert (run.limit, run.batch_size, run.cache, run.max_context, run.max_new_tokens) == (3, 5, False, 512, 9)
        assert not run.chat.enabled
