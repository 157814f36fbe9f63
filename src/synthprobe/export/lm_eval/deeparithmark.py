"""Deep Arithmark as lm-eval tasks: one ``multiple_choice`` task over a byte-identical copy of the
release, one per depth tier, and the group averaging them by size."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from synthprobe.errors import InputError
from synthprobe.export.lm_eval.yaml import MC_METRICS, data_source, dump
from synthprobe.export.release import Release

TASK = "deeparithmark"
GROUP_BY_DEPTH = "deeparithmark_depths"

_MC_COMMENT = """\
# Deep Arithmark-1 ({what}) for lm-evaluation-harness, exported by synthprobe.
# Release file SHA-256: {sha}
#
# Endings carry their own leading space, hence target_delimiter "" (lm-eval's default " "
# would insert a second space before every ending).
#
# How lm-eval (--model hf) scores this task, against ArithMark 3.0 (bencharithmark-3.py,
# the protocol `synthprobe score` follows):
# acc       argmax of the summed log-likelihood of each ending: the same definition in both.
# acc_norm  lm-eval: summed log-likelihood / number of CHARACTERS in the ending.
#           ArithMark 3.0 and synthprobe's acc_norm divide by the number of TOKENS in the
#           ending, so the two acc_norm figures are not comparable; compare acc.
# BOS       lm-eval prepends BOS whenever the tokenizer adds it by default (Llama- and
#           Gemma-style tokenizers do, GPT-2-style ones such as SmolLM2's do not).
#           ArithMark 3.0 adds no BOS and no EOS (synthprobe only with --bos). Pass
#           add_bos_token=False in --model_args to match.
# tokens    lm-eval tokenises context + ending as one string and takes the tokens past those
#           of the context alone as the ending (moving trailing context whitespace into the
#           ending first); ArithMark 3.0 tokenises ctx and each ending separately
#           (add_special_tokens=False) and concatenates the ids. Where a token straddles
#           the join the two score different tokens (lm-eval stops with an assertion when
#           the ending comes out empty).
# tokenizer lm-eval loads the fast tokenizer by default, ArithMark 3.0 the slow one
#           (use_fast=False); pass use_fast_tokenizer=False to match.
# dtype     lm-eval's default is the checkpoint's dtype (dtype=auto), ArithMark 3.0's
#           bfloat16 (float32 on CPU); pin dtype=float32 in both when comparing.
"""


def _mc_task(name: str, data_file: str, what: str, sha: str, n: int) -> bytes:
    body = {
        "task": name,
        **data_source(data_file),
        "test_split": "test",
        "output_type": "multiple_choice",
        "doc_to_text": "{{ctx}}",
        "doc_to_choice": "endings",
        "doc_to_target": "{{label}}",
        "target_delimiter": "",
        "num_fewshot": 0,
        "metric_list": MC_METRICS,
        "metadata": {"version": 1.0, "items": n},
    }
    return dump(_MC_COMMENT.format(what=what, sha=sha), body)


def _release_lines(release: Release) -> list[bytes]:
    """The file's non-blank lines, byte for byte, in item order (with their newline)."""
    lines = [ln if ln.endswith(b"\n") else ln + b"\n" for ln in release.data.splitlines(keepends=True)]
    lines = [ln for ln in lines if ln.strip()]
    if lines and lines[0].startswith(b"\xef\xbb\xbf"):
        lines[0] = lines[0][3:]
    if len(lines) != len(release.items):
        raise InputError(f"{len(lines)} non-blank lines but {len(release.items)} items",
                         path=release.path)
    return lines


def deeparithmark_files(release: Release, out: Path) -> dict[str, bytes]:
    """Relative path → bytes for the Deep Arithmark tasks, data copies included."""
    stem = release.path.stem
    files: dict[str, bytes] = {}
    data_rel = f"data/{release.name}"
    files[data_rel] = release.data
    files[f"{TASK}.yaml"] = _mc_task(TASK, data_rel, f"all {len(release.items)} items",
                                     release.sha256, len(release.items))
    by_depth: dict[int, list[bytes]] = defaultdict(list)
    for item, line in zip(release.items, _release_lines(release)):
        by_depth[item.metadata["depth"]].append(line)
    depth_tasks = []
    for depth in sorted(by_depth):
        name = f"{TASK}_depth{depth}"
        rel = f"data/{stem}.depth{depth}.jsonl"
        files[rel] = b"".join(by_depth[depth])
        files[f"{name}.yaml"] = _mc_task(name, rel, f"depth-{depth} items only",
                                         release.sha256, len(by_depth[depth]))
        depth_tasks.append(name)
    group = {
        "group": GROUP_BY_DEPTH,
        "task": depth_tasks,
        "aggregate_metric_list": [{"metric": m, "weight_by_size": True} for m in ("acc", "acc_norm")],
        "metadata": {"version": 1.0},
    }
    files[f"{GROUP_BY_DEPTH}.yaml"] = dump(
        "# Deep Arithmark-1 by depth tier: one sub-task per depth, averaged by size.\n", group)
    return files

