"""``synthprobe build deeparithmark`` and ``deeparithmark.py``: build, selftest, shortcut audit.

Two front ends share these functions:

* ``python deeparithmark.py build|selftest|audit`` at the repository root (:func:`main`),
  which defaults to the released file ``data/deeparithmark-1.jsonl``;
* ``synthprobe build deeparithmark --seed S --n N --out PATH [--selftest]``
  (:func:`register`), for fresh private variants.

Exit status: 0 success; 1 a failed check, a ``--check`` mismatch or a failed build;
2 bad input (unreadable file, bad argument value).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from synthprobe.backends.spec import EMBEDDED_ALIAS
from synthprobe.benchmarks.deeparithmark.composition import (
    DECOY_MODES,
    DEFAULT_DECOYS,
    MAX_BUILD_SIZE,
    RELEASE_FILE,
    RELEASE_SEED,
    RELEASE_SIZE,
)
from synthprobe.commandline import CommandParser, add_overwrite_argument, int_in_range, nonneg_int
from synthprobe.errors import EXIT_BAD_INPUT, EXIT_FAILED, InputError, run_command_line
from synthprobe.prompts.numformat import NUMBER_FORMATS

#: the embedding adversary's embeddings: the embedded model by default, or hashed character n-grams
DEFAULT_EMBEDDER = EMBEDDED_ALIAS
CHAR_NGRAMS = "char-ngram"

# ---------------------------------------------------------------------------------------
# Argument types and checks
# ---------------------------------------------------------------------------------------


def check_writable(out: Path) -> None:
    """Fail early, before a long build, if ``out`` cannot be written (a folder, or a place where no
    file can be created: :func:`synthprobe.io.write.check_writable`)."""
    from synthprobe.io.write import check_writable as writable

    if out.is_dir():
        raise InputError("is a directory; expected the path of the file to write", path=out, field="--out")
    writable(out, "--out")


# ---------------------------------------------------------------------------------------
# Commands
# ---------------------------------------------------------------------------------------


def _compare(
    out: Path, seed: int, n: int, number_format: str = "plain", templates=None, decoys: str = DEFAULT_DECOYS
) -> int:
    from synthprobe.benchmarks.deeparithmark.build import dumps_item, iter_items
    from synthprobe.io.read import sha256_file

    if not out.is_file():
        raise InputError("does not exist; nothing to compare the build with", path=out)
    extra = {} if templates is None else {"templates": templates}
    with open(out, "rb") as fh:
        items = iter_items(seed, n, number_format=number_format, decoys=decoys, **extra)
        for lineno, item in enumerate(items, start=1):
            want = (dumps_item(item) + "\n").encode("utf-8")
            have = fh.readline()
            if have != want:
                print(
                    f"{out}: line {lineno} differs from the build for seed {seed}, n {n:,}; "
                    f"run the build without --check to regenerate it",
                    file=sys.stderr,
                )
                return EXIT_FAILED
        if fh.read(1):
            print(f"{out}: has lines after the {n:,} items of the build for seed {seed}", file=sys.stderr)
            return EXIT_FAILED
    print(f"{out}: identical to the build for seed {seed}, n {n:,}")
    print(f"sha256 {sha256_file(out)}")
    return 0


def _identical(out: Path, seed: int, n: int, decoys: str = DEFAULT_DECOYS) -> bool:
    """Whether ``out`` holds exactly the build for ``seed`` and ``n`` (rendered in memory)."""
    from synthprobe.benchmarks.deeparithmark.build import dumps_item, iter_items

    with open(out, "rb") as fh:
        for item in iter_items(seed, n, decoys=decoys):
            if fh.readline() != (dumps_item(item) + "\n").encode("utf-8"):
                return False
        return not fh.read(1)


def _outside_families(args: argparse.Namespace, number_format: str):
    """``--family`` / ``--composition``: the table to build from, the sources of the outside
    families and the families table to write beside the file; ``(None, (), None)`` for ours."""
    specs = getattr(args, "family", None) or []
    composition = getattr(args, "composition", None)
    if not specs and composition is None:
        return None, (), None
    from synthprobe.benchmarks.deeparithmark.base import FAMILIES
    from synthprobe.benchmarks.deeparithmark.plugins import (
        by_name,
        describe,
        family_table,
        load_source,
        preflight,
        source_of,
    )

    sources, outside, origins, shown = [], [], {}, {}
    for spec in specs:
        source = source_of(spec)
        names, origin = load_source(source, shown=spec)
        sources.append(source)
        for name in names:
            outside.append(name)
            origins[name] = origin
            shown[name] = spec
    templates = family_table(outside, Path(composition) if composition else None)
    rows = by_name(templates)
    for name in outside:
        preflight(FAMILIES[name], rows, shown=shown[name])
    return (
        templates,
        tuple(sources),
        describe(templates, origins, seed=args.seed, n=args.n, number_format=number_format),
    )


def _control_conflicts(args: argparse.Namespace) -> None:
    """``--control`` writes a flawed build of the release's families and nothing else."""
    given = [
        opt
        for opt, on in (
            ("--family", getattr(args, "family", None)),
            ("--composition", getattr(args, "composition", None) is not None),
            ("--number-format", getattr(args, "number_format", "plain") != "plain"),
            ("--check", args.check),
            ("--selftest", getattr(args, "selftest", False)),
            ("--workers", getattr(args, "workers", None) is not None),
        )
        if on
    ]
    if given:
        raise InputError(
            f"a positive control is a flawed build of the release's families in plain digits, "
            f"written once; it takes no {', '.join(given)}",
            field="--control",
        )


def cmd_build_control(args: argparse.Namespace) -> int:
    from synthprobe.benchmarks.deeparithmark.build import BuildError
    from synthprobe.benchmarks.deeparithmark.controls import CONTROLS, build_control
    from synthprobe.io.read import sha256_file

    if args.control not in CONTROLS:
        raise InputError(f"no control {args.control!r}; expected one of {', '.join(CONTROLS)}", field="--control")
    _control_conflicts(args)
    out = Path(args.out)
    if out.exists() and not out.is_dir() and not args.overwrite:
        raise InputError("already exists; add --overwrite to replace it", path=out, field="--out")
    check_writable(out)
    try:
        build_control(out, args.control, seed=args.seed, n=args.n, overwrite=args.overwrite)
    except BuildError as exc:
        print(f"build failed, nothing written: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except OSError as exc:
        raise InputError(f"cannot be written ({exc.strerror})", path=out, field="--out") from None
    print(
        f"wrote {out}: {args.n:,} items of the positive control {args.control} from seed {args.seed} "
        f"({CONTROLS[args.control]})"
    )
    print(
        "a deliberately flawed build, for testing a choices-only adversary (synthprobe validate); "
        "never report scores on it"
    )
    print(f"sha256 {sha256_file(out)}")
    return 0


def cmd_build(args: argparse.Namespace) -> int:
    from synthprobe.benchmarks.deeparithmark.build import BuildError, build
    from synthprobe.benchmarks.deeparithmark.twins.build_record import record_path, write_record
    from synthprobe.io.read import sha256_file
    from synthprobe.io.write import check_outputs

    if getattr(args, "control", None) is not None:
        return cmd_build_control(args)
    out = Path(args.out if args.out is not None else args._default_out)
    number_format = getattr(args, "number_format", "plain")
    if args.out is None and number_format != "plain":
        raise InputError(
            f"the release file is written in plain digits; pass --out for a {number_format} rendering",
            field="--number-format",
        )
    templates, sources, table = _outside_families(args, number_format)
    try:
        if args.check:
            return _compare(out, args.seed, args.n, number_format, templates, getattr(args, "decoys", DEFAULT_DECOYS))
        if args.out is None and out.is_file() and not args.overwrite:
            # The release file: a fresh render identical to it leaves it untouched (so README's
            # command changes no tracked file); one that differs is refused without --overwrite.
            if _identical(out, args.seed, args.n, getattr(args, "decoys", DEFAULT_DECOYS)):
                print(f"{out}: already identical to the build for seed {args.seed}, n {args.n:,}; left untouched")
                print(f"sha256 {sha256_file(out)}")
                return _run_selftest(out, None, trained=True) if getattr(args, "selftest", False) else 0
            raise InputError(
                f"exists and differs from the build for seed {args.seed}, n {args.n:,}; pass --overwrite to replace it",
                path=out,
                field="--out",
            )
        outputs = [(out, "--out")]
        if table is not None:
            from synthprobe.benchmarks.deeparithmark.plugins import table_path

            outputs.append((table_path(out), "--out"))
        # The build record (FILE.build.json) says how the file was built, so 'build twins' needs
        # no --seed; the release's default build writes none (no tracked file changes).
        record = args.out is not None
        if record:
            outputs.append((record_path(out), "--out"))
        check_outputs(outputs, overwrite=args.overwrite)
        check_writable(out)
        extra = {} if templates is None else {"templates": templates, "sources": sources, "table": table}
        decoys = getattr(args, "decoys", DEFAULT_DECOYS)
        res = build(
            out,
            seed=args.seed,
            n=args.n,
            progress=args.progress,
            workers=getattr(args, "workers", None),
            number_format=number_format,
            decoys=decoys,
            **extra,
        )
        if record:
            write_record(out, seed=res.seed, n=res.n, decoys=decoys, number_format=number_format, sha256=res.sha256)
    except BuildError as exc:
        print(f"build failed, nothing written: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except OSError as exc:
        raise InputError(f"cannot be written ({exc.strerror})", path=out, field="--out") from None
    tries = sum(res.stats.attempts.values())
    shown = "" if number_format == "plain" else f", numbers in the {number_format} format"
    print(
        f"wrote {out}: {res.n:,} items from seed {res.seed}{shown} in {res.seconds:.1f} s "
        f"({tries:,} draws, {tries / res.n:.2f} per item; {res.workers} worker"
        f"{'s' if res.workers != 1 else ''}, {res.cpu_us_per_item:,.0f} µs CPU per item)"
    )
    print(f"sha256 {res.sha256}")
    if table is not None:
        from synthprobe.benchmarks.deeparithmark.plugins import table_path

        print(f"families table: {table_path(out)} ({', '.join(f['name'] for f in table['families'])})")
    if record:
        print(f"build record: {record_path(out)} (seed, n, decoys, number format, sha256; read by 'build twins')")
    if getattr(args, "selftest", False):
        return _run_selftest(out, None, trained=True)
    return 0


def _run_selftest(path: Path, upstream: Path | None, trained: bool = False) -> int:
    from synthprobe.benchmarks.deeparithmark.selftest import selftest

    report = selftest(path, upstream=upstream, trained=trained)
    print(report.table())
    return 0 if report.ok else EXIT_FAILED


def cmd_selftest(args: argparse.Namespace) -> int:
    return _run_selftest(Path(args.path), Path(args.upstream) if args.upstream else None, args.trained)


def cmd_audit(args: argparse.Namespace) -> int:
    from synthprobe.benchmarks.deeparithmark.audit import (
        by_template,
        format_table,
        load_audit_items,
        score,
        strategy_picks,
        tolerance,
    )

    path = Path(args.path)
    trained = _trained_audit_options(args) if getattr(args, "trained", False) else None
    items = load_audit_items(path)
    picks = strategy_picks(items)
    rows = [score(name, p, items) for name, p in picks.items()]
    print(format_table(rows, title=f"Shortcut audit: {path} ({len(items):,} items)"))
    if args.by_template:
        print()
        print(by_template(items, picks))
    fixed_ok = all(r.within(tolerance(len(items))) for r in rows)
    if trained is None:
        return 0 if fixed_ok else EXIT_FAILED
    code = _trained_audit(path, args, trained)
    return code if fixed_ok else EXIT_FAILED


def _trained_audit_options(args: argparse.Namespace) -> dict:
    """The trained audit's options, checked before any work (bad ones exit 2)."""
    from synthprobe.benchmarks.deeparithmark.trained_audit import BUDGETS, check_sizes
    from synthprobe.metrics.choices_only import ADVERSARIES

    names = [n.strip() for n in args.adversaries.split(",") if n.strip()]
    unknown = [n for n in names if n not in ADVERSARIES]
    if not names or unknown:
        raise InputError(
            f"expected adversaries separated by commas among {', '.join(ADVERSARIES)}, got {args.adversaries!r}",
            field="--adversaries",
        )
    sizes = BUDGETS[args.budget]
    train_n = args.train_items if args.train_items is not None else sizes.train
    audit_n = args.audit_items if args.audit_items is not None else sizes.audit
    check_sizes(args.budget, train_n, audit_n)
    embed = None
    if "embedding" in names and args.embedder != CHAR_NGRAMS:
        from synthprobe.backends import ModelLoadError, text_embedder

        try:
            embed = text_embedder(args.embedder)  # a bad model spec fails here, before any build
        except ModelLoadError as exc:
            raise InputError(str(exc), field="--embedder") from None
    if args.json is not None:
        out = Path(args.json)
        if out.is_dir():
            raise InputError("is a directory; expected the path of the JSON file to write", path=out, field="--json")
        if out.exists() and not args.overwrite:
            raise InputError("already exists; add --overwrite to replace it", path=out, field="--json")
        if not out.resolve().parent.is_dir():
            raise InputError("cannot be written: its folder does not exist", path=out, field="--json")
    return {"adversaries": list(dict.fromkeys(names)), "train_n": train_n, "audit_n": audit_n, "embed": embed}


def _trained_audit(path: Path, args: argparse.Namespace, options: dict) -> int:
    """Run the trained choices-only audit, print its table (and write --json); 0 when it passes."""
    from tqdm import tqdm

    from synthprobe.benchmarks.deeparithmark import trained_audit as ta
    from synthprobe.benchmarks.deeparithmark.build import BuildError
    from synthprobe.io.write import atomic_write_json

    names = options["adversaries"]
    total = ta.planned_steps(len(names), not args.no_controls)
    with tqdm(total=total, unit="step", file=sys.stderr, disable=not sys.stderr.isatty(), leave=False) as bar:

        def step(what: str) -> None:
            bar.set_description(what)
            bar.update(1)

        try:
            report = _run_trained(ta, path, args, options, step)
        except BuildError as exc:
            print(f"trained audit: a build failed: {exc}", file=sys.stderr)
            return EXIT_FAILED
    print(ta.format_report(report))
    if args.json is not None:
        atomic_write_json(args.json, report)
        print(f"report: {args.json}")
    return 0 if report["verdict"]["passes"] else EXIT_FAILED


def _run_trained(ta, path: Path, args: argparse.Namespace, options: dict, step) -> dict:
    """The trained audit's report; a model embedder is named in it by its model and fingerprint,
    and closed afterwards."""
    from synthprobe.metrics.choices_only import char_ngram_embedder

    names = options["adversaries"]
    embed, embedder = options["embed"], None
    if "embedding" in names:
        embed, embedder = (embed, args.embedder) if embed is not None else (char_ngram_embedder(), CHAR_NGRAMS)
    try:
        report = ta.run(
            path,
            budget=args.budget,
            train_n=options["train_n"],
            audit_n=options["audit_n"],
            adversaries=names,
            controls=not args.no_controls,
            decoys=args.decoys,
            seed=args.audit_seed,
            embed=embed,
            embedder=embedder,
            step=step,
        )
        if hasattr(embed, "describe") and embed.backend is not None:
            model = embed.describe()
            report["embedder"] = f"{args.embedder} ({model['model']}, fingerprint {model['fingerprint'][:12]})"
        return report
    finally:
        if hasattr(embed, "close"):
            embed.close()


# ---------------------------------------------------------------------------------------
# build twins
# ---------------------------------------------------------------------------------------


def _twin_kinds(spec: str) -> list[str] | None:
    """``--kinds``: ``all`` (None: every kind a family of the file supports) or ``k1,k2``."""
    from synthprobe.benchmarks.deeparithmark.base import TWIN_KINDS

    if spec.strip() == "all":
        return None
    kinds = [k.strip() for k in spec.split(",") if k.strip()]
    if not kinds:
        raise InputError(f"expected 'all' or twin kinds separated by commas ({', '.join(TWIN_KINDS)})", field="--kinds")
    for k in kinds:
        if k not in TWIN_KINDS:
            raise InputError(
                f"unknown twin kind {k!r}; expected 'all' or some of {', '.join(TWIN_KINDS)}", field="--kinds"
            )
    return list(dict.fromkeys(kinds))


def _twin_originals(args: argparse.Namespace):
    """The originals of ``build twins``: ``(path, shown path or None, seed, n, templates,
    number format, decoy mode)``, the outside families loaded and the file's build record,
    table and numbers checked. The build's parameters come from the release's, else the build
    record beside the file (``FILE.build.json``, its SHA-256 checked), else the families table,
    else ``--seed``, ``--decoys`` and the file's line count; an option that disagrees with a
    record or table is refused."""
    import json

    import synthprobe.benchmarks.deeparithmark.families  # noqa: F401  (ours, with their @twin)
    from synthprobe.benchmarks.deeparithmark.base import FAMILIES
    from synthprobe.benchmarks.deeparithmark.composition import TEMPLATES
    from synthprobe.benchmarks.deeparithmark.plugins import load_source, read_table, source_of, table_path
    from synthprobe.benchmarks.deeparithmark.release import cached_release, locate_release
    from synthprobe.benchmarks.deeparithmark.twins.build_record import read_record
    from synthprobe.prompts.numformat import PLAIN

    release = args.data == "release"
    if release:
        path = locate_release(RELEASE_FILE) if RELEASE_FILE.exists() else cached_release()
    else:
        path = Path(args.data)
        if not path.is_file():
            raise InputError(
                "no such file; expected a Deep Arithmark JSONL file or 'release'", path=path, field="--data"
            )
    for spec in args.family or []:
        load_source(source_of(spec), shown=spec)
    record = None if release else read_record(path)
    found = read_table(path)
    if found is None:
        if args.family:
            raise InputError(
                f"has no families table ({table_path(path).name}) beside it, so it holds Deep Arithmark's own "
                "families; --family is for a file built with 'build deeparithmark --family'",
                path=path,
                field="--family",
            )
        templates = TEMPLATES
        if release:
            if args.seed is not None and args.seed != RELEASE_SEED:
                raise InputError(
                    f"the release was built from seed {RELEASE_SEED}; --seed is for a file of another build",
                    field="--seed",
                )
            seed, n = RELEASE_SEED, RELEASE_SIZE
        elif record is not None:
            seed, n = record.seed, record.n
        else:
            seed = args.seed if args.seed is not None else RELEASE_SEED
            with open(path, "rb") as fh:
                n = sum(1 for line in fh if line.strip())
            if not 1 <= n <= MAX_BUILD_SIZE:
                raise InputError(
                    f"holds {n:,} items; expected the 1 to {MAX_BUILD_SIZE:,} items of a Deep Arithmark build",
                    path=path,
                    field="--data",
                )
        fmt = PLAIN
        if record is not None:
            fmt = record.number_format
        else:
            try:
                with open(path, encoding="utf-8") as fh:
                    first = json.loads(fh.readline())
                fmt = first["metadata"].get("number_format", PLAIN)
            except (ValueError, KeyError, TypeError, AttributeError):
                pass  # the byte comparison with the build says what is wrong
            if fmt not in NUMBER_FORMATS:
                fmt = PLAIN  # likewise
    else:
        templates, doc = found
        seed, n, fmt = doc.get("seed"), doc.get("n"), doc.get("number_format", PLAIN)
        where = table_path(path)
        if not isinstance(seed, int) or not isinstance(n, int) or not 1 <= n <= MAX_BUILD_SIZE:
            raise InputError("expected the build's seed and n (whole numbers)", path=where, field="seed")
        if fmt not in NUMBER_FORMATS:
            raise InputError(
                f"expected one of {', '.join(NUMBER_FORMATS)}, got {fmt!r}", path=where, field="number_format"
            )
        if record is not None:
            for name, table_value, record_value in (
                ("seed", seed, record.seed),
                ("n", n, record.n),
                ("number_format", fmt, record.number_format),
            ):
                if table_value != record_value:
                    raise InputError(
                        f"says {table_value!r}, but the build record {record.path.name} says {record_value!r}; "
                        "they must describe the same build",
                        path=where,
                        field=name,
                    )
        elif args.seed is not None and args.seed != seed:
            raise InputError(f"the families table says the file was built from seed {seed}", field="--seed")
        missing = [t.name for t in templates if t.name not in FAMILIES]
        if missing:
            sources = {row["name"]: row.get("source", {}) for row in doc.get("families", []) if isinstance(row, dict)}
            named = sources.get(missing[0], {})
            hint = named.get("path") or named.get("entry_point")
            raise InputError(
                f"the file holds the family {missing[0]!r}, which is not loaded; pass its module with --family"
                + (f" (the table names {hint})" if hint else ""),
                path=path,
                field="--family",
            )
    decoys = args.decoys if args.decoys is not None else DEFAULT_DECOYS
    if record is not None:
        if args.seed is not None and args.seed != record.seed:
            raise InputError(
                f"the build record {record.path} says the file was built from seed {record.seed}", field="--seed"
            )
        if args.decoys is not None and args.decoys != record.decoys:
            raise InputError(
                f"the build record {record.path} says the file was built with --decoys {record.decoys}",
                field="--decoys",
            )
        decoys = record.decoys
    return path, ("release" if release else None), seed, n, templates, fmt, decoys


def _chosen_kinds(wanted: list[str] | None, templates, path: Path) -> list[str]:
    """The kinds to build; one a family of the file supports, or one clear error."""
    from synthprobe.benchmarks.deeparithmark.base import TWIN_KINDS
    from synthprobe.benchmarks.deeparithmark.twins.build import kinds_of

    names = list(dict.fromkeys(t.name for t in templates))
    offered = kinds_of(dict.fromkeys(names))

    def supported() -> str:
        kinds = [f"{k} ({', '.join(offered[k])})" for k in TWIN_KINDS if offered[k]]
        return "; the kinds its families support: " + ("; ".join(kinds) if kinds else "none")

    if wanted is None:
        kinds = [k for k in TWIN_KINDS if offered[k]]
        if not kinds:
            raise InputError(
                f"no family of the file supports a twin kind (families {', '.join(names)}): a family opts "
                "in with @twin(NAME, kind) (docs/write-a-family.md, 'Perturbation twins')",
                path=path,
                field="--kinds",
            )
        return kinds
    for k in wanted:
        if not offered[k]:
            who = f"family {names[0]!r} does" if len(names) == 1 else f"families {', '.join(map(repr, names))} do"
            raise InputError(f"{who} not support twin kind {k!r}{supported()}", path=path, field="--kinds")
    return wanted


def cmd_build_twins(args: argparse.Namespace) -> int:
    from synthprobe.benchmarks.deeparithmark.build import BuildError
    from synthprobe.benchmarks.deeparithmark.twins.build import (
        MAX_TWIN_ATTEMPTS,
        OriginalsDiffer,
        build_twins,
        manifest_name,
        stem_of,
        twin_file_name,
    )
    from synthprobe.benchmarks.deeparithmark.twins.controls import format_controls
    from synthprobe.io.write import check_out_dir, check_output_dir

    if args.check is not None:
        return _check_twins(args)
    if args.out is None:
        raise InputError(
            "the folder to write the twins into is required (or --check DIR to check a build)", field="--out"
        )
    wanted = _twin_kinds(args.kinds)
    path, shown, seed, n, templates, fmt, decoys = _twin_originals(args)
    kinds = _chosen_kinds(wanted, templates, path)
    out = check_out_dir(args.out)
    stem = stem_of(path)
    names = [twin_file_name(stem, k) for k in kinds] + [manifest_name(stem)]
    check_output_dir(out, names, inputs=[(path, "--data")], overwrite=args.overwrite)
    try:
        res = build_twins(
            path,
            out,
            kinds=kinds,
            seed=seed,
            n=n,
            templates=templates,
            number_format=fmt,
            decoys=decoys,
            progress=args.progress,
            overwrite=args.overwrite,
            trained=args.trained,
        )
    except OriginalsDiffer as exc:
        raise InputError(f"{exc}; nothing written", path=path, field="--data") from None
    except BuildError as exc:
        print(f"build failed, nothing written: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except OSError as exc:
        raise InputError(f"cannot be written ({exc.strerror}); nothing written", path=out, field="--out") from None
    total = sum(res.stats.written.values())
    print(
        f"wrote {total:,} twins of {n:,} originals ({path}, seed {seed}, {decoys} decoys) into {out} "
        f"in {res.seconds:.1f} s"
        f"{'' if fmt == 'plain' else f', numbers in the {fmt} format'}"
    )
    for kind in kinds:
        entry = res.doc["kinds"][kind]
        without, short = entry["unsupported"], entry["no_usable_twin"]
        print(f"{kind}: {entry['n']:,} twins")
        print(f"  {res.files[kind]}  sha256 {entry['sha256']}")
        if without:
            print(
                f"  families without it ({sum(without.values()):,} originals): "
                + ", ".join(f"{f} ({c})" for f, c in without.items())
            )
        if short:
            print(
                f"  originals without a usable twin in {MAX_TWIN_ATTEMPTS} draws ({sum(short.values()):,}): "
                + ", ".join(f"{f} ({c})" for f, c in short.items())
            )
    print(f"manifest {res.manifest}")
    print()
    failed = [k for k, c in res.checks.items() if not c.ok]
    for kind in kinds:
        print(("PASS " if res.checks[kind].ok else "FAIL ") + res.checks[kind].summary())
    trained = res.doc.get("trained_audit")
    if trained is not None:
        print()
        print(format_trained_twins(trained))
        failed += twins_failing_trained(trained)
    print()
    print(format_controls(res.doc["controls"]))
    if failed:
        print(
            f"the shortcut audit fails on the {', '.join(dict.fromkeys(failed))} twins (files written): "
            "a strategy that reads "
            "only the options scores outside chance and apart from their originals on this draw (the lines "
            "above, the manifest's audit; docs/twins.md says how often a fresh seed does this)",
            file=sys.stderr,
        )
        return EXIT_FAILED
    return 0


def twins_failing_trained(trained: dict) -> list[str]:
    """The twin kinds the trained screen flags while their originals pass it: a leak the twins
    brought. Twins of originals that leak themselves (a legacy-decoy file) inherit the leak; the
    file's own audit is where that shows, so they do not fail the twin build."""
    sets = trained["sets"]
    if sets["originals"]["status"] == "fails":
        return []
    return [k for k, t in sets.items() if k != "originals" and t["status"] == "fails"]


def format_trained_twins(trained: dict) -> str:
    """The twin build's trained audit as printed: one line per set (the originals, each kind)."""
    names = trained["adversaries"]
    lines = [
        f"trained adversaries ({', '.join(names)}; trained on {trained['budget']['train']:,} fresh items, "
        f"{trained['decoys']} decoys): accuracy on each set, strata flagged above chance (Holm, "
        f"α {trained['screen_alpha']:g})"
    ]
    for label, t in trained["sets"].items():
        accs = ", ".join(f"{n} {100 * t['adversaries'][n]['accuracy']:.1f} %" for n in names)
        mark = "FAIL" if t["status"] == "fails" else "PASS"
        lines.append(
            f"{mark} {label} ({t['n']:,} items): {accs}; {t['strata_flagged']} of {t['strata']} strata flagged"
        )
    if trained["sets"]["originals"]["status"] == "fails":
        lines.append(
            "the originals themselves fail the trained screen (their options give the key away, as legacy "
            "decoys do): their twins inherit it; 'deeparithmark.py audit FILE' audits the file"
        )
    lines.append(f"({trained['note']})")
    return "\n".join(lines)


def _check_twins(args: argparse.Namespace) -> int:
    from synthprobe.benchmarks.deeparithmark.twins.check import check_build

    given = [opt for opt, on in (("--out", args.out is not None), ("--family", bool(args.family))) if on]
    if given:
        raise InputError(f"--check reads a written twin build and takes no {', '.join(given)}", field="--check")
    report = check_build(args.check)
    print(report.table())
    return 0 if report.ok else EXIT_FAILED


TWINS_HELP = "write perturbation twins of a Deep Arithmark file, one file per twin kind"
TWINS_DESCRIPTION = """Write the perturbation twins of a Deep Arithmark file: each original item told again
with one controlled change (irrelevant_clause: a sentence with a number that plays no
part, one decoy being the value you get by using it; one_step_more: one more dependent
operation; reordered: the same operations told in another order; unit_change: the same
quantities in another unit). A twin keeps its original's correct slot and answer rank
and names it in metadata.twin_of. The originals are drawn again from their seed, size
and decoy mode (the release's, or those of the build record FILE.build.json that 'build
deeparithmark --out FILE' writes beside the file, or of its families table) and the file
must be byte-identical to that build. An original none of whose draws of a kind makes a
usable twin goes without that twin and is counted, per family. Writes
DIR/<stem>.twins-<kind>.jsonl per kind and the manifest DIR/<stem>.twins.json (files,
SHA-256, families without a kind, originals without a usable twin, the shortcut audit of
each twin file and the controls: twins against their originals on number size, answer
rank, correct slot and roundness), all files or none.
The trained adversaries of the audit (--trained, default on) are scored on each twin file and
on the originals. Exit 1 when a twin file fails the shortcut audit or the trained screen (files
written) or a build fails (nothing written); 2 on bad input (nothing written)."""


def add_twins_parser(build_verb) -> None:
    p = build_verb.add_parser(
        "twins",
        help=TWINS_HELP,
        description=TWINS_DESCRIPTION,
        epilog="Examples:\n  synthprobe build twins --out twins/\n"
        "  synthprobe build twins --data units.jsonl --family unit_convert.py \\\n"
        "      --kinds irrelevant_clause --out units_twins/\n"
        "  synthprobe build twins --check twins/",
    )
    p.add_argument(
        "--data",
        default="release",
        metavar="release|FILE",
        help="the originals: 'release' (default, Deep Arithmark-1) or a file written by "
        "'synthprobe build deeparithmark' (its seed, size and decoy mode come from the build "
        "record FILE.build.json beside it, whose SHA-256 must be the file's; else from its "
        "families table; else --seed, --decoys and its line count)",
    )
    p.add_argument(
        "--kinds",
        default="all",
        metavar="all|K1,K2",
        help="twin kinds to write, separated by commas: irrelevant_clause, one_step_more, "
        "reordered, unit_change (default all: every kind some family of the file supports; "
        "a kind named here that no family supports is refused)",
    )
    p.add_argument(
        "--family",
        action="append",
        metavar="PATH|NAME",
        help="load a family of your own, as 'build deeparithmark --family' does (a module file "
        "or an installed entry point; repeat for several): its @twin registrations come along. "
        "Needed for every outside family in the file's families table",
    )
    p.add_argument(
        "--seed",
        type=nonneg_int,
        default=None,
        metavar="S",
        help="the seed a file without a build record or families table was built from (default "
        f"{RELEASE_SEED}, the release's); refused when it disagrees with the record or table",
    )
    p.add_argument("--out", metavar="DIR", help="folder to write the twin files and the manifest into (required)")
    p.add_argument(
        "--decoys",
        choices=DECOY_MODES,
        default=None,
        help="the decoy mode the file was built with ('build deeparithmark --decoys'), so its "
        "originals are drawn again as they were: default the one its build record names, else "
        f"{DEFAULT_DECOYS}; refused when it disagrees with the record",
    )
    p.add_argument(
        "--trained",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="score the trained choices-only adversaries (relation-feature trees, k nearest "
        "neighbours, DeepSets, gap-order lookup; trained on 2,000 fresh items of the same "
        "families, seconds) on each kind's twins and on the originals, with the per-depth and "
        "per-template screen; a flagged stratum fails the build's audit (default on)",
    )
    add_overwrite_argument(p)
    p.add_argument(
        "--check",
        metavar="DIR",
        help="write nothing: re-check a written twin build (its folder or *.twins.json): the "
        "SHA-256 of every file against the manifest, every twin against the item rules and "
        "its original (twin_of, slot, rank, the kind's invariants) and the shortcut audit of "
        "each file; exit 1 on any failure",
    )
    bar = p.add_mutually_exclusive_group()
    bar.add_argument(
        "--progress",
        dest="progress",
        action="store_true",
        default=None,
        help="always show the progress bar (default: only on a terminal)",
    )
    bar.add_argument("--no-progress", dest="progress", action="store_false", help="never show the progress bar")
    p.set_defaults(func=cmd_build_twins)


# ---------------------------------------------------------------------------------------
# Parsers
# ---------------------------------------------------------------------------------------

BUILD_HELP = "render a Deep Arithmark file deterministically from a seed"
BUILD_DESCRIPTION = """\
Render Deep Arithmark items deterministically: the same seed and size give a
byte-identical file on any machine. The composition (15 templates, 4 depth tiers) and
the correct-slot / answer-rank / depth balance follow the release table, scaled to
--n; every item is re-checked before the file is renamed into place, so a failed
build leaves nothing behind. Prints the file's SHA-256."""


def add_build_arguments(p: argparse.ArgumentParser, *, default_out: Path | None, shown_out: str | None = None) -> None:
    p.add_argument(
        "--seed",
        type=nonneg_int,
        default=RELEASE_SEED,
        metavar="S",
        help=f"generator seed, a whole number >= 0 (default {RELEASE_SEED}, the release)",
    )
    p.add_argument(
        "--n",
        type=int_in_range(1, MAX_BUILD_SIZE),
        default=RELEASE_SIZE,
        metavar="N",
        help=f"number of items, 1 to {MAX_BUILD_SIZE:,} (default {RELEASE_SIZE:,}); multiples of "
        "1,000 scale the release table exactly, other sizes split it proportionally",
    )
    if default_out is None:
        p.add_argument("--out", required=True, metavar="PATH", help="JSONL file to write")
    else:
        p.add_argument(
            "--out",
            default=None,
            metavar="PATH",
            help=f"JSONL file to write (default {shown_out or default_out}; if that file "
            "exists, a render identical to it leaves it untouched and one that "
            "differs is refused without --overwrite)",
        )
        p.set_defaults(_default_out=str(default_out))
    p.add_argument(
        "--workers",
        type=nonneg_int,
        default=None,
        metavar="K",
        help="processes that draw items in parallel (1: this process only; 0: one per "
        "CPU it may use; default: one per CPU from 20,000 items, else 1); every K "
        "gives the same bytes",
    )
    p.add_argument(
        "--number-format",
        choices=NUMBER_FORMATS,
        default="plain",
        metavar="F",
        help="how numbers of 1,000 and more are written in prompts and endings: plain "
        "(12345, default, the release's rendering), comma (12,345) or space (12 345, "
        "an ordinary space); the same items, ids and order in every format, so "
        "scores pair (synthprobe probe number-format); the metadata keeps plain "
        "digits and records the format",
    )
    p.add_argument(
        "--decoys",
        choices=DECOY_MODES,
        default=DEFAULT_DECOYS,
        help="how decoys are chosen: groups (role-balanced: the same four values are the options of "
        "four items of a template, each the key of one and a named mistake of the others, so a "
        "strategy that reads only the options scores 25 %% in expectation) or legacy (three "
        "mistakes per item for its planned rank: its options give the key away; kept as the "
        f"trained audit's positive control); default {DEFAULT_DECOYS}",
    )
    add_overwrite_argument(p)
    p.add_argument(
        "--check",
        action="store_true",
        help="do not write: rebuild in memory and compare with the file at --out "
        "byte for byte (exit 1 on any difference)",
    )
    bar = p.add_mutually_exclusive_group()
    bar.add_argument(
        "--progress",
        dest="progress",
        action="store_true",
        default=None,
        help="always show the progress bar (default: only on a terminal)",
    )
    bar.add_argument("--no-progress", dest="progress", action="store_false", help="never show the progress bar")


def register(verbs: dict) -> None:
    """Add ``synthprobe build deeparithmark``."""
    p = verbs["build"].add_parser(
        "deeparithmark",
        help=BUILD_HELP,
        description=BUILD_DESCRIPTION,
        epilog="Examples:\n  synthprobe build deeparithmark --seed 7 --n 1000 --out private.jsonl --selftest\n"
        "  synthprobe build deeparithmark --control odd-one-out --seed 9 --n 1000 --out odd.jsonl",
    )
    add_build_arguments(p, default_out=None)
    p.add_argument(
        "--family",
        action="append",
        metavar="PATH|NAME",
        help="build from a family of your own: a Python file whose generate(rng) is "
        "decorated with synthprobe.benchmarks.deeparithmark.base.register, or the name of "
        "an installed entry point in the group 'synthprobe.families'; repeat for "
        "several. Alone, the file holds only these families, in equal shares; with "
        "--composition, the shares that table gives. Each family is drawn 200 times "
        "first and refused (exit 2) if its steps do not re-evaluate to its answer or "
        "its mistakes cannot serve as decoys. The families, their weights and "
        "sources are written beside the file as PATH.families.json, where the "
        "selftest reads them (docs/write-a-family.md)",
    )
    p.add_argument(
        "--composition",
        metavar="CSV",
        help="a table 'family,weight' (header line, then one row per family): the share "
        "of each family, ours (e.g. money_discount_fee,122) or one loaded with "
        "--family; depth tiers get the sum of their families' weights",
    )
    p.add_argument(
        "--selftest",
        action="store_true",
        help="run the full selftest on the written file: every card claim, the shortcut audit and "
        "the trained choices-only audit at its small budget (adversaries trained on fresh builds of the "
        "same families; about 30 s more); exit 1 if any check fails",
    )
    from synthprobe.benchmarks.deeparithmark.controls import CONTROLS

    p.add_argument(
        "--control",
        metavar="NAME",
        help="write a positive control instead: a deliberately flawed build that can be "
        "answered from the four endings alone, so a choices-only adversary "
        "(synthprobe validate) must beat chance on it or it has no power. "
        + "; ".join(f"{k}: {v}" for k, v in CONTROLS.items())
        + ". Its labels and metadata name the control; it is for testing an "
        "adversary, never for reporting scores. Takes --seed, --n, --out and "
        "--overwrite only",
    )
    p.set_defaults(func=cmd_build)
    add_twins_parser(verbs["build"])


def add_trained_audit_arguments(p: argparse.ArgumentParser) -> None:
    """The trained choices-only audit's options of ``deeparithmark.py audit``."""
    p.add_argument(
        "--trained",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="run the trained choices-only audit after the shortcut table (default on; it takes minutes "
        "at --budget full)",
    )
    p.add_argument(
        "--budget",
        choices=("small", "full"),
        default="full",
        help="full: 16,000 training items and a 4,100-item audit build, enough to show each adversary "
        "within 25 %% ± 2 points at 80 %% power; small: 2,000 / 1,000, a quick look that reports the "
        "screen and the controls but cannot show the equivalence (default full)",
    )
    size = int_in_range(1, MAX_BUILD_SIZE)
    p.add_argument("--train-items", type=size, metavar="N", help="training items (default: the budget's)")
    p.add_argument(
        "--audit-items",
        type=size,
        metavar="N",
        help="items of the fresh audit build (default: the budget's; at least 4,097 at --budget full)",
    )
    p.add_argument(
        "--adversaries",
        default="trees,knn,deepsets,gap_order",
        metavar="LIST",
        help="adversaries separated by commas among trees, knn, deepsets, gap_order and embedding "
        "(a linear probe on frozen embeddings of the endings' text, from --embedder; opt-in, it "
        "runs a model over every distinct ending); default trees,knn,deepsets,gap_order",
    )
    p.add_argument(
        "--embedder",
        default=DEFAULT_EMBEDDER,
        metavar="MODEL",
        help="where the embedding adversary's embeddings come from: a transformers model (alias, "
        "folder, .gguf file or cached hub id; the mean of its last hidden states over an ending's "
        f"tokens) or {CHAR_NGRAMS} (hashed character 2-4-grams, no model); default {DEFAULT_EMBEDDER}, "
        "the embedded model",
    )
    p.add_argument(
        "--decoys",
        choices=DECOY_MODES,
        default=None,
        help="the decoy mode of the training and audit builds (default: the builder's own)",
    )
    p.add_argument(
        "--audit-seed",
        type=nonneg_int,
        default=RELEASE_SEED,
        metavar="S",
        help=f"the seed the audit's build seeds are derived from (default {RELEASE_SEED})",
    )
    p.add_argument(
        "--no-controls",
        action="store_true",
        help="skip the controls (legacy, mix10, roundness-off, odd-one-out must fail; a label-permuted "
        "null must pass): faster, but the audit's power is then not shown",
    )
    p.add_argument("--json", metavar="PATH", help="also write the trained audit's report as JSON (atomically)")
    add_overwrite_argument(p)


def build_parser(root: Path) -> argparse.ArgumentParser:
    data = root / RELEASE_FILE
    shown = RELEASE_FILE
    parser = CommandParser(
        prog="deeparithmark.py",
        description="Deep Arithmark-1: 1,000 arithmetic word problems needing 2-5 dependent "
        "operations, in the ArithMark 3.0 format. Build the file, re-check every "
        "claim of its card, and audit shortcut strategies.",
        epilog="Exit status: 0 ok, 1 a check failed or --check found a difference, "
        "2 bad input. Run 'deeparithmark.py COMMAND --help' for details.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    b = sub.add_parser(
        "build",
        help=BUILD_HELP,
        description=BUILD_DESCRIPTION,
        epilog=f"Without options this renders the release, {shown}, from seed\n"
        f"{RELEASE_SEED}; 'build --check' verifies the committed file.",
    )
    add_build_arguments(b, default_out=data, shown_out=f"{shown} beside deeparithmark.py")
    b.set_defaults(func=cmd_build)

    s = sub.add_parser(
        "selftest",
        help="re-check every claim of the card on a file (PASS/FAIL per check)",
        description="Re-check a Deep Arithmark file: the ArithMark 3.0 loader contract, "
        "canonical bytes, schema and types, unique ids and contexts, units, "
        "distinct positive options, no answer ± 1 decoy, one roundness class, clock "
        "options in one half-day, label ↔ sources ↔ answer ↔ values, answer rank, "
        "steps = depth, every step re-evaluated, composition, slot / rank / depth "
        "balance and grid, prompt length and the shortcut audit. Expected figures "
        "are derived for the file's size. Exit 1 if any check fails, 2 if the file "
        "cannot be read.",
    )
    s.add_argument("path", nargs="?", default=str(data), metavar="PATH", help=f"file to check (default {shown})")
    s.add_argument(
        "--upstream",
        metavar="ARITHMARK3.jsonl",
        help="an ArithMark 3.0 file; also require 0 identical contexts and 0 shared "
        "eight-word n-grams (lower-cased word tokens) with it",
    )
    s.add_argument(
        "--trained",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also run the trained choices-only audit at a small budget (default on; about 30 s): "
        "adversaries trained on fresh builds' options must stay at chance on a fresh build and the "
        "file, the legacy control must fail and a label-permuted null pass; legacy decoys fail it",
    )
    s.set_defaults(func=cmd_selftest)

    # no abbreviated options: '--n' would be ambiguous between --no-trained and --no-controls
    a = sub.add_parser(
        "audit",
        allow_abbrev=False,
        help="score strategies that skip the arithmetic (all must stay at chance)",
        description="Print the shortcut table: pick the largest / smallest value, the roundest "
        "number, a fixed slot, the longest / shortest ending, and a cross-validated "
        "char-3-gram classifier over the option text. Exit 1 if any strategy leaves "
        "25 % ± 2.7 points (wider below 1,000 items: the 95 % interval of a guesser). "
        "Then the trained choices-only audit (--no-trained skips it): adversaries trained "
        "on the four options of fresh builds (gradient-boosted trees over relation "
        "features, k nearest neighbours on scaled sorted values, a DeepSets network, a "
        "gap-order lookup) scored on a fresh audit build, where the 90 % Clopper-Pearson "
        "interval of each must lie inside 23-27 %, and on the file, screened per depth and "
        "template (Holm); with positive controls that must fail and a label-permuted null "
        "that must pass. Exit 1 when a strategy or adversary leaves chance or the audit "
        "has no power, 2 on bad input.",
    )
    a.add_argument("path", nargs="?", default=str(data), metavar="PATH", help=f"file to audit (default {shown})")
    a.add_argument(
        "--by-template",
        action="store_true",
        help="also print each template's score under the strategies the balance plan "
        "does not fix (largest, smallest, longest, shortest, classifier): a "
        "diagnostic for finding which generator leaks",
    )
    add_trained_audit_arguments(a)
    a.set_defaults(func=cmd_audit)
    return parser


def main(argv: list[str] | None = None, *, root: str | Path | None = None) -> int:
    """Entry point of ``deeparithmark.py``; ``root`` is the directory holding ``data/``."""
    parser = build_parser(Path(root) if root is not None else Path.cwd())
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_BAD_INPUT
    return run_command_line(args.func, args, parser.prog)
