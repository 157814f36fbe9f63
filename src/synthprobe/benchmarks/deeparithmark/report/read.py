"""The Deep Arithmark blocks of a results file, as the report reads them.

The envelope is read and checked by :mod:`synthprobe.results`; the blocks are what
``synthprobe score deeparithmark`` writes (layout documented in
:mod:`synthprobe.benchmarks.deeparithmark.scoring.results`).
Per model the report uses:

* ``model.name``, ``model.params`` and a few settings for the run table;
* ``results.deeparithmark.summary``: ``n``, ``chance``, ``primary`` (the metric: ``acc_norm``
  for log-likelihood, ``accuracy`` for generated answers; files written before it was recorded
  are read as ``acc_norm``, or ``accuracy`` for a letters/free entry, whose counts they kept under
  ``acc_norm``) and ``primary_label``, ``metrics.<primary>`` (correct, total, p_vs_chance; no
  p-value for ``free``, which has no chance level), ``metrics.soft`` (log-likelihood only),
  ``by_depth`` (its tiers must add up to the total) and
  ``by_template`` (n, correct), ``rank_preference.chosen_rank_counts`` and
  ``answer_rank_counts`` and ``mistake_profile`` (offered / chosen per option source) when
  present;
* ``results.arithmark3.summary.metrics.acc_norm`` when the run compared with ArithMark 3.0;
* ``results.deeparithmark.extraction`` of a generated run: ``outcomes`` (answered, unparsed,
  inconsistent, echo, cut off), ``rule_shares`` and ``answered_accuracy``, for the run table;
* ``model.spec`` and ``model.fingerprint``: which checkpoint each row is;
* ``results.deeparithmark.summary.partial_inputs`` (``--partial-inputs``, loglik only): ``full``,
  ``baselines.<name>`` (n, correct, agree, agreement, p_vs_chance), ``best_partial``,
  ``reliance``, the same per ``by_depth`` tier, ``designs`` and ``cross_template``; the full
  counts must be ``metrics.acc_norm``'s, every baseline must hold the same items, agreement must
  be agree / n and reliance the full accuracy minus the best baseline's;
* ``results.deeparithmark.predictions`` (optional) only to learn each template's depth; without
  predictions the depth comes from the Deep Arithmark release table.
"""

from __future__ import annotations

from typing import Any

from synthprobe.benchmarks.deeparithmark.layout import LAYOUTS
from synthprobe.benchmarks.deeparithmark.report.model import (
    MistakeCount,
    ModelResult,
    PartialBaseline,
    PartialInputs,
    PartialRow,
)
from synthprobe.benchmarks.deeparithmark.scoring.protocols import PRIMARY_LABEL as LABELS
from synthprobe.metrics.extract import OUTCOMES, PROTOCOL_OUTCOMES, RULES
from synthprobe.report.model import Count
from synthprobe.results import Results, primary_metric, variant_label, variant_settings
from synthprobe.results import short as _short

TASK = "deeparithmark"

#: the outcomes each generated protocol can have that do not count (the run table and the
#: leaderboard show only these)
APPLIES = {protocol: outcomes[1:] for protocol, outcomes in PROTOCOL_OUTCOMES.items()}


def protocol_of(entry: dict) -> str:
    proto = entry.get("protocol")
    name = proto.get("name") if isinstance(proto, dict) else None
    return name if isinstance(name, str) and name else "loglik"


def metric_of(summary: dict, protocol: str) -> str:
    """The summary's primary metric; an older file's generated entry (no ``primary``) is
    ``accuracy``, whatever it called its counts."""
    metric = primary_metric(summary)
    return "accuracy" if metric == "acc_norm" and "primary" not in summary and protocol != "loglik" else metric


def _count(r, block: dict, where: str, *, correct: str = "correct", total: str = "n") -> Count:
    k = r.get(block, correct, where, int, what="a whole number of correct items")
    n = r.get(block, total, where, int, what="a whole number of items")
    if n < 0 or not 0 <= k <= n:
        raise r.fail(f"{where}.{correct}", f"expected 0 <= {correct} <= {total} ({n}), got {k}")
    return Count(k, n)


def _fraction(r, obj: dict, key: str, where: str, *, what: str) -> float | None:
    """An optional number in [0, 1] (a p-value, a mean probability); NaN never gets this far
    (the JSON reader refuses it)."""
    value = r.get(obj, key, where, float, required=False, what=what)
    if value is not None and not 0 <= value <= 1:
        raise r.fail(f"{where}.{key}", f"expected {what} between 0 and 1, got {value}")
    return value


def _check_sums(r, groups: dict, overall: Count, where: str, metric: str = "acc_norm") -> None:
    """Every scored item sits in exactly one depth tier: the tiers add up to the total."""
    n = sum(c.n for c in groups.values())
    k = sum(c.correct for c in groups.values())
    if (n, k) != (overall.n, overall.correct):
        raise r.fail(
            where,
            f"the depth tiers hold {n} items ({k} correct), but metrics.{metric} has "
            f"total {overall.n} ({overall.correct} correct); expected them to add up "
            "(every item carries one depth)",
        )


def _release_depths() -> dict[str, int]:
    try:
        from synthprobe.benchmarks.deeparithmark.composition import TEMPLATES
    except ImportError:  # pragma: no cover - the package ships it
        return {}
    return {t.name: t.depth for t in TEMPLATES}


def _template_depths(r, block: dict, where: str, templates) -> dict[str, int]:
    depth_of: dict[str, int] = {}
    preds = r.get(block, "predictions", where, list, required=False)
    for i, rec in enumerate(preds or []):
        here = f"{where}.predictions[{i}]"
        if not isinstance(rec, dict):
            raise r.fail(here, f"expected an object, got {type(rec).__name__}")
        t = r.get(rec, "template", here, str, required=False)
        d = r.get(rec, "depth", here, int, required=False)
        if t is not None and d is not None:
            if depth_of.setdefault(t, d) != d:
                raise r.fail(f"{here}.depth", f"template {t!r} has depth {depth_of[t]} elsewhere, {d} here")
    release = _release_depths()
    for t in templates:
        if t not in depth_of and t in release:
            depth_of[t] = release[t]
    return depth_of


def _mistakes(r, summary: dict, where: str) -> dict[str, tuple[MistakeCount, ...]]:
    profile = r.get(summary, "mistake_profile", where, dict, required=False)
    out: dict[str, tuple[MistakeCount, ...]] = {}
    for template, block in (profile or {}).items():
        here = f"{where}.mistake_profile.{template}"
        if not isinstance(block, dict):
            raise r.fail(here, f"expected an object, got {type(block).__name__}")
        sources = r.get(block, "sources", here, dict)
        rows = []
        for name, counts in sources.items():
            at = f"{here}.sources.{name}"
            if not isinstance(counts, dict):
                raise r.fail(at, f"expected an object, got {type(counts).__name__}")
            c = _count(r, counts, at, correct="chosen", total="offered")
            rows.append(MistakeCount(source=name, offered=c.n, chosen=c.correct))
        out[template] = tuple(rows)
    return out


def _rank_picks(r, summary: dict, where: str, n_options: int | None) -> tuple[int, ...] | None:
    rp = r.get(summary, "rank_preference", where, dict, required=False)
    if rp is None:
        return None
    here = f"{where}.rank_preference"
    counts = r.get(rp, "chosen_rank_counts", here, list, what="a list of counts, smallest rank first")
    if not counts or not all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in counts):
        raise r.fail(f"{here}.chosen_rank_counts", f"expected non-negative whole numbers, got {_short(counts)}")
    if n_options is not None and len(counts) != n_options:
        raise r.fail(f"{here}.chosen_rank_counts", f"expected {n_options} counts (one per option), got {len(counts)}")
    return tuple(counts)


def _answer_ranks(r, summary: dict, where: str, n_ranks: int | None) -> tuple[int, ...] | None:
    """How often the correct answer is the smallest … largest option (None: not recorded)."""
    rp = summary.get("rank_preference")
    if not isinstance(rp, dict):
        return None
    here = f"{where}.rank_preference"
    counts = r.get(rp, "answer_rank_counts", here, list, required=False, what="a list of counts, smallest rank first")
    if counts is None:
        return None
    if not counts or not all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in counts):
        raise r.fail(f"{here}.answer_rank_counts", f"expected non-negative whole numbers, got {_short(counts)}")
    if n_ranks is not None and len(counts) != n_ranks:
        raise r.fail(
            f"{here}.answer_rank_counts",
            f"expected {n_ranks} counts (as many as chosen_rank_counts), got {len(counts)}",
        )
    return tuple(counts)


#: how far a stored share or difference may be from the one its counts give (float rounding)
_TOLERANCE = 1e-9


def _partial_row(r, row: Any, where: str, depth: int | None, names: list[str] | None) -> PartialRow:
    """One row of the partial-input baselines (all items or one depth), every figure checked
    against its counts."""
    if not isinstance(row, dict):
        raise r.fail(where, f"expected an object, got {type(row).__name__}")
    full = _count(r, r.get(row, "full", where, dict), f"{where}.full")
    stored = r.get(row, "baselines", where, dict)
    if not stored:
        raise r.fail(f"{where}.baselines", "is empty; expected at least one baseline")
    if names is not None and list(stored) != names:
        raise r.fail(
            f"{where}.baselines",
            f"expected the baselines {', '.join(names)} (as over all items), got {', '.join(stored)}",
        )
    baselines: dict[str, PartialBaseline] = {}
    for name, b in stored.items():
        here = f"{where}.baselines.{name}"
        if not isinstance(b, dict):
            raise r.fail(here, f"expected an object, got {type(b).__name__}")
        acc = _count(r, b, here)
        if acc.n != full.n:
            raise r.fail(f"{here}.n", f"expected the full context's {full.n} items, got {acc.n}")
        agree = r.get(b, "agree", here, int, what="a whole number of items")
        if not 0 <= agree <= acc.n:
            raise r.fail(f"{here}.agree", f"expected 0 <= agree <= n ({acc.n}), got {agree}")
        share = _fraction(r, b, "agreement", here, what="a share of items")
        if share is None or abs(share - agree / acc.n) > _TOLERANCE:
            raise r.fail(f"{here}.agreement", f"expected agree / n = {agree}/{acc.n}, got {share}")
        baselines[name] = PartialBaseline(
            acc, Count(agree, acc.n), _fraction(r, b, "p_vs_chance", here, what="a p-value")
        )
    best = r.get(row, "best_partial", where, str)
    if best not in baselines:
        raise r.fail(f"{where}.best_partial", f"expected one of the baselines ({', '.join(baselines)}), got {best!r}")
    top = max(b.accuracy.rate for b in baselines.values())
    if baselines[best].accuracy.rate < top - _TOLERANCE:
        raise r.fail(f"{where}.best_partial", f"{best!r} is not the most accurate baseline")
    reliance = r.get(row, "reliance", where, float)
    if abs(reliance - (full.rate - top)) > _TOLERANCE:
        raise r.fail(
            f"{where}.reliance",
            f"expected the full accuracy minus the best baseline's, {full.rate - top:.6f}, got {reliance}",
        )
    return PartialRow(depth, full, baselines, best, reliance)


def _partial(
    r, summary: dict, sw: str, metric: str, overall: Count, by_depth: dict[int, Count]
) -> PartialInputs | None:
    """The summary's partial-input baselines (None when the run scored none)."""
    pi = r.get(summary, "partial_inputs", sw, dict, required=False)
    if pi is None:
        return None
    here = f"{sw}.partial_inputs"
    if metric != "acc_norm":
        raise r.fail(
            here, f"partial-input baselines are scored by log-likelihood (acc_norm); this run's metric is {metric}"
        )
    first = _partial_row(r, pi, here, None, None)
    if first.full != overall:
        raise r.fail(
            f"{here}.full",
            f"expected the full run's counts, {overall.correct}/{overall.n} "
            f"(metrics.acc_norm), got {first.full.correct}/{first.full.n}",
        )
    rows = [first]
    names = list(first.baselines)
    for key, row in r.get(pi, "by_depth", here, dict).items():
        at = f"{here}.by_depth.{key}"
        if not (isinstance(key, str) and key.isascii() and key.isdigit() and int(key) in by_depth):
            raise r.fail(at, f"expected one of the summary's depths ({', '.join(map(str, by_depth))}) as the key")
        tier = _partial_row(r, row, at, int(key), names)
        if tier.full != by_depth[int(key)]:
            raise r.fail(
                f"{at}.full",
                f"expected by_depth.{key}'s counts, {by_depth[int(key)].correct}/"
                f"{by_depth[int(key)].n}, got {tier.full.correct}/{tier.full.n}",
            )
        rows.append(tier)
    designs = r.get(pi, "designs", here, dict, required=False) or {}
    for name, text in designs.items():
        if not isinstance(text, str):
            raise r.fail(f"{here}.designs.{name}", f"expected a line of text, got {_short(text)}")
    cross = r.get(pi, "cross_template", here, int, required=False, what="a whole number of items") or 0
    if not 0 <= cross <= overall.n:
        raise r.fail(f"{here}.cross_template", f"expected 0 to {overall.n} items, got {cross}")
    return PartialInputs(tuple(sorted(rows, key=lambda x: -1 if x.depth is None else x.depth)), designs, cross)


def _settings(r, entry: dict, task_block: dict, where: str, dataset_sha: str | None) -> dict[str, str]:
    model = entry["model"]
    settings = r.get(entry, "settings", where, dict, required=False) or {}

    def text(v: Any) -> str:
        return "—" if v is None else str(v)

    out = {"checkpoint": text(model.get("spec")), "weights fingerprint": text(model.get("fingerprint"))}
    if settings.get("headline_metric"):  # read from lm-eval's own files: no per-token acc_norm
        out["headline metric"] = text(settings["headline_metric"])
    out |= {
        "dtype": text(model.get("dtype")),
        "device": text(model.get("device")),
        # the BOS setting the model ran with (--bos, --no-bos, its own bos=, or its default)
        "BOS": {True: "on", False: "off"}.get(model.get("bos"), "—"),
        "batch size": text(settings.get("batch_size")),
        "max context": text(settings.get("max_context")),
        "scorer": text(task_block.get("scorer_used", settings.get("scorer"))),
    }
    timing = task_block.get("timing")
    if isinstance(timing, dict) and isinstance(timing.get("items_per_s"), (int, float)):
        out["items/s"] = f"{timing['items_per_s']:.2f}"
    if settings.get("limit") is not None:
        out["limit"] = text(settings.get("limit"))
    out["torch"] = text(settings.get("torch", model.get("torch")))
    out["transformers"] = text(settings.get("transformers", model.get("transformers")))
    out["synthprobe"] = text(settings.get("synthprobe"))
    if dataset_sha:
        out["dataset SHA-256"] = dataset_sha
    out.update(variant_settings(entry))
    ext = task_block.get("extraction")
    if isinstance(ext, dict):
        out.update(_answer_settings(ext, protocol_of(entry)))
    lp = task_block.get("letterprob")
    if isinstance(lp, dict):
        out.update(_letterprob_settings(lp))
    return out


def _letterprob_settings(lp: dict) -> dict[str, str]:
    """A letterprob run's certified share, fallbacks, letter mass, tokenisation read and the
    letters-equivalent answers' agreement, for the run table (each where the file records it)."""
    out: dict[str, str] = {}

    def pct(x: Any) -> str:
        return f"{100 * x:.1f} %" if _num(x) else "—"

    if isinstance(lp.get("certified"), int) and isinstance(lp.get("fallback"), int):
        out["certified (one pass)"] = f"{lp['certified']} ({pct(lp.get('certified_share'))})"
        out["fell back to letters"] = str(lp["fallback"])
    mass = lp.get("mass")
    if isinstance(mass, dict):
        out["letter mass"] = f"median {pct(mass.get('median'))}, {mass.get('below_half')} items below 50 %" + (
            " (lower bounds)" if mass.get("lower_bound") else ""
        )
    tok = lp.get("tokenisation")
    if isinstance(tok, dict):
        out["letters read as"] = " · ".join(f"{k!r} {v}" for k, v in tok.items())
    agree = (lp.get("agreement") or {}).get("all") if isinstance(lp.get("agreement"), dict) else None
    if isinstance(agree, dict) and isinstance(agree.get("n"), int):
        out["agrees with its letters answer"] = f"{agree.get('agree')} of {agree['n']} ({pct(agree.get('share'))})"
    acc = (lp.get("as_letters") or {}).get("accuracy") if isinstance(lp.get("as_letters"), dict) else None
    if isinstance(acc, dict) and isinstance(acc.get("total"), int):
        out["accuracy as letters generation"] = f"{pct(acc.get('acc'))} ({acc.get('correct')}/{acc['total']})"
    return out


def _num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and x == x


def _answer_settings(ext: dict, protocol: str) -> dict[str, str]:
    """A generated run's outcome counts, the share each rule read and the accuracy over the
    answered items, for the run table (each only where the file records it)."""
    out: dict[str, str] = {}
    outcomes = ext.get("outcomes") if isinstance(ext.get("outcomes"), dict) else {}
    total = sum(v for v in outcomes.values() if isinstance(v, int)) or None
    counts = dict(outcomes)
    if "unparsed" not in counts and isinstance(ext.get("unparsed"), int):
        counts["unparsed"] = ext["unparsed"]
    for key in APPLIES.get(protocol, OUTCOMES[1:]):
        v = counts.get(key)
        if not isinstance(v, int):
            continue
        share = v / total if total else ext.get("unparsed_share") if key == "unparsed" else None
        resolved = key == "inconsistent" and ext.get("resolve") not in (None, "none")
        how = f"credited by --resolve {ext['resolve']}" if resolved else "counted wrong"
        out[f"{key.replace('_', ' ')} answers"] = f"{v}" + (f" ({100 * share:.1f} %, {how})" if _num(share) else "")
    shares = ext.get("rule_shares")
    if isinstance(shares, dict) and shares:
        out["read by rule"] = " · ".join(
            f"{k} {100 * shares[k]:.0f} %"
            for k in [*(k for k in RULES if k in shares), *(k for k in shares if k not in RULES)]
            if _num(shares[k])
        )
    acc = ext.get("answered_accuracy")
    if isinstance(acc, dict) and isinstance(acc.get("total"), int):
        k, n = acc.get("correct"), acc["total"]
        out["accuracy over answered items"] = (
            f"{100 * k / n:.1f} % ({k}/{n})" if n and isinstance(k, int) else "— (no item answered)"
        )
    if isinstance(ext.get("resolve"), str) and ext["resolve"] != "none":
        out["inconsistent answers resolved"] = ext["resolve"]
    return out


def _answers(r, ext: Any, where: str) -> tuple[dict[str, int] | None, dict[str, float] | None, Count | None]:
    """(outcome counts, rule shares, answered accuracy) of a generated run's extraction block."""
    if not isinstance(ext, dict):
        return None, None, None
    outcomes = ext.get("outcomes")
    counts = (
        {k: v for k, v in outcomes.items() if isinstance(v, int) and not isinstance(v, bool)}
        if isinstance(outcomes, dict)
        else None
    )
    if counts is None and isinstance(ext.get("unparsed"), int):
        counts = {"unparsed": ext["unparsed"]}
    shares = ext.get("rule_shares")
    shares = {k: float(v) for k, v in shares.items() if _num(v)} if isinstance(shares, dict) else None
    acc = ext.get("answered_accuracy")
    answered = None
    if isinstance(acc, dict) and acc.get("total") is not None:
        answered = _count(r, acc, f"{where}.extraction.answered_accuracy", total="total")
    return counts, shares, answered


def parse_entry(r, entry, block: dict, block_where: str, dataset_sha: str | None) -> ModelResult:
    """One model's Deep Arithmark row (``entry``: a :class:`synthprobe.results.Entry`)."""
    where = entry.where
    model = entry.model
    name = _row_name(r, entry)
    params = r.get(model, "params", entry.at("model"), int, required=False)
    results = entry.data["results"]
    summary = r.get(block, "summary", block_where, dict)
    sw = f"{block_where}.summary"
    chance = r.get(summary, "chance", sw, float)
    if not 0 < chance < 1:
        raise r.fail(f"{sw}.chance", f"expected a probability between 0 and 1, got {chance}")
    metrics = r.get(summary, "metrics", sw, dict)
    protocol = protocol_of(entry.data)
    metric = metric_of(summary, protocol)
    stored = metric if metric in metrics or metric == "acc_norm" else "acc_norm"  # an older generated block
    mw = f"{sw}.metrics.{stored}"
    primary = r.get(metrics, stored, f"{sw}.metrics", dict)
    overall = _count(r, primary, mw, total="total")
    if overall.n == 0:
        raise r.fail(f"{mw}.total", "expected at least one scored item, got 0")
    # a free answer has no chance level: no test against it, whatever an older file holds
    p_value = _fraction(r, primary, "p_vs_chance", mw, what="a p-value") if protocol != "free" else None
    # log-likelihood columns only for log-likelihood runs
    soft = _fraction(r, metrics, "soft", f"{sw}.metrics", what="a mean probability") if metric == "acc_norm" else None
    n_items = r.get(summary, "n", sw, int, required=False, what="a whole number of items")
    if n_items is not None and n_items != overall.n:
        raise r.fail(
            f"{sw}.n", f"expected the number of scored items, {overall.n} (metrics.{stored}.total), got {n_items}"
        )
    label = summary.get("primary_label")
    if not (isinstance(label, str) and label):
        label = LABELS.get(protocol if metric != "acc_norm" else "loglik", metric)
    outcomes, rule_shares, answered = _answers(r, block.get("extraction"), block_where)

    by_depth = _by_depth(r, summary, sw)
    by_template = _by_template(r, summary, sw)
    if not by_depth:
        raise r.fail(f"{sw}.by_depth", "is empty; expected Deep Arithmark items with metadata.depth")
    _check_sums(r, by_depth, overall, f"{sw}.by_depth", stored)

    n_options = round(1 / chance) if abs(1 / chance - round(1 / chance)) < 1e-9 else None
    am3 = _arithmark3_rate(r, results, where, protocol)

    rank_picks = _rank_picks(r, summary, sw, n_options)
    return ModelResult(
        model=name,
        params=params,
        chance=chance,
        overall=overall,
        soft=soft,
        p_value=p_value,
        by_depth=dict(sorted(by_depth.items())),
        by_template=by_template,
        template_depth=_template_depths(r, block, block_where, by_template),
        arithmark3=am3,
        rank_picks=rank_picks,
        answer_ranks=_answer_ranks(r, summary, sw, None if rank_picks is None else len(rank_picks)),
        mistakes=_mistakes(r, summary, sw),
        settings=_settings(r, entry.data, block, where, dataset_sha),
        source=str(r.path),
        test_set=(_block_sha(block) or dataset_sha or "", (entry.settings or {}).get("limit"), overall.n),
        metric=metric,
        metric_label=label,
        protocol=protocol,
        outcomes=outcomes,
        rule_shares=rule_shares,
        answered=answered,
        checkpoint=str(model.get("spec") or ""),
        fingerprint=model.get("fingerprint") if isinstance(model.get("fingerprint"), str) else None,
        partial=_partial(r, summary, sw, metric, overall, by_depth),
    )


def _row_name(r, entry) -> str:
    """The row's model name: a sweep job's label and seed, and the variant (protocol, chat
    template, system prompt) in brackets, so that runs that differ are never merged."""
    name = r.get(entry.model, "name", entry.at("model"), str)
    sweep = entry.data.get("sweep")
    if isinstance(sweep, dict) and isinstance(sweep.get("label"), str) and isinstance(sweep.get("seed_label"), str):
        name = f"{sweep['label']} · seed {sweep['seed_label']}"  # a `synthprobe sweep` job: one row per seed
    label = variant_label(entry.data)
    return f"{name} [{label}]" if label else name


def _by_depth(r, summary: dict, sw: str) -> dict[int, Count]:
    by_depth: dict[int, Count] = {}
    for key, b in r.get(summary, "by_depth", sw, dict).items():
        here = f"{sw}.by_depth.{key}"
        if not (isinstance(key, str) and key.isascii() and key.isdigit() and len(key) <= 9):
            raise r.fail(here, "expected a depth (a whole number) as the key")
        if not isinstance(b, dict):
            raise r.fail(here, f"expected an object, got {type(b).__name__}")
        by_depth[int(key)] = _count(r, b, here)
    return by_depth


def _by_template(r, summary: dict, sw: str) -> dict[str, Count]:
    by_template: dict[str, Count] = {}
    for key, b in r.get(summary, "by_template", sw, dict).items():
        here = f"{sw}.by_template.{key}"
        if not isinstance(b, dict):
            raise r.fail(here, f"expected an object, got {type(b).__name__}")
        by_template[key] = _count(r, b, here)
    return by_template


def _arithmark3_rate(r, results: dict, where: str, protocol: str) -> float | None:
    """The entry's ArithMark 3.0 score under the same metric, where it was scored too."""
    am3_block = r.get(results, "arithmark3", f"{where}.results", dict, required=False)
    if am3_block is None:
        return None
    aw = f"{where}.results.arithmark3.summary"
    am3_summary = r.get(am3_block, "summary", f"{where}.results.arithmark3", dict)
    am3_metrics = r.get(am3_summary, "metrics", aw, dict)
    am3_metric = metric_of(am3_summary, protocol)
    am3_metric = am3_metric if am3_metric in am3_metrics else "acc_norm"
    primary = r.get(am3_metrics, am3_metric, f"{aw}.metrics", dict)
    return _count(r, primary, f"{aw}.metrics.{am3_metric}", total="total").rate


def _block_sha(block: dict) -> str | None:
    ds = block.get("dataset")
    sha = ds.get("sha256") if isinstance(ds, dict) else None
    return sha if isinstance(sha, str) else None


def parse(results: Results) -> list[ModelResult]:
    """Every model's Deep Arithmark row; in a file of the old Deep Arithmark layout every model
    must have one."""
    r = results.reader
    if results.layout in LAYOUTS:
        for e in results.models:
            r.get(e.data["results"], TASK, e.at("results"), dict)
    sha = results.dataset_sha256(TASK)
    return [parse_entry(r, e, b.data, b.where, sha) for e, b in results.blocks(TASK)]
