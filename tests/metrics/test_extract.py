"""Answer extraction (synthprobe.metrics.extract): hand-written hard cases and generated texts."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synthprobe.metrics.extract import RULES, extract_letter, extract_number

VALUES = [312, 327, 183, 297]  # item 0 of the release: $312 / $327 / $183 / $297, B is right

# text, expected letter (None = unparsed), expected rule
LETTER_CASES = [
    ("B", "B", "lax"),
    ("(C)", "C", "lax"),
    ("$B$", "B", "lax"),
    ("**D**", "D", "lax"),
    ("ANSWER: $B$", "B", "strict"),                       # inspect_ai #5145: read as no answer there
    ("**Answer:** C", "C", "strict"),                      # markdown around the answer line
    ("answer: (a)", None, "unparsed"),                     # a lower-case "a" is not an option letter
    ("Answer: B. Because the fee is added, A is wrong.", "B", "lax"),  # the answer, then more text
    ("ANSWER: A\nOn second thought the fee is added.\nANSWER: D", "D", "strict"),  # the last line counts
    ("The answer is (C), since 65% of $480 is $312.", "C", "lax"),
    ("A or B", None, "unparsed"),                          # two different letters
    ("It is either B or D.", None, "unparsed"),
    ("I'm sorry, I cannot help with that.", None, "unparsed"),  # a refusal
    ("", None, "unparsed"),
    ("The answer is $327.", "B", "value"),                 # the option's value instead of its letter
    ("$183 or $297", None, "unparsed"),                    # two options' values
    ("A farmer would pick B", "B", "last"),                # "A farmer": the article, not option A
    ("A. $312", "A", "lax"),                               # the option label and the option
    ("The correct option is D.", "D", "last"),
    # the embedded model's own texts under --cot: the options copied out, then the choice
    ("A. $312.\nB. $327.\nC. $183.\nD. $297.\n\nThe answer is D.", "D", "lax"),
    ("The tank finished with 251 litres.\n\nThe answer is: A", "A", "lax"),
]


@pytest.mark.parametrize("text,letter,rule", LETTER_CASES)
def test_letter_hard_cases(text, letter, rule):
    got = extract_letter(text, option_values=VALUES)
    assert (got.answer, got.rule) == (letter, rule), got
    assert got.raw == text
    assert (got.reason is None) == (rule != "unparsed")


# text, keywords, expected value, expected rule
NUMBER_CASES = [
    ("$312", {"unit": "$"}, 312, "lax"),
    ("312 dollars", {"unit": "$"}, 312, "lax"),
    ("312.00", {"unit": "$"}, 312, "lax"),
    ("$1,312.", {"unit": "$"}, 1312, "lax"),               # thousands separators
    ("1 312 mL", {"unit": "mL"}, 1312, "lax"),
    ("ANSWER: 12,480 litres", {"unit": "litres"}, 12480, "strict"),
    ("65% of $480 = $312, then $312 + $15 = $327.\nANSWER: $327", {"unit": "$"}, 327, "strict"),
    ("First $312. Wait, the fee is added: the total is $327 and that is final", {"unit": "$"}, 327, "lax"),
    ("The tank held 446 litres after 2 hours", {"unit": "litres"}, 446, "last"),  # the number with the unit
    ("5:17 p.m.", {"clock": True}, 17 * 60 + 17, "lax"),
    ("17:17", {"clock": True}, 17 * 60 + 17, "lax"),
    ("5:17pm", {"clock": True}, 17 * 60 + 17, "lax"),
    ("12:05 a.m.", {"clock": True}, 5, "lax"),
    ("She finished at 5:17.", {"clock": True, "clock_pm": True}, 17 * 60 + 17, "last"),
    ("ANSWER: 4:12 p.m.", {"clock": True}, 16 * 60 + 12, "strict"),
    ("I don't know.", {"unit": "$"}, None, "unparsed"),
    ("No time was given", {"clock": True}, None, "unparsed"),
]


@pytest.mark.parametrize("text,kw,value,rule", NUMBER_CASES)
def test_number_hard_cases(text, kw, value, rule):
    got = extract_number(text, **kw)
    assert (got.answer, got.rule) == (value, rule), got


_filler = st.text(alphabet="abcdefghijklmnopqrstuvwxyz ,.;!?\n", max_size=80)
_wrap = st.sampled_from(["{}", "${}$", "**{}**", "({})", "{}.", "[{}]", "`{}`"])


@settings(max_examples=200, deadline=None)
@given(before=_filler, letter=st.sampled_from("ABCD"), wrap=_wrap, case=st.sampled_from(["ANSWER", "Answer", "answer"]))
def test_answer_line_is_read_whatever_precedes_it(before, letter, wrap, case):
    text = f"{before}\n{case}: {wrap.format(letter)}"
    got = extract_letter(text)
    assert (got.answer, got.rule) == (letter, "strict")


@settings(max_examples=200, deadline=None)
@given(first=st.sampled_from("ABCD"), last=st.sampled_from("ABCD"), middle=_filler)
def test_the_last_answer_line_wins(first, last, middle):
    got = extract_letter(f"ANSWER: {first}\n{middle}\nANSWER: {last}")
    assert got.answer == last and got.rule == "strict"


@settings(max_examples=300, deadline=None)
@given(n=st.integers(0, 10**7), style=st.sampled_from(["plain", "comma", "dollar", "cents", "word", "space"]),
       line=st.booleans(), before=_filler)
def test_numbers_in_any_format_read_back(n, style, line, before):
    text = {"plain": f"{n}", "comma": f"{n:,}", "dollar": f"${n:,}", "cents": f"{n}.00", "word": f"{n} dollars",
            "space": f"{n:,}".replace(",", " ")}[style]
    got = extract_number(f"{before}\nANSWER: {text}" if line else text, unit="$")
    assert got.answer == n
    assert got.rule == ("strict" if line else "lax")


@settings(max_examples=300, deadline=None)
@given(h=st.integers(0, 23), m=st.integers(0, 59), style=st.sampled_from(["24h", "12h", "12h-compact"]))
def test_clock_times_read_as_minutes_after_midnight(h, m, style):
    h12, half = (h % 12 or 12), ("a" if h < 12 else "p")
    text = {"24h": f"{h:02d}:{m:02d}", "12h": f"{h12}:{m:02d} {half}.m.", "12h-compact": f"{h12}:{m:02d}{half}m"}[style]
    assert extract_number(f"It ended at {text}.", clock=True).answer == h * 60 + m


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=200))
def test_any_text_is_either_read_or_says_why_not(text):
    for got in (extract_letter(text, option_values=VALUES), extract_number(text, unit="$"),
                extract_number(text, clock=True)):
        assert got.rule in RULES and got.raw == text
        if got.rule == "unparsed":
            assert got.answer is None and got.reason
        else:
            assert got.answer is not None and got.reason is None
