"""``synthprobe validate``: run the parts asked for on one model and one file, into one results
document with a ``validity`` section (layout: :mod:`synthprobe.validity`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synthprobe.errors import InputError
from synthprobe.formats.arithmark3 import load_arithmark3
from synthprobe.io.read import sha256_file
from synthprobe.items import MCItem
from synthprobe.validity import adversary as adv
from synthprobe.validity import learn, sources
from synthprobe.validity import trained as vtrained
from synthprobe.validity.curve import group_of

VERSION = 1
#: the adversary's default training sizes (items seen; 0 = the untrained model)
DEFAULT_SIZES = (0, 500, 2000)
DEFAULT_CONTROL_ITEMS = 400
#: training items of each control: a flaw the adversary can find is found well within this
DEFAULT_CONTROL_SIZE = 1000
DEFAULT_LEARN_SIZES = (0, 500, 2000)
DEFAULT_LOFO_SIZE = 200


@dataclass
class ValidateConfig:
    data: Path
    seed: int = 0
    adversary: bool = True
    sizes: tuple[int, ...] = DEFAULT_SIZES
    #: positive controls to run (names of synthprobe.benchmarks.deeparithmark.controls.CONTROLS)
    controls: tuple[str, ...] = ()
    control_size: int | None = None  # default: DEFAULT_CONTROL_SIZE or the largest of sizes, the smaller
    control_items: int = DEFAULT_CONTROL_ITEMS
    learn_sizes: tuple[int, ...] | None = None  # None: no learnability curve
    lofo_size: int | None = None  # None: no leave-one-family-out
    train: Path | None = None  # training items for a file that is not Deep Arithmark
    limit: int | None = None  # score only the first N items of the file
    batch_size: int = 32
    train_settings: dict[str, Any] = field(default_factory=dict)
    adapter_out: Path | None = None
    seeds: int | None = None  # K fresh builds for seed variance (synthprobe.validity.seeds)
    #: the trained choices-only audit (synthprobe.validity.trained): model-free, run first
    trained: bool = False
    trained_budget: str = vtrained.DEFAULT_BUDGET


def needs_model(config: ValidateConfig) -> bool:
    """Whether a part asked for uses the model (every part but the trained audit does)."""
    return bool(
        config.adversary or config.controls or config.learn_sizes or config.lofo_size is not None or config.seeds
    )


def control_size(config: ValidateConfig) -> int:
    return config.control_size or min(DEFAULT_CONTROL_SIZE, max(config.sizes))


def read_test(config: ValidateConfig) -> list[MCItem]:
    items = load_arithmark3(config.data, strict_ids=False)
    if not items:
        raise InputError("holds no items", path=config.data)
    counts = {len(it.endings) for it in items}
    if len(counts) != 1:
        raise InputError(
            f"items have different numbers of endings ({sorted(counts)}); the choice head needs "
            "one number of options per file",
            path=config.data,
            field="endings",
        )
    if counts.pop() < 2:
        raise InputError(
            "items have fewer than two endings: nothing to choose between", path=config.data, field="endings"
        )
    return items[: config.limit] if config.limit else items


def check(config: ValidateConfig, test: Sequence[MCItem]) -> None:
    """Refuse what cannot run, before any model loads."""
    if not (needs_model(config) or config.trained):
        raise InputError(
            "nothing to run: --no-adversary and no trained audit, with no controls, --learnability, --lofo or --seeds",
            field="--no-adversary",
        )
    deep = sources.is_deeparithmark(test)
    if config.trained:
        vtrained.check(config.data, config.trained_budget)
        why = vtrained.refusal(config.data, deep)
        if why is not None:
            raise InputError(f"{why} (--no-trained)", path=config.data, field="--trained")
    if not needs_model(config):
        return
    if not deep and config.train is None:
        raise InputError(
            "is not a Deep Arithmark build, so synthprobe cannot build fresh training items for it; "
            "give them with --train FILE",
            path=config.data,
        )
    if config.controls and not deep:
        raise InputError(
            "the positive controls are flawed Deep Arithmark builds; they check the adversary on Deep "
            "Arithmark files only (--controls none)",
            path=config.data,
            field="--controls",
        )
    if config.seeds and not deep:
        raise InputError(
            "seed variance scores fresh builds of the file's families: Deep Arithmark files only",
            path=config.data,
            field="--seeds",
        )
    if config.lofo_size is not None and not deep:
        raise InputError("leave-one-family-out needs Deep Arithmark's families", path=config.data, field="--lofo")
    if config.train is not None:
        n = max([*config.sizes, *(config.learn_sizes or ())])
        sources.from_file(config.train, n=n, exclude={it.ctx for it in test})


def _train_items(config: ValidateConfig, test: Sequence[MCItem], n: int, purpose: str) -> list[MCItem]:
    exclude = {it.ctx for it in test}
    if config.train is not None:
        return sources.from_file(config.train, n=n, exclude=exclude)
    return sources.collect(
        sources.deeparithmark_builder(config.data),
        n=n,
        seed=config.seed,
        purpose=purpose,
        exclude=exclude,
        shown="fresh build",
    )


def plan_lines(config: ValidateConfig, test: Sequence[MCItem]) -> list[str]:
    top = max(config.sizes)
    lines = [vtrained.plan_line(config.trained_budget, test)] if config.trained else []
    lines += (
        [
            f"adversary: train on {top:,} items' endings, score {len(test):,} items at sizes "
            f"{', '.join(f'{s:,}' for s in config.sizes)}"
        ]
        if config.adversary
        else []
    )
    for name in config.controls:
        lines.append(
            f"control {name}: train on {control_size(config):,} items of the flawed build, "
            f"score {config.control_items:,}"
        )
    if config.learn_sizes:
        lines.append(
            f"learnability: train on {max(config.learn_sizes):,} items with their context, score "
            f"{len(test):,} items at sizes {', '.join(f'{s:,}' for s in config.learn_sizes)}"
        )
    if config.lofo_size is not None:
        fams = len({group_of(it, "template") for it in test})
        lines.append(f"leave-one-family-out: {fams} folds, each trained on {config.lofo_size:,} items")
    return lines


def run(
    backend,
    config: ValidateConfig,
    test: Sequence[MCItem],
    *,
    bar: Callable[[str, int], Callable[[int], None]] | None = None,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Every part of ``config`` on ``backend``; the ``validity`` section (and its timings). The
    trained audit runs first; ``backend`` may be None when no other part is asked for
    (:func:`needs_model`), and the section's ``model`` is then null."""
    settings = dict(config.train_settings)
    settings.setdefault("seed", config.seed)
    t0 = time.perf_counter()
    section: dict[str, Any] = {
        "version": VERSION,
        "file": {
            "path": str(config.data),
            "sha256": sha256_file(config.data),
            "n_items": len(test),
            "benchmark": "deeparithmark" if sources.is_deeparithmark(test) else "multiple-choice",
        },
        "settings": {
            "seed": config.seed,
            "sizes": list(config.sizes),
            "batch_size": config.batch_size,
            "train": settings,
            "controls": list(config.controls),
            "control_items": config.control_items,
            "limit": config.limit,
            "train_file": None if config.train is None else str(config.train),
            "trained": config.trained,
            "trained_budget": config.trained_budget if config.trained else None,
        },
        "model": None
        if backend is None
        else {k: backend.describe().get(k) for k in ("spec", "name", "fingerprint", "params", "dtype", "device")},
    }
    top = max(config.sizes)
    section["chance"] = round(sum(1.0 / len(it.endings) for it in test) / len(test), 6)
    if config.trained:
        log(f"trained audit ({config.trained_budget}): fresh builds, adversaries, controls")
        tick = bar("trained audit", vtrained.planned_steps()) if bar is not None else None
        section["trained"] = vtrained.run(
            config.data, test, budget=config.trained_budget, step=None if tick is None else (lambda _what: tick(1))
        )
        log(f"trained audit {section['trained']['verdict']['text']} ({section['trained']['seconds']['total']:.0f} s)")
    if config.adversary:
        log(f"adversary: {top:,} training items' endings")
        block = adv.adversary(
            backend,
            _train_items(config, test, top, "train"),
            test,
            sizes=config.sizes,
            settings=settings,
            batch_size=config.batch_size,
            bar=bar,
            adapter_out=config.adapter_out,
        )
        section["adversary"] = block
        log(f"adversary {block['verdict']}")
    if config.controls:
        import json

        from synthprobe.benchmarks.deeparithmark.controls import CONTROLS, control_lines

        controls = []
        size = control_size(config)
        for name in config.controls:
            test_records = [
                json.loads(x)
                for x in control_lines(
                    name, seed=sources.fresh_seed(config.seed, f"control-test:{name}"), n=config.control_items
                )
            ]
            ctl_test = [
                sources.item_from_record(r, path=f"control {name}", line=i + 1) for i, r in enumerate(test_records)
            ]
            ctl_train = sources.collect(
                sources.control_builder(name),
                n=size,
                seed=config.seed,
                purpose=f"control:{name}",
                exclude={it.ctx for it in ctl_test},
                shown=f"control {name}",
            )
            log(f"control {name}: {size:,} training items")
            one = adv.control(
                backend,
                name,
                CONTROLS[name],
                ctl_train,
                ctl_test,
                size=size,
                settings=settings,
                batch_size=config.batch_size,
                audit=adv.audit_summary(test_records),
                bar=bar,
            )
            acc = one["adversary"]["curve"][-1]["accuracy"]
            log(
                f"control {name}: {100 * acc:.1f} % from the endings alone "
                f"({'fails, as it must' if one['fails'] else 'does NOT fail'})"
            )
            controls.append(one)
        section["controls"] = controls
    lora = adv.power(section.get("controls", [])) if config.adversary or config.controls else None
    section["power"] = vtrained.combined_power(lora, vtrained.power(section["trained"]) if config.trained else None)
    if config.controls or config.trained:
        log(f"power: {section['power']['verdict']}")
    if config.learn_sizes:
        n = max(config.learn_sizes)
        log(f"learnability: {n:,} training items with their context")
        section["learnability"] = learn.learnability(
            backend,
            _train_items(config, test, n, "learn"),
            test,
            sizes=config.learn_sizes,
            settings=settings,
            batch_size=config.batch_size,
            bar=bar,
        )
    if config.lofo_size is not None:
        exclude = {it.ctx for it in test}
        make = sources.deeparithmark_builder(config.data)

        def train_for(family: str) -> list[MCItem]:
            return sources.collect(
                make,
                n=config.lofo_size,
                seed=config.seed,
                purpose=f"lofo:{family}",
                exclude=exclude,
                keep=lambda it: group_of(it, "template") != family,
            )

        log(f"leave-one-family-out: {config.lofo_size:,} training items per fold")
        section["leave_one_family_out"] = learn.leave_one_family_out(
            backend, test, train_for, size=config.lofo_size, settings=settings, batch_size=config.batch_size, bar=bar
        )
    section["seconds"] = round(time.perf_counter() - t0, 1)
    return section
