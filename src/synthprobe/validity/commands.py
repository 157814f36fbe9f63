"""``synthprobe validate``: model-based evidence that a benchmark file measures what it claims.

The validity app's command, registered by the command line (:data:`synthprobe.cli._ROOMS`) and
kept beside the app it runs: it knows Deep Arithmark's controls, release and outside families,
which an app above the benchmarks may name."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from synthprobe.commandline import add_limit_argument, nothing_written
from synthprobe.errors import InputError

DESCRIPTION = """\
Model-based evidence that a multiple-choice file measures what it claims (docs/validity.md).

  trained        (a Deep Arithmark file; --no-trained skips it) the trained choices-only audit,
                 run first and without a model: adversaries (relation-feature trees, k nearest
                 neighbours, a DeepSets network, a gap-order lookup) trained on the options of
                 fresh builds must stay at chance on a fresh audit build and on FILE; positive
                 controls (legacy, mix10, roundness-off, odd-one-out) must fail and a
                 label-permuted null must pass. Minutes on 2 CPU cores (--trained-budget).
  adversary      the model fine-tuned (LoRA) on the endings alone of fresh-seed items that share no
                 item with FILE, then scoring FILE from its endings alone, at each of --sizes. FILE
                 passes when that accuracy stays within chance's band at every size.
  controls       the same adversary on deliberately flawed builds (positive controls): it must land
                 clearly above chance on each, or it has no power and FILE's pass means nothing.
                 roundness-off: the roundness balance switched off (the heuristic audit catches it);
                 odd-one-out: the right ending alone ends in ';' among '.', or alone in '.'
                 among ';' (the heuristic audit misses it).
  learnability   (--learnability) the model fine-tuned with the context: FILE's score against
                 training size, each size paired (McNemar) against the untrained model.
  lofo           (--lofo N) leave-one-family-out: for each family, train on N items of the
                 others, score FILE's items of the family left out.
  seeds          (--seeds K) the model's score on K fresh full-size builds: mean, sd, range, and
                 where FILE's own score falls.

Everything is written to one results document (--output), read by `synthprobe report` (its Validity
section). Training is deterministic for a seed on one machine: the same seed gives the same adapter
(adapter_sha256 in the results).

Time on 2 shared CPU cores (docs/validity.md): the trained audit 4-8 min at --trained-budget
full and 1-2.5 min at small; the LoRA adversary with both controls at the default --sizes
36 min. The model loads only when a part that needs it runs."""

EPILOG = """\
examples:
  # the trained audit alone, small budget: no model, a control fails, ~2 min
  synthprobe validate --no-adversary --controls none --trained-budget small
  synthprobe validate --no-adversary --controls none  # trained audit, 4-8 min
  synthprobe validate           # trained audit + LoRA adversary, 40-45 min
  synthprobe validate --sizes 0,1000,4000,16000 --learnability --device cuda --model ./my-model
  synthprobe validate my_build.jsonl --family ./my_family.py --controls none
  synthprobe validate other.jsonl --train other_train.jsonl --controls none"""


def sizes_arg(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(x.replace("_", "")) for x in text.split(",") if x.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated whole numbers such as 0,500,2000, got {text!r}"
        ) from None
    if not values or any(v < 0 for v in values):
        raise argparse.ArgumentTypeError(f"expected whole numbers >= 0, got {text!r}")
    if max(values) == 0:
        raise argparse.ArgumentTypeError("at least one size above 0 (0 alone trains nothing)")
    return tuple(sorted(set(values)))


def _controls(text: str) -> tuple[str, ...]:
    if text == "none":
        return ()
    from synthprobe.benchmarks.deeparithmark.controls import CONTROLS

    if text == "all":
        return tuple(CONTROLS)
    names = tuple(x.strip() for x in text.split(",") if x.strip())
    bad = [n for n in names if n not in CONTROLS]
    if bad:
        raise argparse.ArgumentTypeError(
            f"no control {bad[0]!r}; expected all, none or a comma-separated list of {', '.join(CONTROLS)}"
        )
    return names


def register(verbs: dict) -> None:
    from synthprobe.commandline import add_model_args, add_overwrite_argument

    p = verbs["validate"].add_parser(
        "run",
        prog="synthprobe validate",
        help="validate a file (the default: `synthprobe validate [FILE] ...`)",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "data",
        nargs="?",
        type=Path,
        default=None,
        metavar="FILE",
        help="the multiple-choice file to validate (default: the Deep Arithmark-1 release)",
    )
    add_model_args(p, batch_size=32)
    _adversary_flags(p)
    _trained_audit_flags(p)
    _evidence_flags(p)
    _training_flags(p)
    p.add_argument(
        "--output",
        "-o",
        type=Path,
        default=None,
        metavar="FILE",
        help="the results document (default: validity_<model>.json, never replacing a file)",
    )
    add_overwrite_argument(p)
    p.set_defaults(func=run_validate)


def _adversary_flags(p) -> None:
    """The LoRA choices-only adversary and its controls."""
    from synthprobe.commandline import int_at_least, positive_int
    from synthprobe.validity.run import DEFAULT_CONTROL_ITEMS, DEFAULT_CONTROL_SIZE, DEFAULT_SIZES

    g = p.add_argument_group("the adversary")
    g.add_argument(
        "--adversary",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="train and run the LoRA choices-only adversary on FILE (default: on; --no-adversary runs "
        "only the other parts asked for)",
    )
    g.add_argument(
        "--sizes",
        type=sizes_arg,
        default=DEFAULT_SIZES,
        metavar="N,N,...",
        help=f"training sizes (items seen, one pass; 0 = untrained) at which FILE is scored "
        f"(default: {','.join(map(str, DEFAULT_SIZES))}; with both controls 36 min on 2 shared CPU cores)",
    )
    g.add_argument(
        "--controls",
        type=_controls,
        default=None,
        metavar="all|none|NAME,...",
        help="the LoRA adversary's positive controls (default: all for a Deep Arithmark file, none "
        "otherwise; the trained audit always runs its own)",
    )
    g.add_argument(
        "--control-items",
        type=int_at_least(20),
        default=DEFAULT_CONTROL_ITEMS,
        metavar="N",
        help="items of each control's test build (default: %(default)s)",
    )
    g.add_argument(
        "--control-size",
        type=positive_int,
        default=None,
        metavar="N",
        help=f"training items of each control (default: {DEFAULT_CONTROL_SIZE:,} or the largest of --sizes, "
        "whichever is smaller)",
    )
    g.add_argument(
        "--train",
        type=Path,
        default=None,
        metavar="FILE",
        help="training items (ArithMark 3.0 layout) for a file that is not Deep Arithmark; "
        "items whose context is in FILE are dropped",
    )
    g.add_argument(
        "--family",
        action="append",
        default=[],
        metavar="PATH|NAME",
        help="load an outside family (as `build deeparithmark --family`) so that fresh builds of "
        "FILE's families can be made; the table beside FILE (FILE.families.json) names them",
    )


def _trained_audit_flags(p) -> None:
    """The trained choices-only audit."""
    g = p.add_argument_group("the trained choices-only audit")
    g.add_argument(
        "--trained",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="run the trained choices-only audit first (default: on for a Deep Arithmark file of the "
        "release's families, off otherwise); no model, minutes on 2 CPU cores; its seeds are the "
        "audit's own (as `python deeparithmark.py audit`), not --seed",
    )
    g.add_argument(
        "--trained-budget",
        choices=("small", "full"),
        default="full",
        help="full (default): 16,000 training and 4,100 audit items, the equivalence test at ± 2 points, "
        "4-8 min; small: 2,000 / 1,000, the screen and the controls only (it cannot show equivalence), "
        "1-2.5 min",
    )


def _evidence_flags(p) -> None:
    """Learnability, leave-one-family-out, seed variance."""
    from synthprobe.commandline import int_at_least, positive_int
    from synthprobe.validity.run import DEFAULT_LEARN_SIZES

    g = p.add_argument_group("more evidence")
    g.add_argument(
        "--learnability",
        nargs="?",
        const=DEFAULT_LEARN_SIZES,
        type=sizes_arg,
        default=None,
        metavar="N,N,...",
        help="also fine-tune with the context and score FILE at these sizes "
        f"(default when given bare: {','.join(map(str, DEFAULT_LEARN_SIZES))})",
    )
    g.add_argument(
        "--lofo",
        type=positive_int,
        default=None,
        metavar="N",
        help="also leave-one-family-out, N training items per fold (e.g. 200)",
    )
    g.add_argument(
        "--seeds",
        type=int_at_least(2),
        default=None,
        metavar="K",
        help="also score the model on K fresh full-size builds (seed variance)",
    )
    g.add_argument(
        "--seed-items",
        type=positive_int,
        default=None,
        metavar="N",
        help="items per fresh build for --seeds (default: as many as FILE holds)",
    )


def _training_flags(p) -> None:
    """Seeds, optimiser and LoRA settings, the adapter saved, --limit."""
    from synthprobe.commandline import int_at_least, positive_int

    g = p.add_argument_group("training")
    g.add_argument("--seed", type=int, default=0, help="seed of the fresh builds and of training (default: 0)")
    g.add_argument("--lr", type=float, default=None, help="AdamW learning rate (default: 1e-3)")
    g.add_argument(
        "--train-batch-size",
        type=positive_int,
        default=None,
        metavar="N",
        help="items per optimiser step (default: 16)",
    )
    g.add_argument("--lora-rank", type=positive_int, default=None, metavar="R", help="LoRA rank (default: 8)")
    g.add_argument(
        "--top-layers",
        type=int_at_least(0),
        default=None,
        metavar="N",
        help="LoRA on the top N decoder layers (default: 6; 0 = all)",
    )
    g.add_argument(
        "--save-adapter",
        type=Path,
        default=None,
        metavar="DIR",
        help="save the adversary's final adapter here (written whole or not at all)",
    )
    add_limit_argument(g, "use only FILE's first N items (the trained audit reads the whole file)")


def run_validate(args: argparse.Namespace) -> int:

    from synthprobe.backends.refs import model_refs, named_model
    from synthprobe.benchmarks.deeparithmark.release import locate_release
    from synthprobe.benchmarks.deeparithmark.scoring.score import DEFAULT_DATA
    from synthprobe.commandline import load_backend_or_exit
    from synthprobe.io.write import atomic_write_text, default_output
    from synthprobe.results import dumps_results, results_document
    from synthprobe.validity import run as vrun

    data = locate_release(args.data if args.data is not None else Path(DEFAULT_DATA))
    if not data.is_file():
        raise InputError("file does not exist" if not data.exists() else "not a regular file", path=data, field="FILE")
    if args.family:
        from synthprobe.benchmarks.deeparithmark.plugins import load_sources, source_of

        load_sources([source_of(s) for s in args.family])
    config = _validate_config(args, data)
    test = vrun.read_test(config)
    from synthprobe.validity import trained as vtrained
    from synthprobe.validity.sources import is_deeparithmark

    deep = is_deeparithmark(test)
    config.controls = args.controls if args.controls is not None else (_controls("all") if deep else ())
    # the trained audit: on by default where it can run (a Deep Arithmark file of the release's families)
    config.trained = args.trained if args.trained is not None else vtrained.refusal(data, deep) is None
    config.trained_budget = args.trained_budget
    vrun.check(config, test)
    model = vrun.needs_model(config)
    ref = model_refs([args.model])[0]
    name = f"validity_{Path(ref.name or ref.spec).name}.json" if model else "validity.json"
    output = args.output or default_output(Path(name))
    _check_validate_outputs(args, output, data, ref.spec if model else None)
    if model:
        _check_trainable(args, ref)
    print("plan:")
    for line in vrun.plan_lines(config, test):
        print(f"  {line}")
    if args.seeds:
        print(f"  seeds: score on {args.seeds} fresh builds of {args.seed_items or len(test):,} items")
    backend = load_backend_or_exit(ref.spec, args, ref=ref) if model else None
    if backend is not None and not hasattr(backend, "train_choices"):
        raise InputError(
            f"the {backend.name} engine cannot be fine-tuned here; validate needs a transformers model (the hf engine)",
            field="--model",
        )
    described = None if backend is None else named_model(backend.describe(), ref)

    command = shlex.join(["synthprobe", *sys.argv[1:]])
    try:
        with nothing_written():
            section = _validity_section(args, backend, config, test)
    finally:
        if backend is not None:
            backend.close()
    if described is not None:
        section["model"]["name"] = described.get("name")
    doc = results_document(command=command, models=[], validity=section)
    atomic_write_text(output, dumps_results(doc))
    print(format_summary(section))
    print(f"\nresults: {output}")
    return 0


def _validate_config(args: argparse.Namespace, data: Path):
    """The run's :class:`~synthprobe.validity.run.ValidateConfig` from its flags (the controls
    and the trained audit are decided once the file is read)."""
    from synthprobe.validity import run as vrun

    train_settings = {
        k: v
        for k, v in (
            ("lr", args.lr),
            ("batch_size", args.train_batch_size),
            ("rank", args.lora_rank),
            ("top_layers", args.top_layers),
        )
        if v is not None
    }
    return vrun.ValidateConfig(
        data=data,
        seed=args.seed,
        adversary=args.adversary,
        seeds=args.seeds,
        sizes=args.sizes,
        control_items=args.control_items,
        control_size=args.control_size,
        learn_sizes=args.learnability,
        lofo_size=args.lofo,
        train=args.train,
        limit=args.limit,
        batch_size=args.batch_size,
        train_settings=train_settings,
        adapter_out=args.save_adapter,
    )


def _check_validate_outputs(args: argparse.Namespace, output: Path, data: Path, model_spec: str | None) -> None:
    """Every output can be written and replaces nothing (unless ``--overwrite``) and is none of
    the inputs: checked before a model loads."""
    from synthprobe.io.write import check_outputs

    inputs = [(data, "FILE")] + ([(model_spec, "--model")] if model_spec is not None else [])
    inputs += [(args.train, "--train")] if args.train else []
    check_outputs(
        [(output, "--output"), *([(args.save_adapter, "--save-adapter")] if args.save_adapter else [])],
        inputs,
        overwrite=args.overwrite,
    )
    if args.save_adapter is not None and args.save_adapter.exists() and not args.overwrite:
        raise InputError(
            "already exists; add --overwrite to replace it", path=args.save_adapter, field="--save-adapter"
        )


def _check_trainable(args: argparse.Namespace, ref) -> None:
    """The model's engine can fine-tune, and peft is installed."""
    import importlib.util

    from synthprobe.backends import check_backend
    from synthprobe.commandline import model_backend_options

    check_backend(ref.spec, needs=("train",), **model_backend_options(args, ref))
    if importlib.util.find_spec("peft") is None:
        from synthprobe.errors import CommandFailed

        raise CommandFailed(
            "validate trains LoRA adapters with peft, which is not installed: pip install 'synthprobe[peft]'"
        )


def _validity_section(args: argparse.Namespace, backend, config, test) -> dict:
    """The results document's ``validity`` section: the run's parts, then ``--seeds``."""
    from tqdm import tqdm

    from synthprobe.validity import run as vrun

    def bar(desc: str, total: int):
        t = tqdm(total=total, desc=desc, unit="item", disable=not args.progress, leave=False)

        def tick(k: int) -> None:
            t.update(k)
            if t.n >= t.total:
                t.close()

        return tick

    section = vrun.run(backend, config, test, bar=bar)
    if args.seeds:
        from synthprobe.validity import seeds as vseeds

        section["seeds"] = vseeds.for_validate(
            backend, config, test, k=args.seeds, n=args.seed_items, progress=args.progress, file=section["file"]
        )
    return section


def _cell(p: dict) -> str:
    lo, hi = p["ci95"]
    return f"{100 * p['accuracy']:5.1f} % [{100 * lo:.1f}, {100 * hi:.1f}]"


def format_summary(section: dict) -> str:
    """The run's figures as a few lines of text (the results document holds them all): the
    trained audit's tables as ``deeparithmark.py audit`` prints them, then the other parts."""
    adv = {p["size"]: p for p in (section.get("adversary") or {}).get("curve", [])}
    learn = {p["size"]: p for p in (section.get("learnability") or {}).get("curve", [])}
    n = section["file"]["n_items"]
    lines = [""]
    if section.get("trained"):
        from synthprobe.benchmarks.deeparithmark.trained_audit import format_report

        lines += [format_report(section["trained"]).strip("\n"), ""]
    if adv or learn or section.get("controls") or section.get("leave_one_family_out"):
        lines.append(
            f"accuracy = the letter with the highest logit is the right one; n = {n:,} items of "
            f"{section['file']['path']}; [95 % Wilson interval]; band = where a chance scorer lands"
        )
    if adv or learn:
        lines.append(
            f"{'size':>7}  {'adversary (endings alone)':<33}  {'learnability (with context)' if learn else ''}"
        )
        for size in sorted({*adv, *learn}):
            a = f"{_cell(adv[size])} {'in band' if adv[size]['within_chance'] else 'OUT'}" if size in adv else ""
            q = learn.get(size)
            extra = ""
            if q is not None:
                extra = _cell(q) + (f"  McNemar p {q['paired']['p']:.3g} vs 0" if q.get("paired") else "")
            lines.append(f"{size:>7,}  {a:<33}  {extra}")
    if section.get("adversary"):
        lines.append(f"adversary {section['adversary']['verdict']}")
    for c in section.get("controls", []):
        acc = c["adversary"]["curve"][-1]["accuracy"]
        lines.append(
            f"control {c['name']}: {100 * acc:.1f} % of {c['n_items']:,} items from the endings alone (heuristic audit "
            f"{'passes it' if c['audit']['passes'] else 'catches it'}; the adversary "
            f"{'fails it, as it must' if c['fails'] else 'does NOT fail it'})"
        )
    if section.get("controls") or section.get("adversary") or section.get("trained"):
        lines.append(f"power: {section['power']['verdict']}")
    for f in (section.get("leave_one_family_out") or {}).get("folds", []):
        lines.append(
            f"left out {f['family']}: {100 * f['trained']['accuracy']:.1f} % trained on the others, "
            f"{100 * f['untrained']['accuracy']:.1f} % untrained (McNemar p {f['paired']['p']:.3g})"
        )
    seeds = section.get("seeds")
    if seeds:
        o = seeds["overall"]
        lines.append(
            f"seeds ({seeds['protocol']}): {seeds['k']} fresh builds of {seeds['n']:,} items: "
            f"mean {100 * o['mean']:.1f} %, sd {100 * o['sd']:.1f} points, "
            f"range {100 * o['min']:.1f}-{100 * o['max']:.1f} %"
        )
        if seeds.get("release"):
            lines.append(f"seeds: {seeds['release']['verdict']}")
    return "\n".join(lines)
