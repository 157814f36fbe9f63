"""The lazy benchmark registry (synthprobe.registry): the built-in benchmarks resolve on first
use, and a third-party benchmark installed through an entry point (tests/plugin_benchmark, pip
installed into a throwaway folder, never into the test environment) builds, scores and reports
through the command line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from synthprobe import registry
from synthprobe.cli import main
from synthprobe.errors import InputError

PLUGIN = Path(__file__).parent / "plugin_benchmark"


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory) -> Path:
    """The plugin package pip-installed (no dependencies, no build isolation) into a folder of its own."""
    src = tmp_path_factory.mktemp("plugin-src") / "synthprobe-larger"
    shutil.copytree(PLUGIN, src, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    site = tmp_path_factory.mktemp("plugin-site")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--target",
            str(site),
            str(src),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    assert (site / "synthprobe_larger" / "__init__.py").is_file()
    assert list(site.glob("synthprobe_larger-*.dist-info/entry_points.txt"))
    return site


@pytest.fixture()
def plugin(plugin_site, monkeypatch):
    """The installed plugin visible to this process (its folder on sys.path), the registry's
    memory cleared before and after."""
    monkeypatch.syspath_prepend(str(plugin_site))
    registry.find.cache_clear()
    yield plugin_site
    registry.find.cache_clear()
    for name in [m for m in sys.modules if m.startswith("synthprobe_larger")]:
        del sys.modules[name]


def test_built_in_benchmarks_resolve_their_parts_on_first_use():
    registry.find.cache_clear()
    deep = registry.get("deeparithmark")
    assert deep.title == "Deep Arithmark" and registry.get("gpt3").name == "gpt3"
    from synthprobe.benchmarks.deeparithmark.scoring import metrics as deep_metrics
    from synthprobe.benchmarks.gpt3.scoring import metrics as gpt3_metrics

    assert deep.part("metrics") is deep_metrics.summarise
    assert registry.get("gpt3").part("metrics") is gpt3_metrics.summarise
    assert deep.part("report").__name__ == "synthprobe.benchmarks.deeparithmark.report"
    for bench in (deep, registry.get("gpt3")):  # what the report's generic modules ask for
        assert callable(bench.part("tables")) and callable(bench.part("viewer"))
        reader = bench.part("lm_eval_reader")
        assert callable(reader.read) and callable(reader.restore) and reader.TASKS and reader.SAMPLES
        paired = bench.part("outcomes")
        assert callable(paired.outcomes) and bench.name in paired.BLOCKS and paired.METRIC and paired.LEAD
    with pytest.raises(InputError, match="has no 'work' part"):
        deep.part("work")


def test_entry_points_are_read_only_for_a_name_that_is_not_built_in(monkeypatch):
    calls = []
    real = registry._entry_points
    monkeypatch.setattr(registry, "_entry_points", lambda: calls.append(1) or real())
    registry.find.cache_clear()
    registry.get("deeparithmark")
    assert calls == []
    with pytest.raises(InputError, match=r"unknown benchmark 'nosuch'; expected one of \['deeparithmark', 'gpt3'"):
        registry.get("nosuch")
    assert calls
    registry.find.cache_clear()


def test_a_broken_reference_is_one_error_naming_the_benchmark_and_part():
    bench = registry.Benchmark(name="x", title="X", metrics="synthprobe.nosuch:summarise")
    with pytest.raises(InputError, match=r"benchmark 'x' part 'metrics': cannot load 'synthprobe.nosuch:summarise'"):
        bench.part("metrics")


def test_a_name_that_points_at_something_else_is_refused(monkeypatch):
    monkeypatch.setitem(registry.BUILTIN, "bogus", "synthprobe.errors:InputError")
    registry.find.cache_clear()
    with pytest.raises(
        InputError,
        match=r"built-in benchmark 'bogus': expected a synthprobe.registry.Benchmark "
        r"named 'bogus', got type",
    ):
        registry.get("bogus")
    registry.find.cache_clear()


def test_an_installed_benchmark_is_found_through_its_entry_point(plugin):
    assert "larger" in registry.names()
    bench = registry.get("larger")
    assert bench.title == "Which is larger" and callable(bench.part("work"))


def test_the_cli_builds_an_installed_benchmark_and_refuses_to_overwrite(plugin, tmp_path, capsys):
    out = tmp_path / "larger.jsonl"
    assert main(["build", "larger", "--n", "6", "--seed", "3", "--out", str(out)]) == 0
    first = out.read_bytes()
    rows = [json.loads(line) for line in first.decode().splitlines()]
    assert len(rows) == 6 and {r["label"] for r in rows} <= {0, 1} and rows[0]["id"] == "larger-3-0"
    assert main(["build", "larger", "--n", "6", "--seed", "3", "--out", str(out)]) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert main(["build", "larger", "--n", "6", "--seed", "3", "--out", str(out), "--overwrite"]) == 0
    assert out.read_bytes() == first  # same seed, same bytes


def test_an_installed_benchmark_adds_its_own_sub_command_when_a_command_line_names_it(plugin, tmp_path, capsys):
    """Its ``commands`` part, as a pytest plug-in adds options: ``probe larger`` exists when named; a
    command line that names no benchmark never imports it, and ``build larger`` (a verb not in its
    ``VERBS``) is still the generic command."""
    assert main(["probe", "larger", "--n", "2", "--seed", "1"]) == 0
    questions = capsys.readouterr().out.splitlines()
    assert len(questions) == 2 and all(q.startswith("Which number is larger") for q in questions)
    del sys.modules["synthprobe_larger.commands"]
    with pytest.raises(SystemExit):
        main(["probe", "--help"])
    assert "larger" not in capsys.readouterr().out and "synthprobe_larger.commands" not in sys.modules
    assert main(["build", "larger", "--n", "1", "--out", str(tmp_path / "l.jsonl")]) == 0  # the generic build


def test_an_unknown_benchmark_stays_an_argparse_error(plugin, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["score", "nosuch", "--data", "x"])
    assert exc.value.code == 2 and "invalid choice: 'nosuch'" in capsys.readouterr().err


def test_bad_data_for_an_installed_benchmark_is_one_located_error(plugin, tmp_path, capsys):
    data = tmp_path / "bad.jsonl"
    data.write_text('{"id": "a", "question": "q", "choices": ["1", "2"], "label": 0}\n{"id": "b", "question": 3}\n')
    out = tmp_path / "res.json"
    assert main(["score", "larger", "--data", str(data), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "line 2: field 'question' missing or not a str" in err and "bad.jsonl" in err
    assert not out.exists()


def test_the_toy_engine_scores_an_installed_benchmark_and_the_report_shows_it(plugin, tmp_path, monkeypatch):
    """Its section, its paper-ready table (``tables`` part) and its items in the item viewer
    (``viewer`` part), each reached through the registry."""
    from viewer_support import page_data

    from synthprobe.backends import ENGINES

    monkeypatch.setitem(ENGINES, "toy", ("toy_engine", None))  # tests/toy_engine.py; removed after the test
    data, out = tmp_path / "larger.jsonl", tmp_path / "res.json"
    assert main(["build", "larger", "--n", "5", "--seed", "2", "--out", str(data)]) == 0
    assert (
        main(
            [
                "score",
                "larger",
                "--data",
                str(data),
                "--out",
                str(out),
                "--model",
                "toy:bigram",
                "--no-progress",
                "--no-cache",
                "--batch-size",
                "2",
            ]
        )
        == 0
    )
    block = json.loads(out.read_text())["models"][0]["results"]["larger"]
    assert block["summary"]["total"] == 5 and [r["id"] for r in block["records"]] == [f"larger-2-{i}" for i in range(5)]
    assert block["dataset"]["items"] == 5 and len(block["dataset"]["sha256"]) == 64
    assert main(["report", str(out), "--out", str(tmp_path / "rep"), "--table", "csv", "--table", "latex"]) == 0
    page = (tmp_path / "rep" / "index.html").read_text()
    assert '<h2 id="larger"' in page or 'id="larger"' in page
    correct = block["summary"]["correct"]
    assert f"<td>toy:bigram</td><td>{correct}</td><td>5</td>" in page
    assert (tmp_path / "rep" / "tables" / "larger.csv").read_text() == (
        f"Model,correct,items,accuracy\ntoy:bigram,{correct},5,{round(100 * correct / 5, 2)}\n"
    )
    assert "\\begin{tabular}{lrrr}" in (tmp_path / "rep" / "tables" / "larger.tex").read_text()
    assert '<a href="items.html">open the item viewer</a>' in page and "5 answers" in page
    items = page_data((tmp_path / "rep" / "items.html").read_text("utf-8"))
    rows = [json.loads(line) for line in data.read_text().splitlines()]
    assert items["notes"] == [] and [(m["name"], m["source"], m["n"], m["correct"]) for m in items["models"]] == [
        ("toy:bigram", "res.json", 5, correct)
    ]
    assert [it["prompt"] for it in items["items"]] == [r["question"] for r in rows]
    assert [it["endings"] for it in items["items"]] == [r["choices"] for r in rows]
    assert [(a["i"], a["p"], a["ok"]) for a in items["runs"][0]] == [
        (i, r["pick"], int(r["correct"])) for i, r in enumerate(block["records"])
    ]


def test_scoring_an_installed_benchmark_prints_its_plan_and_keeps_the_timed_batch(
    plugin, tmp_path, monkeypatch, capsys
):
    """Above the calibration threshold the run times its first batch on the loaded model and keeps
    those records: the file equals a run over the same items at another batch size."""
    from synthprobe.backends import ENGINES
    from synthprobe.plan import CALIBRATE_ABOVE

    monkeypatch.setitem(ENGINES, "toy", ("toy_engine", None))  # tests/toy_engine.py; removed after the test
    n = CALIBRATE_ABOVE + 12
    data = tmp_path / "larger.jsonl"
    assert main(["build", "larger", "--n", str(n), "--seed", "4", "--out", str(data)]) == 0
    blocks = []
    for batch in ("5", str(n)):
        out = tmp_path / f"res-{batch}.json"
        assert (
            main(
                [
                    "score",
                    "larger",
                    "--data",
                    str(data),
                    "--out",
                    str(out),
                    "--model",
                    "toy:bigram",
                    "--no-progress",
                    "--no-cache",
                    "--batch-size",
                    batch,
                ]
            )
            == 0
        )
        err = capsys.readouterr().err
        assert f"plan: larger x {n} items, for 1 model" in err
        timed = min(int(batch), n)
        assert "estimate: about " in err and f"{timed} items timed on the loaded model" in err
        blocks.append(json.loads(out.read_text())["models"][0]["results"]["larger"])
    assert [r["id"] for r in blocks[0]["records"]] == [f"larger-4-{i}" for i in range(n)]
    assert blocks[0]["records"] == blocks[1]["records"] and blocks[0]["summary"] == blocks[1]["summary"]


def test_a_chat_template_reaches_an_installed_benchmark_that_takes_one(plugin, tmp_path):
    """`score NAME --chat-template PATH --system-prompt` on a tiny random model: the work function
    gets the setup, so each record holds the log-likelihoods of the choices after the rendered
    conversation (recomputed here by hand), the entry records the template, and the same command
    finds every score in the cache."""
    from scoring_support import save_tiny_llama, write_turns_template

    from synthprobe.backends import load_backend
    from synthprobe.backends.chat import ChatSetup, read_template

    model = save_tiny_llama(tmp_path / "tiny")
    template = write_turns_template(tmp_path / "turns.jinja")
    data = tmp_path / "larger.jsonl"
    assert main(["build", "larger", "--n", "3", "--seed", "5", "--out", str(data)]) == 0
    cmd = [
        "score",
        "larger",
        "--data",
        str(data),
        "--model",
        str(model),
        "--device",
        "cpu",
        "--dtype",
        "float32",
        "--threads",
        "1",
        "--no-progress",
        "--chat-template",
        str(template),
        "--system-prompt",
        "Be exact.",
    ]
    assert main([*cmd, "--out", str(tmp_path / "a.json")]) == 0
    entry = json.loads((tmp_path / "a.json").read_text())["models"][0]
    assert entry["chat"]["chat_template_name"] == "turns.jinja" and entry["chat"]["system_prompt"] == "Be exact."
    items = [json.loads(line) for line in data.read_text().splitlines()]
    chat = ChatSetup(source=str(template), text=read_template(template), system_prompt="Be exact.")
    backend = load_backend(str(model), dtype="float32", device="cpu", threads=1, progress=False)
    try:
        [ctx] = backend.render_chat([chat.conversation(items[0]["question"])], template=chat.template_arg)
        assert ctx.startswith("<system>Be exact.</system>\n<user>Which number") and ctx.endswith("<assistant>")
        want = [round(s.logprob, 6) for s in backend.loglikelihood([(ctx, f" {c}") for c in items[0]["choices"]])]
    finally:
        backend.close()
    assert entry["results"]["larger"]["records"][0]["logprobs"] == want
    assert main([*cmd, "--out", str(tmp_path / "b.json")]) == 0
    again = json.loads((tmp_path / "b.json").read_text())["models"][0]["results"]["larger"]
    assert again["cached_items"] == 3
    # the records read back from the cache are written as the fresh run wrote them, byte for byte
    assert json.dumps(again["records"]) == json.dumps(entry["results"]["larger"]["records"])


def test_a_chat_template_is_refused_for_a_benchmark_whose_work_takes_none(tmp_path, capsys):
    from synthprobe.backends.chat import ChatSetup
    from synthprobe.registry import Benchmark
    from synthprobe.scoring.benchmark import check_chat

    def work(backend, items):
        raise AssertionError("never called")

    bench = Benchmark(name="plain", title="Plain", work=work)
    check_chat(bench, ChatSetup())  # no template: nothing to refuse
    with pytest.raises(InputError, match="work\\(\\) takes no 'chat' keyword"):
        check_chat(bench, ChatSetup(source="auto"))
    with pytest.raises(InputError, match="cannot ask under a chat template"):
        check_chat(bench, ChatSetup(system_prompt="Be exact."))


@pytest.mark.slow
def test_an_installed_benchmark_builds_scores_and_reports_through_the_cli(plugin_site, tmp_path):
    """Another process, which sees the plugin only as an installed package (PYTHONPATH), runs the
    three commands; the embedded model scores 8 items."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(plugin_site), os.environ.get("PYTHONPATH", "")]),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
    }

    def cli(*args: str) -> subprocess.CompletedProcess:
        done = subprocess.run(
            [sys.executable, "-m", "synthprobe.cli", *args], env=env, cwd=tmp_path, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        return done

    cli("build", "larger", "--n", "8", "--seed", "1", "--out", "larger.jsonl")
    cli(
        "score",
        "larger",
        "--data",
        "larger.jsonl",
        "--model",
        "smollm2-135m-instruct",
        "--out",
        "res.json",
        "--no-progress",
        "--no-cache",
    )
    doc = json.loads((tmp_path / "res.json").read_text())
    block = doc["models"][0]["results"]["larger"]
    assert doc["schema"] == "synthprobe/results" and doc["models"][0]["model"]["name"]
    assert block["summary"]["total"] == 8 and 0 <= block["summary"]["correct"] <= 8
    assert len(block["records"]) == 8 and all(r["pick"] in (0, 1) for r in block["records"])
    assert block["summary"]["correct"] == sum(r["correct"] for r in block["records"])
    cli("report", "res.json", "--out", "rep")
    page = (tmp_path / "rep" / "index.html").read_text()
    assert "Which is larger" in page and "Which of two numbers is larger" in page
    assert f"<td>{block['summary']['correct']}</td><td>8</td>" in page
    assert "| Model | correct | items |" in (tmp_path / "rep" / "leaderboard.md").read_text()


def test_an_installed_benchmark_with_an_lm_eval_part_shows_up_in_lm_evals_files(plugin, tmp_path, monkeypatch):
    """`export lm-eval-results` asks the registry, never a benchmark by name: the installed
    benchmark's block becomes its own multiple-choice task, lm-eval's acc computed from the
    recorded log-likelihoods; `export lm-eval` is untouched by a part without task files."""
    from synthprobe.backends import ENGINES

    monkeypatch.setitem(ENGINES, "toy", ("toy_engine", None))
    data, res, lm = tmp_path / "larger.jsonl", tmp_path / "res.json", tmp_path / "lm"
    assert main(["build", "larger", "--n", "6", "--seed", "4", "--out", str(data)]) == 0
    assert (
        main(
            [
                "score",
                "larger",
                "--data",
                str(data),
                "--out",
                str(res),
                "--model",
                "toy:bigram",
                "--no-progress",
                "--no-cache",
            ]
        )
        == 0
    )
    assert main(["export", "lm-eval-results", str(res), "--out", str(lm), "--timestamp", "2026-01-01T00:00:00"]) == 0
    (results_file,) = lm.rglob("results_*.json")
    (samples_file,) = lm.rglob("samples_*.jsonl")
    assert samples_file.name == "samples_larger_2026-01-01T00-00-00.jsonl"
    doc = json.loads(results_file.read_text())
    assert list(doc["results"]) == ["larger"] and doc["n-samples"]["larger"] == {"original": 6, "effective": 6}
    records = json.loads(res.read_text())["models"][0]["results"]["larger"]["records"]
    items = [json.loads(line) for line in data.read_text().splitlines()]
    samples = [json.loads(line) for line in samples_file.read_text().splitlines()]
    for s, rec, item in zip(samples, records, items):
        lls = rec["logprobs"]
        assert s["doc"] == item and s["synthprobe"] == rec and s["target"] == str(item["label"])
        assert s["acc"] == (1.0 if lls.index(max(lls)) == item["label"] else 0.0)
        assert s["arguments"]["gen_args_1"] == {
            "arg_0": f"Question: {item['question']}\nAnswer:",
            "arg_1": f" {item['choices'][1]}",
        }
    assert doc["results"]["larger"]["acc,none"] == sum(s["acc"] for s in samples) / 6
    # the per-item records went into the samples file; the entry kept under `synthprobe` says where
    assert "records" not in doc["synthprobe"]["entry"]["results"]["larger"]
    assert doc["synthprobe"]["samples"] == {"larger": {"run": "2026-01-01T00-00-00", "task": "larger"}}
    # it writes no task YAML: the lm-eval task folder is the built-in benchmarks' alone
    assert main(["export", "lm-eval", "--gpt3-tasks", "none", "--out", str(tmp_path / "yaml"), "--quiet"]) == 0
    assert not any("larger" in p.name for p in (tmp_path / "yaml").rglob("*"))


def test_every_benchmarks_metrics_part_is_one_function_named_summarise():
    """The rule in docs/write-a-benchmark.md ("Where a metric goes"): a benchmark's block summary
    is its ``metrics`` part, named ``summarise``, and the code has one spelling of it."""
    import re
    from pathlib import Path

    for name in registry.names():
        assert registry.get(name).part("metrics").__name__ == "summarise", name
    src = Path(__file__).resolve().parents[1] / "src" / "synthprobe"
    american = [str(p) for p in src.rglob("*.py") if re.search(r"\bsummari[z]e", p.read_text())]
    assert not american, american
    assert "**Where a metric goes.**" in (src.parents[1] / "docs" / "write-a-benchmark.md").read_text()
