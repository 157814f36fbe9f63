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


def dump(comment: str, body: dict[str, Any]) -> bytes:
    text = yaml.dump(body, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=10_000,
                     default_flow_style=False)
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
        out += textwrap.wrap(text, width=96, initial_indent="# " + (("  " + first) if label else ""),
                             subsequent_indent="# " + (("  " + indent) if label else ""),
                             break_long_words=False, break_on_hyphens=False)
    return "".join(ln.rstrip() + "\n" for ln in out)

