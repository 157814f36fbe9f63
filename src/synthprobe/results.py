"""The one results document: write it, read it, check it (both benchmarks, many models per file).

Layout (``schema = "synthprobe/results"``, ``schema_version = 2``)::

    {
      "schema": "synthprobe/results", "schema_version": 2,
      "synthprobe": "<version that wrote it>",
      "command": "synthprobe score ..."?,            # the command line, when recorded
      "protocol": {...}?,                            # how the scores were computed (Deep Arithmark)
      "datasets": {"<benchmark>": {"path", "sha256", "n_items", ...}, ...}?,
      "sweep": {"grid", "settings", "summary"}?,     # written by `synthprobe sweep` (synthprobe.sweep.run)
      "models": [                                    # one entry per scored model, in order
        {
          "model": {"spec", "name", "params", "dtype", "device", ...backend.describe()},
          "settings": {...how this model was run...},
          "seconds": {...}?, "load_s": seconds?,
          "results": {                               # one block per benchmark scored
            "deeparithmark": {"summary": {...}, "predictions"?: [...], ...},
            "arithmark3":    {... the same layout ...},
            "gpt3":          {"settings"?: {seed, format, check, limits, ...},  # else the entry's
                              "seconds"?: {...},
                              "rows": [{"task", "code", "family", "setting", "k", "n", "correct",
                                        "accuracy" (percent), "ci95", "shots", "paper", "lands",
                                        "items": [...]}, ...]},
            "number_format": {"version": 1, "formats", "deeparithmark"?, "gpt3"?}  # paired McNemar
                                                     # per format (synthprobe probe number-format)
            "steps":         {"version": 1, "probe_version", "dataset", "method", "probes",   # probe steps
                              "skipped", "audit", "summary": {...}, "items"?: [...]}
          },
          "row": {...}?,                             # the Deep Arithmark table's row, percentages
          "sweep": {"job", "label", "spec", "task", "seed", "seed_label"}?   # a sweep's job
        }
      ],
      "contamination": {"version": 1, ...}?          # `synthprobe contamination` (models may then be [])
      "validity": {"version": 1, "file", "chance", ...}?   # `synthprobe validate` (models may then be [])
      "comparisons": {"<benchmark>": {"version": 1, "pairs": [...]}}?   # several models scored in one
                                                     # run: paired A-vs-B (synthprobe.metrics.compare)
    }

A model entry's ``model.name`` is the name the user gave (``--model NAME=SPEC``; the engine's
own name is then ``model.engine_name``), else the engine's; names are unique within a file.

The ``contamination`` section (its own ``version``, :data:`CONTAMINATION_VERSIONS`) is written by
``synthprobe contamination`` and documented in :mod:`synthprobe.contamination.run`; a document
holding one may have no models. The ``validity`` section (its own ``version``,
:data:`VALIDITY_VERSIONS`) is written by ``synthprobe validate`` and documented in
:mod:`synthprobe.validity`; a document holding one may have no models either. Deep Arithmark blocks are documented in
:mod:`synthprobe.benchmarks.deeparithmark.scoring.results` (rates are fractions
in [0, 1]), GPT-3 rows in :mod:`synthprobe.benchmarks.gpt3.scoring.score` (accuracies in percent, as the
paper prints them), the ``number_format`` block (its own ``version``) in
:mod:`synthprobe.probes.number_format`, the per-step probe's ``steps`` block in
:mod:`synthprobe.benchmarks.deeparithmark.step_probe.score` and its ``summary`` in
:mod:`synthprobe.benchmarks.deeparithmark.step_probe.metrics` (fractions with exact 95 % intervals).

Files written by earlier releases still read, converted on read, with every error located at
the field of the file as it is on disk:

* ``"schema": "synthprobe/deeparithmark-results"``, ``"schema_version": 1``: the same layout
  with only Deep Arithmark / ArithMark 3.0 blocks;
* ``"benchmark": "gpt3-synthetic"``: one model per file, ``model`` and ``settings`` at the top,
  the rows in ``results`` (a list), ``seconds`` at the top.

This module is in the core layer: it imports nothing from scoring, tasks, report or export.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synthprobe.errors import InputError
from synthprobe.io.read import loads_json
from synthprobe.version import __version__

SCHEMA = "synthprobe/results"
SCHEMA_VERSION = 2


def results_document(*, synthprobe: str | None = __version__, **parts: Any) -> dict[str, Any]:
    """The top of every results document, the one place it is assembled: ``schema``,
    ``schema_version`` and ``synthprobe`` (the version that wrote it: this one unless the document
    carries another's, e.g. when converted), then ``parts`` in the order given (``command``,
    ``protocol``, ``datasets``, ``models``, ``comparisons``, ``sweep``, ``contamination``, ...); a
    part given as None is left out. ``models`` is required (``[]`` for a document without models)."""
    if "models" not in parts:
        raise TypeError("results_document() needs models=")
    doc: dict[str, Any] = {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, "synthprobe": synthprobe}
    doc.update((key, value) for key, value in parts.items() if value is not None)
    return doc


#: the model entry's blocks that belong to no benchmark → what each is, for messages; each
#: benchmark names its own in its ``layout`` part (:func:`known_blocks`)
BLOCKS = {"number_format": "a number-format"}
#: versions of the ``number_format`` block (:mod:`synthprobe.probes.number_format`) this release reads
NUMBER_FORMAT_VERSIONS = (1,)
MAX_BYTES = 512 << 20
#: the versions of the ``contamination`` section this release reads
CONTAMINATION_VERSIONS = (1,)
#: the versions of the ``validity`` section (``synthprobe validate``) this release reads
VALIDITY_VERSIONS = (1,)


class Reader:
    """Typed access to a parsed JSON document; every error names the file and the field."""

    def __init__(self, path: Path):
        self.path = path

    def fail(self, where: str, message: str) -> InputError:
        return InputError(message, path=self.path, field=where or None)

    def get(self, obj: dict, key: str, where: str, typ, *, required: bool = True, what: str = ""):
        here = f"{where}.{key}" if where else key
        if key not in obj or obj[key] is None:
            if required:
                raise self.fail(here, f"missing; expected {what or type_name(typ)}")
            return None
        value = obj[key]
        if not is_a(value, typ):
            raise self.fail(here, f"expected {what or type_name(typ)}, got {short(value)}")
        return value


def at(where: str, key: str) -> str:
    """The path of field ``key`` inside the object at ``where``."""
    return f"{where}.{key}" if where else key


def type_name(typ) -> str:
    names = {
        int: "an integer",
        float: "a number",
        str: "a string",
        dict: "an object",
        list: "a list",
        bool: "true or false",
    }
    if isinstance(typ, tuple):
        return " or ".join(names.get(t, t.__name__) for t in typ)
    return names.get(typ, typ.__name__)


def is_a(value: Any, typ) -> bool:
    """``isinstance`` for JSON values: a bool is no number, an int is a number."""
    types = typ if isinstance(typ, tuple) else (typ,)
    if isinstance(value, bool) and bool not in types:
        return False
    if float in types and isinstance(value, int):
        return True
    return isinstance(value, types)


def short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def read_json(path: str | Path) -> Any:
    """One JSON file, strictly (:func:`synthprobe.io.read.loads_json`), with located errors."""
    path = Path(path)
    if not path.exists():
        raise InputError("file does not exist", path=path)
    if not path.is_file():
        raise InputError("not a regular file", path=path)
    if path.stat().st_size > MAX_BYTES:
        raise InputError(f"larger than {MAX_BYTES >> 20} MiB; not a results file", path=path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot be read ({exc.strerror})", path=path) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"not valid UTF-8 (byte {exc.start})", path=path) from None
    if _is_data_file(text):
        raise InputError(
            "this is a data file (JSON Lines: one item per line), not a results file; pass the "
            "results JSON that 'synthprobe score' wrote (its last line says 'results: PATH')",
            path=path,
        )
    return loads_json(text, path=path)


_DATA_FIELDS = ("context", "endings", "completion", "label", "question", "choices")


def _is_data_file(text: str) -> bool:
    """A task's data file: JSON Lines (objects one per line), or one item object such as a
    Deep Arithmark or GPT-3 task record, rather than a results document."""
    lines = [ln for ln in text.splitlines()[:2] if ln.strip()]
    try:
        first = [loads_json(ln) for ln in lines]
    except InputError:
        return False
    if not first or not all(isinstance(o, dict) for o in first):
        return False
    return len(lines) > 1 or ("schema" not in first[0] and any(k in first[0] for k in _DATA_FIELDS))


@dataclass
class Block:
    """One benchmark's results for one model, and where it sits in the file (``where`` is ""
    for the rows of a one-model GPT-3 file, which sit at the top as ``results``)."""

    data: Any
    where: str


@dataclass
class Entry:
    """One scored model: its ``model`` / ``settings`` objects and its benchmark blocks."""

    model: dict
    settings: dict
    #: the entry's own object in the v2 layout (``seconds``, ``load_s``, ``row`` ...)
    data: dict
    #: where the entry sits in the file ("models[0]"; "" for a one-model GPT-3 file)
    where: str
    results: dict[str, Block] = field(default_factory=dict)

    def at(self, key: str) -> str:
        return at(self.where, key)


@dataclass
class Results:
    """A results file, whatever release wrote it, as the v2 envelope."""

    path: Path
    reader: Reader
    #: the layout on disk: SCHEMA, or an earlier layout a benchmark still reads (its ``layout`` part)
    layout: str
    synthprobe: str | None
    datasets: dict
    models: list[Entry]
    #: the command line that wrote the file, when it records one
    command: str | None = None
    #: the ``contamination`` section (``synthprobe contamination``), when the file holds one
    contamination: dict | None = None
    #: the paired comparison of the file's models, per benchmark (:mod:`synthprobe.metrics.compare`)
    comparisons: dict | None = None
    #: the ``validity`` section (``synthprobe validate``), when the file holds one; its parts are
    #: checked by the report's Validity section (:mod:`synthprobe.validity.report`)
    validity: dict | None = None

    def dataset_sha256(self, benchmark: str) -> str | None:
        block = self.datasets.get(benchmark)
        if not isinstance(block, dict):
            return None
        return self.reader.get(block, "sha256", f"datasets.{benchmark}", str, required=False)

    def blocks(self, benchmark: str) -> list[tuple[Entry, Block]]:
        return [(e, e.results[benchmark]) for e in self.models if benchmark in e.results]


def _layouts() -> tuple:
    """The ``layout`` parts of the built-in benchmarks (:mod:`synthprobe.registry`): the blocks
    each owns and the earlier file layouts each still reads."""
    from synthprobe import registry

    found = (registry.find(name) for name in registry.BUILTIN)
    return tuple(bench.part("layout") for bench in found if bench is not None and bench.has("layout"))


def known_blocks() -> dict[str, str | None]:
    """Every block a model entry may hold, built in → what it is (None for a companion block,
    read only beside another): each built-in benchmark's, then :data:`BLOCKS`. A benchmark
    installed through an entry point adds its own (its name), read as an object."""
    out: dict[str, str | None] = {}
    for part in _layouts():
        out.update(part.BLOCKS)
    return {**out, **BLOCKS}


def _owners() -> dict[str, Any]:
    """block name → the ``layout`` part of the benchmark that owns it."""
    return {name: part for part in _layouts() for name in part.BLOCKS}


def _earlier_layouts() -> dict[str, tuple[int, ...]]:
    """schema → versions, of the earlier layouts the benchmarks still read."""
    return {schema: v for part in _layouts() for schema, v in getattr(part, "LAYOUTS", {}).items()}


def _expected_kinds() -> str:
    words = [f"{schema!r} ({w})" for part in _layouts() for schema, w in getattr(part, "LAYOUT_WORDS", {}).items()]
    words += [part.ONE_MODEL_WORDS for part in _layouts() if hasattr(part, "one_model")]
    return f"expected {SCHEMA!r} (a file written by `synthprobe score`), " + ", or ".join(
        [", ".join(words[:-1]), words[-1]] if len(words) > 1 else words
    )


def _one_model(doc: dict, r: Reader) -> tuple[str, list[Entry]]:
    """An earlier one-model file (a ``benchmark`` value, no ``schema``): the layout, its entries."""
    readers = [part for part in _layouts() if hasattr(part, "one_model")]
    for part in readers:
        entries = part.one_model(doc, r, Entry, Block)
        if entries is not None:
            return part.ONE_MODEL, entries
    known = " or ".join(repr(part.ONE_MODEL) for part in readers)
    raise r.fail("benchmark", f"expected {known} (an earlier one-model layout), got {doc.get('benchmark')!r}")


def _contamination(doc: dict, r: Reader) -> dict | None:
    section = r.get(doc, "contamination", "", dict, required=False)
    if section is None:
        return None
    version = r.get(section, "version", "contamination", int)
    if version not in CONTAMINATION_VERSIONS:
        raise r.fail("contamination.version", f"expected one of {list(CONTAMINATION_VERSIONS)}, got {version}")
    r.get(section, "tasks", "contamination", list)
    return section


def _validity(doc: dict, r: Reader) -> dict | None:
    """The ``validity`` section's envelope: its ``version``, the ``file`` it judged and the
    ``chance`` level (a fraction); the parts are left to their readers."""
    section = r.get(doc, "validity", "", dict, required=False)
    if section is None:
        return None
    version = r.get(section, "version", "validity", int)
    if version not in VALIDITY_VERSIONS:
        raise r.fail("validity.version", f"expected one of {list(VALIDITY_VERSIONS)}, got {version}")
    r.get(section, "file", "validity", dict)
    chance = r.get(section, "chance", "validity", float, what="a fraction in [0, 1]")
    if not 0 <= chance <= 1:
        raise r.fail("validity.chance", f"expected a fraction in [0, 1], got {chance}")
    return section


def _registered(name: str) -> bool:
    """Whether ``name`` is a benchmark of the registry beyond the built-in blocks (:func:`known_blocks`; one installed
    through an entry point): its block is read as an object and left to its own report section."""
    from synthprobe.registry import find

    return find(name) is not None


def _entries(doc: dict, r: Reader, *, allow_empty: bool = False) -> list[Entry]:
    known, owners = known_blocks(), _owners()
    models = r.get(doc, "models", "", list, required=not allow_empty) or []
    if not models and not allow_empty:
        raise r.fail("models", "is empty; expected at least one scored model")
    out = []
    for i, e in enumerate(models):
        where = f"models[{i}]"
        if not isinstance(e, dict):
            raise r.fail(where, f"expected an object, got {type(e).__name__}")
        model = r.get(e, "model", where, dict)
        settings = r.get(e, "settings", where, dict, required=False) or {}
        results = r.get(e, "results", where, dict)
        unknown = [k for k in results if k not in known]
        registered = [k for k in unknown if _registered(k)]
        if len(registered) < len(unknown):
            bad = next(k for k in unknown if k not in registered)
            raise r.fail(f"{where}.results.{bad}", f"expected a benchmark, one of {list(known)}")
        blocks = {}
        for name in [*known, *registered]:
            block = r.get(results, name, f"{where}.results", dict, required=False)
            if block is not None:
                blocks[name] = Block(block, f"{where}.results.{name}")
        for name, block in blocks.items():
            owner = owners.get(name)
            if owner is not None and hasattr(owner, "check_block"):
                owner.check_block(name, block, r)
        if "number_format" in blocks:
            nf = blocks["number_format"]
            version = r.get(nf.data, "version", nf.where, int)
            if version not in NUMBER_FORMAT_VERSIONS:
                raise r.fail(f"{nf.where}.version", f"expected one of {list(NUMBER_FORMAT_VERSIONS)}, got {version}")
        out.append(Entry(model=model, settings=settings, data=e, where=where, results=blocks))
    return out


def parse(doc: Any, path: str | Path) -> Results:
    """Check the envelope of a parsed results document and convert it to the v2 layout."""
    path = Path(path)
    r = Reader(path)
    if not isinstance(doc, dict):
        raise r.fail("", f"expected a JSON object (a results file), got {type(doc).__name__}")
    if "schema" not in doc and "benchmark" in doc:
        layout, entries = _one_model(doc, r)
        return Results(path, r, layout, doc.get("synthprobe"), {}, entries, doc.get("command"))
    schema = doc.get("schema")
    earlier = _earlier_layouts()
    versions = {SCHEMA: (SCHEMA_VERSION,), **earlier}
    if not isinstance(schema, str) or schema not in versions:
        raise r.fail("schema", f"{_expected_kinds()}; got {schema!r}")
    version = r.get(doc, "schema_version", "", int)
    if version not in versions[schema]:
        raise r.fail("schema_version", f"expected one of {list(versions[schema])}, got {version}")
    datasets = r.get(doc, "datasets", "", dict, required=False) or {}
    contamination = _contamination(doc, r) if schema == SCHEMA else None
    validity = _validity(doc, r) if schema == SCHEMA else None
    models = _entries(doc, r, allow_empty=contamination is not None or validity is not None)
    if schema in earlier:  # an earlier layout holds its own benchmark's blocks alone
        owner = next(part for part in _layouts() if schema in getattr(part, "LAYOUTS", {}))
        for e in models:
            for name in e.results:
                if name not in owner.BLOCKS:
                    other = _owners().get(name)
                    what = (other.BLOCKS[name] if other is not None else None) or repr(name)
                    raise r.fail(
                        f"{e.where}.results.{name}", f"a {schema!r} file holds no {what.removeprefix('a ')} results"
                    )
    comparisons = r.get(doc, "comparisons", "", dict, required=False)
    return Results(
        path,
        r,
        schema,
        doc.get("synthprobe"),
        datasets,
        models,
        doc.get("command"),
        contamination,
        comparisons,
        validity,
    )


def read_results(path: str | Path) -> Results:
    """Read and check one results file of any layout (see the module docstring)."""
    return parse(read_json(path), path)


def dumps_results(doc: Any) -> str:
    """A results document as JSON text: indented as :func:`synthprobe.io.write.dumps_json`, except
    that each per-item record (an element of a list under an ``"items"`` key) sits on one line,
    so a full run's file stays small and readable."""
    return _dump(doc, "", False) + "\n"


def _dump(value: Any, indent: str, one_line_items: bool) -> str:
    inner = indent + "  "
    if isinstance(value, dict) and value:
        parts = [
            f"{inner}{json.dumps(k, ensure_ascii=False)}: {_dump(v, inner, k == 'items')}" for k, v in value.items()
        ]
        return "{\n" + ",\n".join(parts) + f"\n{indent}}}"
    if isinstance(value, list) and value:
        if one_line_items:
            parts = [inner + json.dumps(v, ensure_ascii=False) for v in value]
        else:
            parts = [inner + _dump(v, inner, False) for v in value]
        return "[\n" + ",\n".join(parts) + f"\n{indent}]"
    return json.dumps(value, ensure_ascii=False)


# -- numbers as tables print them ------------------------------------------------------------

DASH = "—"
MINUS = "−"


def fmt_params(n: int | None) -> str:
    """A parameter count as the card prints it: ``135 M``, ``1.30 B``."""
    if n is None:
        return DASH
    if n >= 1e9:
        return f"{n / 1e9:.2f} B"
    if n >= 1e6:
        return f"{n / 1e6:.0f} M"
    if n >= 1e3:
        return f"{n / 1e3:.0f} K"
    return str(n)


def fmt_p(p: float | None) -> str:
    """A p-value: two significant digits, ``1.2e−5`` below 0.001."""
    if p is None or p != p:
        return DASH
    if p >= 1e-3:
        return f"{p:.2g}"
    mant, exp = f"{p:.1e}".split("e")
    return f"{mant}e{MINUS}{int(exp[1:])}" if exp.startswith("-") else f"{mant}e{int(exp)}"


def percent(x: float | None, digits: int | None = None, *, of: int | None = None) -> float | None:
    """``x`` in percent as a number: a fraction (``100 * x``) or, with ``of``, a count of ``of``
    items (``100 * x / of``); rounded to ``digits`` decimals when given; None for None or NaN."""
    if x is None or x != x:
        return None
    value = 100 * x if of is None else 100 * x / of
    return value if digits is None else round(value, digits)


def fmt_pct(
    x: float | None,
    digits: int = 2,
    unit: str = "",
    *,
    of: int | None = None,
    in_percent: bool = False,
    dash: str = DASH,
) -> str:
    """``x`` in percent as text: ``digits`` decimals, then ``unit`` (``" %"``, or nothing where
    the column or sentence says percent). ``x`` is a fraction, a count of ``of`` items, or with
    ``in_percent`` already a percentage; ``dash`` for None or NaN."""
    if x is None or x != x:
        return dash
    value = x if in_percent else percent(x, of=of)
    return f"{value:.{digits}f}{unit}"


def fmt_pct_ci(x: float, ci: Sequence[float], digits: int = 2) -> str:
    """``24.80 % [20.60, 29.30]``: a fraction and its interval's ends, in percent."""
    lo, hi = ci
    return f"{fmt_pct(x, digits)} % [{fmt_pct(lo, digits)}, {fmt_pct(hi, digits)}]"


def primary_metric(summary: Mapping[str, Any]) -> str:
    """The metric a summary reports first: ``acc_norm`` for log-likelihood, ``accuracy`` for
    generated answers (files written before ``primary`` was recorded are ``acc_norm``)."""
    return str(summary.get("primary") or "acc_norm")


def group_rate(block: Mapping[str, Any], summary: Mapping[str, Any]) -> float | None:
    """A group block's (``by_depth[...]``, ``by_template[...]``) rate under the summary's
    primary metric (older files' generated blocks hold it as ``acc_norm``)."""
    key = primary_metric(summary)
    return block.get(key, block.get("acc_norm"))


# -- how a model was asked: protocol and chat template -----------------------------------------


def variant_label(entry: dict[str, Any]) -> str:
    """What sets one results entry apart from another of the same model: the protocol (when
    not ``loglik``), ``+cot``, the chat template (name and the first 8 hex digits of its
    SHA-256) and the system prompt's hash; ``""`` for a plain log-likelihood run without a
    template. Tables append it to the model's name, so rows that differ only in template,
    system prompt or protocol are never merged."""
    parts: list[str] = []
    proto = entry.get("protocol") if isinstance(entry.get("protocol"), dict) else {}
    name = proto.get("name", "loglik")
    if name != "loglik":
        parts.append(
            str(name)
            + ("+cot" if proto.get("cot") else "")
            + (f"+{proto['resolve']}" if proto.get("resolve", "none") != "none" else "")
        )
    chat = entry.get("chat") if isinstance(entry.get("chat"), dict) else {}
    if chat.get("chat_template", "none") != "none":
        sha = str(chat.get("chat_template_sha256") or "")[:8]
        parts.append(f"chat:{chat.get('chat_template_name')}@{sha}")
    if chat.get("system_prompt_sha256"):
        parts.append(f"sys@{str(chat['system_prompt_sha256'])[:8]}")
    return " ".join(parts)


def variant_settings(entry: dict[str, Any]) -> dict[str, str]:
    """The protocol and chat block as text for a report's run table (empty for an entry that
    records neither)."""
    out: dict[str, str] = {}
    proto = entry.get("protocol") if isinstance(entry.get("protocol"), dict) else None
    if proto:
        out["protocol"] = str(proto.get("name", "loglik")) + (" (cot)" if proto.get("cot") else "")
    chat = entry.get("chat") if isinstance(entry.get("chat"), dict) else None
    if chat:
        out["chat template"] = str(chat.get("chat_template_name", "none"))
        if chat.get("chat_template_sha256"):
            out["chat template SHA-256"] = str(chat["chat_template_sha256"])
        if chat.get("system_prompt") is not None:
            out["system prompt"] = str(chat["system_prompt"])
            out["system prompt SHA-256"] = str(chat.get("system_prompt_sha256"))
        if chat.get("fewshot_layout"):
            out["few-shot layout"] = str(chat["fewshot_layout"])
    return out
