"""Chat templates and the letters / free protocols of `score deeparithmark`: flags, bad input,
the records and the protocol effect (fixed answer texts), and the real embedded model (slow)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synthprobe.backends import ENGINES, register_engine
from synthprobe.backends.chat import ChatSetup
from synthprobe.cli import main
from synthprobe.results import read_results

ROOT = Path(__file__).resolve().parents[4]
DATA = ROOT / "data" / "deeparithmark-1.jsonl"


@pytest.fixture
def fixed():
    register_engine("fixed", "fixed_answer_engine")
    yield
    ENGINES.pop("fixed", None)


def score(*extra: str) -> list[str]:
    return ["score", "deeparithmark", "--data", str(DATA), "--limit", "6", "--no-progress", "--no-cache", *extra]


@pytest.mark.parametrize(
    "flags,message",
    [
        (["--chat-template", "no/such/template.jinja"], "no such file"),
        (["--cot"], "--cot lets a model reason"),
        (["--protocol", "letters,guess"], "expected one or more of loglik, letters, free"),
        (["--system-prompt", "Be brief."], "a system prompt needs a chat template"),
    ],
)
def test_bad_chat_and_protocol_flags_exit_2_and_write_nothing(tmp_path, capsys, fixed, flags, message):
    out = tmp_path / "r.json"
    assert main(score("--model", "fixed:x", "--output", str(out), *flags)) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_multiturn_demonstrations_need_a_template(tmp_path, capsys, fixed):
    out = tmp_path / "g.json"
    assert (
        main(
            [
                "score",
                "gpt3",
                "--model",
                "fixed:x",
                "--tasks",
                "2D+",
                "--limit",
                "1",
                "--quiet",
                "--fewshot-as-multiturn",
                "--output",
                str(out),
            ]
        )
        == 2
    )
    assert "multiturn demonstrations need a chat template" in capsys.readouterr().err and not out.exists()


def test_a_template_file_with_a_syntax_error_is_refused_with_its_line(tmp_path, capsys, fixed):
    bad = tmp_path / "bad.jinja"
    bad.write_text("{% for m in messages %}\n{{ m['content'] }\n{% endfor %}\n")
    out = tmp_path / "r.json"
    assert main(score("--model", "fixed:x", "--chat-template", str(bad), "--output", str(out))) == 2
    err = capsys.readouterr().err
    assert f"{bad}:2" in err and "not a valid Jinja template" in err
    assert not out.exists()


def test_chat_identity_names_and_hashes_the_template_and_system_prompt(tmp_path):
    tpl = tmp_path / "t.jinja"
    tpl.write_text("{% for m in messages %}{{ m['content'] }}{% endfor %}")
    plain = ChatSetup().identity(None)
    assert plain["chat_template"] == "none" and plain["chat_template_sha256"] is None
    assert plain["fewshot_layout"] == "zero-shot"
    a = ChatSetup(source=str(tpl), text=tpl.read_text(), system_prompt="Be brief.").identity(None, fewshot=True)
    b = ChatSetup(source=str(tpl), text=tpl.read_text() + " ", system_prompt="Be brief.").identity(None, fewshot=True)
    assert a["chat_template_name"] == "t.jinja" and a["fewshot_layout"] == "single-turn"
    assert a["chat_template_sha256"] != b["chat_template_sha256"] and len(a["system_prompt_sha256"]) == 64


def test_letters_and_free_records_unparsed_answers_and_the_protocol_effect(tmp_path, capsys, fixed):
    out = tmp_path / "r.json"
    assert (
        main(
            score(
                "--model",
                "fixed:x",
                "--protocol",
                "loglik,letters,free",
                "--chat-template",
                "auto",
                "--output",
                str(out),
            )
        )
        == 0
    )
    printed = capsys.readouterr().out
    doc = json.loads(out.read_text())
    read_results(out)
    loglik, letters, free = doc["models"]
    assert [e["protocol"]["name"] for e in doc["models"]] == ["loglik", "letters", "free"]
    assert letters["chat"]["chat_template"] == "auto" and len(letters["chat"]["chat_template_sha256"]) == 64
    # the three rows never merge: each names its protocol and template
    assert len({e["row"]["model"] for e in doc["models"]}) == 3 and "[letters chat:auto" in letters["row"]["model"]

    lb = letters["results"]["deeparithmark"]
    recs = lb["predictions"]
    assert [(r["parsed"], r["rule"]) for r in recs] == [
        ("B", "strict"),
        (None, "unparsed"),
        ("B", "lax"),
        (None, "unparsed"),
        ("B", "lax"),
        ("C", "lax"),
    ]
    assert [r["correct"] for r in recs] == [True, False, True, False, False, False]
    assert recs[1]["unparsed_reason"].startswith("ambiguous") and recs[0]["raw"] == "ANSWER: $B$"
    assert lb["summary"]["primary"] == "accuracy" and set(lb["summary"]["metrics"]) == {"accuracy"}
    assert lb["summary"]["metrics"]["accuracy"]["correct"] == 2
    assert not any("acc_norm" in b or "soft" in b for b in lb["summary"]["by_depth"].values())
    assert not any(k.startswith(("pred_acc", "correct_acc")) or k == "soft" for k in recs[0])
    assert (lb["extraction"]["unparsed"], lb["extraction"]["unparsed_share"]) == (2, 2 / 6)
    assert recs[4]["chosen_source"] == "added the day-1 sales"

    fb = free["results"]["deeparithmark"]
    recs = fb["predictions"]
    assert [(r["parsed"], r["rule"]) for r in recs] == [
        (66, "lax"),
        (637, "lax"),
        (999, "last"),
        (None, "unparsed"),
        (54, "strict"),
        (None, "unparsed"),
    ]
    assert [r["correct"] for r in recs] == [True, False, False, False, False, False]
    assert fb["wrong_answers"] == {
        "unparsed": 2,
        "kept filling during the draining": 1,
        "day-2 percentage taken of the day-1 sales": 1,
        "none of the options": 1,
    }
    assert "answers: answered 4 (66.7 %), unparsed 2 (33.3 %), echo 0 (0.0 %), cut off 0 (0.0 %)" in printed
    assert "rules: strict = an 'ANSWER: X' line" in printed and "docs/chat-and-protocols.md" in printed
    assert "acc_norm" not in printed.split("[free")[1].split("\n\n")[0]  # the free run names its own metric

    effect = doc["protocol_effect"]
    assert [(b["reference"], b["other"].split()[0]) for b in effect] == [
        ("loglik chat:auto (the model's own)@" + loglik["chat"]["chat_template_sha256"][:8], "letters"),
        (effect[0]["reference"], "free"),
    ]
    assert [(b["reference_metric"], b["metric"]) for b in effect] == [("acc_norm", "accuracy")] * 2
    overall = effect[0]["rows"][0]
    ref = [r["correct_acc_norm"] for r in loglik["results"]["deeparithmark"]["predictions"]]
    assert overall["depth"] == "all" and overall["n"] == 6 and overall["correct"] == 2
    assert overall["reference_correct"] == sum(ref) and 0 <= overall["p_mcnemar"] <= 1
    assert {r["depth"] for r in effect[0]["rows"][1:]} == {2, 3, 4, 5}
    assert "protocol effect" in printed

    # the report shows the rows apart, the unparsed answers and the paired differences
    assert main(["report", str(out), "--out", str(tmp_path / "report")]) == 0
    page = (tmp_path / "report" / "index.html").read_text()
    assert "Protocol effect" in page and "McNemar p" in page and "[letters chat:auto" in page
    assert "2 (33.3 %, counted wrong)" in page


@pytest.mark.slow
def test_real_model_letters_and_free_under_its_template(tmp_path):
    out = tmp_path / "r.json"
    assert (
        main(
            score(
                "--protocol",
                "letters,free",
                "--chat-template",
                "auto",
                "--limit",
                "4",
                "--batch-size",
                "4",
                "--output",
                str(out),
            )
        )
        == 0
    )
    doc = json.loads(out.read_text())
    for e in doc["models"]:
        block = e["results"]["deeparithmark"]
        assert len(block["predictions"]) == 4 and block["timing"]["generated_tokens"] > 0
        assert all(
            r["raw"] is not None and r["rule"] in ("strict", "lax", "last", "value", "unparsed")
            for r in block["predictions"]
        )
        assert e["chat"]["chat_template_sha256"] == doc["models"][0]["chat"]["chat_template_sha256"]


@pytest.mark.slow
def test_a_template_that_fails_to_render_exits_2_and_writes_nothing(tmp_path, capsys):
    bad = tmp_path / "raises.jinja"
    bad.write_text("{{ raise_exception('this template takes no user turns') }}")
    out = tmp_path / "r.json"
    assert main(score("--chat-template", str(bad), "--limit", "2", "--output", str(out))) == 2
    err = capsys.readouterr().err
    assert "failed to render" in err and "this template takes no user turns" in err
    assert not out.exists()


@pytest.mark.slow
def test_templated_loglik_agrees_with_lm_eval_apply_chat_template(tmp_path):
    """20 items: the same acc and per-character predictions as lm-eval 0.4.13 with
    --apply_chat_template on the YAML of `synthprobe export lm-eval` (bench/chat_loglik_agreement.py
    runs the same comparison on 200)."""
    pytest.importorskip("lm_eval")
    from chat_loglik_agreement import agreement  # bench/ is on the test path (pyproject.toml)

    got = agreement(20, tmp_path)
    assert got["n"] == got["n_lm_eval"] == 20
    assert got["acc_same"] == 20 and got["acc_char_same"] == 20
    assert got["lm_eval_context"].endswith("<|im_start|>assistant\n")


def test_gpt3_demonstrations_single_turn_or_multiturn_and_sat_letters(tmp_path, fixed):
    from fixed_answer_engine import FixedAnswers

    base = [
        "score",
        "gpt3",
        "--model",
        "fixed:x",
        "--tasks",
        "2D+",
        "--shots",
        "2",
        "--limit",
        "2",
        "--quiet",
        "--no-cache",
        "--chat-template",
        "auto",
        "--system-prompt",
        "Be brief.",
    ]
    FixedAnswers.SEEN.clear()
    assert main([*base, "--output", str(tmp_path / "one.json")]) == 0
    single = list(FixedAnswers.SEEN)
    assert [m["role"] for m in single[0]] == ["system", "user"] and single[0][0]["content"] == "Be brief."
    assert single[0][1]["content"].count("Q:") == 3  # two demonstrations and the test item, one turn
    FixedAnswers.SEEN.clear()
    assert main([*base, "--fewshot-as-multiturn", "--output", str(tmp_path / "multi.json")]) == 0
    multi = list(FixedAnswers.SEEN)
    assert [m["role"] for m in multi[0]] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert multi[0][2]["content"].strip() and "Q:" not in multi[0][2]["content"]
    doc = json.loads((tmp_path / "multi.json").read_text())
    assert doc["models"][0]["chat"]["fewshot_layout"] == "multiturn"
    assert doc["models"][0]["results"]["gpt3"]["rows"][0]["chat"]["system_prompt"] == "Be brief."

    out = tmp_path / "sat.json"
    assert (
        main(
            [
                "score",
                "gpt3",
                "--model",
                "fixed:x",
                "--tasks",
                "SAT",
                "--shots",
                "zero",
                "--limit",
                "3",
                "--quiet",
                "--no-cache",
                "--sat-protocol",
                "letters",
                "--output",
                str(out),
            ]
        )
        == 0
    )
    (row,) = json.loads(out.read_text())["models"][0]["results"]["gpt3"]["rows"]
    assert row["protocol"] == "letters" and row["unparsed"] == 0 and row["n"] == 3
    assert all(it["parsed"] == "B" and it["prediction"] == 1 for it in row["items"])

    FixedAnswers.SEEN.clear()  # lettered demonstrations as turns: the question, then its answer letter
    assert (
        main(
            [
                "score",
                "gpt3",
                "--model",
                "fixed:x",
                "--tasks",
                "SAT",
                "--shots",
                "2",
                "--limit",
                "1",
                "--quiet",
                "--no-cache",
                "--sat-protocol",
                "letters",
                "--chat-template",
                "auto",
                "--fewshot-as-multiturn",
                "--output",
                str(tmp_path / "sat2.json"),
            ]
        )
        == 0
    )
    turns = FixedAnswers.SEEN[0]
    assert [m["role"] for m in turns] == ["user", "assistant", "user", "assistant", "user"]
    assert turns[1]["content"] in "ABCDE" and "A." in turns[0]["content"] and "A." in turns[4]["content"]


@pytest.mark.slow
def test_real_model_gpt3_as_chat_turns_and_sat_letters(tmp_path):
    out = tmp_path / "g.json"
    assert (
        main(
            [
                "score",
                "gpt3",
                "--tasks",
                "2D+,SAT",
                "--shots",
                "one",
                "--limit",
                "3",
                "--quiet",
                "--no-cache",
                "--chat-template",
                "auto",
                "--fewshot-as-multiturn",
                "--sat-protocol",
                "letters",
                "--output",
                str(out),
            ]
        )
        == 0
    )
    entry = json.loads(out.read_text())["models"][0]
    rows = {r["code"]: r for r in entry["results"]["gpt3"]["rows"]}
    assert entry["chat"]["fewshot_layout"] == "multiturn" and rows["2D+"]["chat"]["chat_template"] == "auto"
    assert rows["SAT"]["protocol"] == "letters" and len(rows["SAT"]["items"]) == 3
    assert all(it["rule"] in ("strict", "lax", "last", "value", "unparsed") for it in rows["SAT"]["items"])


def test_the_item_viewer_gives_each_protocol_its_column_and_shows_the_generated_text(tmp_path, fixed):
    """One model under three protocols: three columns of picks in items.html, never merged into
    one, with each generated answer's raw text and what was read from it."""
    from viewer_support import page_data

    from synthprobe.report.build import build_report

    out = tmp_path / "r.json"
    assert main(score("--model", "fixed:x", "--protocol", "loglik,letters,free", "--output", str(out))) == 0
    rep = tmp_path / "rep"
    build_report([out], rep, data_files=[DATA])
    data = page_data((rep / "items.html").read_text("utf-8"))
    names = [m["name"] for m in data["models"]]
    assert (
        len(names) == 3
        and names == ["toy:x", "toy:x [letters]", "toy:x [free]"]
        and "[letters]" in names[1]
        and "[free]" in names[2]
    )
    loglik, letters, free = data["runs"]
    assert [r["pr"] for r in letters] == ["letters"] * 6 and [r["pr"] for r in free] == ["free"] * 6
    assert "gen" not in loglik[0] and "lp" in loglik[0]
    assert letters[0]["gen"] == "ANSWER: $B$" and letters[0]["parsed"] == "B" and letters[0]["ok"] == 1
    assert letters[1]["parsed"].startswith("unparsed: ambiguous") and letters[1]["p"] == -1
    assert free[3]["gen"] == "I cannot help with that." and free[3]["parsed"].startswith("unparsed")


def test_lm_eval_files_keep_the_loglik_entries_and_say_what_they_leave_out(tmp_path, capsys, fixed):
    out = tmp_path / "r.json"
    assert main(score("--model", "fixed:x", "--protocol", "loglik,letters", "--output", str(out))) == 0
    assert main(["export", "lm-eval-results", str(out), "--out", str(tmp_path / "lm")]) == 0
    assert (
        "left out of lm-eval's files, which hold the loglik protocol only: toy:x (letters)" in capsys.readouterr().err
    )
    (folder,) = (tmp_path / "lm").iterdir()
    results = json.loads(next(folder.glob("results_*.json")).read_text())
    assert list(results["results"]) == ["deeparithmark"]
    only = tmp_path / "letters.json"
    assert main(score("--model", "fixed:x", "--protocol", "letters", "--output", str(only))) == 0
    capsys.readouterr()
    assert main(["export", "lm-eval-results", str(only), "--out", str(tmp_path / "none")]) == 2
    assert "holds only generated answers (--protocol letters)" in capsys.readouterr().err
    assert not (tmp_path / "none").exists()


def test_a_chat_endpoint_gets_the_question_as_a_user_turn_without_a_template(tmp_path, fixed, monkeypatch):
    """An engine whose server applies the model's template (``server_chat_template``, the
    openai-chat engine) is asked as under ``--chat-template auto`` in process: no raw-prompt
    ``Answer:`` cue inside the user's message. (The real server: tests/backends/test_openai_chat_vllm_server.py.)"""
    from fixed_answer_engine import FixedAnswers

    sent: list = []
    real_generate = FixedAnswers.generate

    def recording(self, prompts, *args, **kwargs):
        sent.extend(prompts)
        return real_generate(self, prompts, *args, **kwargs)

    monkeypatch.setattr(FixedAnswers, "generate", recording)
    out = tmp_path / "plain.json"
    assert main(score("--model", "fixed:x", "--protocol", "letters", "--output", str(out))) == 0
    assert len(sent) == 6 and all(p.endswith("\nAnswer:") for p in sent)
    sent.clear()
    monkeypatch.setattr(FixedAnswers, "server_chat_template", True, raising=False)
    out = tmp_path / "endpoint.json"
    assert main(score("--model", "fixed:x", "--protocol", "letters", "--output", str(out))) == 0
    assert len(sent) == 6 and not any("Answer:" in p for p in sent)
    assert all(p.endswith("Reply with the letter of the correct option only (A, B, C or D).") for p in sent)


def test_a_named_template_of_the_tokenizer_scores_as_its_file_does(tmp_path, capsys):
    """--chat-template NAME picks one of the tokenizer's named templates (a tiny random model whose
    folder ships `default` and `terse`): the scores equal those under the same text given as a
    file, the results name it with the text's SHA-256, and a name the tokenizer lacks is one
    error (exit 2, nothing written) that lists the names it has."""
    import hashlib

    from scoring_support import save_tiny_llama

    model = save_tiny_llama(tmp_path / "tiny")
    terse = (
        "{% for m in messages %}[{{ m['role'] }}] {{ m['content'] }}\n{% endfor %}"
        "{% if add_generation_prompt %}[assistant] {% endif %}"
    )
    (model / "additional_chat_templates").mkdir()
    (model / "additional_chat_templates" / "terse.jinja").write_text(terse, encoding="utf-8")
    as_file = tmp_path / "terse-copy.jinja"
    as_file.write_text(terse, encoding="utf-8")
    common = [
        "--model",
        str(model),
        "--device",
        "cpu",
        "--dtype",
        "float32",
        "--threads",
        "1",
        "--limit",
        "8",
        "--save-predictions",
    ]
    named, filed, bad = tmp_path / "named.json", tmp_path / "file.json", tmp_path / "bad.json"
    assert main(score(*common, "--chat-template", "terse", "--output", str(named))) == 0
    assert main(score(*common, "--chat-template", str(as_file), "--output", str(filed))) == 0
    [a], [b] = (json.loads(p.read_text())["models"] for p in (named, filed))
    assert a["chat"]["chat_template"] == "terse" and a["chat"]["chat_template_name"].startswith("terse")
    assert (
        a["chat"]["chat_template_sha256"]
        == b["chat"]["chat_template_sha256"]
        == hashlib.sha256(terse.encode()).hexdigest()
    )
    scores = [[r["logprob"] for r in m["results"]["deeparithmark"]["predictions"]] for m in (a, b)]
    assert scores[0] == scores[1]
    capsys.readouterr()
    assert main(score(*common, "--chat-template", "chatty", "--output", str(bad))) == 2
    assert "no chat template named 'chatty' (its templates: default, terse)" in capsys.readouterr().err
    assert not bad.exists()


def test_two_names_for_the_same_weights_each_get_their_own_protocol_effect(tmp_path, capsys, fixed):
    out = tmp_path / "r.json"
    assert (
        main(
            score(
                "--model",
                "base=fixed:x",
                "--model",
                "tuned=fixed:x",
                "--protocol",
                "loglik,letters",
                "--output",
                str(out),
            )
        )
        == 0
    )
    effect = json.loads(out.read_text())["protocol_effect"]
    assert [(b["model"], b["reference"], b["other"].split()[0]) for b in effect] == [
        ("base", "loglik", "letters"),
        ("tuned", "loglik", "letters"),
    ]


def test_sat_letters_answers_that_did_not_count_reach_the_report_and_the_viewer(tmp_path, fixed):
    """SAT asked as letters, one answer unparsed as a real model wrote it (an empty answer): the
    report reads the row (it once required every prediction to be an integer), its tables say how
    many answers did not count, and the item viewer shows the raw text and why nothing was read."""
    out = tmp_path / "sat.json"
    args = ["score", "gpt3", "--model", "fixed:x", "--tasks", "SAT", "--shots", "zero", "--limit", "3"]
    assert main([*args, "--quiet", "--no-cache", "--sat-protocol", "letters", "--output", str(out)]) == 0
    doc = json.loads(out.read_text())
    (row,) = doc["models"][0]["results"]["gpt3"]["rows"]
    item = row["items"][0]
    row["correct"] -= item["correct"]
    row["accuracy"] = 100 * row["correct"] / row["n"]
    row["unparsed"] = 1
    item.update(
        raw="",
        parsed=None,
        prediction=None,
        correct=False,
        rule="unparsed",
        unparsed_reason="empty answer",
        outcome="unparsed",
    )
    out.write_text(json.dumps(doc), encoding="utf-8")
    assert main(["report", str(out), "--out", str(tmp_path / "report")]) == 0
    board = (tmp_path / "report" / "leaderboard.md").read_text(encoding="utf-8")
    assert "n=3; unparsed 1, inconsistent 0, cut off 0" in board
    page = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    assert "unparsed 1, inconsistent 0, cut off 0 (counted wrong)" in page
    viewer = (tmp_path / "report" / "items.html").read_text(encoding="utf-8")
    assert '"p":-1,"parsed":"unparsed: empty answer","pr":"letters","rule":"unparsed"' in viewer
