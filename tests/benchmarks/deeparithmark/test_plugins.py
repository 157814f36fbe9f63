"""Deep Arithmark families from outside the package (``build deeparithmark --family``).

Every command runs as the user runs it: the real ``synthprobe`` CLI in a subprocess, on a family
file copied outside the repository (tmp_path), or on a throwaway distribution whose
``.dist-info/entry_points.txt`` registers the family in the ``synthprobe.families`` group,
found by importlib.metadata through PYTHONPATH.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from synthprobe.benchmarks.deeparithmark.composition import (
    TEMPLATES,
    Template,
    balance_plan,
    composition,
    depth_counts,
    user_table,
)
from tests.support import cli

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "docs" / "examples" / "unit_convert.py"


def run(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """``python ARGS`` (``-m synthprobe ...`` or a script) through the shared runner."""
    return cli.synthprobe(*args, module=None, cwd=cwd, extra_env=env)


def synthprobe(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return cli.synthprobe(*args, cwd=cwd, extra_env=env)


def tool(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return run(str(ROOT / "deeparithmark.py"), *args, cwd=cwd)


@pytest.fixture
def family(tmp_path) -> Path:
    """The worked example, copied outside the repository."""
    dest = tmp_path / "my_units.py"
    shutil.copy(EXAMPLE, dest)
    return dest


# -- the table arithmetic ----------------------------------------------------------------------


def test_release_table_is_the_default_of_every_table_function():
    assert composition(1000) == composition(1000, TEMPLATES) == {t.name: t.count for t in TEMPLATES}
    assert depth_counts(999) == {2: 250, 3: 250, 4: 250, 5: 249}
    assert balance_plan(1000, TEMPLATES).grid == balance_plan(1000).grid


def test_user_table_orders_tiers_and_splits_by_weight():
    rows = user_table([Template("b", "t", 3, 1), Template("a", "t", 2, 1), Template("c", "t", 3, 2)])
    assert [t.name for t in rows] == ["a", "b", "c"]  # tier by tier, given order within
    assert depth_counts(100, rows) == {2: 25, 3: 75}  # tiers get their families' weights
    assert composition(100, rows) == {"a": 25, "b": 25, "c": 50}
    assert sorted(balance_plan(100, rows).grid) == [2, 3]  # only the tiers the table holds
    with pytest.raises(ValueError, match="depth 7"):
        user_table([Template("x", "t", 7, 1)])
    with pytest.raises(ValueError, match="listed twice"):
        user_table([Template("x", "t", 2, 1), Template("x", "t", 2, 1)])
    with pytest.raises(ValueError, match="weight 0"):
        user_table([Template("x", "t", 2, 0)])


# -- a family file from outside the repository --------------------------------------------------


def test_family_file_builds_a_balanced_file_that_passes_selftest_and_audit(family, tmp_path):
    res = synthprobe(
        "build",
        "deeparithmark",
        "--family",
        family.name,
        "--n",
        "2000",
        "--seed",
        "3",
        "--out",
        "units.jsonl",
        "--selftest",
        cwd=tmp_path,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert "34/34 checks passed" in res.stdout  # the trained choices-only audit included
    assert "2 templates, 1 topics; matches the table scaled to 2,000" in res.stdout
    assert "500 / 500 / 500 / 500 (expected 500 / 500 / 500 / 500)" in res.stdout
    data = tmp_path / "units.jsonl"
    items = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines()]
    assert {i["metadata"]["template"] for i in items} == {"unit_convert", "unit_convert_batches"}
    assert sorted({i["metadata"]["depth"] for i in items}) == [2, 3]

    table = json.loads((tmp_path / "units.jsonl.families.json").read_text(encoding="utf-8"))
    assert [(f["name"], f["depth"], f["weight"]) for f in table["families"]] == [
        ("unit_convert", 2, 1),
        ("unit_convert_batches", 3, 1),
    ]
    assert table["families"][0]["source"]["path"] == str(family.resolve())
    assert (table["seed"], table["n"], table["data"]) == (3, 2000, "units.jsonl")
    assert res.stdout.count(table["sha256"]) == 2  # the build's digest, and the selftest's

    # the repository's audit takes the file as it takes the release (its selftest: the tests below);
    # its shortcut table here: the trained audit ran in the selftest above (its 34th check), and the
    # command's own at --budget small reports no power (a tenth of legacy items, mix10, is too
    # small a leak to see in 1,000 items), as it does on the release
    audit = tool("audit", "units.jsonl", "--by-template", "--no-trained", cwd=tmp_path)
    assert audit.returncode == 0, audit.stdout + audit.stderr
    assert "unit_convert_batches" in audit.stdout

    # determinism: the same seed gives the same bytes, in one process or in two workers
    again = synthprobe(
        "build",
        "deeparithmark",
        "--family",
        str(family),
        "--n",
        "2000",
        "--seed",
        "3",
        "--out",
        "again.jsonl",
        "--workers",
        "2",
        cwd=tmp_path,
    )
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "again.jsonl").read_bytes() == data.read_bytes()
    check = synthprobe(
        "build",
        "deeparithmark",
        "--family",
        family.name,
        "--n",
        "2000",
        "--seed",
        "3",
        "--out",
        "units.jsonl",
        "--check",
        cwd=tmp_path,
    )
    assert check.returncode == 0 and "identical to the build" in check.stdout, check.stderr
    other = synthprobe(
        "build",
        "deeparithmark",
        "--family",
        family.name,
        "--n",
        "2000",
        "--seed",
        "4",
        "--out",
        "units.jsonl",
        "--check",
        cwd=tmp_path,
    )
    assert other.returncode == 1


def test_selftest_refuses_a_file_whose_families_table_is_missing_or_stale(family, tmp_path):
    assert (
        synthprobe(
            "build",
            "deeparithmark",
            "--family",
            family.name,
            "--n",
            "200",
            "--seed",
            "1",
            "--out",
            "u.jsonl",
            cwd=tmp_path,
        ).returncode
        == 0
    )
    table = tmp_path / "u.jsonl.families.json"
    saved = table.read_text(encoding="utf-8")
    table.unlink()
    res = tool("selftest", "u.jsonl", cwd=tmp_path)
    assert res.returncode == 1
    assert (
        "'unit_convert' is not a Deep Arithmark template (a file built from other families carries "
        "its table beside it, in <file>.families.json)" in res.stdout
    )
    doc = json.loads(saved)
    doc["sha256"] = "0" * 64
    table.write_text(json.dumps(doc), encoding="utf-8")
    res = tool("selftest", "u.jsonl", cwd=tmp_path)
    assert res.returncode == 1 and "sha256 differs" in res.stdout
    table.write_text("{}", encoding="utf-8")
    res = tool("selftest", "u.jsonl", cwd=tmp_path)
    assert res.returncode == 2 and "u.jsonl.families.json: field 'schema'" in res.stderr


def test_composition_table_mixes_our_families_with_outside_ones(family, tmp_path):
    (tmp_path / "mix.csv").write_text(
        "family,weight\nunit_convert,2\nmoney_discount_fee,1\nunit_convert_batches,1\ntank_fill,1\n", encoding="utf-8"
    )
    res = synthprobe(
        "build",
        "deeparithmark",
        "--family",
        family.name,
        "--composition",
        "mix.csv",
        "--n",
        "400",
        "--seed",
        "5",
        "--out",
        "mix.jsonl",
        cwd=tmp_path,
    )
    assert res.returncode == 0, res.stderr
    counts: dict[str, int] = {}
    for line in (tmp_path / "mix.jsonl").read_text(encoding="utf-8").splitlines():
        t = json.loads(line)["metadata"]["template"]
        counts[t] = counts.get(t, 0) + 1
    # depth 2 weighs 3 (unit_convert 2 + money_discount_fee 1), depth 3 and depth 4 one each
    assert counts == {"unit_convert": 160, "money_discount_fee": 80, "unit_convert_batches": 80, "tank_fill": 80}
    sources = {
        f["name"]: f["source"]
        for f in json.loads((tmp_path / "mix.jsonl.families.json").read_text(encoding="utf-8"))["families"]
    }
    assert sources["tank_fill"]["package"] == "synthprobe" and "path" in sources["unit_convert"]
    report = tool("selftest", "mix.jsonl", cwd=tmp_path)
    for line in (
        "composition (template, topic, depth, count)",
        "depth tiers",
        "slot × rank × depth grid",
        "every step re-evaluated, last step = answer",
    ):
        assert any(row.startswith(line) and row.rstrip().endswith("PASS") for row in report.stdout.splitlines()), (
            line,
            report.stdout,
        )

    (tmp_path / "bad.csv").write_text("family,weight\nunit_convert,1\nno_such_family,3\n", encoding="utf-8")
    res = synthprobe(
        "build",
        "deeparithmark",
        "--family",
        family.name,
        "--composition",
        "bad.csv",
        "--n",
        "40",
        "--out",
        "bad.jsonl",
        cwd=tmp_path,
    )
    assert res.returncode == 2 and "bad.csv:3: field 'family': no family 'no_such_family'" in res.stderr
    assert not (tmp_path / "bad.jsonl").exists()


# -- a family that cannot make fair items gets one error naming it --------------------------------

_HEAD = '''
import random
from synthprobe.benchmarks.deeparithmark.base import Problem, Steps, register, require

@register("{name}", topic="{name}", depth=2)
def generate(rng: random.Random):
    """A broken family."""
    a, b = rng.randint(11, 40), rng.randint(3, 9)
    s = Steps()
    total = s.op("first", a, "×", b)
    total = s.op("second", total, "+", 7)
    require(total % 5 != 0, "class")
'''

BROKEN = {
    "wrong_steps": (
        "steps=('first: 2 × 3 = 6', 'second: 6 + 7 = 14'), "
        "mistakes={{'a': total + 10, 'b': total + 20, 'c': total + 30, 'd': total - 10, "
        "'e': total - 20, 'f': total - 30}}",
        "family 'wrong_steps' (wrong_steps.py): its steps do not re-evaluate to its answer",
    ),
    "few_decoys": (
        "steps=s.solution(), mistakes={{'forgot the 7': total - 7, 'doubled': 2 * total}}",
        "family 'few_decoys' (few_decoys.py) cannot produce enough valid decoys: in 200 draws "
        "the answer could never be put at rank 0, 1, 2, 3",
    ),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_family_that_cannot_make_fair_items_is_refused_by_name(name, tmp_path):
    rest, message = BROKEN[name]
    source = _HEAD.format(name=name) + (
        f"    return Problem(family='{name}', topic='{name}', depth=2, ctx=f'{{a}} boxes of {{b}} and 7 more', "
        f"answer=total, unit='boxes', ending=' {{}} boxes.', " + rest.format() + ")\n"
    )
    (tmp_path / f"{name}.py").write_text(source, encoding="utf-8")
    res = synthprobe("build", "deeparithmark", "--family", f"{name}.py", "--n", "100", "--out", "x.jsonl", cwd=tmp_path)
    assert res.returncode == 2, res.stdout + res.stderr
    assert message in res.stderr, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1  # one line, no traceback
    assert not (tmp_path / "x.jsonl").exists() and not (tmp_path / "x.jsonl.families.json").exists()


def test_family_modules_that_are_not_families_are_refused(tmp_path):
    (tmp_path / "nothing.py").write_text("X = 1\n", encoding="utf-8")
    (tmp_path / "crash.py").write_text("raise RuntimeError('boom')\n", encoding="utf-8")
    (tmp_path / "notproblem.py").write_text(
        "from synthprobe.benchmarks.deeparithmark.base import register\n"
        "@register('np', topic='np', depth=2)\ndef generate(rng):\n    '''Not a problem.'''\n    return 42\n",
        encoding="utf-8",
    )
    cases = {
        "nothing.py": "nothing.py: field '--family': registers no family",
        "crash.py": "crash.py: field '--family': the family module failed to import: RuntimeError: boom",
        "notproblem.py": "family 'np' (notproblem.py): generate(rng) returned int 42; expected a Problem",
        "missing.py": "missing.py: field '--family': no such file",
        "no_such_entry_point": "'no_such_entry_point' is neither a file nor an installed family",
    }
    for spec, message in cases.items():
        res = synthprobe("build", "deeparithmark", "--family", spec, "--n", "40", "--out", "x.jsonl", cwd=tmp_path)
        assert res.returncode == 2 and message in res.stderr, (spec, res.stderr)
    assert not (tmp_path / "x.jsonl").exists()


# -- a family from an installed distribution's entry point -----------------------------------------


def test_family_registered_by_an_entry_point_of_an_installed_package(tmp_path):
    site = tmp_path / "site"
    pkg = site / "units_family"
    pkg.mkdir(parents=True)
    shutil.copy(EXAMPLE, pkg / "__init__.py")
    info = site / "units_family-0.3.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: units-family\nVersion: 0.3\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[synthprobe.families]\nunits = units_family\n", encoding="utf-8")
    env = {"PYTHONPATH": os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH")) if p)}
    work = tmp_path / "work"
    work.mkdir()
    res = synthprobe(
        "build",
        "deeparithmark",
        "--family",
        "units",
        "--n",
        "400",
        "--seed",
        "2",
        "--out",
        "ep.jsonl",
        "--selftest",
        cwd=work,
        env=env,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    table = json.loads((work / "ep.jsonl.families.json").read_text(encoding="utf-8"))
    assert table["families"][0]["source"] == {
        "entry_point": "units",
        "value": "units_family",
        "distribution": "units-family",
        "version": "0.3",
    }
    # the entry point and the same module as a file give the same items
    shutil.copy(EXAMPLE, work / "same.py")
    assert (
        synthprobe(
            "build",
            "deeparithmark",
            "--family",
            "same.py",
            "--n",
            "400",
            "--seed",
            "2",
            "--out",
            "file.jsonl",
            cwd=work,
        ).returncode
        == 0
    )
    assert (work / "file.jsonl").read_bytes() == (work / "ep.jsonl").read_bytes()
    # without the package on the path the name is unknown, and the message says where it looked
    res = synthprobe("build", "deeparithmark", "--family", "units", "--n", "40", "--out", "x.jsonl", cwd=work)
    assert res.returncode == 2 and "no entry point of that name in the group 'synthprobe.families'" in res.stderr


# -- the rest of the pipeline, with the embedded model ------------------------------------------------


@pytest.mark.slow
@pytest.mark.model
def test_outside_family_file_scores_probes_exports_and_reports(family, tmp_path):
    assert (
        synthprobe(
            "build",
            "deeparithmark",
            "--family",
            family.name,
            "--n",
            "200",
            "--seed",
            "3",
            "--out",
            "units.jsonl",
            cwd=tmp_path,
        ).returncode
        == 0
    )
    res = synthprobe(
        "score",
        "deeparithmark",
        "--data",
        "units.jsonl",
        "--limit",
        "6",
        "--output",
        "scores.json",
        "--no-progress",
        cwd=tmp_path,
    )
    assert res.returncode == 0, res.stderr
    doc = json.loads((tmp_path / "scores.json").read_text(encoding="utf-8"))
    text = json.dumps(doc)
    assert doc["datasets"]["deeparithmark"]["n_items"] == 6 and "unit_convert" in text
    res = synthprobe("probe", "steps", "--data", "units.jsonl", "--limit", "2", "--output", "steps.json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    res = synthprobe("report", "scores.json", "steps.json", "--out", "report", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    page = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    assert "unit_convert" in page
    res = synthprobe("export", "hf", "--data", "units.jsonl", "--out", "hf", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "hf" / "data" / "units.jsonl.families.json").is_file()
    copied = tool("selftest", "hf/data/units.jsonl", cwd=tmp_path)  # reads the table copied beside it
    # all 34, the trained choices-only audit too: it loads the family again from the path the
    # copied table names and trains on fresh builds of it
    assert copied.returncode == 0 and "34/34 checks passed" in copied.stdout, copied.stdout
    res = synthprobe("export", "lm-eval", "--data", "units.jsonl", "--out", "lm", "--quiet", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "lm" / "deeparithmark_depth3.yaml").is_file()


def test_a_family_file_that_is_gone_leaves_the_trained_check_not_run(family, tmp_path):
    """The trained audit loads a file's families again from the sources its table names; where one
    no longer exists the selftest says so on that check (SKIP) and still runs every other check."""
    res = synthprobe(
        "build", "deeparithmark", "--family", family.name, "--n", "40", "--seed", "3", "--out", "u.jsonl",
        cwd=tmp_path,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    family.unlink()
    copied = tool("selftest", "u.jsonl", cwd=tmp_path)
    row = next(line for line in copied.stdout.splitlines() if line.startswith("trained choices-only audit"))
    assert "not run: its families cannot be loaded again" in row and row.endswith("SKIP"), copied.stdout
    assert str(family) in copied.stdout and "no such file" in copied.stdout
    assert copied.returncode == 0 and "33/34 checks passed" in copied.stdout, copied.stdout
