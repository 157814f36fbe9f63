"""Export task YAMLs for EleutherAI's lm-evaluation-harness (``lm_eval --include_path DIR``).

Deep Arithmark becomes a ``multiple_choice`` task over a byte-identical copy of the release
(``DIR/data/``, referenced by absolute path through ``dataset_path: json``):

* ``doc_to_text: "{{ctx}}"``, ``doc_to_choice: endings``, ``doc_to_target: "{{label}}"``
  (the label is a stringified int; rendered through the template lm-eval turns the digit
  string back into the int index — ``doc_to_target: label`` would hand it the string and
  lm-eval would look that string up among the endings);
* ``target_delimiter: ""`` because every ending carries its own leading space — lm-eval's
  default delimiter ``" "`` would score ``"was  26 crates."`` with a double space;
* metrics ``acc`` and ``acc_norm``. **The two protocols differ on acc_norm**: lm-eval divides
  the summed log-likelihood by the ending's length in *characters*, ArithMark 3.0 (and
  ``synthprobe score``) by its number of *tokens*. ``acc`` is the same in both.

Besides the full task ``deeparithmark`` there is one task per depth tier
(``deeparithmark_depth2`` …) and a group ``deeparithmark_depths`` averaging them by size.

GPT-3 task files built by ``synthprobe build`` are exported with ``--gpt3`` (named
``synthprobe_<file name>`` unless given a name, so they do not override lm-eval's built-in
``arithmetic_*``/unscramble tasks, which read OpenAI's released files). Free-form files
(``{"context", "completion"}``: arithmetic, word unscrambling) become what lm-eval runs for
its own ``arithmetic_*``/unscramble tasks: a ``loglikelihood`` task whose ``acc`` is "the
gold completion is the greedy continuation", and a ``generate_until`` task ``<name>_gen``
(greedy, stop at a newline, exact match after trimming). Multiple-choice files (SAT
analogies: ``ctx``/``endings``/``label``) become a ``multiple_choice`` task.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml

from synthprobe.errors import InputError
from synthprobe.export._files import check_out_dir, write_tree
from synthprobe.export.release import DEFAULT_RELEASE, Release, load_release
from synthprobe.formats.arithmark3 import load_arithmark3
from synthprobe.io import read_jsonl

TASK = "deeparithmark"
GROUP_BY_DEPTH = "deeparithmark_depths"

#: Prefix of GPT-3 task names taken from file names. lm-eval ships ``arithmetic_2da``,
#: ``anagrams1``, … over OpenAI's released files; ours hold regenerated items, so they get
#: their own names instead of silently overriding the built-in tasks.
GPT3_PREFIX = "synthprobe_"

_MC_METRICS = [
    {"metric": "acc", "aggregation": "mean", "higher_is_better": True},
    {"metric": "acc_norm", "aggregation": "mean", "higher_is_better": True},
]

_MC_COMMENT = """\
# Deep Arithmark-1 ({what}) for lm-evaluation-harness, exported by synthprobe.
# Release file SHA-256: {sha}
#
# Endings carry their own leading space, hence target_delimiter "" (lm-eval's default " "
# would insert a second space before every ending).
# acc      = argmax of the summed log-likelihood of each ending: the same in both protocols.
# acc_norm = lm-eval's: summed log-likelihood / number of CHARACTERS in the ending.
#            ArithMark 3.0 and synthprobe's acc_norm divide by the number of TOKENS in the
#            ending, so the two acc_norm figures are not comparable; compare acc.
"""


class _Dumper(yaml.SafeDumper):
    """Strings with control characters (the "\\n" stop sequence) in double quotes."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = '"' if any(c in value for c in "\n\t\r") else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def _dump(comment: str, body: dict[str, Any]) -> bytes:
    text = yaml.dump(body, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=10_000,
                     default_flow_style=False)
    return (comment + text).encode("utf-8")


def _mc_task(name: str, data_file: Path, what: str, sha: str, n: int) -> bytes:
    body = {
        "task": name,
        "dataset_path": "json",
        "dataset_kwargs": {"data_files": {"test": str(data_file)}},
        "test_split": "test",
        "output_type": "multiple_choice",
        "doc_to_text": "{{ctx}}",
        "doc_to_choice": "endings",
        "doc_to_target": "{{label}}",
        "target_delimiter": "",
        "num_fewshot": 0,
        "metric_list": _MC_METRICS,
        "metadata": {"version": 1.0, "items": n},
    }
    return _dump(_MC_COMMENT.format(what=what, sha=sha), body)


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
    out_abs = out.resolve()
    stem = release.path.stem
    files: dict[str, bytes] = {}
    data_rel = f"data/{release.name}"
    files[data_rel] = release.data
    files[f"{TASK}.yaml"] = _mc_task(TASK, out_abs / data_rel, f"all {len(release.items)} items",
                                     release.sha256, len(release.items))
    by_depth: dict[int, list[bytes]] = defaultdict(list)
    for item, line in zip(release.items, _release_lines(release)):
        by_depth[item.metadata["depth"]].append(line)
    depth_tasks = []
    for depth in sorted(by_depth):
        name = f"{TASK}_depth{depth}"
        rel = f"data/{stem}.depth{depth}.jsonl"
        files[rel] = b"".join(by_depth[depth])
        files[f"{name}.yaml"] = _mc_task(name, out_abs / rel, f"depth-{depth} items only",
                                         release.sha256, len(by_depth[depth]))
        depth_tasks.append(name)
    group = {
        "group": GROUP_BY_DEPTH,
        "task": depth_tasks,
        "aggregate_metric_list": [{"metric": m, "weight_by_size": True} for m in ("acc", "acc_norm")],
        "metadata": {"version": 1.0},
    }
    files[f"{GROUP_BY_DEPTH}.yaml"] = _dump(
        "# Deep Arithmark-1 by depth tier: one sub-task per depth, averaged by size.\n", group)
    return files


# ---------------------------------------------------------------------------------------
# GPT-3 tasks (JSONL built by `synthprobe build`)
# ---------------------------------------------------------------------------------------

_GPT3_COMMENT = """\
# GPT-3 synthetic task {name!r} for lm-evaluation-harness, exported by synthprobe from
# {src} (SHA-256 {sha}).
# The completion carries its own leading space, hence target_delimiter "".
"""


def _gpt3_kind(path: Path) -> str:
    """``"generate"`` for {"context", "completion"} files, ``"choice"`` for ctx/endings/label
    files (SAT analogies), judged by the first record; every record is then checked."""
    for line, obj in read_jsonl(path):
        if "endings" in obj:
            load_arithmark3(path)  # the multiple-choice contract, with located errors
            return "choice"
        break
    for line, obj in read_jsonl(path):
        for key in ("context", "completion"):
            if not isinstance(obj.get(key), str) or not obj.get(key):
                raise InputError(f"expected a non-empty string, got {obj.get(key)!r}",
                                 path=path, line=line, field=key)
    return "generate"


def _max_new_tokens(name: str) -> int:
    """The generation budget synthprobe's own GPT-3 scorer uses for ``name`` (32 if unknown)."""
    try:
        from synthprobe.tasks.gpt3.base import get_task

        return int(get_task(name.removeprefix(GPT3_PREFIX)).max_new_tokens)
    except (ImportError, InputError):
        return 32


def gpt3_files(name: str, path: Path, out: Path) -> dict[str, bytes]:
    """Task YAMLs and a data copy for one GPT-3 task file built by ``synthprobe build``.

    Free-form files give a loglikelihood task ``name`` and a generation task ``name_gen``;
    multiple-choice files (SAT) give one ``multiple_choice`` task ``name``.
    """
    import hashlib

    if not name or not name.replace("_", "").isalnum():
        raise InputError(f"task name {name!r} must be letters, digits and underscores", field="--gpt3")
    kind = _gpt3_kind(path)
    n = sum(1 for _ in read_jsonl(path))
    data = path.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    rel = f"data/{name}.jsonl"
    common = {
        "dataset_path": "json",
        "dataset_kwargs": {"data_files": {"test": str(out.resolve() / rel)}},
        "test_split": "test",
    }
    meta = {"version": 1.0, "items": n}
    comment = _GPT3_COMMENT.format(name=name, src=path.name, sha=sha)
    if kind == "choice":
        mc = {"task": name, "tag": ["synthprobe_gpt3"], **common, "output_type": "multiple_choice",
              "doc_to_text": "{{ctx}}", "doc_to_choice": "endings", "doc_to_target": "{{label}}",
              "target_delimiter": "", "metric_list": _MC_METRICS, "metadata": meta}
        return {rel: data, f"{name}.yaml": _dump(
            comment.replace("The completion carries", "Every ending carries")
            + "# acc_norm is lm-eval's per-character normalisation (GPT-3 and synthprobe use per "
              "token).\n", mc)}
    io_keys = {"doc_to_text": "{{context}}", "target_delimiter": ""}
    ll = {"task": name, "tag": ["synthprobe_gpt3"], **common, **io_keys,
          "doc_to_target": "{{completion}}", "output_type": "loglikelihood",
          "metric_list": [{"metric": "acc", "aggregation": "mean", "higher_is_better": True}],
          "metadata": meta}
    gen = {"task": f"{name}_gen", "tag": ["synthprobe_gpt3_gen"], **common, **io_keys,
           "doc_to_target": "{{completion | trim}}", "output_type": "generate_until",
           "generation_kwargs": {"until": ["\n"], "do_sample": False,
                                 "max_gen_toks": _max_new_tokens(name)},
           "filter_list": [{"name": "strip", "filter": [{"function": "remove_whitespace"},
                                                         {"function": "take_first"}]}],
           "metric_list": [{"metric": "exact_match", "aggregation": "mean", "higher_is_better": True,
                            "ignore_case": False, "ignore_punctuation": False}],
           "metadata": meta}
    return {
        rel: data,
        f"{name}.yaml": _dump(comment + "# acc: the gold completion is the greedy continuation "
                                        "(lm-eval's arithmetic check).\n", ll),
        f"{name}_gen.yaml": _dump(comment + "# Greedy generation up to a newline, surrounding "
                                            "whitespace removed, exact match.\n", gen),
    }


def _readme(files: dict[str, bytes], out: Path) -> bytes:
    tasks = sorted(k[:-5] for k in files if k.endswith(".yaml"))
    lines = [
        "# lm-evaluation-harness tasks exported by synthprobe",
        "",
        "Run, for example:",
        "",
        "```bash",
        f"lm_eval --model hf --model_args pretrained=MODEL,dtype=float32 \\",
        f"    --include_path {out.resolve()} --tasks {TASK} --log_samples --output_path results/",
        "```",
        "",
        "Tasks and groups in this folder:",
        "",
        *[f"- `{t}`" for t in tasks],
        "",
        "`acc_norm` here is lm-eval's per-character normalisation; ArithMark 3.0 and",
        "`synthprobe score` normalise per token. `acc` is identical under both protocols.",
        "The data files referenced by absolute path live in `data/`; moving this folder",
        "means exporting it again.",
        "",
    ]
    return "\n".join(lines).encode("utf-8")


def export_lm_eval(out: str | Path, *, data: str | Path = DEFAULT_RELEASE,
                   gpt3: dict[str, str | Path] | None = None) -> list[Path]:
    """Write the task folder; returns the written paths. Raises InputError before writing."""
    out = check_out_dir(out)
    release = load_release(data)
    files = deeparithmark_files(release, out)
    for name, path in sorted((gpt3 or {}).items()):
        for rel, blob in gpt3_files(name, Path(path), out).items():
            if rel in files:
                raise InputError(f"task {name!r} would overwrite {rel}")
            files[rel] = blob
    files["README.md"] = _readme(files, out)
    return write_tree(out, files)


def parse_gpt3_spec(spec: str) -> tuple[str, Path]:
    """``NAME=PATH``, or just ``PATH``: the task is then ``synthprobe_<file name>``."""
    name, sep, path = spec.partition("=")
    if not sep:
        stem = Path(spec).stem.replace("-", "_").replace(".", "_")
        name, path = (GPT3_PREFIX + stem if stem else ""), spec
    if not name or not path:
        raise InputError(f"expected NAME=PATH or PATH (e.g. data/gpt3/arithmetic_2da.jsonl), got {spec!r}",
                         field="--gpt3")
    return name, Path(path)


__all__ = ["export_lm_eval", "deeparithmark_files", "gpt3_files", "parse_gpt3_spec", "TASK",
           "GROUP_BY_DEPTH", "GPT3_PREFIX"]
