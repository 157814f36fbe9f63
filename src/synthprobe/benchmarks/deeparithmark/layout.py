"""Deep Arithmark's place in the results document (:mod:`synthprobe.results`): the blocks it
owns in a model entry, their envelope checks, and the Deep Arithmark-only layout of earlier
releases, which is still read."""

from __future__ import annotations

#: the model entry's blocks it owns → what each is, for messages (None: a companion block, read
#: only beside another: ArithMark 3.0 on the same weights)
BLOCKS = {
    "deeparithmark": "a Deep Arithmark",
    "arithmark3": None,
    "steps": "a per-step probe",
    "twins": "a perturbation-twins probe",
}
#: the layout version of a ``steps`` block (``synthprobe probe steps``), its ``version`` field
STEPS_VERSION = 1
#: the layout version of a ``twins`` block (``synthprobe probe twins``), its ``version`` field
TWINS_VERSION = 1
#: the envelope version each checked block must carry
_VERSIONS = {"steps": STEPS_VERSION, "twins": TWINS_VERSION}
#: the Deep Arithmark-only layout of earlier releases (read, converted): schema → its versions
LAYOUTS = {"synthprobe/deeparithmark-results": (1,)}
#: how the message about an unknown schema names each of :data:`LAYOUTS`
LAYOUT_WORDS = {"synthprobe/deeparithmark-results": "an older `synthprobe score deeparithmark` file"}


def check_block(name: str, block, r) -> None:
    """The envelope of a ``steps`` or ``twins`` block (its version and summary; a ``twins``
    block's originals too); the others are checked by their readers."""
    if name in _VERSIONS:
        version = r.get(block.data, "version", block.where, int)
        if version != _VERSIONS[name]:
            raise r.fail(f"{block.where}.version", f"expected {_VERSIONS[name]}, got {version}")
        r.get(block.data, "summary", block.where, dict)
        if name == "twins":
            originals = r.get(block.data, "originals", block.where, dict)
            r.get(originals, "sha256", f"{block.where}.originals", str)
            r.get(originals, "n", f"{block.where}.originals", int)


def number_format_table(r, part: dict, where: str) -> tuple[str, str]:
    """The title of its table in a number-format block (``synthprobe probe number-format``) and
    the field its rows are grouped by."""
    title = (
        f"Deep Arithmark, seed {r.get(part, 'seed', where, int)}, {r.get(part, 'n', where, int):,} items "
        f"({r.get(part, 'metric', where, str)})"
    )
    return title, "depth"
