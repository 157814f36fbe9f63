"""The report's "Validity" section: the ``validity`` section of a results document written by
``synthprobe validate`` (layout: :mod:`synthprobe.validity`), read with located errors.

Shown, each part only when the file holds it:

* the choices-only adversary's curve: per training size its accuracy with the 95 % interval, the
  p-value against chance and whether it stayed within chance's interval (the band a scorer at
  chance lands in 95 % of the time on the file's items), and its verdict;
* the positive controls (deliberately flawed builds): the flaw, whether the heuristic audit
  passes the build, the adversary's accuracy on it and whether it fails (lands clearly above
  chance), then the power verdict in words;
* learnability: accuracy against training size with the context, each size paired against the
  untrained model (exact McNemar p), overall and per depth;
* leave-one-family-out: per held-out family, trained against untrained on the same items;
* seed variance (``seeds``, :mod:`synthprobe.validity.seeds`): per model its score over the K
  fresh builds (mean with the t interval of the mean, SD, range), overall and per depth, each
  build's score, where the file's own score falls; and, when several input files hold one, every
  two models across the builds they share (mean difference, paired t-test);
* the trained choices-only audit (``trained``, the report of
  ``synthprobe.benchmarks.deeparithmark.trained_audit.run``; no model): per adversary its accuracy
  on the fresh audit build with the 90 % interval and the equivalence (TOST) result, and on the
  file with the p-value above chance; per control each adversary's accuracy and whether it fails
  or passes as it must; the per-stratum screen's flagged depths and templates, worst first (at
  most :data:`SCREEN_ROWS`) with how many in all; and its verdict. A document holding only this
  part has ``model`` null.

One PNG, ``validity.png``, holds a panel per part present: adversary accuracy against training
size with chance's band and each control; learnability against size (per depth, thin); the
training loss curves; leave-one-family-out bars; then one seed-variance panel of every model.

This module lives beside the command that writes the section (as the twins' report lives beside
the twins), and the report reaches it by its import path (:data:`synthprobe.report.sections.SECTIONS`).
It reads the document alone and imports nothing else of :mod:`synthprobe.validity` (a report is
drawn without training anything); two rules are read from the core: chance's interval
(:func:`synthprobe.metrics.stats.chance_band`, the normal approximation
``chance ± 1.96·sqrt(chance·(1 − chance)/n)``, the one validate uses; the in/out
call shown is the one the file records, ``within_chance``) and the paired t-test of two models'
per-build scores (:func:`synthprobe.metrics.stats.paired_over_seeds`, which ``validity.seeds.paired`` calls too).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from synthprobe.metrics.stats import chance_band, paired_over_seeds
from synthprobe.report import html
from synthprobe.report.format import fmt_pct, fmt_pct_ci
from synthprobe.results import DASH, MINUS, Reader, Results, fmt_p, fmt_params
from synthprobe.templating import Markup, escape

KEY = "validity"
#: flagged strata shown in the trained audit's screen table (the worst; the count says how many in all)
SCREEN_ROWS = 10
TITLE = "Validity: does the file measure what it claims?"
SHORT_TITLE = "Validity"
SECTION = "validity"
RATE_KEYS = ("n", "correct", "accuracy", "ci95", "p_vs_chance")


@dataclass
class ValidityRun:
    """One file's validity section, checked, as the page shows it."""

    source: str
    section: dict

    @property
    def chance(self) -> float:
        return float(self.section["chance"])


# -- reading, every field located ------------------------------------------------------------


def _obj(r: Reader, value: Any, where: str) -> dict:
    if not isinstance(value, dict):
        raise r.fail(where, f"expected an object, got {json.dumps(value)[:60]}")
    return value


def _list(r: Reader, obj: dict, key: str, where: str, *, required: bool = True, nonempty: bool = False) -> list:
    value = r.get(obj, key, where, list, required=required) or []
    if nonempty and not value:
        raise r.fail(f"{where}.{key}", "is empty; expected at least one entry")
    return value


def _rate(r: Reader, block: Any, where: str) -> dict:
    """A rate block: ``n``, ``correct``, ``accuracy`` (a fraction; null only when n is 0),
    ``ci95`` ([lo, hi] or null), ``p_vs_chance`` (number or null)."""
    block = _obj(r, block, where)
    n = r.get(block, "n", where, int)
    correct = r.get(block, "correct", where, int)
    if not 0 <= correct <= n:
        raise r.fail(f"{where}.correct", f"expected 0 <= correct <= n ({n}), got {correct}")
    acc = r.get(block, "accuracy", where, float, required=n > 0, what="a fraction in [0, 1]")
    if acc is not None and not 0 <= acc <= 1:
        raise r.fail(f"{where}.accuracy", f"expected a fraction in [0, 1], got {acc}")
    ci = r.get(block, "ci95", where, list, required=False, what="[low, high] or null")
    if ci is not None and (
        len(ci) != 2
        or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in ci)
        or not ci[0] <= ci[1]
    ):
        raise r.fail(f"{where}.ci95", f"expected [low, high] with low <= high, got {json.dumps(ci)[:60]}")
    r.get(block, "p_vs_chance", where, float, required=False)
    return block


def _groups(r: Reader, point: dict, key: str, where: str, *, required: bool = True) -> None:
    groups = r.get(point, key, where, dict, required=required) or {}
    for name, block in groups.items():
        _rate(r, block, f"{where}.{key}.{name}")


def _paired(r: Reader, obj: dict, where: str, *, vs_size: bool) -> dict | None:
    paired = r.get(obj, "paired", where, dict, required=False)
    if paired is None:
        return None
    here = f"{where}.paired"
    if vs_size:
        r.get(paired, "vs_size", here, int)
    for key in ("only_this", "only_other"):
        if r.get(paired, key, here, int) < 0:
            raise r.fail(f"{here}.{key}", "expected a count >= 0")
    p = r.get(paired, "p", here, float, what="a p-value in [0, 1]")
    if not 0 <= p <= 1:
        raise r.fail(f"{here}.p", f"expected a p-value in [0, 1], got {p}")
    return paired


def _curve(r: Reader, block: Any, where: str, *, adversary: bool) -> dict:
    """An adversary block (``adversary``: ``within_chance`` per point, ``loss_curve``, ``passes``,
    ``verdict`` required) or a learnability block."""
    block = _obj(r, block, where)
    r.get(block, "input", where, str)
    r.get(block, "loss", where, str)
    r.get(block, "train_seed", where, int, required=False)
    r.get(block, "train_items", where, int, required=False)
    chance = r.get(block, "chance", where, float, required=False)
    if chance is not None and not 0 <= chance <= 1:
        raise r.fail(f"{where}.chance", f"expected a fraction in [0, 1], got {chance}")
    last = -1
    for i, p in enumerate(_list(r, block, "curve", where, nonempty=True)):
        here = f"{where}.curve[{i}]"
        _rate(r, p, here)
        size = r.get(p, "size", here, int)
        if size <= last:
            raise r.fail(f"{here}.size", f"expected sizes in increasing order, got {size} after {last}")
        last = size
        r.get(p, "within_chance", here, bool, required=adversary)
        _groups(r, p, "by_depth", here)
        _groups(r, p, "by_template", here)
        train = r.get(p, "train", here, dict, required=False)
        if train is not None:
            r.get(train, "seconds", f"{here}.train", float, required=False)
            r.get(train, "tokens", f"{here}.train", int, required=False)
            r.get(train, "loss", f"{here}.train", float, required=False)
            r.get(train, "adapter_sha256", f"{here}.train", str, required=False)
        _paired(r, p, here, vs_size=True)
    for i, pair in enumerate(_list(r, block, "loss_curve", where, required=adversary)):
        if (
            not isinstance(pair, list)
            or len(pair) != 2
            or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in pair)
        ):
            raise r.fail(f"{where}.loss_curve[{i}]", f"expected [items seen, loss], got {json.dumps(pair)[:60]}")
    if adversary:
        r.get(block, "passes", where, bool)
        r.get(block, "verdict", where, str)
    return block


def parse(results: Results) -> list[ValidityRun]:
    """The file's validity section (none or one), every part it holds checked."""
    sec = results.validity
    if sec is None:
        return []
    r = results.reader
    w = SECTION
    file = r.get(sec, "file", w, dict)
    r.get(file, "path", f"{w}.file", str)
    r.get(file, "sha256", f"{w}.file", str)
    r.get(file, "n_items", f"{w}.file", int)
    r.get(file, "benchmark", f"{w}.file", str, required=False)
    r.get(sec, "settings", w, dict)
    # a document of the trained audit alone used no model: its model is null
    model_parts = any(k in sec for k in ("adversary", "controls", "learnability", "leave_one_family_out", "seeds"))
    model = r.get(sec, "model", w, dict, required=model_parts or "trained" not in sec)
    if model is not None:
        r.get(model, "spec", f"{w}.model", str)
        r.get(model, "name", f"{w}.model", str, required=False)
        r.get(model, "params", f"{w}.model", int, required=False)
    if "trained" in sec:
        _trained(r, sec["trained"], f"{w}.trained")
    if "adversary" in sec:
        _curve(r, sec["adversary"], f"{w}.adversary", adversary=True)
    for i, c in enumerate(_list(r, sec, "controls", w, required=False)):
        here = f"{w}.controls[{i}]"
        _obj(r, c, here)
        r.get(c, "name", here, str)
        r.get(c, "flaw", here, str)
        r.get(c, "n_items", here, int)
        audit = r.get(c, "audit", here, dict)
        r.get(audit, "passes", f"{here}.audit", bool)
        for j, s in enumerate(_list(r, audit, "strategies", f"{here}.audit")):
            at = f"{here}.audit.strategies[{j}]"
            _obj(r, s, at)
            r.get(s, "name", at, str)
            r.get(s, "accuracy", at, float)
            r.get(s, "within", at, bool)
        _curve(r, r.get(c, "adversary", here, dict), f"{here}.adversary", adversary=True)
        r.get(c, "fails", here, bool)
    power = r.get(sec, "power", w, dict)
    if power.get("has_power") is not None:
        r.get(power, "has_power", f"{w}.power", bool, what="true, false or null")
    r.get(power, "verdict", f"{w}.power", str)
    if "learnability" in sec:
        _curve(r, sec["learnability"], f"{w}.learnability", adversary=False)
    lofo = r.get(sec, "leave_one_family_out", w, dict, required=False)
    if lofo is not None:
        here = f"{w}.leave_one_family_out"
        r.get(lofo, "size", here, int)
        for i, f in enumerate(_list(r, lofo, "folds", here)):
            at = f"{here}.folds[{i}]"
            _obj(r, f, at)
            r.get(f, "family", at, str)
            _rate(r, r.get(f, "trained", at, dict), f"{at}.trained")
            _rate(r, r.get(f, "untrained", at, dict), f"{at}.untrained")
            if _paired(r, f, at, vs_size=False) is None:
                raise r.fail(f"{at}.paired", "missing; expected {only_this, only_other, p}")
    if "seeds" in sec:
        _seeds(r, sec["seeds"], f"{w}.seeds")
    return [ValidityRun(str(results.path), sec)]


def _p_value(r: Reader, obj: dict, key: str, where: str) -> None:
    p = r.get(obj, key, where, float, required=False, what="a p-value in [0, 1]")
    if p is not None and not 0 <= p <= 1:
        raise r.fail(f"{where}.{key}", f"expected a p-value in [0, 1], got {p}")


def _pair(r: Reader, obj: dict, key: str, where: str) -> None:
    value = r.get(obj, key, where, list, what="[low, high]")
    if len(value) != 2 or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in value):
        raise r.fail(f"{where}.{key}", f"expected [low, high], got {json.dumps(value)[:60]}")


def _trained(r: Reader, block: Any, where: str) -> None:
    """The ``trained`` part: the fields the page shows, each located."""
    block = _obj(r, block, where)
    names = list(r.get(block, "adversaries", where, dict))
    if not names:
        raise r.fail(f"{where}.adversaries", "is empty; expected at least one adversary")
    r.get(block, "train_n", where, int)
    r.get(block, "decoys", where, str)
    _pair(r, block, "bounds", where)
    _fraction(r, block, "screen_alpha", where)
    sets = r.get(block, "test_sets", where, dict)
    for name in ("audit build", "file"):
        at = f"{where}.test_sets.{name}"
        ts = _obj(r, r.get(sets, name, f"{where}.test_sets", dict), at)
        r.get(ts, "n", at, int)
        blocks = r.get(ts, "adversaries", at, dict)
        for adv in names:
            here = f"{at}.adversaries.{adv}"
            b = _obj(r, r.get(blocks, adv, f"{at}.adversaries", dict), here)
            r.get(b, "n", here, int)
            r.get(b, "correct", here, int)
            _fraction(r, b, "accuracy", here)
            _pair(r, b, "cp90", here)
            _p_value(r, b, "tost_p", here)
            _p_value(r, b, "p_above_chance", here)
            r.get(b, "passes", here, bool, required=False, what="true, false or null")
            r.get(b, "items_needed", here, int, required=False)
            clusters = r.get(b, "clusters", here, dict, required=False)
            if clusters is not None:
                _pair(r, clusters, "interval", f"{here}.clusters")
        for i, row in enumerate(_list(r, ts, "screen", at)):
            here = f"{at}.screen[{i}]"
            _obj(r, row, here)
            for key in ("adversary", "kind", "stratum"):
                r.get(row, key, here, str)
            r.get(row, "n", here, int)
            _fraction(r, row, "accuracy", here)
            _p_value(r, row, "p_holm", here)
            r.get(row, "flagged", here, bool)
    for i, c in enumerate(_list(r, block, "controls", where)):
        here = f"{where}.controls[{i}]"
        _obj(r, c, here)
        for key in ("name", "expect", "outcome"):
            r.get(c, key, here, str)
        r.get(c, "note", here, str, required=False)
        r.get(c, "as_expected", here, bool)
        r.get(c, "train_n", here, int, required=False)
        r.get(c, "test_n", here, int)
        per = r.get(c, "adversaries", here, dict)
        for adv, b in per.items():
            _fraction(r, _obj(r, b, f"{here}.adversaries.{adv}"), "accuracy", f"{here}.adversaries.{adv}")
    verdict = r.get(block, "verdict", where, dict)
    r.get(verdict, "status", f"{where}.verdict", str)
    r.get(verdict, "passes", f"{where}.verdict", bool)
    r.get(verdict, "text", f"{where}.verdict", str)
    r.get(block, "note", where, str, required=False)


def _fraction(r: Reader, obj: dict, key: str, where: str, *, required: bool = True) -> float | None:
    value = r.get(obj, key, where, float, required=required, what="a fraction in [0, 1]")
    if value is not None and not 0 <= value <= 1:
        raise r.fail(f"{where}.{key}", f"expected a fraction in [0, 1], got {value}")
    return value


def _spread(r: Reader, block: Any, where: str) -> None:
    """``{"mean", "sd", "min", "max", "ci95"?}`` of per-seed accuracies (fractions; sd null
    for one seed, ci95 [lo, hi] or null)."""
    block = _obj(r, block, where)
    for key in ("mean", "min", "max"):
        _fraction(r, block, key, where)
    sd = r.get(block, "sd", where, float, required=False)
    if sd is not None and sd < 0:
        raise r.fail(f"{where}.sd", f"expected a standard deviation >= 0, got {sd}")
    ci = r.get(block, "ci95", where, list, required=False, what="[low, high] or null")
    if ci is not None and (
        len(ci) != 2 or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in ci)
    ):
        raise r.fail(f"{where}.ci95", f"expected [low, high], got {json.dumps(ci)[:60]}")


def _seeds(r: Reader, seeds: Any, where: str) -> None:
    """The ``seeds`` part (layout: :mod:`synthprobe.validity.seeds`)."""
    seeds = _obj(r, seeds, where)
    r.get(seeds, "protocol", where, str)
    r.get(seeds, "k", where, int)
    r.get(seeds, "n", where, int)
    for i, p in enumerate(_list(r, seeds, "per_seed", where, nonempty=True)):
        at = f"{where}.per_seed[{i}]"
        _obj(r, p, at)
        r.get(p, "seed", at, int, required=False)
        n = r.get(p, "n", at, int)
        correct = r.get(p, "correct", at, int)
        if not 0 <= correct <= n:
            raise r.fail(f"{at}.correct", f"expected 0 <= correct <= n ({n}), got {correct}")
        _fraction(r, p, "accuracy", at)
        for key in ("by_depth", "by_template"):
            groups = r.get(p, key, at, dict, required=False) or {}
            for g in groups:
                _fraction(r, groups, g, f"{at}.{key}")
    _spread(r, r.get(seeds, "overall", where, dict), f"{where}.overall")
    for key in ("by_depth", "by_template"):
        for g, block in (r.get(seeds, key, where, dict, required=False) or {}).items():
            _spread(r, block, f"{where}.{key}.{g}")
    release = r.get(seeds, "release", where, dict, required=False)
    if release is not None:
        at = f"{where}.release"
        _fraction(r, release, "accuracy", at)
        r.get(release, "z", at, float, required=False)
        _fraction(r, release, "share_below", at)
        r.get(release, "verdict", at, str)


# -- numbers as the page shows them ---------------------------------------------------------


def _acc(b: dict | None, *, counts: bool = True) -> str:
    """``24.8 % [20.6, 29.3] (99/400)``."""
    if not b or b.get("accuracy") is None:
        return DASH
    ci = b.get("ci95")
    text = fmt_pct_ci(b["accuracy"], ci, 1) if ci else fmt_pct(b["accuracy"], 1, " %")
    return text + (f" ({b['correct']:,}/{b['n']:,})" if counts else "")


def _points(x: float | None) -> str:
    if x is None:
        return DASH
    return f"{100 * x:+.1f}".replace("-", MINUS)


def _delta(a: dict, b: dict) -> float | None:
    """``a − b`` of two rate blocks' accuracies (fractions), None when either has none."""
    return None if a.get("accuracy") is None or b.get("accuracy") is None else a["accuracy"] - b["accuracy"]


def _yes(flag: bool | None, yes: str = "yes", no: str = "no", *, good: bool | None = None) -> Markup:
    """A yes/no cell, green when it is the outcome wanted (``good``), red when not."""
    if flag is None:
        return Markup(DASH)
    text = yes if flag else no
    if good is None:
        return escape(text)
    cls = "above" if flag == good else "below"
    return Markup('<span class="{}">{}</span>').format(cls, text)


def _depths(points: Sequence[dict]) -> list[str]:
    keys = {k for p in points for k in p.get("by_depth") or {}}
    return sorted(keys, key=lambda k: (0, int(k), "") if k.isdigit() else (1, 0, k))


def _model_text(model: dict) -> str:
    name = model.get("name") or model["spec"]
    params = model.get("params")
    return name + (f" ({fmt_params(params)})" if params else "")


def _verdict_word(passes: bool | None) -> str:
    return {True: "passes", False: "fails", None: "not run"}[passes]


def _power_word(has_power: bool | None) -> str:
    return {True: "has power", False: "no power", None: "unchecked"}[has_power]


def _strip(verdict: str, *words: str) -> str:
    """A verdict sentence without the leading word the page already shows (``passes: ...``)."""
    for w in words:
        if verdict.startswith(w + ":"):
            return verdict[len(w) + 1 :].strip()
    return verdict


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _best_trained(block: dict) -> dict:
    trained = [p for p in block["curve"] if p["size"] > 0] or block["curve"]
    return trained[-1]


# -- tables (head, rows) shared by the page and leaderboard.md --------------------------------


Cell = Any  # str or Markup
Table = tuple[list[str], list[list[Cell]]]


def adversary_table(block: dict, chance: float) -> Table:
    """Per training size: accuracy with its interval and counts, p vs chance, within chance's
    interval, per depth, and the training run's loss and time."""
    depths = _depths(block["curve"])
    head = (
        ["Training items", "accuracy % [95 % CI] (right/n)", "p vs chance", "within chance's interval"]
        + [f"d{d} %" for d in depths]
        + ["train loss", "train s"]
    )
    rows = []
    for p in block["curve"]:
        train = p.get("train") or {}
        rows.append(
            [f"{p['size']:,}", _acc(p), fmt_p(p.get("p_vs_chance")), _yes(p.get("within_chance"), good=True)]
            + [fmt_pct((p["by_depth"].get(d) or {}).get("accuracy"), 1) for d in depths]
            + [
                DASH if train.get("loss") is None else f"{train['loss']:.4f}",
                DASH if train.get("seconds") is None else f"{train['seconds']:,.1f}",
            ]
        )
    return head, rows


def controls_table(controls: Sequence[dict]) -> Table:
    """Per control: its flaw, the heuristic audit's call (and the strategies that leave chance),
    the adversary at its largest training size, and whether the control fails as it must."""
    head = [
        "Control",
        "Flaw",
        "heuristic audit",
        "trained on",
        "adversary % [95 % CI] (right/n)",
        "p vs chance",
        "fails",
    ]
    rows = []
    for c in controls:
        audit = c["audit"]
        caught = [s for s in audit["strategies"] if not s["within"]]
        audit_text = "passes" if audit["passes"] else "fails"
        if caught:
            audit_text += ": " + ", ".join(f"{s['name']} {fmt_pct(s['accuracy'], 1)} %" for s in caught)
        last = _best_trained(c["adversary"])
        rows.append(
            [
                c["name"],
                c["flaw"],
                audit_text,
                f"{last['size']:,}",
                _acc(last),
                fmt_p(last.get("p_vs_chance")),
                _yes(c["fails"], good=True),
            ]
        )
    return head, rows


def _reference(points: Sequence[dict], pair: dict | None) -> dict | None:
    """The point a ``paired`` block was compared against (its ``vs_size``)."""
    if pair is None:
        return None
    return next((q for q in points if q["size"] == pair.get("vs_size", points[0]["size"])), None)


def learnability_table(block: dict) -> Table:
    """Per training size: accuracy, p vs chance, and the paired comparison with the untrained
    model (difference in points, the items only one of them gets right, McNemar p)."""
    points = block["curve"]
    head = [
        "Training items",
        "accuracy % [95 % CI] (right/n)",
        "p vs chance",
        "vs untrained (points)",
        "trained only",
        "untrained only",
        "McNemar p",
    ]
    rows = []
    for p in points:
        pair = p.get("paired")
        ref = _reference(points, pair)
        rows.append(
            [
                f"{p['size']:,}",
                _acc(p),
                fmt_p(p.get("p_vs_chance")),
                _points(None if ref is None else _delta(p, ref)),
                DASH if pair is None else f"{pair['only_this']:,}",
                DASH if pair is None else f"{pair['only_other']:,}",
                DASH if pair is None else fmt_p(pair["p"]),
            ]
        )
    return head, rows


def depth_table(block: dict) -> Table | None:
    """Accuracy per depth (rows) and training size (columns), with each depth's n; None when the
    points have no depths."""
    points = block["curve"]
    depths = _depths(points)
    if not depths:
        return None
    head = ["Depth", "n"] + [f"{p['size']:,} items %" for p in points]
    rows = []
    for d in depths:
        n = next((p["by_depth"][d]["n"] for p in points if d in p["by_depth"]), None)
        rows.append(
            [d, DASH if n is None else f"{n:,}"]
            + [fmt_pct((p["by_depth"].get(d) or {}).get("accuracy"), 1) for p in points]
        )
    return head, rows


def lofo_table(lofo: dict) -> Table:
    """Per held-out family: trained and untrained accuracy on the same items, the difference,
    the items only one gets right and McNemar p."""
    head = [
        "Held-out family",
        "n",
        "trained % [95 % CI]",
        "untrained % [95 % CI]",
        "Δ points",
        "trained only",
        "untrained only",
        "McNemar p",
    ]
    rows = []
    for f in lofo["folds"]:
        t, u, pair = f["trained"], f["untrained"], f["paired"]
        rows.append(
            [
                f["family"],
                f"{t['n']:,}",
                _acc(t, counts=False),
                _acc(u, counts=False),
                _points(_delta(t, u)),
                f"{pair['only_this']:,}",
                f"{pair['only_other']:,}",
                fmt_p(pair["p"]),
            ]
        )
    return head, rows


def _interval(b: dict) -> list[float]:
    """The interval the equivalence test read: the cluster interval where items came in groups."""
    return (b.get("clusters") or {}).get("interval") or b["cp90"]


def _counts(b: dict) -> str:
    return f" ({b['correct']:,}/{b['n']:,})"


def _tost(b: dict) -> Cell:
    """The equivalence result: inside the margin or not, or why the test does not apply."""
    if b.get("passes") is None:
        need = b.get("items_needed")
        return escape(f"n/a: {b['n']:,} items, the test needs {need:,}" if need else "n/a")
    return _yes(b["passes"], "equivalent", "not equivalent", good=True)


def _flagged(test_set: dict, adversary: str) -> Cell:
    """How many of the adversary's strata the screen flags on a test set (overall, depths, templates)."""
    k = sum(r["flagged"] for r in test_set["screen"] if r["adversary"] == adversary)
    return _yes(k == 0, "none", f"{k:,}", good=True)


def trained_adversary_table(block: dict) -> Table:
    """Per adversary: the audit build's accuracy with the 90 % interval, the TOST p and the
    equivalence result, the strata flagged there; the file's accuracy, its p above chance and
    strata flagged."""
    audit, file = block["test_sets"]["audit build"], block["test_sets"]["file"]
    lo, hi = block["bounds"]
    head = [
        "Adversary",
        "audit build % [90 % CI] (right/n)",
        "TOST p",
        f"within {fmt_pct(lo, 0)}–{fmt_pct(hi, 0)} %",
        "audit build: strata flagged",
        "file % (right/n)",
        "file: p above chance",
        "file: strata flagged",
    ]
    rows = []
    for name in block["adversaries"]:
        a, f = audit["adversaries"][name], file["adversaries"][name]
        rows.append(
            [
                name,
                fmt_pct_ci(a["accuracy"], _interval(a), 1) + _counts(a),
                fmt_p(a.get("tost_p")),
                _tost(a),
                _flagged(audit, name),
                fmt_pct(f["accuracy"], 1, " %") + _counts(f),
                fmt_p(f.get("p_above_chance")),
                _flagged(file, name),
            ]
        )
    return head, rows


def trained_controls_table(block: dict) -> Table:
    """Per control: what it is, what it must do, its sizes, each adversary's accuracy on it and
    its outcome against what it must do."""
    names = list(block["adversaries"])
    head = ["Control", "what it is", "must", "train / test items"] + [f"{n} %" for n in names] + ["result"]
    rows = []
    for c in block["controls"]:
        train = "the audit's" if c.get("train_n") is None else f"{c['train_n']:,}"
        outcome = {"fail": "fails", "pass": "passes"}.get(c["outcome"], c["outcome"])
        rows.append(
            [c["name"], c.get("note") or DASH, c["expect"], f"{train} / {c['test_n']:,}"]
            + [fmt_pct((c["adversaries"].get(n) or {}).get("accuracy"), 1) for n in names]
            + [_yes(c["as_expected"], f"{outcome}, as it must", f"{outcome}: it must {c['expect']}", good=True)]
        )
    return head, rows


def _stratum(row: dict) -> str:
    return {"group": "template", "depth": "depth"}.get(row["kind"], row["kind"]) + f" {row['stratum']}"


def trained_screen(block: dict) -> tuple[Table | None, int, int]:
    """The per-stratum screen below the whole set (depths and templates, both test sets): a table
    of the flagged strata, worst first (Holm p, then accuracy), at most :data:`SCREEN_ROWS` rows
    (None when none is flagged), how many are flagged and how many were screened."""
    rows = [(name, r) for name, t in block["test_sets"].items() for r in t["screen"] if r["kind"] != "all"]
    flagged = sorted((nr for nr in rows if nr[1]["flagged"]), key=lambda nr: (nr[1]["p_holm"], -nr[1]["accuracy"]))
    if not flagged:
        return None, 0, len(rows)
    head = ["Test set", "Adversary", "Stratum", "items", "accuracy %", "p (Holm)"]
    body = [
        [name, r["adversary"], _stratum(r), f"{r['n']:,}", fmt_pct(r["accuracy"], 1), fmt_p(r["p_holm"])]
        for name, r in flagged[:SCREEN_ROWS]
    ]
    return (head, body), len(flagged), len(rows)


def _screen_words(block: dict) -> str:
    _, flagged, total = trained_screen(block)
    shown = f"; the {min(flagged, SCREEN_ROWS)} worst" if flagged else ""
    return (
        f"Per depth and template, on both test sets, a one-sided exact test above chance with Holm's "
        f"correction across strata and adversaries (α {block['screen_alpha']:g}): {flagged:,} of {total:,} "
        f"strata flagged{shown}."
    )


def _trained_intro(block: dict) -> str:
    audit, file = block["test_sets"]["audit build"], block["test_sets"]["file"]
    budget = block.get("budget") or {}
    lo, hi = block["bounds"]
    return (
        f"Adversaries that never read the question, trained on the options of {block['train_n']:,} items of "
        f"fresh builds ({block['decoys']} decoys), scored on a fresh {audit['n']:,}-item audit build and on the "
        f"file's {file['n']:,} items. The audit build passes when every adversary's 90 % interval lies inside "
        f"{fmt_pct(lo, 0)}–{fmt_pct(hi, 0)} % (a TOST equivalence test; it needs "
        f"{max((b.get('items_needed') or 0) for b in audit['adversaries'].values()):,} items)"
        + (f"; budget {budget['name']}" if budget.get("name") else "")
        + "."
    )


def _stated_power(block: dict) -> str | None:
    power = block.get("stated_power")
    if not power:
        return None
    found = "found" if power.get("detected") else "not found"
    return (
        f"Stated power: a build with {fmt_pct(power['fraction'], 0)} % legacy items (expected about "
        f"{fmt_pct(power['expected_accuracy'], 0)} %) is {found}: {power['best_adversary']} scores "
        f"{fmt_pct(power['best_accuracy'], 1)} %."
    )


def _scalar(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, (dict, list)):
        return json.dumps(v, ensure_ascii=False, sort_keys=True)
    return DASH if v is None else str(v)


def _labels(runs: Sequence[ValidityRun]) -> list[str]:
    """Each run's model name, with its file when two runs share a name."""
    names = [
        (r.section.get("model") or {}).get("name") or (r.section.get("model") or {}).get("spec") or "no model"
        for r in runs
    ]
    return [f"{n} ({r.source})" if names.count(n) > 1 else n for n, r in zip(names, runs)]


def _seed_runs(runs: Sequence[ValidityRun]) -> list[tuple[str, dict]]:
    """``(label, seeds block)`` of every run that holds one."""
    return [(label, r.section["seeds"]) for label, r in zip(_labels(runs), runs) if r.section.get("seeds")]


def _range(block: dict) -> str:
    return f"{fmt_pct(block['min'], 1)}–{fmt_pct(block['max'], 1)}"


def _mean_sd(block: dict) -> str:
    sd = block.get("sd")
    return f"{fmt_pct(block['mean'], 1)} ± {fmt_pct(sd, 1)}" if sd is not None else fmt_pct(block["mean"], 1)


def seeds_table(runs: Sequence[ValidityRun]) -> Table:
    """Per model: its score over the K fresh builds (mean with the t interval of the mean, sd,
    range) and where the file's own score falls."""
    head = [
        "Model",
        "metric",
        "builds × items",
        "mean % [95 % CI]",
        "SD (points)",
        "range %",
        "the file %",
        "z",
        "builds below the file",
    ]
    rows = []
    for label, sd in _seed_runs(runs):
        o, rel = sd["overall"], sd.get("release")
        ci = o.get("ci95")
        mean = f"{fmt_pct(o['mean'], 1)}" + (f" [{fmt_pct(ci[0], 1)}, {fmt_pct(ci[1], 1)}]" if ci else "")
        below = DASH if rel is None else f"{round(rel['share_below'] * len(sd['per_seed']))} of {len(sd['per_seed'])}"
        rows.append(
            [
                label,
                sd["protocol"],
                f"{sd['k']} × {sd['n']:,}",
                mean,
                DASH if o.get("sd") is None else f"{100 * o['sd']:.2f}",
                _range(o),
                DASH if rel is None else fmt_pct(rel["accuracy"], 1),
                DASH if rel is None or rel.get("z") is None else f"{rel['z']:+.2f}".replace("-", MINUS),
                below,
            ]
        )
    return head, rows


def seeds_depth_table(runs: Sequence[ValidityRun]) -> Table | None:
    """Per depth: each model's mean ± sd (range) over the builds, in percent."""
    found = _seed_runs(runs)
    depths = sorted(
        {d for _, sd in found for d in sd.get("by_depth") or {}},
        key=lambda k: (0, int(k), "") if k.isdigit() else (1, 0, k),
    )
    if not depths:
        return None
    head = ["Depth"] + [f"{label}: mean ± SD (range) %" for label, _ in found]
    rows = [
        [d]
        + [
            DASH
            if d not in (sd.get("by_depth") or {})
            else f"{_mean_sd(sd['by_depth'][d])} ({_range(sd['by_depth'][d])})"
            for _, sd in found
        ]
        for d in depths
    ]
    return head, rows


def per_seed_table(runs: Sequence[ValidityRun]) -> Table:
    """Each fresh build's score (rows: build seeds) per model, then the file's own."""
    found = _seed_runs(runs)
    seeds = list(dict.fromkeys(p.get("seed") for _, sd in found for p in sd["per_seed"]))
    head = ["Build seed"] + [f"{label} %" for label, _ in found]
    rows = []
    for seed in seeds:
        rows.append(
            [DASH if seed is None else str(seed)]
            + [
                next((fmt_pct(p["accuracy"], 1) for p in sd["per_seed"] if p.get("seed") == seed), DASH)
                for _, sd in found
            ]
        )
    rows.append(
        ["the file"] + [DASH if sd.get("release") is None else fmt_pct(sd["release"]["accuracy"], 1) for _, sd in found]
    )
    return head, rows


def seed_pairs(runs: Sequence[ValidityRun]) -> list[dict[str, Any]]:
    """Every two models' per-seed scores on the builds they share: the mean difference B − A
    and a paired t-test (as :func:`synthprobe.validity.seeds.paired`); fewer than two shared
    seeds give no test."""
    found = _seed_runs(runs)
    out = []
    for i, (la, a) in enumerate(found):
        for lb, b in found[i + 1 :]:
            test = paired_over_seeds(
                {p["seed"]: p["accuracy"] for p in a["per_seed"] if p.get("seed") is not None},
                {p["seed"]: p["accuracy"] for p in b["per_seed"] if p.get("seed") is not None},
            )
            out.append({"a": la, "b": lb, **test, "same_protocol": a["protocol"] == b["protocol"]})
    return out


def seed_pairs_table(runs: Sequence[ValidityRun]) -> Table | None:
    pairs = seed_pairs(runs)
    if not pairs:
        return None
    head = ["B − A", "shared builds", "mean difference (points)", "paired t", "p"]
    rows = []
    for p in pairs:
        name = f"{p['b']} − {p['a']}" + ("" if p["same_protocol"] else " (different metrics)")
        rows.append(
            [
                name,
                str(p["seeds"]),
                _points(p["mean_difference"]),
                DASH if p["t"] is None else f"{p['t']:.2f}".replace("-", MINUS),
                fmt_p(p["p"]),
            ]
        )
    return head, rows


def _seed_blocks(runs: Sequence[ValidityRun]) -> list[tuple[str, str, Table]]:
    """``(title, note, table)`` of the seed-variance part across all runs (empty when none)."""
    if not _seed_runs(runs):
        return []
    out = [("", "", seeds_table(runs))]
    depth = seeds_depth_table(runs)
    if depth is not None:
        out.append(("Per depth", "", depth))
    out.append(("Per build", "", per_seed_table(runs)))
    pairs = seed_pairs_table(runs)
    if pairs is not None:
        out.append(
            (
                "Two models across the same builds",
                "Paired t-test of the per-build scores on the builds both were scored on; fewer than two "
                "shared builds give no test (score both with the same --seed and --seeds).",
                pairs,
            )
        )
    return out


# -- words -------------------------------------------------------------------------------------


def verdicts(run: ValidityRun) -> list[tuple[str, str, bool | None]]:
    """``(part, sentence, good)`` for the section's headline list: adversary, power, learnability,
    leave-one-family-out (``good``: the outcome a valid benchmark wants; None: neutral)."""
    sec = run.section
    out: list[tuple[str, str, bool | None]] = []
    trained = sec.get("trained")
    if trained is not None:
        v = trained["verdict"]
        good = True if v["passes"] else (None if v["status"] == "inconclusive" else False)
        out.append(("Trained choices-only audit", v["text"], good))
    adv = sec.get("adversary")
    if adv is not None:
        out.append(
            (
                "Choices-only adversary",
                f"{_verdict_word(adv['passes'])}: " + _strip(adv["verdict"], "passes", "fails"),
                adv["passes"],
            )
        )
    power = sec["power"]
    out.append(
        (
            "Power",
            f"{_power_word(power.get('has_power'))}: " + _strip(power["verdict"], "has power", "no power"),
            power.get("has_power"),
        )
    )
    learn = sec.get("learnability")
    if learn is not None:
        base, top = learn["curve"][0], learn["curve"][-1]
        pair = top.get("paired")
        text = (
            f"{fmt_pct(base['accuracy'], 1)} % at {base['size']:,} training items, {fmt_pct(top['accuracy'], 1)} % at "
            f"{top['size']:,}"
        )
        if pair is not None and top is not base:
            text += (
                f" ({_points(top['accuracy'] - base['accuracy'])} points; paired against the untrained model "
                f"on the same items, McNemar p = {fmt_p(pair['p'])})"
            )
        out.append(("Learnability", text, None))
    lofo = sec.get("leave_one_family_out")
    if lofo is not None and lofo["folds"]:
        folds = lofo["folds"]
        gains = [f for f in folds if f["paired"]["p"] < 0.05 and f["paired"]["only_this"] > f["paired"]["only_other"]]
        moves = ", ".join(f"{f['family']} {_points(_delta(f['trained'], f['untrained']))}" for f in folds)
        out.append(
            (
                "Leave one family out",
                f"trained on {lofo['size']:,} items of the other families, the held-out family's score changes "
                f"by (points) {moves}; {len(gains)} of {len(folds)} gain significantly (McNemar p < 0.05)",
                None,
            )
        )
    seeds = sec.get("seeds")
    if seeds is not None:
        o = seeds["overall"]
        sd = DASH if o.get("sd") is None else f"{100 * o['sd']:.2f}"
        text = f"{seeds['protocol']}, SD {sd} points across {seeds['k']} fresh builds of {seeds['n']:,} items"
        if seeds.get("release") is not None:
            text += "; " + seeds["release"]["verdict"]
        else:
            text += f", mean {fmt_pct(o['mean'], 1)} %, range {_range(o)} %"
        out.append(("Seed variance", text, None))
    return out


def _intro(run: ValidityRun) -> str:
    sec = run.section
    f, model = sec["file"], sec.get("model")
    lo, hi = chance_band(f["n_items"], run.chance)
    bench = f" ({f['benchmark']})" if f.get("benchmark") else ""
    how = (
        "the trained choices-only audit alone (no model)"
        if model is None
        else f"{_model_text(model)} fine-tuned on fresh-seed items that share no context with the file"
    )
    return (
        f"Checks of {f['path']}{bench}, {f['n_items']:,} items, SHA-256 {f['sha256'][:12]}…: {how}. "
        f"Chance is {fmt_pct(run.chance, 1)} %; a scorer at chance lands in {fmt_pct(lo, 1)}–{fmt_pct(hi, 1)} % on "
        f"{f['n_items']:,} items 95 % of the time (chance's interval)."
    )


# -- the page ----------------------------------------------------------------------------------


def summary(runs: Sequence[ValidityRun]) -> str | None:
    parts = []
    for run in runs:
        adv, trained = run.section.get("adversary"), run.section.get("trained")
        power = run.section["power"]
        words = [f"trained audit {trained['verdict']['status']}"] if trained is not None else []
        words += ([f"adversary {_verdict_word(adv['passes'])}"] if adv is not None else []) + [
            _power_word(power.get("has_power"))
        ]
        parts.append(", ".join(words))
    return "validity: " + "; ".join(parts)


def _note(text: str) -> str:
    return f'<p class="note">{escape(text)}</p>'


def _head(run: ValidityRun, heading: bool) -> str:
    """What was checked and the verdicts, in words."""
    sec = run.section
    parts = []
    if heading:
        parts.append(f"<h3>{escape(sec['file']['path'])} · <code>{escape(run.source)}</code></h3>")
    parts.append(f"<p>{escape(_intro(run))}</p>")
    items = []
    for part, sentence, good in verdicts(run):
        cls = "" if good is None else (' class="above"' if good else ' class="below"')
        items.append(Markup("<li><strong{}>{}</strong>: {}</li>").format(Markup(cls), part, sentence))
    parts.append("<ul>" + "".join(items) + "</ul>")
    # the LoRA adversary's own power (the trained audit's controls do not show it)
    adv_power = (sec["power"].get("parts") or {}).get("adversary", sec["power"])
    if adv_power.get("has_power") is not True and sec.get("adversary", {}).get("passes"):
        parts.append(
            '<p class="warn">The adversary passed, but its power is not shown: a pass is evidence only '
            "when the positive controls fail it.</p>"
        )
    return "".join(str(p) for p in parts)


def _details(run: ValidityRun) -> str:
    """Each part's table and notes."""
    sec = run.section
    parts = _trained_html(sec["trained"]) if sec.get("trained") is not None else []
    adv = sec.get("adversary")
    if adv is not None:
        parts.append("<h4>Choices-only adversary</h4>")
        parts.append(
            _note(
                f"Input: {adv['input']}. Loss: {adv['loss']}."
                + (f" Training seed {adv['train_seed']}." if adv.get("train_seed") is not None else "")
            )
        )
        parts.append(html.table(*_escaped(adversary_table(adv, run.chance)), raw=True))
        parts.append(
            _note(
                "Accuracy: the option whose letter gets the highest logit after 'Answer:' is the right "
                "one, over the file's items. Training items 0 is the untrained model. Within chance's "
                "interval: the accuracy lies in the band a scorer at chance lands in 95 % of the time "
                "(as the file records it); the 95 % CI is the interval of the accuracy itself."
            )
        )
    controls = sec.get("controls") or []
    if controls:
        parts.append("<h4>Positive controls</h4>")
        parts.append(html.table(*_escaped(controls_table(controls)), left=3, raw=True))
        parts.append(
            _note(
                "Each control is a deliberately flawed build; the same adversary, trained the same way "
                "on fresh builds of the control, must fail it: land clearly above chance (above chance's "
                "interval with p < 0.05), for a pass on the file to mean anything. Heuristic audit: "
                "the shortcut strategies (largest / smallest value, roundest, a fixed slot, longest / "
                "shortest ending, a character 3-gram classifier) all stay at chance; the strategies "
                "named are those that do not."
            )
        )
    power = sec["power"]
    parts.append(
        Markup("<p{}><strong>Power: {}.</strong> {}</p>").format(
            Markup("") if power.get("has_power") else Markup(' class="warn"'),
            _power_word(power.get("has_power")),
            _capital(_strip(power["verdict"], "has power", "no power")),
        )
    )
    learn = sec.get("learnability")
    if learn is not None:
        parts.append("<h4>Learnability</h4>")
        parts.append(
            _note(
                f"Input: {learn['input']}. Each size paired against the untrained model (size "
                f"{learn['curve'][0]['size']:,}) on the same items: trained only / untrained only count "
                "the items only that one gets right; McNemar p is the exact two-sided test on them."
            )
        )
        parts.append(html.table(*learnability_table(learn)))
        depths = depth_table(learn)
        if depths is not None:
            parts.append("<p>Per depth, accuracy % at each training size:</p>" + html.table(*depths))
    lofo = sec.get("leave_one_family_out")
    if lofo is not None:
        parts.append("<h4>Leave one family out</h4>")
        parts.append(
            _note(
                f"Each fold trains on {lofo['size']:,} fresh items of every family but one and scores "
                "the file's items of the family left out, against the untrained model on the same items."
            )
        )
        parts.append(html.table(*lofo_table(lofo)))
    return "".join(str(p) for p in parts)


def _trained_html(block: dict) -> list[str]:
    """The trained audit: its adversaries, controls and screen tables, its verdict."""
    parts = ["<h4>Trained choices-only audit</h4>", _note(_trained_intro(block))]
    parts.append(html.table(*_escaped(trained_adversary_table(block)), raw=True))
    parts.append(
        _note(
            "Accuracy: the option the adversary ranks first is the key. 90 % CI: the exact Clopper–Pearson "
            "interval (the cluster interval where items come in role-balanced groups). Strata flagged: of the "
            "adversary's screen strata (all items, each depth, each template) above chance after Holm's correction."
        )
    )
    parts.append("<p>Controls: a planted leak must fail (an adversary above chance), the null must pass:</p>")
    parts.append(html.table(*_escaped(trained_controls_table(block)), left=2, raw=True))
    power = _stated_power(block)
    if power:
        parts.append(_note(power))
    screen, _, _ = trained_screen(block)
    parts.append(f"<p>{escape(_screen_words(block))}</p>")
    if screen is not None:
        parts.append(html.table(*screen, left=3))
    v = block["verdict"]
    cls = Markup("") if v["passes"] else Markup(' class="warn"')
    word = _capital(v["status"])
    parts.append(
        Markup("<p{}><strong>Verdict: {}.</strong> {}</p>").format(
            cls, word, _capital(_strip(v["text"], v["status"])) + "."
        )
    )
    if block.get("note"):
        parts.append(_note(_capital(block["note"]) + "."))
    return [str(x) for x in parts]


def _seeds_html(runs: Sequence[ValidityRun]) -> str:
    blocks = _seed_blocks(runs)
    if not blocks:
        return ""
    parts = [
        "<h4>Seed variance</h4>",
        _note(
            "The model scored on K fresh full-size builds of the benchmark (seeds derived from the run's "
            "seed) and on the file itself. Mean with the t interval of the mean; SD is the sample "
            "standard deviation across builds; z: how many SDs the file's score lies from the mean "
            "(negative: below)."
        ),
    ]
    for title, note, table in blocks:
        if title:
            parts.append(f"<p>{escape(title)}:</p>")
        parts.append(html.table(*table, left=2 if table[0][0] == "Model" else 1))
        if note:
            parts.append(_note(note))
    return "".join(parts)


def _escaped(table: Table) -> Table:
    """A table for ``html.table(raw=True)``: text cells escaped, Markup cells kept."""
    head, rows = table
    return head, [[c if isinstance(c, Markup) else escape(c) for c in row] for row in rows]


def section(runs: Sequence[ValidityRun], png: bytes | None = None) -> str:
    parts = [
        "<p>Evidence from a model that the file measures what it claims: an adversary that sees only "
        "the endings must stay at chance, deliberately flawed builds show it could have failed, "
        "and fine-tuning with the question shows how far the score can be learned.</p>"
    ]
    if png is not None:
        parts.append(
            html.img(
                png,
                "validity: adversary accuracy by training size with chance's interval and the "
                "positive controls; learnability by training size; training loss; leave one "
                "family out",
                "Accuracy in percent against training items (0 = untrained); the grey band is "
                "chance's interval; error bars are 95 % intervals. Loss: the training loss over "
                "the option letters against items seen; the dotted line is the loss of a uniform "
                "guess.",
            )
        )
    if len(runs) == 1:
        return "".join(parts[:1] + [_head(runs[0], False)] + parts[1:] + [_details(runs[0]), _seeds_html(runs)])
    return "".join(parts + [_head(run, True) + _details(run) for run in runs] + [_seeds_html(runs)])


def _settings(run: ValidityRun) -> dict[str, str]:
    sec = run.section
    out = {f"file {k}": _scalar(v) for k, v in sec["file"].items()}
    out.update((f"model {k}", _scalar(v)) for k, v in (sec.get("model") or {}).items())
    out.update((k, _scalar(v)) for k, v in sec["settings"].items())
    if sec.get("seconds") is not None:
        out["seconds"] = _scalar(sec["seconds"])
    return out


def settings_table(runs: Sequence[ValidityRun]) -> str:
    """The runs' file, model and settings: one column per results file."""
    per_run = [_settings(run) for run in runs]
    keys = list(dict.fromkeys(k for s in per_run for k in s))
    head = ["setting"] + ([run.source for run in runs] if len(runs) > 1 else ["value"])
    return html.table(head, [[k] + [s.get(k, DASH) for s in per_run] for k in keys], left=len(head))


# -- leaderboard.md ----------------------------------------------------------------------------


def _md(table: Table, left: int = 1) -> list[str]:
    """A markdown table; the first ``left`` columns (text) aligned left, the rest right."""
    head, rows = table

    def cell(c: Cell) -> str:
        text = str(c)
        if isinstance(c, Markup):
            text = c.striptags()
        return text.replace("|", "\\|")

    return ["| " + " | ".join(head) + " |", "|" + "---|" * left + "---:|" * (len(head) - left)] + [
        "| " + " | ".join(cell(c) for c in row) + " |" for row in rows
    ]


def markdown_body(runs: Sequence[ValidityRun]) -> str:
    lines: list[str] = []
    for run in runs:
        sec = run.section
        if len(runs) > 1:
            lines += [f"### {sec['file']['path']} ({run.source})", ""]
        lines += [_intro(run), ""]
        lines += [f"- **{part}**: {sentence}" for part, sentence, _ in verdicts(run)] + [""]
        blocks: list[tuple[str, Callable[[], Table]]] = []
        trained = sec.get("trained")
        if trained is not None:
            lines += ["**Trained choices-only audit**", "", _trained_intro(trained), ""]
            lines += _md(trained_adversary_table(trained)) + [""]
            lines += ["Controls:", ""] + _md(trained_controls_table(trained), 2) + [""]
            screen, _, _ = trained_screen(trained)
            lines += [_screen_words(trained), ""] + (_md(screen, 3) + [""] if screen is not None else [])
            lines += [f"Verdict: {trained['verdict']['text']}.", ""]
        if sec.get("adversary") is not None:
            blocks.append(("Choices-only adversary", lambda: adversary_table(sec["adversary"], run.chance)))  # noqa: B023
        if sec.get("controls"):
            blocks.append(("Positive controls", lambda: controls_table(sec["controls"])))  # noqa: B023
        if sec.get("learnability") is not None:
            blocks.append(("Learnability", lambda: learnability_table(sec["learnability"])))  # noqa: B023
            if depth_table(sec["learnability"]) is not None:
                blocks.append(("Learnability per depth (accuracy %)", lambda: depth_table(sec["learnability"])))  # noqa: B023
        if sec.get("leave_one_family_out") is not None:
            blocks.append(("Leave one family out", lambda: lofo_table(sec["leave_one_family_out"])))  # noqa: B023
        for name, make in blocks:
            table = make()
            lines += [f"**{name}**", ""] + _md(table, 3 if name == "Positive controls" else 1) + [""]
    blocks = _seed_blocks(runs)
    if blocks:
        lines += ["**Seed variance**", ""]
        for title, note, table in blocks:
            lines += ([f"{title}:", ""] if title else []) + _md(table, 2 if table[0][0] == "Model" else 1) + [""]
            lines += [note, ""] if note else []
    return "\n".join(lines)


# -- the figure --------------------------------------------------------------------------------


#: the y-axis label of every accuracy panel: the metric, in words
ACCURACY_AXIS = "accuracy, % (letter with the highest logit is right)"
LOSS_AXIS = "training loss (cross-entropy over the option letters)"


def _panels(run: ValidityRun) -> list[tuple[str, Callable]]:
    sec = run.section
    out: list[tuple[str, Callable]] = []
    if sec.get("adversary") is not None or sec.get("controls"):
        out.append(("adversary", _draw_adversary))
    if sec.get("learnability") is not None:
        out.append(("learnability", _draw_learnability))
    if any(b.get("loss_curve") for b in _trained_blocks(sec).values()):
        out.append(("loss", _draw_loss))
    if (sec.get("leave_one_family_out") or {}).get("folds"):
        out.append(("lofo", _draw_lofo))
    return out


def _trained_blocks(sec: dict) -> dict[str, dict]:
    """Every curve block with a training run, by its label in the loss panel."""
    out = {}
    if sec.get("adversary") is not None:
        out["adversary (endings only)"] = sec["adversary"]
    for c in sec.get("controls") or []:
        out[f"control: {c['name']}"] = c["adversary"]
    if sec.get("learnability") is not None:
        out["learnability (with context)"] = sec["learnability"]
    return out


def _size_axis(ax, sizes: Sequence[int]) -> dict[int, int]:
    """Training sizes as evenly spaced positions (a size of 0 has no place on a log axis)."""
    pos = {s: i for i, s in enumerate(sorted(set(sizes)))}
    ax.set_xticks(list(pos.values()), [f"{s:,}" for s in pos])
    ax.set_xlim(-0.4, len(pos) - 0.6)
    ax.set_xlabel("training items (0 = untrained)")
    return pos


def _errors(points: Sequence[dict]) -> list[list[float]] | None:
    if not all(p.get("ci95") and p.get("accuracy") is not None for p in points):
        return None
    return [
        [100 * (p["accuracy"] - p["ci95"][0]) for p in points],
        [100 * (p["ci95"][1] - p["accuracy"]) for p in points],
    ]


def _chance(ax, chance: float, n: int | None, *, band: bool = True) -> None:
    from synthprobe.report.figures import CHANCE_STYLE

    ax.axhline(100 * chance, **CHANCE_STYLE, label=f"chance {fmt_pct(chance, 1)} %", zorder=1)
    if band and n:
        lo, hi = chance_band(n, chance)
        ax.axhspan(
            100 * lo, 100 * hi, color="0.85", alpha=0.6, zorder=0, linewidth=0, label=f"chance's interval (n {n:,})"
        )


def _line(ax, pos: dict[int, int], points: Sequence[dict], *, shift: float = 0.0, **style) -> None:
    """Accuracy (%) at each size with its 95 % interval; ``shift`` moves it sideways (a control
    drawn at the adversary's size stays visible beside it)."""
    pts = [p for p in points if p.get("accuracy") is not None]
    if not pts:
        return
    ax.errorbar(
        [pos[p["size"]] + shift for p in pts],
        [100 * p["accuracy"] for p in pts],
        yerr=_errors(pts),
        capsize=3,
        markersize=5,
        **style,
    )


def _draw_adversary(ax, run: ValidityRun, colors) -> None:
    sec = run.section
    adv, controls = sec.get("adversary"), sec.get("controls") or []
    sizes = [p["size"] for b in ([adv] if adv else []) + [c["adversary"] for c in controls] for p in b["curve"]]
    pos = _size_axis(ax, sizes)
    _chance(ax, run.chance, adv["curve"][0]["n"] if adv else None)
    if adv is not None:
        _line(ax, pos, adv["curve"], fmt="o-", color="#2a5db0", linewidth=2.0, label="adversary on the file")
    for i, c in enumerate(controls):
        _line(
            ax,
            pos,
            c["adversary"]["curve"],
            fmt="s--",
            color=colors[(i + 1) % len(colors)],
            linewidth=1.2,
            label=f"control: {c['name']}",
            shift=0.07 * (i + 1),
        )
    ax.set_ylim(0, 100)
    ax.set_ylabel(ACCURACY_AXIS)
    ax.set_title("Choices-only adversary (endings only)", loc="left")
    ax.legend(loc="upper left", fontsize=7)


def _draw_learnability(ax, run: ValidityRun, colors) -> None:
    learn = run.section["learnability"]
    points = learn["curve"]
    pos = _size_axis(ax, [p["size"] for p in points])
    _chance(ax, run.chance, None, band=False)
    for i, d in enumerate(_depths(points)):
        depth = [{"size": p["size"], **p["by_depth"][d]} for p in points if d in p["by_depth"]]
        pts = [q for q in depth if q.get("accuracy") is not None]
        ax.plot(
            [pos[q["size"]] for q in pts],
            [100 * q["accuracy"] for q in pts],
            "-",
            marker=".",
            color=colors[(i + 2) % len(colors)],
            linewidth=0.9,
            alpha=0.8,
            label=f"depth {d}",
        )
    _line(ax, pos, points, fmt="o-", color="#1d2430", linewidth=2.0, label="all items")
    for p in points:
        pair = p.get("paired")
        if pair is not None and p.get("accuracy") is not None:
            ax.annotate(
                f"p {fmt_p(pair['p'])}",
                (pos[p["size"]], 100 * p["accuracy"]),
                textcoords="offset points",
                xytext=(6, -12),
                fontsize=7,
                color="0.25",
            )
    ax.set_ylim(0, 100)
    ax.set_ylabel(ACCURACY_AXIS)
    ax.set_title("Learnability (with context); p: McNemar vs untrained", loc="left")
    ax.legend(loc="upper left", fontsize=7, ncols=2)


def _draw_loss(ax, run: ValidityRun, colors) -> None:
    blocks = _trained_blocks(run.section)
    styles = {"adversary (endings only)": ("#2a5db0", "-", 2.0), "learnability (with context)": ("#1d2430", "-", 2.0)}
    for i, (label, block) in enumerate(blocks.items()):
        curve = block.get("loss_curve") or []
        if not curve:
            continue
        color, ls, lw = styles.get(label, (colors[i % len(colors)], "--", 1.2))
        ax.plot(
            [x for x, _ in curve],
            [y for _, y in curve],
            ls,
            color=color,
            linewidth=lw,
            label=label,
            marker="o" if len(curve) <= 3 else None,
            markersize=4,
        )
    options = round(1 / run.chance) if run.chance > 0 else 0
    if options >= 2 and abs(options * run.chance - 1) < 1e-6:
        ax.axhline(
            math.log(options),
            color="0.35",
            linestyle=":",
            linewidth=1.0,
            label=f"uniform guess (ln {options} = {math.log(options):.3f})",
        )
    seen = [x for b in blocks.values() for x, _ in b.get("loss_curve") or []]
    ax.set_xlim(0, 1.04 * max(seen))
    ax.set_ylim(bottom=0)
    ax.set_xlabel("training items seen")
    ax.set_ylabel(LOSS_AXIS)
    ax.set_title("Training loss", loc="left")
    ax.legend(loc="lower left", fontsize=7)


def _draw_lofo(ax, run: ValidityRun, colors) -> None:
    """Horizontal bars, one pair per held-out family (untrained, trained), 95 % intervals, each
    fold's McNemar p in a column at the right."""
    import textwrap

    from synthprobe.report.figures import CHANCE_STYLE

    lofo = run.section["leave_one_family_out"]
    folds = lofo["folds"]
    ys = list(range(len(folds)))
    height = 0.38
    for k, (key, label, color) in enumerate(
        (
            ("untrained", "untrained", "0.65"),
            ("trained", f"trained on the other families ({lofo['size']:,} items)", "#2a5db0"),
        )
    ):
        blocks = [f[key] for f in folds]
        err = _errors(blocks)
        ax.barh(
            [y + (k - 0.5) * height for y in ys],
            [100 * (b["accuracy"] or 0) for b in blocks],
            height,
            color=color,
            label=label,
            xerr=err,
            capsize=2,
            error_kw={"linewidth": 0.8},
        )
    ax.axvline(100 * run.chance, **CHANCE_STYLE, label=f"chance {fmt_pct(run.chance, 1)} %")
    for y, f in zip(ys, folds):
        ax.text(103, y, f"p {fmt_p(f['paired']['p'])}", va="center", fontsize=7, color="0.25")
    ax.set_yticks(
        ys, [textwrap.fill(f["family"].replace("_", " "), 22) for f in folds], fontsize=7 if len(folds) > 6 else 8
    )
    ax.invert_yaxis()
    ax.set_xlim(0, 118)
    ax.set_xticks(range(0, 101, 20))
    ax.set_xlabel(ACCURACY_AXIS)
    ax.grid(axis="y", visible=False)
    ax.set_title("Leave one family out: the held-out family; p: McNemar", loc="left")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), fontsize=7, ncols=3)


def _seeds_axis(found: Sequence[tuple[str, dict]]) -> str:
    protocols = {sd["protocol"] for _, sd in found}
    if protocols == {"loglik acc_norm"}:
        return "acc_norm, % (highest mean log-likelihood per token)"
    return f"{' / '.join(sorted(protocols))}, %"


def _draw_seeds(ax, runs: Sequence[ValidityRun], colors) -> None:
    """Per model: each fresh build's score (dots; the same build joined across models), the mean
    ± SD, and the file's own score (diamond)."""
    import textwrap

    found = _seed_runs(runs)
    xs = list(range(len(found)))

    def spots(x: int, sd: dict) -> dict:
        """Each build's (x, y): its dots spread a little sideways, in the block's order."""
        n = len(sd["per_seed"])
        return {
            (p.get("seed"), i): (x + (0.0 if n == 1 else -0.12 + 0.24 * i / (n - 1)), 100 * p["accuracy"])
            for i, p in enumerate(sd["per_seed"])
        }

    at = [spots(x, sd) for x, (_, sd) in zip(xs, found)]
    by_seed = [{seed: xy for (seed, _), xy in m.items() if seed is not None} for m in at]
    for seed in by_seed[0] if len(found) > 1 else {}:
        if all(seed in m for m in by_seed):
            ax.plot(
                [m[seed][0] for m in by_seed], [m[seed][1] for m in by_seed], "-", color="0.82", linewidth=0.7, zorder=1
            )
    for x, (_label, sd), color, m in zip(xs, found, colors, at):
        ax.scatter(
            [xy[0] for xy in m.values()],
            [xy[1] for xy in m.values()],
            s=14,
            color=color,
            alpha=0.85,
            zorder=2,
            label="fresh builds (a line joins one build)"
            if x == 0 and len(found) > 1
            else "fresh builds"
            if x == 0
            else None,
        )
        o = sd["overall"]
        ax.errorbar(
            [x + 0.25],
            [100 * o["mean"]],
            yerr=None if o.get("sd") is None else [[100 * o["sd"]]] * 2,
            fmt="o",
            color="#1d2430",
            capsize=4,
            markersize=5,
            zorder=3,
            label="mean ± SD" if x == 0 else None,
        )
        if sd.get("release") is not None:
            ax.scatter(
                [x - 0.25],
                [100 * sd["release"]["accuracy"]],
                marker="D",
                s=40,
                color="#a3281b",
                zorder=4,
                label="the file" if x == 0 else None,
            )
    _chance(ax, runs[0].chance, None, band=False)
    ax.set_xticks(xs, [textwrap.fill(label, 24) for label, _ in found], fontsize=8)
    ax.set_xlim(-0.6, len(found) - 0.4)
    # the spread is a few points: zoom to the scores (and chance), not 0-100
    values = [100 * runs[0].chance] + [
        100 * v
        for _, sd in found
        for v in [p["accuracy"] for p in sd["per_seed"]]
        + [
            sd["overall"]["mean"] + (sd["overall"].get("sd") or 0),
            sd["overall"]["mean"] - (sd["overall"].get("sd") or 0),
        ]
        + ([sd["release"]["accuracy"]] if sd.get("release") else [])
    ]
    pad = max(2.0, 0.15 * (max(values) - min(values)))
    ax.set_ylim(max(0.0, min(values) - pad), min(100.0, max(values) + 2 * pad))
    ax.set_ylabel(_seeds_axis(found))
    ks = sorted({sd["k"] for _, sd in found})
    ax.set_title(
        f"Seed variance: {' / '.join(map(str, ks))} fresh builds" + (" each" if len(found) > 1 else ""), loc="left"
    )
    ax.legend(loc="upper left", fontsize=7)


def figure(runs: Sequence[ValidityRun]) -> bytes | None:
    """``validity.png``: for each file, a panel per part present (see the module docstring), then
    one seed-variance panel of every model; two to a row; None when no file holds a part with a
    curve."""
    import matplotlib as mpl
    import matplotlib.style

    from synthprobe.report.figures import RC, new_figure, palette, png_bytes

    panels: list[tuple[Callable, bool]] = [
        (lambda ax, c, run=run, draw=draw: draw(ax, run, c), True) for run in runs for _, draw in _panels(run)
    ]
    titles = [run.section["file"]["path"] for run in runs for _ in _panels(run)]
    if _seed_runs(runs):
        panels.append((lambda ax, c: _draw_seeds(ax, runs, c), False))
    if not panels:
        return None
    cols = 1 if len(panels) == 1 else 2
    rows = math.ceil(len(panels) / cols)
    colors = palette(8)
    with mpl.style.context("default"), mpl.rc_context(RC):
        fig = new_figure(5.4 * cols, 3.9 * rows)
        axes = fig.subplots(rows, cols, squeeze=False).ravel()
        for i, (ax, (draw, per_run)) in enumerate(zip(axes, panels)):
            draw(ax, colors)
            if per_run and len(runs) > 1:
                ax.set_title(f"{titles[i]}\n{ax.get_title(loc='left')}", loc="left")
        for ax in axes[len(panels) :]:
            ax.set_visible(False)
        return png_bytes(fig)
