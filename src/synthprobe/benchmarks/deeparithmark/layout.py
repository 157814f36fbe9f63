"""Deep Arithmark's place in the results document (:mod:`synthprobe.results`): the blocks it
owns in a model entry, their envelope checks, and the Deep Arithmark-only layout of earlier
releases, which is still read."""

from __future__ import annotations

#: the model entry's blocks it owns → what each is, for messages (None: a companion block, read
#: only beside another: ArithMark 3.0 on the same weights)
BLOCKS = {"deeparithmark": "a Deep Arithmark", "arithmark3": None, "steps": "a per-step probe"}
#: the layout version of a ``steps`` block (``synthprobe probe steps``), its ``version`` field
STEPS_VERSION = 1
#: the Deep Arithmark-only layout of earlier releases (read, converted): schema → its versions
LAYOUTS = {"synthprobe/deeparithmark-results": (1,)}
#: how the message about an unknown schema names each of :data:`LAYOUTS`
LAYOUT_WORDS = {"synthprobe/deeparithmark-results": "an older `synthprobe score deeparithmark` file"}


def check_block(name: str, block, r) -> None:
    """The envelope of a ``steps`` block (its version and summary); the others are checked by
    their readers."""
    if name == "steps":
        version = r.get(block.data, "version", block.where, int)
        if version != STEPS_VERSION:
            raise r.fail(f"{block.where}.version", f"expected {STEPS_VERSION}, got {version}")
        r.get(block.data, "summary", block.where, dict)


def number_format_table(r, part: dict, where: str) -> tuple[str, str]:
    """The title of its table in a number-format block (``synthprobe probe number-format``) and
    the field its rows are grouped by."""
    title = (
        f"Deep Arithmark, seed {r.get(part, 'seed', where, int)}, {r.get(part, 'n', where, int):,} items "
        f"({r.get(part, 'metric', where, str)})"
    )
    return title, "depth"
