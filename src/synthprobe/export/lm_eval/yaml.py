"""The YAML writing shared by the lm-eval exports: a dumper that double-quotes strings with
control characters and writes ``!function`` references, wrapped ``#`` comments, and the
multiple-choice metric list."""

from __future__ import annotations

from typing import Any

import yaml

#: acc and acc_norm, averaged: the metrics of every multiple-choice task exported.
MC_METRICS = [
    {"metric": "acc", "aggregation": "mean", "higher_is_better": True},
    {"metric": "acc_norm", "aggregation": "mean", "higher_is_better": True},
]


class Function(str):
    """A YAML ``!function`` reference (lm-eval imports it from a module next to the YAML)."""


class _Dumper(yaml.SafeDumper):
    """Strings with control characters (the "\\n" stop sequence) in double quotes."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = '"' if any(c in value for c in "\n\t\r") else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


def _function(dumper: yaml.SafeDumper, value: Function) -> yaml.ScalarNode:
    return dumper.represent_scalar("!function", str(value))


_Dumper.add_representer(str, _str)
_Dumper.add_representer(Function, _function)


#: the loader module written beside the YAMLs: lm-eval resolves ``!function`` against the YAML's
#: folder but ``data_files`` against the working directory, so each task names its data relative
#: to the export folder and loads it through this module (``custom_dataset``); the folder can be
#: moved or pushed as it is
DATA_MODULE = "synthprobe_data"

DATA_MODULE_SOURCE = '''"""Loads this folder's data files for lm-eval (each task's ``custom_dataset: !function
synthprobe_data.load``). The ``data_files`` of a task are relative to this folder, so the folder
can be moved or pushed as it is. Written by ``synthprobe export lm-eval``; needs only ``datasets``."""

from pathlib import Path

HERE = Path(__file__).resolve().parent


def load(data_files=None, **_metadata):
    import datasets

    files = {split: str(HERE / path) for split, path in (data_files or {}).items()}
    return datasets.load_dataset("json", data_files=files)
'''


def data_source(rel: str) -> dict[str, Any]:
    """A task's data keys: ``data/…`` relative to the export folder, loaded by :data:`DATA_MODULE`."""
    return {
        "dataset_path": "json",
        "dataset_kwargs": {"data_files": {"test": rel}},
        "custom_dataset": Function(f"{DATA_MODULE}.load"),
    }


def dump(comment: str, body: dict[str, Any]) -> bytes:
    text = yaml.dump(body, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=10_000, default_flow_style=False)
    return (comment + text).encode("utf-8")


def comment(paragraphs: list[tuple[str, str]]) -> str:
    """``(label, text)`` pairs as a wrapped YAML comment; a label hangs the text after it."""
    import textwrap

    out = []
    for label, text in paragraphs:
        if not label and not text:
            out.append("#")
            continue
        indent = " " * (len(label) and 13)
        first = f"{label:<13}" if label else ""
        out += textwrap.wrap(
            text,
            width=96,
            initial_indent="# " + (("  " + first) if label else ""),
            subsequent_indent="# " + (("  " + indent) if label else ""),
            break_long_words=False,
            break_on_hyphens=False,
        )
    return "".join(ln.rstrip() + "\n" for ln in out)
