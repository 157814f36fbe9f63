"""Answer extraction (synthprobe.metrics.extract): hand-written hard cases and generated texts."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synthprobe.metrics.extract import OUTCOMES, RULES, extract_letter, extract_number, resolve

VALUES = [312, 327, 183, 297]  # item 0 of the 2026-10 release: $312 / $327 / $183 / $297, B is right

# text, expected letter (None = unparsed), expected rule
LETTER_CASES = [
    ("B", "B", "lax"),
    ("(C)", "C", "lax"),
    ("$B$", "B", "lax"),
    ("**D**", "D", "lax"),
    ("ANSWER: $B$", "B", "strict"),  # inspect_ai #5145: read as no answer there
    ("**Answer:** C", "C", "strict"),  # markdown around the answer line
    ("answer: (a)", "A", "strict"),  # a lower-case letter on the answer line is the answer
    ("Answer:  d", "D", "strict"),
    ("(c)", "C", "lax"),  # the whole answer, in lower case
    ("**b**", "B", "lax"),
    ("The answer is (c), since 65% of $480 is $312.", "C", "lax"),
    ("I think the answer is d.", "D", "lax"),
    ("The answer is a number near 300, so C.", "C", "last"),  # "a number": the article
    ("the answer is b\nbecause the fee is added", "B", "lax"),
    ("It is a tricky one, but B.", "B", "last"),  # an article "a" inside prose is no answer
    ("Answer: B. Because the fee is added, A is wrong.", "B", "lax"),  # the answer, then more text
    ("ANSWER: A\nOn second thought the fee is added.\nANSWER: D", "D", "strict"),  # the last line counts
    ("The answer is (C), since 65% of $480 is $312.", "C", "lax"),
    ("A or B", None, "unparsed"),  # two different letters
    ("It is either B or D.", None, "unparsed"),
    ("I'm sorry, I cannot help with that.", None, "unparsed"),  # a refusal
    ("", None, "unparsed"),
    ("The answer is $327.", "B", "value"),  # the option's value instead of its letter
    ("$183 or $297", None, "unparsed"),  # two options' values
    ("A farmer would pick B", "B", "last"),  # "A farmer": the article, not option A
    ("A. $312", "A", "lax"),  # the option label and the option
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
    ("$1,312.", {"unit": "$"}, 1312, "lax"),  # thousands separators
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
@given(
    n=st.integers(0, 10**7),
    style=st.sampled_from(["plain", "comma", "dollar", "cents", "word", "space"]),
    line=st.booleans(),
    before=_filler,
)
def test_numbers_in_any_format_read_back(n, style, line, before):
    text = {
        "plain": f"{n}",
        "comma": f"{n:,}",
        "dollar": f"${n:,}",
        "cents": f"{n}.00",
        "word": f"{n} dollars",
        "space": f"{n:,}".replace(",", " "),
    }[style]
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
    for got in (
        extract_letter(text, option_values=VALUES),
        extract_number(text, unit="$"),
        extract_number(text, clock=True),
    ):
        assert got.rule in RULES and got.raw == text
        if got.rule == "unparsed":
            assert got.answer is None and got.reason
        else:
            assert got.answer is not None and got.reason is None


# -- outcomes: an answer that contradicts itself, echoes the question or was cut off ---------------

# text, cut_off, expected (letter, rule, outcome, written_option)
OUTCOME_LETTER_CASES = [
    ("A. $327", False, ("A", "lax", "inconsistent", 1)),  # the embedded model's "A. $6966" (B's value)
    ("B. $327", False, ("B", "lax", "answered", 1)),
    ("A. 500 litres", False, ("A", "lax", "inconsistent", None)),  # a value that is no option's
    ("B", False, ("B", "lax", "answered", None)),
    ("Answer: C ($183)", False, ("C", "lax", "answered", 2)),
    ("The answer is A, $297.", False, ("A", "lax", "inconsistent", 3)),
    ("A. $312 (not $327)", False, ("A", "lax", "answered", 0)),  # its own option's value among others
    ("A. $32", True, ("A", "lax", "answered", None)),  # cut short: "$32" may be "$327"
    ("A. $32", False, ("A", "lax", "inconsistent", None)),
    ("I would pick B", True, ("B", "last", "cut_off", None)),  # cut off before it stated its answer
    ("ANSWER: D", True, ("D", "strict", "answered", None)),
    ("The answer is $327", True, ("B", "value", "cut_off", 1)),
    ("A. 5:12 p", False, ("A", "lax", "answered", None)),  # no number of this item's options
]


@pytest.mark.parametrize("text,cut_off,expected", OUTCOME_LETTER_CASES)
def test_letter_outcomes(text, cut_off, expected):
    got = extract_letter(text, option_values=VALUES, cut_off=cut_off)
    assert (got.answer, got.rule, got.outcome, got.written_option) == expected, got
    assert (got.note is None) == (got.outcome == "answered")


def test_an_inconsistent_answer_is_credited_only_by_a_named_rule():
    got = extract_letter("A. $327", option_values=VALUES)
    assert got.note == "letter A, but the value written (327) is option B's"
    assert resolve(got, "none") == (None, None)
    assert resolve(got, "letter-first") == ("A", "letter-first")
    assert resolve(got, "value-first") == ("B", "value-first")
    nowhere = extract_letter("A. 500 litres", option_values=VALUES)
    assert resolve(nowhere, "value-first") == (None, "value-first")
    assert resolve(extract_letter("B", option_values=VALUES), "none") == ("B", None)
    with pytest.raises(ValueError, match="expected one of none, letter-first, value-first"):
        resolve(got, "majority")


@settings(max_examples=100, deadline=None)
@given(
    i=st.integers(0, 3),
    j=st.integers(0, 3),
    head=st.sampled_from(["{L}. ${v}", "({L}) ${v}", "Answer: {L}. ${v}", "The answer is {L}: ${v} in total"]),
)
def test_a_letter_with_another_options_value_is_inconsistent(i, j, head):
    text = head.format(L="ABCD"[i], v=VALUES[j])
    got = extract_letter(text, option_values=VALUES)
    assert got.answer == "ABCD"[i] and got.written_option == j
    assert got.outcome == ("answered" if i == j else "inconsistent")


def test_sat_style_text_options_are_checked_by_their_words():
    options = ["dog : bark", "cat : meow", "cow : moo", "hen : cluck", "ant : hill"]
    assert extract_letter("B. cat : meow", n_options=5, options=options).outcome == "answered"
    got = extract_letter("A. cat : meow", n_options=5, options=options)
    assert (got.outcome, got.written_option) == ("inconsistent", 1)
    assert extract_letter("A. because dogs bark", n_options=5, options=options).outcome == "answered"


TANK = "A water tank held 376 litres. A pump filled it at 13 litres a minute for 10 minutes. The tank finished with"
PUNNETS = (
    "Freya's greenhouse had 500 tomatoes on Friday. 40% of them were too ripe, and the rest were packed "
    "into punnets of 17. The number of full punnets was"
)

# text, question, cut_off, expected (value, rule, outcome)
NUMBER_OUTCOME_CASES = [
    ("A water tank held 376 litres.", TANK, False, (376, "last", "echo")),  # the question read back
    ("A water tank held 376 litres. A pump filled it at ", TANK, True, (376, "last", "echo")),
    ("376 litres", TANK, False, (376, "lax", "answered")),  # stated as the answer: wrong
    ("The answer is 376 litres", TANK, False, (376, "lax", "answered")),
    ("It held 376 litres, so it ends with 506 litres", TANK, False, (506, "last", "answered")),
    ("The pump is 13 litres a minute", TANK, False, (13, "last", "echo")),  # the weak "is": read on
    ("The tank was 376 litres", TANK, False, (376, "lax", "answered")),  # said in its own words
    ("17", PUNNETS, False, (17, "lax", "answered")),  # the answer is also in the question
    ("17 punnets", PUNNETS, False, (17, "lax", "answered")),
    ("The total is $32", None, True, (32, "lax", "cut_off")),  # cut short, maybe "$327"
    ("ANSWER: $327\nBecause 65% of", None, True, (327, "strict", "answered")),
    ("ANSWER: $32", None, True, (32, "strict", "cut_off")),  # the number runs to the cut
    ("First $312, then $15 more so", None, True, (15, "last", "cut_off")),
    ("The missing number is 56.", TANK, False, (56, "lax", "answered")),
]


@pytest.mark.parametrize("text,question,cut_off,expected", NUMBER_OUTCOME_CASES)
def test_number_outcomes(text, question, cut_off, expected):
    got = extract_number(text, unit="litres" if question is TANK else "$", question=question, cut_off=cut_off)
    assert (got.answer, got.rule, got.outcome) == expected, got
    assert (got.note is None) == (got.outcome == "answered")


def test_an_echo_names_the_copied_number():
    got = extract_number(
        "Nadia started a tennis lesson at 2:35 p.m.",
        clock=True,
        clock_pm=True,
        question="Nadia started a tennis lesson at 2:35 p.m. and played for 95 minutes. She finished at",
    )
    assert got.outcome == "echo" and got.note.startswith("2:35 p.m. only repeats the question")


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=120), cut=st.booleans())
def test_every_outcome_is_one_of_the_list_and_says_why(text, cut):
    for got in (
        extract_letter(text, option_values=VALUES, cut_off=cut),
        extract_number(text, unit="$", question=TANK, cut_off=cut),
    ):
        assert got.outcome in OUTCOMES
        assert (got.outcome == "unparsed") == (got.rule == "unparsed")
        assert (got.note is None) == (got.outcome in ("answered", "unparsed"))
