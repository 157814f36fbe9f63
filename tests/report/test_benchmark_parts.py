"""The report's generic modules (paper-ready tables, item viewer, lm-eval reader, paired
comparison) reach benchmarks
only through the registry's parts: their code names no benchmark, and what a benchmark's part
returns is what they use. The whole route through the command line, with a benchmark installed
through an entry point, is tests/test_benchmarks.py; that nothing observable changed for the
built-in benchmarks is the report tests beside this one."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from synthprobe import registry
from synthprobe.errors import InputError
from synthprobe.report import compare, lm_eval, tables, viewer

GENERIC = (tables, viewer, lm_eval, compare)
NAMES = ("deeparithmark", "gpt3", "deep arithmark", "gpt-3")


def _code_strings(path: Path) -> list[str]:
    """Every identifier and string constant of a module's code, docstrings left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            out.append(node.value)
        elif isinstance(node, ast.Name):
            out.append(node.id)
        elif isinstance(node, ast.Attribute):
            out.append(node.attr)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out += [getattr(node, "module", None) or ""] + [a.name for a in node.names]
    return out


@pytest.mark.parametrize("module", GENERIC, ids=lambda m: m.__name__)
def test_generic_report_modules_name_no_benchmark(module):
    named = [s for s in _code_strings(Path(module.__file__)) if any(n in s.lower() for n in NAMES)]
    assert named == [], f"{module.__name__} names a benchmark: {named}"


def test_the_check_sees_a_named_benchmark(tmp_path):
    """The check above can fail."""
    path = tmp_path / "m.py"
    path.write_text('"""Deep Arithmark in a docstring is fine."""\nKEY = "deeparithmark"\n')
    assert _code_strings(path) == ["KEY", "deeparithmark"]


def _registry(monkeypatch, *benches: registry.Benchmark) -> None:
    known = {b.name: b for b in benches}
    monkeypatch.setattr(registry, "find", lambda name: known.get(name))


def test_tables_come_from_each_benchmark_with_items_and_a_tables_part(monkeypatch):
    a = registry.Benchmark("a", "A", tables=lambda items: {"a": (["Model", "n"], [[m, n] for m, n in items])})
    b = registry.Benchmark("b", "B")  # no tables part: none
    c = registry.Benchmark("c", "C", tables=lambda items: {"never": (["x"], [])})
    _registry(monkeypatch, a, b, c)
    out = tables.files({"a": [("m1", 3)], "b": [("m1", 4)], "c": [], "not a benchmark": [1]}, ["csv", "markdown"])
    assert sorted(out) == ["tables/a.csv", "tables/a.md"]
    assert out["tables/a.csv"] == b"Model,n\nm1,3\n"


def test_two_benchmarks_naming_one_table_is_one_error(monkeypatch):
    a = registry.Benchmark("a", "A", tables=lambda items: {"leaderboard": (["Model"], [["m"]])})
    b = registry.Benchmark("b", "B", tables=lambda items: {"leaderboard": (["Model"], [["m"]])})
    _registry(monkeypatch, a, b)
    with pytest.raises(InputError, match="benchmark 'b' names a paper-ready table 'leaderboard'"):
        tables.tables({"a": [1], "b": [1]})


class _Run(viewer.Run):
    def answers(self, data_files, shared):
        shared["calls"] = shared.get("calls", 0) + 1
        return (
            [
                (
                    f"{self.benchmark}:{r['id']}",
                    {"key": f"{self.benchmark}:{r['id']}", "id": r["id"]},
                    {"p": r["pick"], "ok": int(r["ok"])},
                )
                for r in self.records
            ],
            [f"said by {self.benchmark}"],
        )


def test_the_viewer_joins_what_each_benchmark_part_returns():
    """One model's runs of two benchmarks are one column of picks; an item two models scored is
    one item; notes come in run order, the run's own first."""
    runs = [
        _Run(
            "a",
            "m1",
            "/r/one.json",
            "",
            None,
            "x",
            records=[{"id": "1", "pick": 0, "ok": True}, {"id": "2", "pick": 1, "ok": False}],
        ),
        _Run(
            "a", "m2", "/r/two.json", "", None, "x", records=[{"id": "1", "pick": 1, "ok": False}], notes=["own note"]
        ),
        _Run("b", "m1", "/r/three.json", "", None, "x", records=[{"id": "1", "pick": 2, "ok": True}]),
    ]
    data = viewer.viewer_data(runs, title="T")
    assert [it["key"] for it in data["items"]] == ["a:1", "a:2", "b:1"]
    assert data["models"] == [
        {"name": "m1", "source": "one.json, three.json", "spec": "", "n": 3, "correct": 2},
        {"name": "m2", "source": "two.json", "spec": "", "n": 1, "correct": 0},
    ]
    assert data["runs"] == [
        [{"i": 0, "p": 0, "ok": 1}, {"i": 1, "p": 1, "ok": 0}, {"i": 2, "p": 2, "ok": 1}],
        [{"i": 0, "p": 1, "ok": 0}],
    ]
    assert data["notes"] == ["said by a", "own note", "said by a", "said by b"]


def test_lm_eval_folders_are_read_by_the_benchmarks_reader_parts():
    names = [name for name, _ in lm_eval.readers()]
    assert names[:2] == ["deeparithmark", "gpt3"]


def test_a_block_belongs_to_the_benchmark_whose_outcomes_part_reads_it():
    """ArithMark 3.0, scored beside Deep Arithmark, is compared and named apart with it."""
    assert [compare._family(b) for b in ("deeparithmark", "arithmark3", "gpt3", "other")] == [
        "deeparithmark",
        "deeparithmark",
        "gpt3",
        "other",
    ]
    assert compare._title("arithmark3") == "ArithMark 3.0" and compare._title("other") == "other"
    assert (
        "(acc_norm for Deep Arithmark's log-likelihood runs, accuracy for its generated answers, exact match for GPT-3)"
    ) in compare.lead()


def test_the_sections_a_benchmark_owns_keep_their_place_on_the_page():
    """Deep Arithmark's per-step probe, perturbation twins and protocol comparison come from its
    ``sections`` part, each after the section its AFTER names: the page's order is the one it
    always had, the twins after the per-step probe."""
    from synthprobe.report import sections as extras

    keys = [mod.KEY for mod in extras.modules()]
    assert keys == [
        "deeparithmark",
        "gpt3",
        "comparison",
        "steps",
        "twins",
        "sweep",
        "number-format",
        "protocol-effect",
        "contamination",
        "validity",
    ]


def test_a_registered_benchmarks_own_sections_go_after_their_anchor_or_last(monkeypatch):
    import types

    from synthprobe.registry import Benchmark
    from synthprobe.report import sections as extras

    def section(key, after=None):
        mod = types.ModuleType(f"fake_{key}")
        mod.KEY, mod.TITLE = key, key
        if after:
            mod.AFTER = after
        return mod

    real_find = registry.find
    fake = Benchmark(
        name="fake",
        title="Fake",
        report=section("fake"),
        sections=[section("fake-probe", "sweep"), section("fake-tail")],
    )
    monkeypatch.setattr(registry, "find", lambda name: fake if name == "fake" else real_find(name))
    keys = [mod.KEY for mod in extras.modules(["fake"])]
    assert keys.index("fake-probe") == keys.index("sweep") + 1
    assert keys[-1] == "fake-tail"
    # a benchmark named by no input brings no sections
    assert "fake-probe" not in [mod.KEY for mod in extras.modules()]
