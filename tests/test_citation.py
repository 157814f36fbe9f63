"""LICENSE, CITATION.cff and the release card's citation block agree with each other and with
the package (licence, version, title)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from synthprobe.version import __version__

ROOT = Path(__file__).resolve().parents[1]


def _cff() -> dict:
    return yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))


def test_license_is_the_full_apache_text():
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text and "APPENDIX: How to apply the Apache License" in text
    assert 'license = "Apache-2.0"' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")


def test_citation_cff_has_the_required_fields_of_cff_1_2():
    cff = _cff()
    assert cff["cff-version"] == "1.2.0"
    for key in ("message", "title", "authors"):
        assert cff[key], key
    assert all("name" in a or "family-names" in a for a in cff["authors"])
    assert cff["version"] == __version__ and cff["license"] == "Apache-2.0"
    for ref in cff.get("references", []):
        assert ref["type"] in {"data", "article", "software"} and ref["title"] and ref["authors"]


def test_release_card_cites_the_same_work():
    card = (ROOT / "data" / "README.md").read_text(encoding="utf-8")
    block = re.search(r"## Citation\n.*?```bibtex\n(.*?)```", card, re.S)
    assert block, "data/README.md has no citation block"
    bib = dict(re.findall(r"(\w+)\s*=\s*\{+(.*?)\}+,?\n", block.group(1)))
    cff = _cff()
    assert bib["title"] == cff["title"]
    assert bib["version"] == cff["version"] and bib["license"] == cff["license"]
    assert bib["author"] == cff["authors"][0]["name"]
    assert "ArithMark 3.0" in card.split("## Citation", 1)[1]
