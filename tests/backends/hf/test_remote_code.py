"""Determinism and safety: identical bytes across processes and hash seeds, no remote code unless asked.

The builders' own determinism tests (Deep Arithmark in ``test_deeparithmark_build.py``, every
GPT-3 task in ``test_gpt3_determinism.py``) are not repeated here; this file covers the other
writers and the model-loading safety rules.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from synthprobe.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "synthprobe"
RELEASE = ROOT / "data" / "deeparithmark-1.jsonl"


def _synthprobe(args: list[str], hash_seed: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed, "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "synthprobe.cli", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, env=env, timeout=300)


def _tree(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _main(argv) -> int:
    try:
        return main([str(a) for a in argv])
    except SystemExit as exc:  # some commands exit 1 themselves after printing the reason
        return exc.code


def test_builds_and_exports_are_byte_identical_across_hash_seeds(tmp_path):
    """One process per hash seed writes a Deep Arithmark file, a SAT file from a user file, and
    both exports of a GPT-3 task file; every output file has the same bytes in both."""
    sat = tmp_path / "sat.txt"
    sat.write_text("1 s\nlull trust v:n\na b n:n\nc d n:n\ne f n:n\ng h n:n\ni j n:n\nb\n\n"
                   "2 s\nhot cold a:a\nup down a:a\nk l n:n\nm n n:n\no p n:n\nq r n:n\na\n", encoding="utf-8")
    trees = []
    for hs in ("0", "4242"):
        out = tmp_path / f"run{hs}"
        out.mkdir()
        script = [
            ["build", "deeparithmark", "--seed", "11", "--n", "40", "--out", out / "da.jsonl", "--no-progress"],
            ["build", "sat_analogies", "--sat-file", sat, "--out", out / "sat.jsonl"],
            ["build", "arithmetic_1dc", "--n", "30", "--seed", "3", "--out", out / "1dc.jsonl"],
            ["export", "hf", "--data", out / "da.jsonl", "--out", out / "hf"],
            ["export", "lm-eval", "--data", out / "da.jsonl", "--gpt3", f"one_dc={out / '1dc.jsonl'}",
             "--gpt3", f"sat={out / 'sat.jsonl'}", "--out", out / "lm"],
        ]
        for args in script:
            proc = _synthprobe(args, hs, out)
            assert proc.returncode == 0, (args, proc.stderr)
        trees.append(_tree(out))
    a, b = trees
    assert len(a) >= 10 and a.keys() == b.keys()
    # lm-eval YAMLs record the absolute data path, which differs between the two folders
    for k in a:
        if a[k] == b[k]:
            continue
        assert k.startswith("lm/") and k.endswith((".yaml", ".md")), f"{k} differs between hash seeds"
        ta = (tmp_path / "run0" / k).read_text(encoding="utf-8").replace(str(tmp_path / "run0"), "@")
        tb = (tmp_path / "run4242" / k).read_text(encoding="utf-8").replace(str(tmp_path / "run4242"), "@")
        assert ta == tb, k


# --- trust_remote_code -----------------------------------------------------------------------

def _from_pretrained_calls():
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "from_pretrained":
                yield path, node


def test_no_from_pretrained_turns_on_remote_code_by_itself():
    calls = list(_from_pretrained_calls())
    assert len(calls) >= 4  # the backend and the GGUF converter at least
    for path, node in calls:
        for kw in node.keywords:
            if kw.arg == "trust_remote_code":
                assert isinstance(kw.value, ast.Name) and kw.value.id == "trust_remote_code", \
                    f"{path}:{node.lineno}: trust_remote_code must come from the caller's flag"
            assert kw.arg is not None, f"{path}:{node.lineno}: **kwargs could smuggle trust_remote_code"


def _remote_code_checkpoint(folder: Path, marker: Path) -> Path:
    """A local checkpoint whose config asks for its own modelling code, which records that it ran."""
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({
        "model_type": "sentinel_lm", "architectures": ["SentinelForCausalLM"],
        "auto_map": {"AutoConfig": "sentinel.SentinelConfig",
                     "AutoModelForCausalLM": "sentinel.SentinelForCausalLM",
                     "AutoTokenizer": ["sentinel.SentinelTokenizer", None]},
    }), encoding="utf-8")
    (folder / "tokenizer_config.json").write_text(json.dumps({
        "tokenizer_class": "SentinelTokenizer", "auto_map": {"AutoTokenizer": ["sentinel.SentinelTokenizer", None]},
    }), encoding="utf-8")
    (folder / "sentinel.py").write_text(
        f"open({str(marker)!r}, 'w').write('remote code ran')\n"
        "from transformers import PretrainedConfig\n"
        "class SentinelConfig(PretrainedConfig):\n    model_type = 'sentinel_lm'\n", encoding="utf-8")
    return folder


@pytest.mark.parametrize("verb", ["score", "probe"])
def test_remote_code_never_runs_unless_asked(tmp_path, capsys, verb):
    marker = tmp_path / "ran.txt"
    ckpt = _remote_code_checkpoint(tmp_path / "ckpt", marker)
    if verb == "score":
        out = tmp_path / "r.json"
        argv = ["score", "deeparithmark", "--data", RELEASE, "--limit", "2", "--model", ckpt,
                "--output", out, "--no-progress"]
    else:
        out = tmp_path / "probe"
        argv = ["probe", "grammar", "--model", ckpt, "--out", out, "--quiet"]
    rc = _main(argv)
    err = capsys.readouterr().err
    assert rc in (1, 2) and "synthprobe: error:" in err
    assert str(ckpt) in err and "--trust-remote-code" in err, err
    assert not marker.exists(), "a checkpoint's own code ran without --trust-remote-code"
    assert not out.exists()


def test_trust_remote_code_is_off_by_default_on_every_command():
    parser = build_parser()
    args = parser.parse_args(["score", "deeparithmark"])
    assert args.trust_remote_code is False
    for argv in (["score", "gpt3"], ["probe", "grammar", "--out", "x"], ["probe", "novel-words", "--out", "x"],
                 ["study", "generate", "--out", "x.jsonl"]):
        ns = vars(parser.parse_args(argv))
        assert ns.get("trust_remote_code", False) is False, argv


@pytest.mark.parametrize("spec, words", [
    ("../../etc/passwd", "--model"),
    ("owner/name/extra/parts", "--model"),
    ("", "--model"),
    ("{tmp}/empty-folder", "--model"),
    ("{tmp}/weights.gguf", "--model"),
])
def test_model_specs_are_checked_before_loading(tmp_path, capsys, spec, words):
    (tmp_path / "empty-folder").mkdir()
    (tmp_path / "weights.gguf").write_bytes(b"not a gguf file")
    spec = spec.replace("{tmp}", str(tmp_path))
    out = tmp_path / "r.json"
    rc = _main(["score", "deeparithmark", "--data", RELEASE, "--limit", "2", "--model", spec,
                "--output", out, "--no-progress"])
    err = capsys.readouterr().err
    assert rc in (1, 2) and "Traceback" not in err and "error" in err.lower(), err
    assert not out.exists()
