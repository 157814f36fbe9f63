"""The error format (synthprobe.errors): file, line, field, what was expected."""

from __future__ import annotations

from synthprobe.errors import InputError


def test_error_message_names_file_line_field():
    err = InputError("expected an integer", path="a.jsonl", line=7, field="label")
    assert str(err) == "a.jsonl:7: field 'label': expected an integer"
    assert str(InputError("bad", path="x")) == "x: bad"
