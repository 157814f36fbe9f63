"""The ArithMark 3.0 loader contract: every rule, with a located error for every violation."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synthprobe.errors import InputError
from synthprobe.formats.arithmark3 import load_arithmark3

GOOD = {
    "ind": 3,
    "activity_label": "x::y",
    "ctx": "The number was",
    "endings": [" 26 crates.", " 29 crates.", " 27 crates.", " 31 crates."],
    "label": "0",
}


def write(tmp_path, lines, name="items.jsonl", raw=False):
    p = tmp_path / name
    if raw:
        p.write_bytes(lines)
    else:
        p.write_text("".join((json.dumps(x) if not isinstance(x, str) else x) + "\n" for x in lines), encoding="utf-8")
    return p


def test_good_file_loads_with_defaults(tmp_path):
    rec2 = {k: v for k, v in GOOD.items() if k not in ("ind", "activity_label")}
    rec2["label"] = 2
    items = load_arithmark3(write(tmp_path, [GOOD, "", rec2]))
    assert [i.id for i in items] == ["3", "line_3"]
    assert items[0].label == 0 and items[1].label == 2
    assert items[1].category == "unknown"
    assert items[0].endings[1] == " 29 crates."


def test_bom_and_blank_lines_tolerated(tmp_path):
    data = b"\xef\xbb\xbf" + json.dumps(GOOD).encode() + b"\n\n   \n"
    assert len(load_arithmark3(write(tmp_path, data, raw=True))) == 1


@pytest.mark.parametrize("label", [" 1", "3", 1])
def test_label_forms_accepted(tmp_path, label):
    assert load_arithmark3(write(tmp_path, [dict(GOOD, label=label)]))[0].label == int(label)


@pytest.mark.parametrize(
    "change, field, words",
    [
        ({"label": "1.0"}, "label", "integer string"),
        ({"label": 1.0}, "label", "integer"),
        ({"label": True}, "label", "integer"),
        ({"label": 4}, "label", "out of range"),
        ({"label": -1}, "label", "out of range"),
        ({"label": None}, "label", "integer"),
        ({"ctx": ""}, "ctx", "non-empty"),
        ({"ctx": 5}, "ctx", "non-empty"),
        ({"endings": [" 1"]}, "endings", "at least 2"),
        ({"endings": " 1 2"}, "endings", "at least 2"),
        ({"endings": [" 1", "2"]}, "endings", "leading space"),
        ({"endings": [" 1", ""]}, "endings", "non-empty"),
        ({"activity_label": 7}, "activity_label", "string"),
        ({"ind": [1]}, "ind", "string or number"),
    ],
)
def test_each_violation_names_line_and_field(tmp_path, change, field, words):
    path = write(tmp_path, [GOOD | {"ind": 0}, GOOD | {"ind": 1} | change])
    with pytest.raises(InputError) as exc:
        load_arithmark3(path)
    assert exc.value.line == 2 and exc.value.field == field
    assert words in str(exc.value) and str(path) in str(exc.value)


@pytest.mark.parametrize("missing", ["ctx", "endings", "label"])
def test_missing_required_field(tmp_path, missing):
    rec = {k: v for k, v in GOOD.items() if k != missing}
    with pytest.raises(InputError, match="missing") as exc:
        load_arithmark3(write(tmp_path, [rec]))
    assert exc.value.field == missing and exc.value.line == 1


def test_duplicate_ids_rejected(tmp_path):
    with pytest.raises(InputError, match="duplicate id '3' \\(first on line 1\\)") as exc:
        load_arithmark3(write(tmp_path, [GOOD, GOOD]))
    assert exc.value.line == 2
    assert len(load_arithmark3(write(tmp_path, [GOOD, GOOD]), strict_ids=False)) == 2


@pytest.mark.parametrize(
    "data, words",
    [
        (b"", "empty"),
        (b"\n\n", "empty"),
        (b"{not json}\n", "invalid JSON"),
        (b"[1, 2]\n", "expected a JSON object"),
        (b'{"ctx": "caf\xe9"}\n', "not valid UTF-8"),
    ],
)
def test_file_level_faults(tmp_path, data, words):
    with pytest.raises(InputError, match=words):
        load_arithmark3(write(tmp_path, data, raw=True))


def test_oversized_line(tmp_path, monkeypatch):
    import synthprobe.io.read as sio

    monkeypatch.setattr(sio, "MAX_LINE_BYTES", 100)
    rec = dict(GOOD, ctx="x " * 100)
    with pytest.raises(InputError, match="at most 100"):
        load_arithmark3(write(tmp_path, [rec]))


def test_missing_and_directory_paths(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        load_arithmark3(tmp_path / "nope.jsonl")
    with pytest.raises(InputError, match="not a regular file"):
        load_arithmark3(tmp_path)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_fuzz_bytes_either_load_or_raise_input_error(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("fuzz") / "f.jsonl"
    path.write_bytes(data)
    try:
        items = load_arithmark3(path)
    except InputError as exc:
        assert str(path) in str(exc)
    else:
        for it in items:
            assert it.ctx and len(it.endings) >= 2 and 0 <= it.label < len(it.endings)


# finite floats only: json.dumps writes inf as Infinity, which is not JSON and is refused by the reader
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=5), c, max_size=4),
    max_leaves=10,
)


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(st.sampled_from(["ctx", "endings", "label", "ind", "activity_label", "x"]), json_values, max_size=6)
)
def test_fuzz_records(tmp_path_factory, rec):
    path = tmp_path_factory.mktemp("fuzzrec") / "f.jsonl"
    path.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    try:
        load_arithmark3(path)
    except InputError as exc:
        assert exc.line == 1 and exc.field in {"ctx", "endings", "label", "ind", "activity_label"}
