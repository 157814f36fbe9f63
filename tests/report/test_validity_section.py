"""The report's Validity section (``synthprobe report`` on a ``synthprobe validate`` document).

The input is a hand-written results document (``fixtures/validity_small.json``) that follows
the layout of :mod:`synthprobe.validity`: a 400-item file, a choices-only adversary that stays at
chance, two positive controls that fail as they must, a learnability curve, four
leave-one-family-out folds and the seed variance over five fresh builds (its block made by
:func:`synthprobe.validity.seeds.summarise`); it holds no models.
"""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path

import pytest

from synthprobe.cli import main
from synthprobe.errors import InputError
from synthprobe.report.build import build_report
from synthprobe.results import read_results

FIXTURE = Path(__file__).parent / "fixtures" / "validity_small.json"


@pytest.fixture(scope="module")
def doc() -> dict:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("validity") / "report"
    build_report([FIXTURE], out)
    return out


def _write(path: Path, doc: dict) -> Path:
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_the_results_reader_keeps_the_section_of_a_file_without_models(doc):
    results = read_results(FIXTURE)
    assert results.models == []
    assert results.validity["version"] == 1 and results.validity["chance"] == 0.25
    # without a validity section, an empty models list is still refused
    bare = {k: v for k, v in doc.items() if k != "validity"}
    with pytest.raises(InputError) as err:
        from synthprobe.results import parse

        parse(bare, "bare.json")
    assert err.value.field == "models"


def test_the_page_shows_the_verdicts_and_the_files_numbers(report):
    page = (report / "index.html").read_text(encoding="utf-8")
    assert '<section id="validity">' in page and "<h2>Validity: does the file measure what it claims?" in page
    assert "<title>Validity report</title>" in page
    # the verdicts, in words
    assert "Choices-only adversary</strong>: passes: trained on up to 4,000 items" in page
    assert "Power</strong>: has power: it beats chance on every flawed build" in page
    # chance's interval on 400 items, recomputed by the rule the layout states
    assert "20.8–29.2 % on 400 items" in page
    # the adversary's curve: accuracy with interval and counts, p vs chance, within the interval
    assert "24.8 % [20.6, 29.3] (99/400)" in page and "27.0 % [22.7, 31.6] (108/400)" in page
    assert page.count('<span class="above">yes</span>') == 4 + 2  # four sizes within, two controls fail
    # the controls: flaw, the audit's call with the strategies that leave chance, adversary accuracy
    assert "the right ending is always the longest of the four" in page
    assert "fails: longest ending text 100.0 %, shortest ending text 0.0 %, char-3-gram classifier 91.2 %" in page
    assert "99.0 % [97.5, 99.7] (396/400)" in page and "76.0 % [71.5, 80.1] (304/400)" in page
    assert "1.3e−230" in page
    # learnability: paired against the untrained model
    assert "53.5 % [48.5, 58.5] (214/400)" in page and "+24.3" in page and "1.6e−16" in page
    assert "Per depth, accuracy % at each training size" in page
    # leave one family out
    assert "money_discount_fee" in page and "41.0 % [31.3, 51.3]" in page and "0.076" in page
    # seed variance: mean with the t interval, SD, range, where the file falls, per depth, per build
    assert (
        "Seed variance</strong>: loglik acc_norm, SD 1.20 points across 5 fresh builds of 400 items; "
        "the file&#39;s 29.2 % lies 1.83 sd below the mean"
    ) in page
    assert "31.4 [30.0, 32.9]" in page and "30.0–32.8" in page and "−1.83" in page and "0 of 5" in page
    assert "44.2 ± 1.9 (42.0–47.0)" in page
    assert "Two models across the same builds" not in page  # one model: nothing to pair
    # the run's settings under Runs
    assert "158b3579edd3931cf9df8fd5c000fde9ced141d1ce437b6f37f5f90c5290a5d2" in page


def test_the_figure_is_written_and_embedded(report):
    from PIL import Image

    png = (report / "validity.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    with Image.open(io.BytesIO(png)) as im:
        width, height = im.size
    assert width > 1000 and height > 1200  # five panels, two to a row
    import base64

    assert base64.b64encode(png).decode("ascii") in (report / "index.html").read_text(encoding="utf-8")


def test_leaderboard_md_has_the_tables(report):
    md = (report / "leaderboard.md").read_text(encoding="utf-8")
    assert md.startswith("# Validity")
    assert "| 4,000 | 27.0 % [22.7, 31.6] (108/400) | 0.36 | yes |" in md
    assert "| odd-one-out | three endings share their last digit and the right one differs from them | passes |" in md
    assert "| money_discount_fee | 100 | 41.0 % [31.3, 51.3] | 31.0 % [22.1, 41.0] | +10.0 |" in md
    assert "<span" not in md


def test_reruns_are_byte_identical(report, tmp_path):
    again = tmp_path / "again"
    build_report([FIXTURE], again)
    for name in ("index.html", "leaderboard.md", "validity.png"):
        assert (again / name).read_bytes() == (report / name).read_bytes(), name


def test_a_failing_adversary_without_power_is_told(doc, tmp_path):
    bad = copy.deepcopy(doc)
    sec = bad["validity"]
    point = sec["adversary"]["curve"][-1]
    point.update(
        {"correct": 140, "accuracy": 0.35, "ci95": [0.303, 0.399], "p_vs_chance": 4.6e-6, "within_chance": False}
    )
    sec["adversary"]["passes"] = False
    sec["adversary"]["verdict"] = "fails: from its endings alone the adversary scores 35.0 % at 4,000 training items"
    sec["controls"][1]["fails"] = False
    sec["power"] = {
        "has_power": False,
        "verdict": "no power: the adversary did not beat chance on the flawed build odd-one-out",
    }
    out = tmp_path / "out"
    build_report([_write(tmp_path / "failing.json", bad)], out)
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "Choices-only adversary</strong>: fails: from its endings alone" in page
    assert "Power</strong>: no power: the adversary did not beat chance" in page
    assert '<span class="below">no</span>' in page  # the last size is out of chance's interval
    assert "validity: adversary fails, no power" in page


def test_a_section_with_only_some_parts_renders(doc, tmp_path):
    slim = copy.deepcopy(doc)
    sec = slim["validity"]
    for key in ("controls", "learnability", "leave_one_family_out"):
        del sec[key]
    sec["power"] = {"has_power": None, "verdict": "no positive control was run: the adversary's pass is unchecked"}
    del sec["seeds"]["release"]
    out = tmp_path / "out"
    build_report([_write(tmp_path / "slim.json", slim)], out)
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "Power</strong>: unchecked: no positive control was run" in page
    assert "a pass is evidence only when the positive controls fail it" in page
    assert "Positive controls" not in page and "Leave one family out" not in page
    assert "SD 1.20 points across 5 fresh builds of 400 items, mean 31.4 %, range 30.0–32.8 %" in page
    assert (out / "validity.png").is_file()


def test_two_models_across_the_same_builds_are_paired(doc, tmp_path):
    from synthprobe.validity.seeds import paired, summarise

    other = copy.deepcopy(doc)
    sec = other["validity"]
    sec["model"].update(name="SmolLM2-360M-Instruct", params=361821120)
    per_seed = copy.deepcopy(sec["seeds"]["per_seed"])
    for i, p in enumerate(per_seed):
        p["correct"] += 14 + i % 3
        p["accuracy"] = round(p["correct"] / p["n"], 6)
    sec["seeds"] = {"protocol": "loglik acc_norm", **summarise(per_seed, {"accuracy": 0.3325})}
    out = tmp_path / "out"
    build_report([FIXTURE, _write(tmp_path / "other.json", other)], out)
    page = (out / "index.html").read_text(encoding="utf-8")
    want = paired(doc["validity"]["seeds"], sec["seeds"])  # the validity layer's own test
    assert want["seeds"] == 5
    row = (
        f'<td class="l">SmolLM2-360M-Instruct − SmolLM2-135M-Instruct</td><td>5</td>'
        f"<td>{100 * want['mean_difference']:+.1f}</td><td>{want['t']:.2f}</td>"
    )
    assert row in page
    from synthprobe.results import fmt_p

    assert f"<td>{fmt_p(want['p'])}</td>" in page
    assert "Per build" in page and page.count("Seed variance</strong>") == 2
    md = (out / "leaderboard.md").read_text(encoding="utf-8")
    assert "| SmolLM2-360M-Instruct − SmolLM2-135M-Instruct | 5 |" in md
    # the Runs table: one column per file
    assert f'<th class="l">{tmp_path / "other.json"}</th>' in page


@pytest.mark.parametrize(
    "path, value, field",
    [
        (("version",), 2, "validity.version"),
        (("chance",), 25, "validity.chance"),
        (("adversary", "curve", 2, "within_chance"), None, "validity.adversary.curve[2].within_chance"),
        (("adversary", "curve", 1, "correct"), 401, "validity.adversary.curve[1].correct"),
        (("adversary", "curve", 3, "by_depth", "4", "ci95"), [0.3], "validity.adversary.curve[3].by_depth.4.ci95"),
        (("controls", 1, "audit", "passes"), "yes", "validity.controls[1].audit.passes"),
        (("controls", 0, "adversary", "verdict"), None, "validity.controls[0].adversary.verdict"),
        (("power", "has_power"), "maybe", "validity.power.has_power"),
        (("learnability", "curve", 2, "paired", "p"), 1.5, "validity.learnability.curve[2].paired.p"),
        (
            ("leave_one_family_out", "folds", 0, "trained", "n"),
            "100",
            "validity.leave_one_family_out.folds[0].trained.n",
        ),
        (("seeds", "per_seed", 1, "accuracy"), 1.5, "validity.seeds.per_seed[1].accuracy"),
        (("seeds", "by_depth", "3", "sd"), -0.1, "validity.seeds.by_depth.3.sd"),
        (("seeds", "release", "verdict"), None, "validity.seeds.release.verdict"),
    ],
)
def test_a_malformed_section_is_located_and_nothing_is_written(doc, tmp_path, path, value, field):
    bad = copy.deepcopy(doc)
    obj = bad["validity"]
    for key in path[:-1]:
        obj = obj[key]
    if value is None:
        del obj[path[-1]]
    else:
        obj[path[-1]] = value
    out = tmp_path / "out"
    with pytest.raises(InputError) as err:
        build_report([_write(tmp_path / "bad.json", bad)], out)
    assert err.value.field == field
    assert not out.exists()


def test_the_command_line_exits_2_on_a_malformed_section(doc, tmp_path, capsys):
    bad = copy.deepcopy(doc)
    del bad["validity"]["adversary"]["curve"][0]["n"]
    out = tmp_path / "out"
    assert main(["report", str(_write(tmp_path / "bad.json", bad)), "--out", str(out)]) == 2
    assert "validity.adversary.curve[0].n" in capsys.readouterr().err
    assert not out.exists()
