"""``synthprobe cache info`` and ``synthprobe cache clear``."""

from __future__ import annotations

import argparse
import json

from synthprobe.errors import InputError
from synthprobe.scoring import cache


def _human(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return str(n)  # pragma: no cover


def _cmd_info(args: argparse.Namespace) -> int:
    doc = cache.info()
    if args.json:
        print(json.dumps(doc, indent=2))
        return 0
    print(f"cache: {doc['root']}")
    for name in ("scores", "models"):
        part = doc[name]
        print(f"  {name:<7} {part['files']:>6,} files  {_human(part['bytes']):>11}  {part['path']}")
    return 0


def _cmd_clear(args: argparse.Namespace) -> int:
    scores = args.scores or args.all
    models = args.models or args.all
    if not (scores or models):
        raise InputError("say what to clear: --scores, --models or --all", field="cache clear")
    try:
        removed = cache.clear(scores=scores, models=models)
    except OSError as exc:
        raise InputError(f"cannot be removed ({exc.strerror})", path=exc.filename) from None
    for folder in removed:
        print(f"removed {folder}")
    if not removed:
        print("nothing to remove")
    return 0


def register(verbs: dict) -> None:
    p = verbs["cache"].add_parser(
        "info",
        help="where the cache is and how much each part holds",
        description="Show the cache folder ($SYNTHPROBE_CACHE, default ~/.cache/synthprobe) and the files "
        "and bytes held by per-item scores (scores/) and converted model weights (models/).",
    )
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.set_defaults(func=_cmd_info)
    p = verbs["cache"].add_parser(
        "clear",
        help="delete cached per-item scores and/or converted model weights",
        description="Delete parts of the cache. Per-item scores let an interrupted 'synthprobe score' run "
        "resume; deleting them makes the next run score every item again. Converted weights "
        "are rebuilt from the .gguf file on next use.",
        epilog="example: synthprobe cache clear --scores",
    )
    p.add_argument("--scores", action="store_true", help="per-item scores ($SYNTHPROBE_CACHE/scores)")
    p.add_argument(
        "--models", action="store_true", help="weights converted from .gguf files ($SYNTHPROBE_CACHE/models)"
    )
    p.add_argument("--all", action="store_true", help="both")
    p.set_defaults(func=_cmd_clear)
