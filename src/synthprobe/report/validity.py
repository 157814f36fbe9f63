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
* seed variance (``seeds``).

One PNG, ``validity.png``, holds a panel per part present: adversary accuracy against training
size with chance's band and each control; learnability against size (per depth, thin); the
training loss curves; leave-one-family-out bars. The report sits below :mod:`synthprobe.validity`
in the layers, so chance's interval is recomputed here by the rule its docstring states
(:func:`chance_band`, the normal approximation ``chance ± 1.96·sqrt(chance·(1 − chance)/n)``);
the in/out call shown is the one the file records (``within_chance``).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from synthprobe.report import html
from synthprobe.results import DASH, MINUS, Reader, Results, fmt_p, fmt_params
from synthprobe.templating import Markup, escape

KEY = "validity"
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
    if ci is not None and (len(ci) != 2 or not all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                                   for x in ci) or not ci[0] <= ci[1]):
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
        if (not isinstance(pair, list) or len(pair) != 2
                or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in pair)):
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
    model = r.get(sec, "model", w, dict)
    r.get(model, "spec", f"{w}.model", str)
    r.get(model, "name", f"{w}.model", str, required=False)
    r.get(model, "params", f"{w}.model", int, required=False)
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


def _seeds(r: Reader, seeds: Any, where: str) -> None:
    """The ``seeds`` part, read generically until its layout settles: an object whose values
    are numbers, text, objects or lists of objects."""
    _obj(r, seeds, where)


# -- numbers as the page shows them ---------------------------------------------------------


def chance_band(n: int, chance: float) -> tuple[float, float]:
    """Where a scorer at chance lands on ``n`` items 95 % of the time (normal approximation), the
    interval :mod:`synthprobe.validity` calls chance's."""
    if n <= 0:
        return (math.nan, math.nan)
    half = 1.96 * math.sqrt(chance * (1 - chance) / n)
    return (chance - half, chance + half)


def _pct(x: float | None, digits: int = 1) -> str:
    return DASH if x is None or x != x else f"{100 * x:.{digits}f}"


def _acc(b: dict | None, *, counts: bool = True) -> str:
    """``24.8 % [20.6, 29.3] (99/400)``."""
    if not b or b.get("accuracy") is None:
        return DASH
    ci = b.get("ci95")
    text = f"{_pct(b['accuracy'])} %"
    if ci:
        text += f" [{_pct(ci[0])}, {_pct(ci[1])}]"
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
            return verdict[len(w) + 1:].strip()
    return verdict


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
    head = (["Training items", "accuracy % [95 % CI] (right/n)", "p vs chance", "within chance's interval"]
            + [f"d{d} %" for d in depths] + ["train loss", "train s"])
    rows = []
    for p in block["curve"]:
        train = p.get("train") or {}
        rows.append([f"{p['size']:,}", _acc(p), fmt_p(p.get("p_vs_chance")), _yes(p.get("within_chance"), good=True)]
                    + [_pct((p["by_depth"].get(d) or {}).get("accuracy")) for d in depths]
                    + [DASH if train.get("loss") is None else f"{train['loss']:.4f}",
                       DASH if train.get("seconds") is None else f"{train['seconds']:,.1f}"])
    return head, rows


def controls_table(controls: Sequence[dict]) -> Table:
    """Per control: its flaw, the heuristic audit's call (and the strategies that leave chance),
    the adversary at its largest training size, and whether the control fails as it must."""
    head = ["Control", "Flaw", "heuristic audit", "trained on", "adversary accuracy % [95 % CI] (right/n)",
            "p vs chance", "fails (clearly above chance)"]
    rows = []
    for c in controls:
        audit = c["audit"]
        caught = [s for s in audit["strategies"] if not s["within"]]
        audit_text = "passes" if audit["passes"] else "fails"
        if caught:
            audit_text += ": " + ", ".join(f"{s['name']} {_pct(s['accuracy'])} %" for s in caught)
        last = _best_trained(c["adversary"])
        rows.append([c["name"], c["flaw"], audit_text, f"{last['size']:,}", _acc(last),
                     fmt_p(last.get("p_vs_chance")), _yes(c["fails"], good=True)])
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
    head = ["Training items", "accuracy % [95 % CI] (right/n)", "p vs chance", "vs untrained (points)",
            "trained only", "untrained only", "McNemar p"]
    rows = []
    for p in points:
        pair = p.get("paired")
        ref = _reference(points, pair)
        rows.append([f"{p['size']:,}", _acc(p), fmt_p(p.get("p_vs_chance")),
                     _points(None if ref is None else _delta(p, ref)),
                     DASH if pair is None else f"{pair['only_this']:,}",
                     DASH if pair is None else f"{pair['only_other']:,}",
                     DASH if pair is None else fmt_p(pair["p"])])
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
        rows.append([d, DASH if n is None else f"{n:,}"]
                    + [_pct((p["by_depth"].get(d) or {}).get("accuracy")) for p in points])
    return head, rows


def lofo_table(lofo: dict) -> Table:
    """Per held-out family: trained and untrained accuracy on the same items, the difference,
    the items only one gets right and McNemar p."""
    head = ["Held-out family", "n", "trained % [95 % CI]", "untrained % [95 % CI]", "Δ points",
            "trained only", "untrained only", "McNemar p"]
    rows = []
    for f in lofo["folds"]:
        t, u, pair = f["trained"], f["untrained"], f["paired"]
        rows.append([f["family"], f"{t['n']:,}", _acc(t, counts=False), _acc(u, counts=False), _points(_delta(t, u)),
                     f"{pair['only_this']:,}", f"{pair['only_other']:,}", fmt_p(pair["p"])])
    return head, rows


def _scalar(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, (dict, list)):
        return json.dumps(v, ensure_ascii=False, sort_keys=True)
    return DASH if v is None else str(v)


def seeds_tables(seeds: dict) -> list[tuple[str, Table]]:
    """The ``seeds`` part as generic tables: its scalar fields as one key/value table, each list
    of objects as a table of their scalar fields (a placeholder until its layout is settled)."""
    out: list[tuple[str, Table]] = []
    scalars = [[k, _scalar(v)] for k, v in seeds.items() if not isinstance(v, (dict, list))]
    if scalars:
        out.append(("", (["field", "value"], scalars)))
    for k, v in seeds.items():
        if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            cols = list(dict.fromkeys(c for x in v for c, y in x.items() if not isinstance(y, (dict, list))))
            out.append((k, (cols, [[_scalar(x.get(c)) for c in cols] for x in v])))
        elif isinstance(v, dict) and v:
            out.append((k, (["field", "value"], [[kk, _scalar(vv)] for kk, vv in v.items()])))
    return out


# -- words -------------------------------------------------------------------------------------


def verdicts(run: ValidityRun) -> list[tuple[str, str, bool | None]]:
    """``(part, sentence, good)`` for the section's headline list: adversary, power, learnability,
    leave-one-family-out (``good``: the outcome a valid benchmark wants; None: neutral)."""
    sec = run.section
    out: list[tuple[str, str, bool | None]] = []
    adv = sec.get("adversary")
    if adv is not None:
        out.append(("Choices-only adversary", f"{_verdict_word(adv['passes'])}: "
                    + _strip(adv["verdict"], "passes", "fails"), adv["passes"]))
    power = sec["power"]
    out.append(("Power", f"{_power_word(power.get('has_power'))}: "
                + _strip(power["verdict"], "has power", "no power"), power.get("has_power")))
    learn = sec.get("learnability")
    if learn is not None:
        base, top = learn["curve"][0], learn["curve"][-1]
        pair = top.get("paired")
        text = (f"{_pct(base['accuracy'])} % at {base['size']:,} training items, {_pct(top['accuracy'])} % at "
                f"{top['size']:,}")
        if pair is not None and top is not base:
            text += (f" ({_points(top['accuracy'] - base['accuracy'])} points; paired against the untrained model "
                     f"on the same items, McNemar p = {fmt_p(pair['p'])})")
        out.append(("Learnability", text, None))
    lofo = sec.get("leave_one_family_out")
    if lofo is not None and lofo["folds"]:
        folds = lofo["folds"]
        gains = [f for f in folds if f["paired"]["p"] < 0.05 and f["paired"]["only_this"] > f["paired"]["only_other"]]
        moves = ", ".join(f"{f['family']} {_points(_delta(f['trained'], f['untrained']))}" for f in folds)
        out.append(("Leave one family out",
                    f"trained on {lofo['size']:,} items of the other families, the held-out family's score changes "
                    f"by (points) {moves}; {len(gains)} of {len(folds)} gain significantly (McNemar p < 0.05)",
                    None))
    return out


def _intro(run: ValidityRun) -> str:
    sec = run.section
    f, model = sec["file"], sec["model"]
    lo, hi = chance_band(f["n_items"], run.chance)
    bench = f" ({f['benchmark']})" if f.get("benchmark") else ""
    return (f"Model-based checks of {f['path']}{bench}, {f['n_items']:,} items, SHA-256 {f['sha256'][:12]}…: "
            f"{_model_text(model)} fine-tuned on fresh-seed items that share no context with the file. "
            f"Chance is {_pct(run.chance)} %; a scorer at chance lands in {_pct(lo)}–{_pct(hi)} % on "
            f"{f['n_items']:,} items 95 % of the time (chance's interval).")


# -- the page ----------------------------------------------------------------------------------


def summary(runs: Sequence[ValidityRun]) -> str | None:
    parts = []
    for run in runs:
        adv = run.section.get("adversary")
        power = run.section["power"]
        words = ([f"adversary {_verdict_word(adv['passes'])}"] if adv is not None else []) \
            + [_power_word(power.get("has_power"))]
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
    if sec["power"].get("has_power") is not True and sec.get("adversary", {}).get("passes"):
        parts.append('<p class="warn">The adversary passed, but its power is not shown: a pass is evidence only '
                     "when the positive controls fail it.</p>")
    return "".join(str(p) for p in parts)


def _details(run: ValidityRun) -> str:
    """Each part's table and notes."""
    sec = run.section
    parts = []
    adv = sec.get("adversary")
    if adv is not None:
        parts.append("<h4>Choices-only adversary</h4>")
        parts.append(_note(f"Input: {adv['input']}. Loss: {adv['loss']}."
                           + (f" Training seed {adv['train_seed']}." if adv.get("train_seed") is not None else "")))
        parts.append(html.table(*_escaped(adversary_table(adv, run.chance)), raw=True))
        parts.append(_note("Accuracy: the option whose letter gets the highest logit after 'Answer:' is the right "
                           "one, over the file's items. Training items 0 is the untrained model. Within chance's "
                           "interval: the accuracy lies in the band a scorer at chance lands in 95 % of the time "
                           "(as the file records it); the 95 % CI is the interval of the accuracy itself."))
    controls = sec.get("controls") or []
    if controls:
        parts.append("<h4>Positive controls</h4>")
        parts.append(html.table(*_escaped(controls_table(controls)), left=3, raw=True))
        parts.append(_note("Each control is a deliberately flawed build; the same adversary, trained the same way "
                           "on fresh builds of the control, must land clearly above chance (above chance's "
                           "interval with p < 0.05) for a pass on the file to mean anything. Heuristic audit: "
                           "the shortcut strategies (largest / smallest value, roundest, a fixed slot, longest / "
                           "shortest ending, a character 3-gram classifier) all stay at chance; the strategies "
                           "named are those that do not."))
    power = sec["power"]
    parts.append(Markup('<p{}><strong>Power: {}.</strong> {}</p>').format(
        Markup("") if power.get("has_power") else Markup(' class="warn"'), _power_word(power.get("has_power")),
        _strip(power["verdict"], "has power", "no power")))
    learn = sec.get("learnability")
    if learn is not None:
        parts.append("<h4>Learnability</h4>")
        parts.append(_note(f"Input: {learn['input']}. Each size paired against the untrained model (size "
                           f"{learn['curve'][0]['size']:,}) on the same items: trained only / untrained only count "
                           "the items only that one gets right; McNemar p is the exact two-sided test on them."))
        parts.append(html.table(*learnability_table(learn)))
        depths = depth_table(learn)
        if depths is not None:
            parts.append("<p>Per depth, accuracy % at each training size:</p>" + html.table(*depths))
    lofo = sec.get("leave_one_family_out")
    if lofo is not None:
        parts.append("<h4>Leave one family out</h4>")
        parts.append(_note(f"Each fold trains on {lofo['size']:,} fresh items of every family but one and scores "
                           "the file's items of the family left out, against the untrained model on the same items."))
        parts.append(html.table(*lofo_table(lofo)))
    seeds = sec.get("seeds")
    if seeds is not None:
        parts.append("<h4>Seed variance</h4>")
        for name, table in seeds_tables(seeds):
            if name:
                parts.append(f"<p>{escape(name)}</p>")
            parts.append(html.table(*table))
    return "".join(str(p) for p in parts)


def _escaped(table: Table) -> Table:
    """A table for ``html.table(raw=True)``: text cells escaped, Markup cells kept."""
    head, rows = table
    return head, [[c if isinstance(c, Markup) else escape(c) for c in row] for row in rows]


def section(runs: Sequence[ValidityRun], png: bytes | None = None) -> str:
    parts = ["<p>Evidence from a model that the file measures what it claims: an adversary that sees only "
             "the endings must stay at chance, deliberately flawed builds show it could have failed, "
             "and fine-tuning with the question shows how far the score can be learned.</p>"]
    if png is not None:
        parts.append(html.img(png, "validity: adversary accuracy by training size with chance's interval and the "
                                   "positive controls; learnability by training size; training loss; leave one "
                                   "family out",
                              "Accuracy in percent against training items (0 = untrained); the grey band is "
                              "chance's interval; error bars are 95 % intervals. Loss: the training loss over "
                              "the option letters against items seen; the dotted line is the loss of a uniform "
                              "guess."))
    if len(runs) == 1:
        return "".join(parts[:1] + [_head(runs[0], False)] + parts[1:] + [_details(runs[0])])
    return "".join(parts + [_head(run, True) + _details(run) for run in runs])


def settings_table(runs: Sequence[ValidityRun]) -> str:
    rows: list[list[str]] = []
    for run in runs:
        sec = run.section
        pre = f"{run.source}: " if len(runs) > 1 else ""
        for key, value in sec["file"].items():
            rows.append([f"{pre}file {key}", _scalar(value)])
        for key, value in sec["model"].items():
            rows.append([f"{pre}model {key}", _scalar(value)])
        for key, value in sec["settings"].items():
            rows.append([f"{pre}{key}", _scalar(value)])
        if sec.get("seconds") is not None:
            rows.append([f"{pre}seconds", _scalar(sec["seconds"])])
    return html.table(["setting", "value"], rows, left=2)


# -- leaderboard.md ----------------------------------------------------------------------------


def _md(table: Table, left: int = 1) -> list[str]:
    """A markdown table; the first ``left`` columns (text) aligned left, the rest right."""
    head, rows = table

    def cell(c: Cell) -> str:
        text = str(c)
        if isinstance(c, Markup):
            text = c.striptags()
        return text.replace("|", "\\|")

    return (["| " + " | ".join(head) + " |", "|" + "---|" * left + "---:|" * (len(head) - left)]
            + ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows])


def markdown_body(runs: Sequence[ValidityRun]) -> str:
    lines: list[str] = []
    for run in runs:
        sec = run.section
        if len(runs) > 1:
            lines += [f"### {sec['file']['path']} ({run.source})", ""]
        lines += [_intro(run), ""]
        lines += [f"- **{part}**: {sentence}" for part, sentence, _ in verdicts(run)] + [""]
        blocks: list[tuple[str, Callable[[], Table]]] = []
        if sec.get("adversary") is not None:
            blocks.append(("Choices-only adversary", lambda: adversary_table(sec["adversary"], run.chance)))
        if sec.get("controls"):
            blocks.append(("Positive controls", lambda: controls_table(sec["controls"])))
        if sec.get("learnability") is not None:
            blocks.append(("Learnability", lambda: learnability_table(sec["learnability"])))
            if depth_table(sec["learnability"]) is not None:
                blocks.append(("Learnability per depth (accuracy %)", lambda: depth_table(sec["learnability"])))
        if sec.get("leave_one_family_out") is not None:
            blocks.append(("Leave one family out", lambda: lofo_table(sec["leave_one_family_out"])))
        for name, make in blocks:
            table = make()
            lines += [f"**{name}**", ""] + _md(table, 3 if name == "Positive controls" else 1) + [""]
        if sec.get("seeds") is not None:
            lines += ["**Seed variance**", ""]
            for name, table in seeds_tables(sec["seeds"]):
                lines += ([name, ""] if name else []) + _md(table) + [""]
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
    return [[100 * (p["accuracy"] - p["ci95"][0]) for p in points],
            [100 * (p["ci95"][1] - p["accuracy"]) for p in points]]


def _chance(ax, chance: float, n: int | None, *, band: bool = True) -> None:
    from synthprobe.report.figures import CHANCE_STYLE

    ax.axhline(100 * chance, **CHANCE_STYLE, label=f"chance {_pct(chance)} %", zorder=1)
    if band and n:
        lo, hi = chance_band(n, chance)
        ax.axhspan(100 * lo, 100 * hi, color="0.85", alpha=0.6, zorder=0, linewidth=0,
                   label=f"chance's interval (n {n:,})")


def _line(ax, pos: dict[int, int], points: Sequence[dict], **style) -> None:
    pts = [p for p in points if p.get("accuracy") is not None]
    if not pts:
        return
    ax.errorbar([pos[p["size"]] for p in pts], [100 * p["accuracy"] for p in pts], yerr=_errors(pts),
                capsize=3, markersize=5, **style)


def _draw_adversary(ax, run: ValidityRun, colors) -> None:
    sec = run.section
    adv, controls = sec.get("adversary"), sec.get("controls") or []
    sizes = [p["size"] for b in ([adv] if adv else []) + [c["adversary"] for c in controls] for p in b["curve"]]
    pos = _size_axis(ax, sizes)
    _chance(ax, run.chance, adv["curve"][0]["n"] if adv else None)
    if adv is not None:
        _line(ax, pos, adv["curve"], fmt="o-", color="#2a5db0", linewidth=2.0, label="adversary on the file")
    for i, c in enumerate(controls):
        _line(ax, pos, c["adversary"]["curve"], fmt="s--", color=colors[(i + 1) % len(colors)], linewidth=1.2,
              label=f"control: {c['name']}")
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
        ax.plot([pos[q["size"]] for q in pts], [100 * q["accuracy"] for q in pts], "-", marker=".",
                color=colors[(i + 2) % len(colors)], linewidth=0.9, alpha=0.8, label=f"depth {d}")
    _line(ax, pos, points, fmt="o-", color="#1d2430", linewidth=2.0, label="all items")
    for p in points:
        pair = p.get("paired")
        if pair is not None and p.get("accuracy") is not None:
            ax.annotate(f"p {fmt_p(pair['p'])}", (pos[p["size"]], 100 * p["accuracy"]), textcoords="offset points",
                        xytext=(6, -12), fontsize=7, color="0.25")
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
        ax.plot([x for x, _ in curve], [y for _, y in curve], ls, color=color, linewidth=lw, label=label,
                marker="o" if len(curve) <= 3 else None, markersize=4)
    options = round(1 / run.chance) if run.chance > 0 else 0
    if options >= 2 and abs(options * run.chance - 1) < 1e-6:
        ax.axhline(math.log(options), color="0.35", linestyle=":", linewidth=1.0,
                   label=f"uniform guess (ln {options} = {math.log(options):.3f})")
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
    for k, (key, label, color) in enumerate((("untrained", "untrained", "0.65"),
                                             ("trained", f"trained on the other families ({lofo['size']:,} items)",
                                              "#2a5db0"))):
        blocks = [f[key] for f in folds]
        err = _errors(blocks)
        ax.barh([y + (k - 0.5) * height for y in ys], [100 * (b["accuracy"] or 0) for b in blocks], height,
                color=color, label=label, xerr=err, capsize=2, error_kw={"linewidth": 0.8})
    ax.axvline(100 * run.chance, **CHANCE_STYLE, label=f"chance {_pct(run.chance)} %")
    for y, f in zip(ys, folds):
        ax.text(103, y, f"p {fmt_p(f['paired']['p'])}", va="center", fontsize=7, color="0.25")
    ax.set_yticks(ys, [textwrap.fill(f["family"].replace("_", " "), 22) for f in folds],
                  fontsize=7 if len(folds) > 6 else 8)
    ax.invert_yaxis()
    ax.set_xlim(0, 118)
    ax.set_xticks(range(0, 101, 20))
    ax.set_xlabel(ACCURACY_AXIS)
    ax.grid(axis="y", visible=False)
    ax.set_title("Leave one family out: the held-out family; p: McNemar", loc="left")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), fontsize=7, ncols=3)


def figure(runs: Sequence[ValidityRun]) -> bytes | None:
    """``validity.png``: for each file, a panel per part present (see the module docstring), two
    to a row; None when no file holds a part with a curve."""
    import matplotlib as mpl
    import matplotlib.style

    from synthprobe.report.figures import RC, new_figure, palette, png_bytes

    panels = [(run, name, draw) for run in runs for name, draw in _panels(run)]
    if not panels:
        return None
    cols = 1 if len(panels) == 1 else 2
    rows = math.ceil(len(panels) / cols)
    colors = palette(8)
    with mpl.style.context("default"), mpl.rc_context(RC):
        fig = new_figure(5.4 * cols, 3.9 * rows)
        axes = fig.subplots(rows, cols, squeeze=False).ravel()
        for ax, (run, _, draw) in zip(axes, panels):
            draw(ax, run, colors)
            if len(runs) > 1:
                ax.set_title(f"{run.section['file']['path']}\n{ax.get_title(loc='left')}", loc="left")
        for ax in axes[len(panels):]:
            ax.set_visible(False)
        return png_bytes(fig)
