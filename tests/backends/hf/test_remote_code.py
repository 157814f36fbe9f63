"""Model-loading safety: no remote code unless asked, and model specs checked before anything loads."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from synthprobe.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[3]
SRC = ROOT / "src" / "synthprobe"
RELEASE = ROOT / "data" / "deeparithmark-1.jsonl"


def _main(argv) -> int:
    try:
        return main([str(a) for a in argv])
    except SystemExit as exc:  # some commands exit 1 themselves after printing the reason
        return exc.code


def _from_pretrained_calls():
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "from_pretrained"
            ):
                yield path, node


def test_no_from_pretrained_turns_on_remote_code_by_itself():
    calls = list(_from_pretrained_calls())
    assert len(calls) >= 4  # the backend and the GGUF converter at least
    for path, node in calls:
        for kw in node.keywords:
            if kw.arg == "trust_remote_code":
                assert isinstance(kw.value, ast.Name) and kw.value.id == "trust_remote_code", (
                    f"{path}:{node.lineno}: trust_remote_code must come from the caller's flag"
                )
            assert kw.arg is not None, f"{path}:{node.lineno}: **kwargs could smuggle trust_remote_code"


def _remote_code_checkpoint(folder: Path, marker: Path) -> Path:
    """A local checkpoint whose config asks for its own modelling code, which records that it ran."""
    folder.mkdir()
    (folder / "config.json").write_text(
        json.dumps(
            {
                "model_type": "sentinel_lm",
                "architectures": ["SentinelForCausalLM"],
                "auto_map": {
                    "AutoConfig": "sentinel.SentinelConfig",
                    "AutoModelForCausalLM": "sentinel.SentinelForCausalLM",
                    "AutoTokenizer": ["sentinel.SentinelTokenizer", None],
                },
            }
        ),
        encoding="utf-8",
    )
    (folder / "tokenizer_config.json").write_text(
        json.dumps(
            {
                "tokenizer_class": "SentinelTokenizer",
                "auto_map": {"AutoTokenizer": ["sentinel.SentinelTokenizer", None]},
            }
        ),
        encoding="utf-8",
    )
    (folder / "sentinel.py").write_text(
        f"open({str(marker)!r}, 'w').write('remote code ran')\n"
        "from transformers import PretrainedConfig\n"
        "class SentinelConfig(PretrainedConfig):\n    model_type = 'sentinel_lm'\n",
        encoding="utf-8",
    )
    return folder


@pytest.mark.parametrize("verb", ["score", "probe"])
def test_remote_code_never_runs_unless_asked(tmp_path, capsys, verb):
    marker = tmp_path / "ran.txt"
    ckpt = _remote_code_checkpoint(tmp_path / "ckpt", marker)
    if verb == "score":
        out = tmp_path / "r.json"
        argv = [
            "score",
            "deeparithmark",
            "--data",
            RELEASE,
            "--limit",
            "2",
            "--model",
            ckpt,
            "--output",
            out,
            "--no-progress",
        ]
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
    for argv in (
        ["score", "gpt3"],
        ["probe", "grammar", "--out", "x"],
        ["probe", "novel-words", "--out", "x"],
        ["study", "generate", "--out", "x.jsonl"],
    ):
        ns = vars(parser.parse_args(argv))
        assert ns.get("trust_remote_code", False) is False, argv


@pytest.mark.parametrize(
    "spec, words",
    [
        ("../../etc/passwd", "--model"),
        ("owner/name/extra/parts", "--model"),
        ("", "--model"),
        ("{tmp}/empty-folder", "--model"),
        ("{tmp}/weights.gguf", "--model"),
    ],
)
def test_model_specs_are_checked_before_loading(tmp_path, capsys, spec, words):
    (tmp_path / "empty-folder").mkdir()
    (tmp_path / "weights.gguf").write_bytes(b"not a gguf file")
    spec = spec.replace("{tmp}", str(tmp_path))
    out = tmp_path / "r.json"
    rc = _main(
        ["score", "deeparithmark", "--data", RELEASE, "--limit", "2", "--model", spec, "--output", out, "--no-progress"]
    )
    err = capsys.readouterr().err
    assert rc in (1, 2) and "Traceback" not in err and "error" in err.lower(), err
    assert not out.exists()
