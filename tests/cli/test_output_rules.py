"""Never destroy an input: the output rules every command shares (``synthprobe.io``).

1. an output that resolves to an input (same path, a symlink, a hard link) is refused with exit 2
   before anything runs;
2. an explicit output that exists is refused unless ``--overwrite``; a default output name that
   exists gets a new name; an output folder holding our files is refused unless ``--overwrite``;
3. a killed build leaves no temporary file behind (unnamed O_TMPFILE files).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from synthprobe.cli import main
from synthprobe.errors import InputError
from synthprobe.io.write import (
    atomic_open,
    atomic_write_text,
    check_output_dir,
    check_outputs,
    default_output,
    same_file,
)
from tests.support.cli import synthprobe

ROOT = Path(__file__).resolve().parents[2]
RELEASE = ROOT / "data" / "deeparithmark-1.jsonl"
EMBEDDED = "smollm2-135m-instruct"


_cli = synthprobe  # the shared runner (tests/support/cli.py)


def _links(tmp_path: Path, target: Path) -> dict[str, Path]:
    """The target itself, a symlink to it and a hard link to it."""
    sym, hard = tmp_path / f"sym-{target.name}", tmp_path / f"hard-{target.name}"
    sym.symlink_to(target)
    os.link(target, hard)
    return {"same": target, "symlink": sym, "hardlink": hard}


# --------------------------------------------------------------------------- the helpers


def test_same_file_sees_symlinks_and_hard_links(tmp_path):
    a = tmp_path / "a.txt"
    a.write_text("x")
    links = _links(tmp_path, a)
    assert all(same_file(p, a) for p in links.values())
    assert same_file(tmp_path / "sub" / ".." / "a.txt", a)
    b = tmp_path / "b.txt"
    b.write_text("x")
    assert not same_file(a, b)


def test_check_outputs_refuses_inputs_even_with_overwrite_and_existing_files_without(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text("{}\n")
    for path in _links(tmp_path, data).values():
        with pytest.raises(InputError, match="is the input --data"):
            check_outputs([(path, "--output")], [(data, "--data")], overwrite=True)
    other = tmp_path / "other.json"
    check_outputs([(other, "--output")], [(data, "--data")])  # new file: fine
    other.write_text("keep")
    with pytest.raises(InputError, match="already exists; pass --overwrite"):
        check_outputs([(other, "--output")], [(data, "--data")])
    check_outputs([(other, "--output")], [(data, "--data")], overwrite=True)


def test_default_output_never_names_an_existing_file(tmp_path):
    path = tmp_path / "results.json"
    assert default_output(path) == path
    path.write_text("old")
    first = default_output(path, now=0)
    assert first != path and first.parent == path.parent and first.suffix == ".json"
    assert first.name.startswith("results_")
    first.write_text("also old")
    second = default_output(path, now=0)
    assert second not in (path, first) and not second.exists()


def test_check_output_dir_refuses_a_folder_holding_our_files(tmp_path):
    out = tmp_path / "report"
    check_output_dir(out, ["index.html"])  # missing folder: fine
    out.mkdir()
    (out / "notes.txt").write_text("someone else's file")
    check_output_dir(out, ["index.html"])  # holds none of ours: fine
    (out / "index.html").write_text("old")
    with pytest.raises(InputError, match="already holds index.html"):
        check_output_dir(out, ["index.html", "leaderboard.md"])
    check_output_dir(out, ["index.html"], overwrite=True)
    with pytest.raises(InputError, match="is the input"):
        check_output_dir(out, ["index.html"], [out / "index.html"], overwrite=True)


def test_atomic_open_shows_no_temporary_name_while_writing(tmp_path):
    """Today's writer used mkstemp, a named ``.x.XXXX.tmp`` visible (and left by SIGKILL) while
    writing; the unnamed O_TMPFILE file has no name until it is put in place."""
    target = tmp_path / "x.txt"
    with atomic_open(target) as fh:
        fh.write("hello")
        assert os.listdir(tmp_path) == []
    assert target.read_text() == "hello"
    assert os.listdir(tmp_path) == ["x.txt"]
    assert (os.stat(target).st_mode & 0o777) == 0o666 & ~_umask()
    with pytest.raises(RuntimeError):
        with atomic_open(target) as fh:
            fh.write("half")
            raise RuntimeError("stop")
    assert target.read_text() == "hello" and os.listdir(tmp_path) == ["x.txt"]
    atomic_write_text(target, "again")
    assert os.listdir(tmp_path) == ["x.txt"]


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# --------------------------------------------------------------------------- the reported cases


@pytest.mark.parametrize("how", ["same", "symlink", "hardlink"])
def test_build_sat_refuses_to_write_over_its_sat_file(tmp_path, how, capsys):
    sat = tmp_path / "s.txt"
    assert main(["build", "SAT", "--out", str(sat)]) == 0  # any SAT-format file will do
    before = sat.read_bytes()
    out = _links(tmp_path, sat)[how]
    assert main(["build", "SAT", "--sat-file", str(sat), "--out", str(out), "--overwrite"]) == 2
    assert "is the input --sat-file" in capsys.readouterr().err
    assert sat.read_bytes() == before


def test_score_deeparithmark_refuses_data_as_output_before_loading_a_model(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_bytes(b"".join(RELEASE.read_bytes().splitlines(keepends=True)[:3]))
    before = data.read_bytes()
    for out in _links(tmp_path, data).values():
        started = time.perf_counter()
        res = _cli(
            "score",
            "deeparithmark",
            "--data",
            str(data),
            "--output",
            str(out),
            "--no-cache",
            "--no-progress",
            cwd=tmp_path,
        )
        assert res.returncode == 2, res.stderr
        assert "is the input --data" in res.stderr and "Traceback" not in res.stderr
        assert time.perf_counter() - started < 30  # refused before the model loads
        assert data.read_bytes() == before


def test_study_generate_refuses_its_articles_as_output(tmp_path):
    from synthprobe.study.articles import load_articles

    arts = tmp_path / "a.jsonl"
    arts.write_text(
        "".join(
            '{{"title": {}, "subtitle": {}, "article": {}}}\n'.format(
                *tuple(map(_json, (a.title, a.subtitle, a.article)))
            )
            for a in load_articles()[:4]
        ),
        encoding="utf-8",
    )
    before = arts.read_bytes()
    for out in _links(tmp_path, arts).values():
        res = _cli(
            "study",
            "generate",
            "--articles",
            str(arts),
            "--out",
            str(out),
            "--limit",
            "4",
            "--samples",
            "1",
            "--max-new-tokens",
            "2",
            "--quiet",
            cwd=tmp_path,
        )
        assert res.returncode == 2 and "is the input --articles" in res.stderr, res.stderr
        assert arts.read_bytes() == before


def _json(text: str) -> str:
    import json

    return json.dumps(text)


def test_study_results_refuses_to_write_the_csv_over_the_database(tmp_path, capsys, monkeypatch):
    from study_support import ADMIN_PASSWORD, write_items

    from synthprobe.study.items import load_items
    from synthprobe.study.store import ADMIN_ENV, Store

    items = tmp_path / "items.jsonl"
    write_items(items, n_articles=4)
    db = tmp_path / "s.sqlite"
    store = Store(db)
    store.initialise(load_items(items), admin_password=ADMIN_PASSWORD)
    monkeypatch.setenv(ADMIN_ENV, ADMIN_PASSWORD)
    before = db.read_bytes()
    for out in _links(tmp_path, db).values():
        for flag in ("--csv", "--json"):
            assert main(["study", "results", "--db", str(db), flag, str(out), "--overwrite"]) == 2
            assert f"field '{flag}': is the input --db" in capsys.readouterr().err
    assert db.read_bytes() == before
    csv = tmp_path / "answers.csv"
    csv.write_text("keep")
    assert main(["study", "results", "--db", str(db), "--csv", str(csv)]) == 2
    assert "already exists; pass --overwrite" in capsys.readouterr().err and csv.read_text() == "keep"
    assert main(["study", "results", "--db", str(db), "--csv", str(csv), "--overwrite"]) == 0
    assert csv.read_text() != "keep"
    # the items file is no database either
    assert main(["study", "serve", "--db", str(items), "--items", str(items), "--port", "0"]) == 2
    assert "is the input --items" in capsys.readouterr().err


# --------------------------------------------------------------------------- existing outputs


def test_explicit_outputs_that_exist_are_refused_unless_overwrite(tmp_path, capsys):
    out = tmp_path / "private.jsonl"
    assert main(["build", "deeparithmark", "--n", "20", "--out", str(out), "--no-progress"]) == 0
    first = out.read_bytes()
    assert main(["build", "deeparithmark", "--n", "20", "--seed", "5", "--out", str(out), "--no-progress"]) == 2
    assert "already exists; pass --overwrite" in capsys.readouterr().err and out.read_bytes() == first
    assert (
        main(["build", "deeparithmark", "--n", "20", "--seed", "5", "--out", str(out), "--no-progress", "--overwrite"])
        == 0
    )
    assert out.read_bytes() != first
    task = tmp_path / "2da.jsonl"
    task.write_text("mine\n")
    assert main(["build", "2D+", "--n", "3", "--out", str(task)]) == 2 and task.read_text() == "mine\n"
    res = _cli(
        "score", "gpt3", "--tasks", "2D+", "--limit", "1", "--shots", "zero", "--output", str(task), cwd=tmp_path
    )
    assert res.returncode == 2 and "already exists" in res.stderr and task.read_text() == "mine\n"
    capsys.readouterr()


def test_output_folders_holding_our_files_are_refused_unless_overwrite(tmp_path, capsys):
    results = ROOT / "benchmarks" / "deeparithmark_smollm2-135m-instruct.json"
    out = tmp_path / "report"
    out.mkdir()
    (out / "index.html").write_text("my page")
    assert main(["report", str(results), "--out", str(out)]) == 2
    assert "already holds index.html" in capsys.readouterr().err
    assert sorted(os.listdir(out)) == ["index.html"] and (out / "index.html").read_text() == "my page"
    assert main(["report", str(results), "--out", str(out), "--overwrite"]) == 0  # make demo, run twice
    assert (out / "index.html").read_text() != "my page" and (out / "leaderboard.md").is_file()
    capsys.readouterr()
    for name in os.listdir(out):
        (out / name).unlink()
    (out / "index.html").write_text("my page")
    # a results file that is one of the files the report writes is refused even with --overwrite
    inside = out / "leaderboard.md"
    shutil.copyfile(results, inside)
    assert main(["report", str(inside), "--out", str(out), "--overwrite"]) == 2
    assert "is the input RESULTS.json" in capsys.readouterr().err
    for verb in (["export", "hf"], ["export", "lm-eval", "--gpt3-tasks", "none"]):
        folder = tmp_path / verb[1]
        folder.mkdir()
        (folder / "README.md").write_text("mine")
        assert main([*verb, "--out", str(folder)]) == 2
        assert "already holds README.md" in capsys.readouterr().err
        assert os.listdir(folder) == ["README.md"] and (folder / "README.md").read_text() == "mine"
    probes = tmp_path / "probes"
    probes.mkdir()
    (probes / "grammar.html").write_text("mine")
    res = _cli("probe", "grammar", "--out", str(probes), cwd=tmp_path, timeout=60)
    assert res.returncode == 2 and "already holds grammar.html" in res.stderr
    # its items file cannot be one of the outputs either
    items = probes / "novel_words.json"
    shutil.copyfile(ROOT / "src" / "synthprobe" / "resources" / "novel_words.jsonl", items)
    res = _cli(
        "probe", "novel-words", "--items", str(items), "--out", str(probes), "--overwrite", cwd=tmp_path, timeout=60
    )
    assert res.returncode == 2 and "is the input --items" in res.stderr


def test_build_gpt3_folder_refused_when_it_holds_the_task_files(tmp_path, capsys):
    folder = tmp_path / "gpt3"
    assert main(["build", "gpt3", "--tasks", "2D+", "--n", "3", "--out-dir", str(folder), "--quiet"]) == 0
    assert main(["build", "gpt3", "--tasks", "2D+", "--n", "4", "--out-dir", str(folder), "--quiet"]) == 2
    assert "already holds arithmetic_2da.jsonl" in capsys.readouterr().err
    assert (
        main(["build", "gpt3", "--tasks", "2D+", "--n", "4", "--out-dir", str(folder), "--quiet", "--overwrite"]) == 0
    )


def test_default_task_file_that_exists_is_kept_when_identical_and_gets_a_new_name_when_not(tmp_path):
    first = _cli("build", "2D+", "--n", "3", cwd=tmp_path)
    target = tmp_path / "data" / "gpt3" / "arithmetic_2da.jsonl"
    assert first.returncode == 0 and target.is_file()
    stamp = target.stat().st_mtime_ns
    again = _cli("build", "2D+", "--n", "3", cwd=tmp_path)
    assert again.returncode == 0 and "left untouched" in again.stderr and target.stat().st_mtime_ns == stamp
    bigger = _cli("build", "2D+", "--n", "4", cwd=tmp_path)
    assert bigger.returncode == 0 and target.stat().st_mtime_ns == stamp
    new = sorted(p for p in target.parent.iterdir() if p != target)
    assert len(new) == 1 and new[0].name.startswith("arithmetic_2da_") and str(new[0].name) in bigger.stderr
    assert len(new[0].read_text().splitlines()) == 4


# --------------------------------------------------------------------------- README's commands


def _copy_root(tmp_path: Path, *names: str) -> Path:
    root = tmp_path / "repo"
    for name in names:
        dst = root / name
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, dst)
    return root


def test_readme_release_build_leaves_an_identical_file_untouched_and_refuses_a_different_one(tmp_path):
    root = _copy_root(tmp_path, "deeparithmark.py", "data/deeparithmark-1.jsonl")
    release = root / "data" / "deeparithmark-1.jsonl"
    stamp = release.stat().st_mtime_ns
    res = synthprobe("deeparithmark.py", "build", module=None, cwd=root)
    assert res.returncode == 0 and "left untouched" in res.stdout, res.stderr
    assert release.stat().st_mtime_ns == stamp and release.read_bytes() == RELEASE.read_bytes()
    assert os.listdir(release.parent) == ["deeparithmark-1.jsonl"]
    with open(release, "ab") as fh:
        fh.write(b"\n")
    changed = release.read_bytes()
    res = synthprobe("deeparithmark.py", "build", module=None, cwd=root)
    assert res.returncode == 2 and "differs" in res.stderr and "--overwrite" in res.stderr
    assert release.read_bytes() == changed
    res = synthprobe("deeparithmark.py", "build", "--overwrite", "--no-progress", module=None, cwd=root)
    assert res.returncode == 0 and release.read_bytes() == RELEASE.read_bytes()


@pytest.mark.model
def test_readme_scoring_commands_keep_the_committed_benchmarks(tmp_path):
    """``python bench_deeparithmark.py --model ...`` and ``synthprobe score gpt3 ...`` with their
    default outputs, where the committed results already are: a new name, the committed files kept."""
    deep = "benchmarks/deeparithmark_smollm2-135m-instruct.json"
    gpt3 = "benchmarks/gpt3_smollm2-135m-instruct.json"
    root = _copy_root(tmp_path, "bench_deeparithmark.py", "data/deeparithmark-1.jsonl", deep, gpt3)
    argv = ["--model", EMBEDDED, "--limit", "2", "--no-progress", "--no-cache", "--batch-size", "2"]
    res = synthprobe("bench_deeparithmark.py", *argv, module=None, cwd=root, timeout=600)
    assert res.returncode == 0, res.stderr
    res2 = _cli("score", "gpt3", "--tasks", "2D+", "--shots", "zero", "--limit", "1", "--quiet", "--no-cache", cwd=root)
    assert res2.returncode == 0, res2.stderr
    for rel in (deep, gpt3):
        assert (root / rel).read_bytes() == (ROOT / rel).read_bytes()
    written = sorted(p.name for p in (root / "benchmarks").iterdir())
    assert len(written) == 4, written
    new_deep = next(n for n in written if n.startswith("deeparithmark_smollm2-135m-instruct_"))
    new_gpt3 = next(n for n in written if n.startswith("gpt3_smollm2-135m-instruct_"))
    assert new_deep in res.stdout and new_gpt3 in res2.stdout
    assert subprocess.run(["git", "diff", "--quiet", "--", "benchmarks", "data"], cwd=ROOT).returncode == 0


# --------------------------------------------------------------------------- killed builds


def _wait_until_writing(proc: subprocess.Popen, folder: Path, timeout: float = 60) -> None:
    """Wait until ``proc`` holds a file in ``folder`` open (the build is under way)."""
    deadline = time.monotonic() + timeout
    fds = Path(f"/proc/{proc.pid}/fd")
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the build ended before it could be stopped"
        try:
            targets = [os.readlink(fd) for fd in fds.iterdir()]
        except (FileNotFoundError, ProcessLookupError):
            targets = []
        if any(t.startswith(str(folder) + "/") for t in targets):
            time.sleep(0.5)  # some items into the file
            return
        time.sleep(0.05)
    raise AssertionError("the build never opened its output")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_a_killed_build_leaves_no_temporary_file(tmp_path, sig):
    folder = tmp_path / "out"
    folder.mkdir()
    target = folder / "X.jsonl"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "synthprobe",
            "build",
            "deeparithmark",
            "--n",
            "200000",
            "--out",
            str(target),
            "--no-progress",
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        _wait_until_writing(proc, folder)
        proc.send_signal(sig)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == (-signal.SIGKILL if sig == signal.SIGKILL else 143)
    assert os.listdir(folder) == []
    assert not target.exists()


def test_score_gpt3_refuses_a_task_file_as_output(tmp_path):
    task_file = tmp_path / "two_digit_addition.jsonl"
    task_file.write_text(
        '{"context": "\\n\\nQ: What is 98 plus 45?\\n\\nA:", "completion": " 143"}\n', encoding="utf-8"
    )
    before = task_file.read_bytes()
    for out in _links(tmp_path, task_file).values():
        res = _cli(
            "score",
            "gpt3",
            "--task-file",
            str(task_file),
            "--output",
            str(out),
            "--overwrite",
            "--model",
            str(tmp_path / "no-such-model"),
            "--no-cache",
            cwd=tmp_path,
        )
        assert res.returncode == 2 and "is the input --task-file" in res.stderr, res.stderr
        assert task_file.read_bytes() == before
