"""Start-up of `synthprobe score deeparithmark`: light imports and threads (the one-pass verdict kept
on disk is tested in tests/backends/hf/test_onepass_verdict.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data" / "deeparithmark-1.jsonl"

#: Libraries the scoring path must not import before it uses them (they cost seconds to import).
HEAVY = ("datasets", "pyarrow", "scipy", "matplotlib", "sklearn", "statsmodels", "jinja2", "pandas")

_PROBE_IMPORTS = r"""
import json, sys
from synthprobe.cli import build_parser
args = build_parser().parse_args(["score", "deeparithmark", "--data", sys.argv[1], "--no-cache", "--limit", "1",
                                  "--output", sys.argv[2], "--dtype", "float32"])
from synthprobe.benchmarks.deeparithmark.commands.score import config_from_args
from synthprobe.benchmarks.deeparithmark.scoring import score as deeparithmark
config = config_from_args(args)
deeparithmark.validate(config)             # reads the data, checks the model spec (imports torch)
import synthprobe.backends.hf.backend, synthprobe.backends.hf.loglik, synthprobe.backends.hf.onepass
import synthprobe.backends.hf.encode, synthprobe.backends.hf.gguf, synthprobe.scoring.runner
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules})))
"""


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    return env


def test_score_path_imports_no_heavy_library_before_the_model_loads(tmp_path):
    """Everything the score command runs before the engine loads transformers: the CLI parser, the
    data check, the backend check (torch) and the scoring and engine modules themselves."""
    out = subprocess.run(
        [sys.executable, "-c", _PROBE_IMPORTS, str(DATA), str(tmp_path / "r.json")],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    loaded = set(json.loads(out.stdout.strip().splitlines()[-1]))
    assert "torch" in loaded  # the probe did reach the backend check
    assert not loaded & set(HEAVY), f"imported before use: {sorted(loaded & set(HEAVY))}"
    assert not (tmp_path / "r.json").exists()


def test_cli_import_alone_is_light():
    code = (
        "import sys; import synthprobe.cli as c; c.build_parser(); "
        "print(','.join(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(), timeout=120)
    assert out.returncode == 0, out.stderr
    loaded = set(out.stdout.strip().split(","))
    assert not loaded & (set(HEAVY) | {"torch", "transformers", "numpy"}), sorted(loaded)


def test_physical_cores_counts_cores_not_hyperthreads():
    from synthprobe.backends.hf.backend import physical_cores

    n = physical_cores()
    usable = len(os.sched_getaffinity(0))
    assert 1 <= n <= usable
    siblings = Path("/sys/devices/system/cpu/cpu0/topology/thread_siblings_list")
    if siblings.is_file() and usable == os.cpu_count():
        # On Linux with every CPU usable: CPUs / threads per core (unless a cgroup quota caps it).
        per_core = len(_expand(siblings.read_text().strip()))
        assert n <= usable // per_core


def _expand(cpu_list: str) -> list[int]:
    out: list[int] = []
    for part in cpu_list.split(","):
        a, _, b = part.partition("-")
        out.extend(range(int(a), int(b or a) + 1))
    return out


def test_set_threads_keeps_a_lower_count_and_obeys_an_explicit_one():
    import torch

    from synthprobe.backends.hf.backend import physical_cores, set_threads

    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        set_threads(None)
        assert torch.get_num_threads() == 1
        torch.set_num_threads(physical_cores() + 3)
        set_threads(None)
        assert torch.get_num_threads() == physical_cores()
        set_threads(3)
        assert torch.get_num_threads() == 3
    finally:
        torch.set_num_threads(before)
