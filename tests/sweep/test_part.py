"""What the sweep asks of a benchmark (synthprobe.sweep.part): the built-in benchmarks' own sweep
parts found through the registry, grid tasks NAME or NAME:SUB, each benchmark's release seed, a
broken sweep part refused by name, and the import-linter contracts that keep the sweep's
generic modules from importing a benchmark (and one benchmark's sweep part from another's)."""

from __future__ import annotations

import pytest

from synthprobe import registry
from synthprobe.benchmarks.deeparithmark.composition import RELEASE_SEED
from synthprobe.errors import InputError
from synthprobe.sweep.grid import RELEASE, Seed, canonical_task, make_grid, task_seed
from synthprobe.sweep.part import REQUIRED, part_for, sweep_part
from tests.test_architecture import _lint_copy_with


def test_the_built_in_benchmarks_name_their_own_sweep_parts():
    import synthprobe.benchmarks.deeparithmark.sweep as deep
    import synthprobe.benchmarks.gpt3.sweep as gpt3

    assert sweep_part("deeparithmark") is deep and part_for("gpt3:arithmetic_2da") is gpt3
    for part in (deep, gpt3):
        assert all(hasattr(part, a) for a in REQUIRED)
    assert (deep.METRIC, gpt3.METRIC) == ("acc_norm", "accuracy")


def test_grid_tasks_are_name_or_name_sub_in_canonical_spelling():
    assert canonical_task("deeparithmark") == "deeparithmark"
    assert canonical_task("gpt3:2D+") == "gpt3:arithmetic_2da"
    for bad, message in [
        ("deeparithmark:x", "Deep Arithmark has no sub-tasks"),
        ("gpt3", "expected a GPT-3 synthetic task as gpt3:<name or paper code>"),
        ("gpt3:nope", "nope"),
        ("lambada", "expected a benchmark NAME or NAME:SUB, NAME one of ['deeparithmark', 'gpt3'"),
        (3, "got 3"),
    ]:
        with pytest.raises(InputError, match=message.replace("[", r"\[").replace("+", r"\+")) as err:
            canonical_task(bad, field="tasks")
        assert err.value.field == "tasks"


def test_release_is_each_benchmarks_own_seed_and_the_default_task_is_the_registrys():
    release = Seed(RELEASE, RELEASE_SEED)
    assert task_seed("deeparithmark", release) == RELEASE_SEED
    assert task_seed("gpt3:arithmetic_2da", release) == 0
    assert task_seed("gpt3:arithmetic_2da", Seed("7", 7)) == 7
    grid = make_grid(grid_file=None, models=["m"], seeds="release,1", tasks=None, limit=None)
    assert grid.tasks == [registry.DEFAULT]
    assert grid.describe()["seeds"] == [{"label": "release", "seed": RELEASE_SEED}, {"label": "1", "seed": 1}]
    with pytest.raises(InputError, match="'release' is seed 0 for gpt3:arithmetic_2da; list one of them"):
        make_grid(grid_file=None, models=["m"], seeds="release,0", tasks=["gpt3:2D+"], limit=None)


def test_a_sweep_part_without_the_protocol_is_one_error_naming_it(monkeypatch):
    monkeypatch.setitem(registry.BUILTIN, "halfway", "tests.sweep.test_part:HALFWAY")
    registry.find.cache_clear()
    try:
        with pytest.raises(
            InputError,
            match=r"benchmark 'halfway': its sweep part 'synthprobe.errors' has no "
            r"RELEASE_SEED, METRIC, canonical, size, run, load, score, accuracy",
        ):
            make_grid(grid_file=None, models=["m"], seeds="1", tasks=["halfway"], limit=None)
    finally:
        registry.find.cache_clear()


HALFWAY = registry.Benchmark(name="halfway", title="Halfway", sweep="synthprobe.errors")  # a module, not a part


@pytest.mark.parametrize(
    "module, line, broken",
    [
        # the sweep's generic modules reaching a benchmark by name
        (
            "sweep/run.py",
            "import synthprobe.benchmarks.deeparithmark.sweep",
            "synthprobe.sweep.run -> synthprobe.benchmarks.deeparithmark.sweep",
        ),
        (
            "sweep/grid.py",
            "import synthprobe.benchmarks.gpt3.registry",
            "synthprobe.sweep.grid -> synthprobe.benchmarks.gpt3.registry",
        ),
        # one benchmark's sweep part importing another's
        (
            "benchmarks/gpt3/sweep.py",
            "import synthprobe.benchmarks.deeparithmark.sweep",
            "synthprobe.benchmarks.gpt3.sweep -> synthprobe.benchmarks.deeparithmark.sweep",
        ),
    ],
)
def test_a_benchmark_imported_by_name_in_the_sweep_breaks_a_contract(tmp_path, module, line, broken):
    res = _lint_copy_with(tmp_path, (module, line))
    assert res.returncode != 0 and "BROKEN" in res.stdout, res.stdout
    assert broken in res.stdout, res.stdout
