"""Study statistics as in GPT-3's Table 3.11.

Per rater: accuracy = correct answers / answers other than "I don't know" (a rater with only
"I don't know" answers has no accuracy and is left out of the mean). Per experiment: the mean
of the rater accuracies, a 95 % confidence interval from the t distribution, a two-sample
independent (Student) t-test of the rater accuracies against the control experiment of the
same article length, and the "I don't know" rate over all answers. By default only raters who
finished their quiz count, as GPT-3 counted only retained participants.
"""

from __future__ import annotations

import csv
import io
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from synthprobe.metrics.stats import mean_ci, t_test
from synthprobe.study.store import CHOICE_LABELS, NEUTRAL, Store, is_correct


@dataclass
class RaterScore:
    rater_id: int
    experiment: str
    finished: bool
    answers: int = 0
    correct: int = 0
    unsure: int = 0

    @property
    def decisive(self) -> int:
        return self.answers - self.unsure

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.decisive if self.decisive else None


def rater_scores(rows: Sequence[Any]) -> dict[int, RaterScore]:
    out: dict[int, RaterScore] = {}
    for r in rows:
        s = out.setdefault(r["rater_id"], RaterScore(r["rater_id"], r["experiment"], bool(r["finished"])))
        s.answers += 1
        ok = is_correct(r["version"], r["choice"])
        if ok is None:
            s.unsure += 1
        elif ok:
            s.correct += 1
    return out


def _f(x: float | None, nd: int = 4) -> float | None:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return None
    return round(float(x), nd)


def control_for(exp, experiments) -> tuple[str | None, str | None]:
    """The control experiment ``exp`` is tested against, and a note when there is none.

    The control of the same article length: the only one, else the one from the same model.
    """
    if exp["condition"] == "control":
        return None, None
    controls = [e for e in experiments if e["condition"] == "control" and e["length"] == exp["length"]]
    if len(controls) == 1:
        return controls[0]["experiment"], None
    if not controls:
        return None, f"no t-test: the study has no control experiment of ~{exp['length']} words"
    same = [e for e in controls if e["model"] == exp["model"]]
    if len(same) == 1:
        return same[0]["experiment"], None
    models = ", ".join(sorted(e["model"] for e in controls))
    return None, (
        f"no t-test: {len(controls)} control experiments of ~{exp['length']} words ({models}) and none "
        f"from {exp['model']}, so which one to compare against is ambiguous; generate one control for "
        "all models (--conditions model for the other runs)"
    )


def summarise(store: Store, *, include_incomplete: bool = False) -> dict[str, Any]:
    """The results table (one entry per experiment) and per-article machine-version accuracy."""
    rows = store.answer_rows()
    experiments = store.experiments()
    counts = store.rater_counts()
    scores = rater_scores(rows)
    counted = {rid for rid, s in scores.items() if s.finished or include_incomplete}
    acc_by_exp: dict[str, list[float]] = {e["experiment"]: [] for e in experiments}
    for rid in sorted(counted):
        s = scores[rid]
        if s.accuracy is not None:
            acc_by_exp[s.experiment].append(s.accuracy)
    words: dict[str, tuple[list[int], list[int]]] = {}
    for t in store.item_texts():
        h, m = words.setdefault(t["experiment"], ([], []))
        h.append(len(t["human_text"].split()))
        m.append(len(t["machine_text"].split()))

    table = []
    for e in experiments:
        key = e["experiment"]
        acc = acc_by_exp[key]
        mean, lo, hi = mean_ci(acc)
        exp_rows = [r for r in rows if r["experiment"] == key and r["rater_id"] in counted]
        unsure = sum(1 for r in exp_rows if r["choice"] == NEUTRAL)
        seconds = [r["answered_at"] - r["shown_at"] for r in exp_rows if r["shown_at"] is not None]
        control, control_note = control_for(e, experiments)
        t, p = t_test(acc, acc_by_exp[control]) if control else (None, None)
        hw, mw = words.get(key, ([], []))
        table.append(
            {
                "experiment": key,
                "model": e["model"],
                "condition": e["condition"],
                "length": e["length"],
                "articles": e["articles"],
                "raters_started": counts.get(key, {}).get("started", 0),
                "raters_finished": counts.get(key, {}).get("finished", 0),
                "raters": len(acc),
                "answers": len(exp_rows),
                "mean_accuracy": _f(mean),
                "ci95_low": _f(lo),
                "ci95_high": _f(hi),
                "sd": _f(statistics.stdev(acc)) if len(acc) > 1 else None,
                "control": control,
                "control_note": control_note,
                "t_vs_control": _f(t),
                "p_vs_control": float(f"{p:.4g}") if p is not None else None,
                "dont_know_rate": _f(unsure / len(exp_rows)) if exp_rows else None,
                "median_seconds_per_question": _f(statistics.median(seconds), 1) if seconds else None,
                "human_words_mean": _f(statistics.fmean(hw), 1) if hw else None,
                "machine_words_mean": _f(statistics.fmean(mw), 1) if mw else None,
            }
        )
    per_article: dict[tuple[str, str], list[int]] = {}
    for r in rows:
        if r["rater_id"] in counted and r["version"] == "machine" and r["choice"] != NEUTRAL:
            ok = is_correct(r["version"], r["choice"])
            per_article.setdefault((r["experiment"], r["title"]), []).append(int(bool(ok)))
    articles = [
        {"experiment": k[0], "title": k[1], "ratings": len(v), "accuracy": _f(sum(v) / len(v))}
        for k, v in sorted(per_article.items())
    ]
    return {
        "counted_raters": "all raters" if include_incomplete else "raters who finished their quiz",
        "accuracy": 'per rater: correct / answers other than "I don\'t know"; then the mean over raters',
        "experiments": table,
        "machine_articles": articles,
    }


CSV_COLUMNS = (
    "rater",
    "experiment",
    "model",
    "condition",
    "length",
    "quiz",
    "rater_finished",
    "position",
    "item_id",
    "article_id",
    "title",
    "shown_version",
    "choice",
    "choice_label",
    "correct",
    "seconds",
    "answered_at_utc",
)


def _cell(text: str) -> str:
    """Neutralise spreadsheet formulas in free text (a leading =, +, -, @ or tab)."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def answers_csv(store: Store) -> str:
    """Every stored answer, one row each (raters are numbered; their secret links are not exported)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for r in store.answer_rows():
        ok = is_correct(r["version"], r["choice"])
        secs = r["answered_at"] - r["shown_at"] if r["shown_at"] is not None else None
        w.writerow(
            [
                r["rater_id"],
                _cell(r["experiment"]),
                _cell(r["model"]),
                r["condition"],
                r["length"],
                r["quiz"],
                int(bool(r["finished"])),
                r["position"] + 1,
                _cell(r["item_id"]),
                _cell(r["article_id"]),
                _cell(r["title"]),
                r["version"],
                r["choice"],
                CHOICE_LABELS[r["choice"]],
                "" if ok is None else int(ok),
                f"{secs:.1f}" if secs is not None else "",
                datetime.fromtimestamp(r["answered_at"], UTC).isoformat(timespec="seconds"),
            ]
        )
    return buf.getvalue()
