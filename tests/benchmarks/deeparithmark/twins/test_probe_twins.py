"""``synthprobe probe twins``: the statistics on hand-worked cases, their calibration (null
paired outcomes drawn many times, and a planted effect), the twin files checked against their
manifest, and the command end to end on the toy engine (every protocol, the A/A check) and on a
tiny real model. The embedded model's run is in test_probe_twins_real_model.py (slow)."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import pytest

from synthprobe.backends import ENGINES, register_engine
from synthprobe.benchmarks.deeparithmark.base import IRRELEVANT
from synthprobe.benchmarks.deeparithmark.build import dumps_item, render_bytes
from synthprobe.benchmarks.deeparithmark.twins import metrics as tm
from synthprobe.benchmarks.deeparithmark.twins.build import iter_twins, supported
from synthprobe.benchmarks.deeparithmark.twins.score import TwinsConfig, load_twins
from synthprobe.cli import main
from synthprobe.errors import InputError
from synthprobe.report.reader import read_document
from synthprobe.results import parse

KINDS = ("irrelevant_clause", "one_step_more", "reordered", "unit_change")


def write_twin_build(folder: Path, *, seed: int = 7, n: int = 10, kinds=KINDS, stem: str = "originals") -> Path:
    """The originals of ``seed``/``n`` and their twins of ``kinds`` under ``folder``, with the
    manifest ``synthprobe build twins`` writes (its format, written here by hand); its path."""
    folder.mkdir(parents=True, exist_ok=True)
    originals = folder / f"{stem}.jsonl"
    originals.write_bytes(render_bytes(seed, n))
    lines: dict[str, list[str]] = {k: [] for k in kinds}
    for _item, twins in iter_twins(kinds, seed, n):
        for kind, tw in twins.items():
            lines[kind].append(dumps_item(tw) + "\n")
    entries = {}
    for kind in kinds:
        path = folder / f"{stem}.twins-{kind}.jsonl"
        path.write_text("".join(lines[kind]), encoding="utf-8")
        entries[kind] = {"file": path.name, "sha256": _sha(path), "n": len(lines[kind]), "unsupported": {}}
    manifest = folder / f"{stem}.twins.json"
    doc = {
        "format": "synthprobe/deeparithmark-twins",
        "version": 1,
        "originals": {"path": originals.name, "sha256": _sha(originals), "seed": seed, "n": n},
        "kinds": entries,
        "controls": {},
    }
    manifest.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    return manifest


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


_SLOT = object()


def _pair(o, t, *, kind="reordered", depth=2, family="f", o_pick=_SLOT, t_pick=_SLOT, source=None, protocol="loglik"):
    """A pair; picks default to slot 0 when right, slot 1 when wrong (None: no option named)."""
    return {
        "protocol": protocol,
        "kind": kind,
        "family": family,
        "depth": depth,
        "original": {"pick": (0 if o else 1) if o_pick is _SLOT else o_pick, "correct": o},
        "twin": {"pick": (0 if t else 1) if t_pick is _SLOT else t_pick, "correct": t, "pick_source": source},
    }


def _table(a, b, c, d, **kw):
    """a both right, b right → wrong, c wrong → right, d both wrong."""
    return (
        [_pair(True, True, **kw)] * a
        + [_pair(True, False, **kw)] * b
        + [_pair(False, True, **kw)] * c
        + [_pair(False, False, **kw)] * d
    )


# -- the statistics, by hand --------------------------------------------------------------------


def test_cell_counts_accuracies_and_exact_mcnemar_by_hand():
    c = tm.cell(_table(3, 1, 6, 2))
    # 12 pairs: original right 3 + 1 = 4, twin right 3 + 6 = 9
    assert c["n"] == 12 and c["original"] == pytest.approx(4 / 12) and c["twin"] == pytest.approx(9 / 12)
    assert c["difference"] == pytest.approx(5 / 12)
    assert (c["both_right"], c["right_to_wrong"], c["wrong_to_right"], c["both_wrong"]) == (3, 1, 6, 2)
    # 7 discordant pairs, 1 of one kind: P(X <= 1 | 7, 1/2) = (1 + 7) / 128, two-sided twice that
    assert c["p_mcnemar"] == pytest.approx(16 / 128)
    # none discordant: p = 1; all five discordant one way: 2 / 2**5
    assert tm.cell(_table(4, 0, 0, 3))["p_mcnemar"] == 1.0
    assert tm.cell(_table(0, 0, 5, 0))["p_mcnemar"] == pytest.approx(2 / 32)
    assert tm.cell([])["n"] == 0 and tm.cell([])["ci"] is None and tm.cell([])["p_mcnemar"] is None


def test_paired_interval_by_hand_and_newcombe_published_example():
    # (1, 1, 1, 1): phi = 0, both accuracies 1/2 from 2 of 4; Wilson half-width
    # z sqrt(z² + 4) / (2 (4 + z²)) = z / (2 sqrt(4 + z²)) with z² = 3.84146:
    # 1.95996 / (2 · sqrt(7.84146) = 5.60052) = 0.34996; the limits are ±sqrt(2) · 0.34996 = ±0.49492
    lo, hi = tm.paired_interval(1, 1, 1, 1)
    assert lo == pytest.approx(-0.49492, abs=2e-5) and hi == pytest.approx(0.49492, abs=2e-5)
    # Newcombe (1998), Statistics in Medicine 17:2635, example with cells 36, 12, 2, 0 (n 50):
    # difference −0.2, method 10 interval −0.3404 to −0.0569
    lo, hi = tm.paired_interval(36, 12, 2, 0)
    assert lo == pytest.approx(-0.3404, abs=1e-4) and hi == pytest.approx(-0.0569, abs=1e-4)
    # all right: the difference 0 sits inside a narrow interval, inside [-1, 1]
    lo, hi = tm.paired_interval(30, 0, 0, 0)
    assert -0.2 < lo < 0 < hi < 0.2


def test_holm_by_hand():
    # sorted 0.01 (×3 = 0.03), 0.03 (×2 = 0.06), 0.04 (×1 = 0.04, raised to the running 0.06)
    got = tm.holm({"a": 0.01, "b": 0.04, "c": 0.03, "d": None})
    assert got == {"a": pytest.approx(0.03), "b": pytest.approx(0.06), "c": pytest.approx(0.06), "d": None}
    assert tm.holm({"a": 0.6, "b": 0.5}) == {"a": pytest.approx(1.0), "b": pytest.approx(1.0)}


def test_holm_agrees_with_statsmodels():
    from statsmodels.stats.multitest import multipletests

    ps = [0.001, 0.2, 0.04, 0.03, 0.5, 0.012]
    got = tm.holm({str(i): p for i, p in enumerate(ps)})
    want = multipletests(ps, method="holm")[1]
    assert [got[str(i)] for i in range(len(ps))] == pytest.approx(list(want))


def test_uptake_counts_only_decoy_picks_and_tests_against_a_third():
    pairs = (
        [_pair(True, False, kind="irrelevant_clause", t_pick=2, source=IRRELEVANT)] * 5
        + [_pair(True, False, kind="irrelevant_clause", t_pick=3, source="forgot the fee")]
        + [_pair(True, False, kind="irrelevant_clause", t_pick=None)] * 2  # matched no option
        + [_pair(True, True, kind="irrelevant_clause")] * 4
    )
    c = tm.kind_cell(pairs, "irrelevant_clause")
    up = c["uptake"]
    assert (up["wrong_picks"], up["irrelevant"]) == (6, 5) and up["share"] == pytest.approx(5 / 6)
    # P(X >= 5 | 6, 1/3) = 6 (1/3)^5 (2/3) + (1/3)^6 = 13 / 729
    assert up["p"] == pytest.approx(13 / 729) and up["expected"] == pytest.approx(1 / 3)
    # the two answers that named no option are wrong, counted apart
    assert c["no_option"] == {"original": 0, "twin": 2} and c["twin"] == pytest.approx(4 / 12)
    assert "uptake" not in tm.kind_cell(pairs, "reordered")


def test_summary_groups_by_protocol_kind_depth_family_with_holm_on_top_cells_only():
    pairs = _table(5, 0, 6, 1, kind="reordered", depth=2, family="a") + _table(
        2, 1, 1, 2, kind="unit_change", depth=3, family="b"
    )
    pairs += _table(1, 0, 2, 0, kind="reordered", depth=4, family="b", protocol="free")
    s = tm.summarise(pairs, ["loglik", "free"], ["reordered", "unit_change"])
    r = s["loglik"]["reordered"]
    assert r["n"] == 12 and r["p_mcnemar"] == pytest.approx(2 / 64)
    # Holm over the two loglik kinds: 2/64 × 2, and unit_change's p = 1
    assert r["p_holm"] == pytest.approx(4 / 64) and s["loglik"]["unit_change"]["p_holm"] == 1.0
    assert set(r["by_depth"]) == {"2"} and set(r["by_family"]) == {"a"}
    assert "p_holm" not in r["by_depth"]["2"] and r["by_depth"]["2"]["p_mcnemar"] == r["p_mcnemar"]
    assert s["free"]["reordered"]["n"] == 3 and s["free"]["unit_change"]["n"] == 0
    assert s["free"]["unit_change"]["p_holm"] is None and set(s["free"]["reordered"]["by_depth"]) == {"4"}


# -- calibration: null and planted effects drawn many times -------------------------------------


def _rejection_rate(p_flip_down: float, p_flip_up: float, *, reps: int, n: int, seed: int) -> float:
    """Share of ``reps`` simulated runs of ``n`` pairs whose exact McNemar p < 0.05: each pair
    both right 0.5, right → wrong ``p_flip_down``, wrong → right ``p_flip_up``, else both wrong."""
    rng = random.Random(seed)
    rejected = 0
    for _ in range(reps):
        pairs = []
        for _ in range(n):
            u = rng.random()
            if u < 0.5:
                pairs.append(_pair(True, True))
            elif u < 0.5 + p_flip_down:
                pairs.append(_pair(True, False))
            elif u < 0.5 + p_flip_down + p_flip_up:
                pairs.append(_pair(False, True))
            else:
                pairs.append(_pair(False, False))
        rejected += tm.cell(pairs)["p_mcnemar"] < 0.05
    return rejected / reps


def test_mcnemar_is_calibrated_under_the_null_and_detects_a_planted_effect():
    reps, alpha = 1500, 0.05
    limit = alpha + 3 * (alpha * (1 - alpha) / reps) ** 0.5
    null = _rejection_rate(0.1, 0.1, reps=reps, n=120, seed=20260101)
    assert null <= limit, f"null rejection rate {null:.3f} above {limit:.3f}"
    # positive control: twins lose 15 points of pairs, gain 3: the same check must fail
    planted = _rejection_rate(0.15, 0.03, reps=300, n=120, seed=20260102)
    assert planted > limit and planted > 0.8, planted


# -- the manifest and its files -----------------------------------------------------------------


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    return write_twin_build(tmp_path_factory.mktemp("twins") / "out")


def _twins_per_kind(manifest: Path) -> dict[str, int]:
    """Each kind's number of twins, counted in its file (not read from the manifest)."""
    m = json.loads(manifest.read_text(encoding="utf-8"))
    return {
        k: len((manifest.parent / e["file"]).read_text(encoding="utf-8").splitlines()) for k, e in m["kinds"].items()
    }


def test_load_pairs_each_twin_with_its_original_and_limits_originals(build):
    ts = load_twins(TwinsConfig(manifest=build))
    # every family offers irrelevant_clause and reordered: each of the 10 originals has a twin
    assert len(ts.originals.items) == 10 and ts.seed == 7 and ts.n_in_file == 10
    per_kind = _twins_per_kind(build)
    assert per_kind["reordered"] == 10 and per_kind["unit_change"] < 10  # pure counts have none
    for kind, links in ts.pairs.items():
        assert len(links) == per_kind[kind]
        for i, j in links:
            tw, orig = ts.twins[kind].items[j], ts.originals.items[i]
            assert tw.metadata["twin_of"] == orig.raw["source_id"] and tw.metadata["twin_kind"] == kind
    two = load_twins(TwinsConfig(manifest=build.parent, limit=2, kinds=("reordered",)))
    assert [it.id for it in two.originals.items] == [it.id for it in ts.originals.items[:2]]
    assert list(two.twins) == ["reordered"] and len(two.twins["reordered"].items) == 2


def _copy(build: Path, dest: Path) -> Path:
    import shutil

    shutil.copytree(build.parent, dest)
    return dest / build.name


@pytest.mark.parametrize(
    "spoil, message",
    [
        (lambda m: (m.parent / "originals.jsonl").unlink(), "is missing"),
        (lambda m: _append(m.parent / "originals.jsonl"), "not the file these twins were built from"),
        (lambda m: _append(m.parent / "originals.twins-reordered.jsonl"), "not the file these twins were built"),
        (lambda m: (m.parent / "originals.twins-unit_change.jsonl").unlink(), "unit_change twin file"),
        (lambda m: m.write_text('{"format": "other", "version": 1}'), "synthprobe/deeparithmark-twins"),
    ],
)
def test_twins_without_their_originals_are_one_error_exit_2_nothing_written(build, tmp_path, capsys, spoil, message):
    manifest = _copy(build, tmp_path / "b")
    spoil(manifest)
    out = tmp_path / "out.json"
    assert main(["probe", "twins", str(manifest), "--model", "toy:none", "--output", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.strip().count("\n") == 0, err
    assert not out.exists()


def _append(path: Path) -> None:
    with path.open("a", encoding="utf-8") as fh:
        fh.write("\n")


def test_other_bad_input_is_refused_before_a_model_loads(build, tmp_path, capsys):
    out = tmp_path / "out.json"
    for args, message in [
        (["--kinds", "shuffled"], "shuffled"),
        (["--protocol", "loglik,guess"], "--protocol"),
        (["--aa", "7"], "needs another seed"),
        (["--protocol", "loglik", "--cot"], "--cot"),
    ]:
        assert main(["probe", "twins", str(build), "--model", "toy:none", "--output", str(out), *args]) == 2, args
        assert message in capsys.readouterr().err
        assert not out.exists()
    one = write_twin_build(tmp_path / "one", kinds=("reordered",))
    assert main(["probe", "twins", str(one), "--kinds", "unit_change", "--output", str(out)]) == 2
    assert "has no unit_change twins" in capsys.readouterr().err and not out.exists()


# -- end to end ---------------------------------------------------------------------------------


@pytest.fixture
def toy():
    register_engine("toy", "toy_engine")
    yield
    ENGINES.pop("toy", None)


def _strip(doc):
    doc = json.loads(json.dumps(doc))
    doc.pop("command", None)
    for e in doc["models"]:
        e.pop("load_s", None)
        for r in e["results"]["twins"]["runs"]:
            r.pop("seconds"), r.pop("cached_items")
    return doc


def test_toy_engine_every_protocol_with_aa_check_resumes_and_refuses_overwrite(toy, build, tmp_path, capsys):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    base = ["probe", "twins", str(build), "--model", "toy:bigram", "--no-progress", "--save-items"]
    base += ["--protocol", "loglik,letters,free", "--aa", "3", "--batch-size", "4"]
    assert main([*base, "--output", str(a)]) == 0
    out = capsys.readouterr().out
    assert "| loglik | irrelevant_clause | 10 |" in out and "A/A (seed 3)" in out and "McNemar p" in out
    doc = json.loads(a.read_text())
    block = doc["models"][0]["results"]["twins"]
    assert (
        block["version"] == 1
        and block["originals"]["n"] == 10
        and block["originals"]["sha256"] == _sha(build.parent / "originals.jsonl")
    )
    assert set(block["summary"]) == {"loglik", "letters", "free"} and set(block["summary"]["free"]) == set(KINDS)
    assert {r["cached_items"] for r in block["runs"]} == {0}
    # every generated set says how its answers were read, on the console too
    for r in block["runs"]:
        if r["protocol"] == "loglik":
            assert "outcomes" not in r
        else:
            assert sum(r["outcomes"].values()) == r["items"]
    assert "answers read (letters): originals (n 10): answered" in out and "answers read (free): " in out
    items = block["items"]
    assert len(items) == 3 * sum(_twins_per_kind(build).values())
    for it in items:
        for side in ("original", "twin"):
            s = it[side]
            if it["protocol"] == "loglik":
                assert s["pick"] in range(4) and s["text"] is None
            else:
                assert isinstance(s["text"], str)
            assert s["correct"] is False or s["pick"] is not None
    # the cells are the items' own counts
    for protocol, cells in block["summary"].items():
        for kind, c in cells.items():
            mine = [it for it in items if it["protocol"] == protocol and it["kind"] == kind]
            assert c["n"] == len(mine) and c["both_right"] == sum(
                it["original"]["correct"] and it["twin"]["correct"] for it in mine
            )
            assert c["no_option"]["twin"] == sum(it["twin"]["pick"] is None for it in mine)
    ic = [it for it in items if it["kind"] == "irrelevant_clause" and it["protocol"] == "loglik"]
    up = block["summary"]["loglik"]["irrelevant_clause"]["uptake"]
    assert up["wrong_picks"] == sum(not it["twin"]["correct"] for it in ic)
    assert up["irrelevant"] == sum(it["twin"]["pick_source"] == IRRELEVANT for it in ic)
    aa = block["aa"]
    assert aa["seed"] == 3 and aa["n"] >= 1 and set(aa["summary"]["loglik"]) == {"aa"}
    # the reader takes it; a second run comes from the cache with the same numbers
    assert list(read_document(a).models[0].results) == ["twins"]
    assert main([*base, "--output", str(b)]) == 0
    doc_b = json.loads(b.read_text())
    assert all(r["cached_items"] == r["items"] for r in doc_b["models"][0]["results"]["twins"]["runs"])
    assert _strip(doc) == _strip(doc_b)
    assert main([*base, "--output", str(a)]) == 2  # refused: exists
    assert "--overwrite" in capsys.readouterr().err
    assert main([*base, "--output", str(a), "--overwrite"]) == 0


def test_results_document_checks_the_twins_block_envelope(tmp_path):
    doc = {
        "schema": "synthprobe/results",
        "schema_version": 2,
        "models": [{"model": {"name": "m"}, "results": {"twins": {"version": 9, "summary": {}}}}],
    }
    with pytest.raises(InputError, match="version"):
        parse(doc, tmp_path / "x.json")
    doc["models"][0]["results"]["twins"]["version"] = 1
    with pytest.raises(InputError, match="originals"):
        parse(doc, tmp_path / "x.json")
    doc["models"][0]["results"]["twins"]["originals"] = {"sha256": "0" * 64, "n": 3}
    assert parse(doc, tmp_path / "x.json").models[0].results["twins"].data["version"] == 1


def test_tiny_real_model_scores_originals_and_twins(build, tmp_path):
    """A tiny random Llama (the probe tests' real model): loglik and free through the HF engine."""
    from scoring_support import save_tiny_llama

    model = save_tiny_llama(tmp_path / "tiny")
    out = tmp_path / "tiny.json"
    args = ["probe", "twins", str(build), "--model", str(model), "--device", "cpu", "--dtype", "float32"]
    args += ["--threads", "1", "--limit", "1", "--protocol", "loglik,free", "--max-new-tokens", "3"]
    assert main([*args, "--no-progress", "--save-items", "--output", str(out)]) == 0
    block = read_document(out).models[0].results["twins"].data
    first = json.loads((build.parent / "originals.jsonl").read_text(encoding="utf-8").splitlines()[0])
    kinds = [k for k in KINDS if supported(first["metadata"]["template"], k)]
    assert block["summary"]["loglik"]["reordered"]["n"] == 1 and len(block["items"]) == 2 * len(kinds)
    assert all(isinstance(it["twin"]["text"], str) for it in block["items"] if it["protocol"] == "free")
