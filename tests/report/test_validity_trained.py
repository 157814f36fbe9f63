"""The report's Validity section on a document with the trained choices-only audit (``trained``).

The input, ``fixtures/validity_trained_small.json``, is a real run, generated once with
``synthprobe validate --no-adversary --controls none --trained-budget small --no-progress --output
tests/report/fixtures/validity_trained_small.json`` on the release (legacy decoys; no model, so its
``model`` is null): every adversary leaks on the audit build and the file, every planted leak
fails and the label-permuted null passes. The tables' cells are checked against its figures.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from synthprobe.errors import InputError
from synthprobe.report.build import build_report
from synthprobe.validity.report import SCREEN_ROWS

FIXTURES = Path(__file__).parent / "fixtures"
TRAINED = FIXTURES / "validity_trained_small.json"
LORA = FIXTURES / "validity_small.json"


@pytest.fixture(scope="module")
def doc() -> dict:
    return json.loads(TRAINED.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> str:
    out = tmp_path_factory.mktemp("trained") / "report"
    build_report([TRAINED], out)
    return (out / "index.html").read_text(encoding="utf-8")


def _write(path: Path, doc: dict) -> Path:
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _row(*cells: str, left: int = 1) -> str:
    """A table row as the report's table macro writes it (the first ``left`` cells left-aligned)."""
    return (
        "<tr>"
        + "".join(f'<td class="l">{c}</td>' if i < left else f"<td>{c}</td>" for i, c in enumerate(cells))
        + "</tr>"
    )


def test_the_fixture_is_a_trained_audit_without_a_model(doc):
    sec = doc["validity"]
    assert doc["models"] == [] and sec["model"] is None and "adversary" not in sec
    assert sec["trained"]["budget"]["name"] == "small" and sec["trained"]["decoys"] == "legacy"


def test_the_adversaries_table_shows_the_audit_builds_interval_and_the_file(page, doc):
    t = doc["validity"]["trained"]
    assert "<h4>Trained choices-only audit</h4>" in page
    assert "<th>audit build % [90 % CI] (right/n)</th><th>TOST p</th><th>within 23–27 %</th>" in page
    # trees: 595 of 1,000 on the audit build, its 90 % Clopper-Pearson interval; 597 of 1,000 on the file
    assert t["test_sets"]["audit build"]["adversaries"]["trees"]["correct"] == 595
    assert (
        '<tr><td class="l">trees</td><td>59.5 % [56.9, 62.1] (595/1,000)</td><td>1</td>'
        '<td>n/a: 1,000 items, the test needs 4,097</td><td><span class="below">19</span></td>'
        '<td>59.7 % (597/1,000)</td><td>3.5e−119</td><td><span class="below">18</span></td></tr>'
    ) in page
    for name in ("knn", "deepsets", "gap_order"):
        a = t["test_sets"]["audit build"]["adversaries"][name]
        lo, hi = a["cp90"]
        assert f"<td>{100 * a['accuracy']:.1f} % [{100 * lo:.1f}, {100 * hi:.1f}] ({a['correct']:,}/1,000)</td>" in page


def test_the_controls_table_shows_each_adversary_and_the_outcome(page, doc):
    assert "<th>trees %</th><th>knn %</th><th>deepsets %</th><th>gap_order %</th><th>result</th>" in page
    assert (
        _row("legacy", "the legacy decoy selection", "fail", "2,000 / 1,000", "60.9", "42.4", "43.7", "42.1", left=2)[
            :-5
        ]
        + '<td><span class="above">fails, as it must</span></td></tr>'
    ) in page
    assert (
        '<td class="l">null</td><td class="l">the audit build, labels drawn at random</td><td>pass</td>'
        "<td>the audit&#39;s / 1,000</td><td>22.0</td><td>24.5</td><td>24.6</td><td>25.2</td>"
        '<td><span class="above">passes, as it must</span></td>'
    ) in page
    # every control as it must: no red outcome
    assert page.count("as it must</span>") == len(doc["validity"]["trained"]["controls"]) == 5
    assert "Stated power: a build with 10 % legacy items (expected about 28 %) is found: trees scores 58.5 %." in page


def test_the_screen_table_shows_the_worst_flagged_strata_and_how_many(page, doc):
    t = doc["validity"]["trained"]
    strata = [r for s in t["test_sets"].values() for r in s["screen"] if r["kind"] != "all"]
    flagged = sum(r["flagged"] for r in strata)
    assert (flagged, len(strata)) == (99, 152)
    assert f"{flagged} of {len(strata)} strata flagged; the {SCREEN_ROWS} worst." in page
    assert _row("audit build", "trees", "depth 2", "250", "74.0", "2.7e−57", left=3) in page
    assert _row("file", "trees", "template time_clock_end", "128", "79.7", "1.8e−36", left=3) in page
    table = page[page.index("<th>p (Holm)</th>") :]
    table = table[: table.index("</table>")]
    assert table.count("<tr>") == SCREEN_ROWS


def test_the_verdict_and_power_are_said(page):
    assert '<strong class="below">Trained choices-only audit</strong>: fails: the options give the key away' in page
    assert (
        '<p class="warn"><strong>Verdict: Fails.</strong> The options give the key away on audit build, file.</p>'
        in page
    )
    assert "Power</strong>: has power: the trained audit finds every planted leak (legacy 60.9 % (trees)" in page
    assert "the trained choices-only audit alone (no model)" in page
    assert "validity: trained audit fails, has power" in page


def test_leaderboard_md_has_the_trained_tables(tmp_path):
    out = tmp_path / "report"
    build_report([TRAINED], out)
    md = (out / "leaderboard.md").read_text(encoding="utf-8")
    assert "**Trained choices-only audit**" in md
    assert (
        "| trees | 59.5 % [56.9, 62.1] (595/1,000) | 1 | n/a: 1,000 items, the test needs 4,097 | 19 | "
        "59.7 % (597/1,000) | 3.5e−119 | 18 |"
    ) in md
    assert (
        "| legacy | the legacy decoy selection | fail | 2,000 / 1,000 | 60.9 | 42.4 | 43.7 | 42.1 | fails, as it must |"
        in md
    )
    assert "| audit build | trees | depth 2 | 250 | 74.0 | 2.7e−57 |" in md
    assert "Verdict: fails: the options give the key away on audit build, file." in md and "<span" not in md


def test_a_passing_audit_with_a_lora_adversary_beside_it(doc, tmp_path):
    """The trained part beside the LoRA parts of the hand-written fixture: both shown, the power
    joined (the trained audit's controls do not show the LoRA adversary's power)."""
    from synthprobe.validity.trained import combined_power, power

    both = json.loads(LORA.read_text(encoding="utf-8"))
    trained = copy.deepcopy(doc["validity"]["trained"])
    for t in trained["test_sets"].values():
        for r in t["screen"]:
            r["flagged"] = False
    trained["verdict"] = {
        "status": "inconclusive",
        "passes": False,
        "power": True,
        "failing": [],
        "controls_missed": [],
        "text": "inconclusive: no test set was large enough to show the accuracy at chance",
    }
    sec = both["validity"]
    sec["trained"] = trained
    sec["power"] = combined_power(sec["power"], power(trained))
    out = tmp_path / "out"
    build_report([_write(tmp_path / "both.json", both)], out)
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "<strong>Trained choices-only audit</strong>: inconclusive: no test set was large enough" in page
    assert "Choices-only adversary</strong>: passes" in page
    assert "Power</strong>: has power: trained audit: has power: " in page and "LoRA adversary: has power" in page
    assert "0 of 152 strata flagged." in page and "<th>p (Holm)</th>" not in page
    assert '<td><span class="above">none</span></td>' in page
    assert "validity: trained audit inconclusive, adversary passes, has power" in page


@pytest.mark.parametrize(
    "path, value, field",
    [
        (
            ("trained", "test_sets", "file", "adversaries", "trees", "cp90"),
            None,
            "test_sets.file.adversaries.trees.cp90",
        ),
        (
            ("trained", "test_sets", "audit build", "screen", 3, "flagged"),
            "yes",
            "test_sets.audit build.screen[3].flagged",
        ),
        (("trained", "controls", 1, "as_expected"), None, "controls[1].as_expected"),
        (("trained", "verdict", "text"), None, "verdict.text"),
        (("trained", "bounds"), [0.23], "bounds"),
    ],
)
def test_a_malformed_trained_part_is_located_and_nothing_is_written(doc, tmp_path, path, value, field):
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
    assert err.value.field == f"validity.trained.{field}"
    assert not out.exists()


def test_a_model_is_still_required_beside_the_model_parts(tmp_path):
    both = json.loads(LORA.read_text(encoding="utf-8"))
    both["validity"]["model"] = None
    with pytest.raises(InputError) as err:
        build_report([_write(tmp_path / "nomodel.json", both)], tmp_path / "out")
    assert err.value.field == "validity.model"
