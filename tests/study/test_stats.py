"""Study statistics on hand-computed cases (GPT-3 Table 3.11 definitions)."""

from __future__ import annotations

import csv
import io
import json
import random

import pytest
from study_support import ADMIN_PASSWORD, write_items

from synthprobe.cli import main
from synthprobe.study import stats
from synthprobe.study.items import load_items
from synthprobe.study.store import Store

RIGHT = {"human": "human-very", "machine": "machine-more"}
WRONG = {"human": "machine-very", "machine": "human-more"}


def test_mean_ci_and_t_test_by_hand():
    # model raters 3/4, 2/3, 1/2; control raters 1, 1, 3/4
    model, control = [0.75, 2 / 3, 0.5], [1.0, 1.0, 0.75]
    m, lo, hi = stats.mean_ci(model)
    # mean 0.638889; sd 0.127294; sem 0.0734931; t(0.975, df=2) = 4.302653 -> half-width 0.316216
    assert m == pytest.approx(0.638889, abs=1e-6)
    assert (lo, hi) == (pytest.approx(0.322673, abs=1e-5), pytest.approx(0.955105, abs=1e-5))
    # pooled variance (0.0162037 + 0.0208333) / 2; se = sqrt(0.0185185 * 2/3) = 1/9 -> t = -0.277778 * 9 = -2.5
    t, p = stats.t_test(model, control)
    assert t == pytest.approx(-2.5, abs=1e-9)
    assert p == pytest.approx(0.066767, abs=1e-5)  # two-sided, df = 4
    assert stats.mean_ci([0.5]) == (0.5, None, None)
    assert stats.mean_ci([0.6, 0.6, 0.6]) == (0.6, 0.6, 0.6)
    assert stats.mean_ci([]) == (None, None, None)
    assert stats.t_test([0.5], [0.4, 0.6]) == (None, None)
    assert stats.t_test([0.5, 0.5], [0.5, 0.5]) == (None, None)  # no spread: t undefined
    assert stats.t_test([0.5, 0.5], [1.0, 1.0]) == (None, None)


def test_rater_accuracy_excludes_dont_know():
    rows = [
        dict(rater_id=1, experiment="e", finished=1, version=v, choice=c)
        for v, c in [("human", "human-more"), ("machine", "unsure"), ("machine", "human-very"), ("human", "human-very")]
    ]
    rows += [dict(rater_id=2, experiment="e", finished=1, version="human", choice="unsure")]
    s = stats.rater_scores(rows)
    assert (s[1].correct, s[1].decisive, s[1].unsure) == (2, 3, 1) and s[1].accuracy == pytest.approx(2 / 3)
    assert s[2].accuracy is None  # only "I don't know": no accuracy


def _answer(store, token, pattern):
    """Answer the rater's questions in order: R = right, W = wrong, U = I don't know."""
    for mark in pattern:
        q = store.current_question(token)
        choice = {"R": RIGHT[q.version], "W": WRONG[q.version], "U": "unsure"}[mark]
        assert store.answer(token, q.position, choice)


@pytest.fixture
def filled(tmp_path):
    items = tmp_path / "items.jsonl"
    write_items(items, n_articles=4)
    store = Store(tmp_path / "s.sqlite")
    store.initialise(load_items(items), admin_password=ADMIN_PASSWORD)
    rng = random.Random(3)
    tokens = [store.create_rater(rng) for _ in range(6)]
    by_exp = {}
    for t in tokens:
        by_exp.setdefault(store.rater(t).experiment.split(" | ")[1], []).append(t)
    assert sorted(map(len, by_exp.values())) == [3, 3]
    for t, pat in zip(by_exp["model"], ["RRRW", "RRWU", "RWUU"]):
        _answer(store, t, pat)
    for t, pat in zip(by_exp["control"], ["RRRR", "RRRR", "RRRW"]):
        _answer(store, t, pat)
    late = store.create_rater(rng)  # an unfinished rater: 2 right answers
    _answer(store, late, "RR")
    return store, store.rater(late).experiment


def test_summary_from_the_database(filled):
    store, late_exp = filled
    res = stats.summarise(store)
    model, control = res["experiments"]
    assert (model["condition"], control["condition"]) == ("model", "control")
    assert model["raters"] == 3 and model["answers"] == 12
    assert model["mean_accuracy"] == pytest.approx(0.6389, abs=1e-4)
    assert (model["ci95_low"], model["ci95_high"]) == (pytest.approx(0.3227, abs=1e-4), pytest.approx(0.9551, abs=1e-4))
    assert model["t_vs_control"] == pytest.approx(-2.5) and model["p_vs_control"] == pytest.approx(0.06677, abs=1e-5)
    assert model["control"] == control["experiment"] and control["t_vs_control"] is None
    assert model["dont_know_rate"] == 0.25 and control["dont_know_rate"] == 0.0
    assert control["mean_accuracy"] == pytest.approx(0.9167, abs=1e-4)
    assert {model["raters_started"], control["raters_started"]} == {3, 4}
    # the unfinished rater counts only on request
    inc = {e["condition"]: e for e in stats.summarise(store, include_incomplete=True)["experiments"]}
    cond = late_exp.split(" | ")[1]
    expected = {"model": (0.75 + 2 / 3 + 0.5 + 1.0) / 4, "control": (1 + 1 + 0.75 + 1.0) / 4}[cond]
    assert inc[cond]["raters"] == 4 and inc[cond]["mean_accuracy"] == pytest.approx(expected, abs=1e-4)
    # per-article accuracy on machine versions: every rating is counted once
    assert sum(a["ratings"] for a in res["machine_articles"]) == sum(
        1 for r in store.answer_rows() if r["finished"] and r["version"] == "machine" and r["choice"] != "unsure"
    )


def test_results_cli_json_and_csv(filled, tmp_path, capsys, monkeypatch):
    store, _ = filled
    monkeypatch.setenv("SYNTHPROBE_STUDY_ADMIN", ADMIN_PASSWORD)
    out_csv = tmp_path / "answers.csv"
    assert main(["study", "results", "--db", str(store.path), "--csv", str(out_csv)]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["experiments"][0]["mean_accuracy"] == pytest.approx(0.6389, abs=1e-4)
    rows = list(csv.DictReader(io.StringIO(out_csv.read_text())))
    assert len(rows) == 6 * 4 + 2
    assert set(rows[0]) == set(stats.CSV_COLUMNS)
    assert sum(r["correct"] == "" for r in rows) == 3  # the three "I don't know" answers
    assert all(len(r["rater"]) < 5 for r in rows)  # numbered raters, never their secret links
    assert main(["study", "results", "--db", str(tmp_path / "missing.sqlite")]) == 2
    assert "database does not exist" in capsys.readouterr().err


def test_results_cli_needs_the_admin_password(filled, tmp_path, capsys, monkeypatch):
    store, _ = filled
    out_csv = tmp_path / "answers.csv"
    cmd = ["study", "results", "--db", str(store.path), "--csv", str(out_csv)]
    monkeypatch.delenv("SYNTHPROBE_STUDY_ADMIN", raising=False)
    assert main(cmd) == 2
    captured = capsys.readouterr()
    assert "set $SYNTHPROBE_STUDY_ADMIN" in captured.err and captured.out == ""
    monkeypatch.setenv("SYNTHPROBE_STUDY_ADMIN", "not the password")
    assert main(cmd) == 2
    captured = capsys.readouterr()
    assert "is not this study's admin password" in captured.err and captured.out == ""
    assert not out_csv.exists()  # nothing written without the password
    # the database keeps a salted hash, never the password itself
    with store.connect() as con:
        meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
    assert ADMIN_PASSWORD not in "".join(meta.values())
    assert meta["admin_scrypt"].startswith("scrypt:")  # werkzeug.security's format
    # a database that was never served with a password cannot be read either; the message says how to fix it
    items = tmp_path / "items.jsonl"
    write_items(items, n_articles=2)
    bare = Store(tmp_path / "bare.sqlite")
    bare.initialise(load_items(items))
    monkeypatch.setenv("SYNTHPROBE_STUDY_ADMIN", ADMIN_PASSWORD)
    assert main(["study", "results", "--db", str(bare.path)]) == 2
    assert "no admin password is recorded" in capsys.readouterr().err
    # serving it with the password records it; then the results open
    bare.initialise(None, admin_password=ADMIN_PASSWORD)
    assert main(["study", "results", "--db", str(bare.path)]) == 0
    assert json.loads(capsys.readouterr().out)["experiments"]


def _concat(tmp_path, parts):
    """One items file from several ``write_items`` runs: ``parts`` = [(model, conditions), ...]."""
    text = ""
    for k, (model, conditions) in enumerate(parts):
        part = tmp_path / f"part{k}.jsonl"
        write_items(part, n_articles=2, model=model, conditions=conditions)
        text += part.read_text()
    path = tmp_path / "items.jsonl"
    path.write_text(text)
    return path


def test_control_matching_says_why_there_is_no_t_test(tmp_path):
    from synthprobe.study.app import create_app

    items = _concat(
        tmp_path, [("model-a", ("model", "control")), ("model-b", ("model", "control")), ("model-c", ("model",))]
    )
    store = Store(tmp_path / "s.sqlite")
    store.initialise(load_items(items))
    rng = random.Random(0)
    for _ in range(10):  # two raters per experiment
        _answer(store, store.create_rater(rng), "RW")
    res = {(e["model"], e["condition"]): e for e in stats.summarise(store)["experiments"]}
    a, c = res[("model-a", "model")], res[("model-c", "model")]
    assert a["control"] == res[("model-a", "control")]["experiment"] and a["control_note"] is None
    assert c["control"] is None and c["t_vs_control"] is None
    assert c["control_note"].startswith(
        "no t-test: 2 control experiments of ~200 words (model-a, model-b) and none from model-c"
    )
    assert res[("model-a", "control")]["control_note"] is None
    # the results page shows the note
    client = create_app(str(store.path), admin_password="pw").test_client()
    import base64

    page = client.get("/admin", headers={"Authorization": "Basic " + base64.b64encode(b"a:pw").decode()}).text
    assert "none from model-c, so which one to compare against is ambiguous" in page
    # a study with no control at all
    items2 = tmp_path / "nocontrol.jsonl"
    write_items(items2, n_articles=2, conditions=("model",))
    store2 = Store(tmp_path / "n.sqlite")
    store2.initialise(load_items(items2))
    (e,) = stats.summarise(store2)["experiments"]
    assert e["control"] is None and e["control_note"] == "no t-test: the study has no control experiment of ~200 words"


def test_two_runs_with_one_control_model_are_refused_with_a_way_out(tmp_path, capsys):
    from synthprobe.errors import InputError

    # the same control (same --control-model) written by two runs: its item ids repeat
    items = _concat(tmp_path, [("shared", ("control",)), ("shared", ("control",))])
    with pytest.raises(InputError, match="id repeats line 1") as err:
        load_items(items)
    assert "generate the control once" in str(err.value) and "--conditions model" in str(err.value)
    assert main(["study", "serve", "--db", str(tmp_path / "s.sqlite"), "--items", str(items)]) == 2
    assert "--conditions model" in capsys.readouterr().err
    assert not (tmp_path / "s.sqlite").exists()
    # the help of 'study generate' says how to combine runs
    with pytest.raises(SystemExit):
        main(["study", "generate", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "generate the control once" in help_text and "--conditions model" in help_text
