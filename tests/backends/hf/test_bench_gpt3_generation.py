"""The helpers of ``bench/bench_gpt3_generation.py``: lm-eval's ``generate_until`` layout, answer
passes, and reading lm-eval's logged samples."""

from __future__ import annotations

import bench_gpt3_generation as bg  # bench/ is on the test path (pyproject.toml)
import gen_multiply_adds as gm


class CharTok:
    """One token a character."""

    def __call__(self, text, add_special_tokens=False):
        return {"input_ids": [ord(c) for c in text]}


def test_passes_stop_at_newline_or_budget():
    tok = CharTok()
    assert bg.passes_of(tok, " 17", 6) == 4  # three tokens, then the one holding the newline
    assert bg.passes_of(tok, " 17 + 0", 6) == 6  # filled the budget
    assert bg.passes_of(tok, "", 6) == 1


def test_lm_eval_layout_longest_first_ties_by_text_every_row_to_the_last():
    encoded = [[1, 2], [1, 2, 3], [4, 5], [6]]
    texts = ["b", "x", "a", "z"]
    f = bg.lm_eval_layout(encoded, texts, [1, 3, 2, 5], batch=2)
    # batches: [x (3 tokens), a (2, before b)], then [b, z]
    assert f == gm.padded_forwards([[1, 2, 3], [4, 5]], 3) + gm.padded_forwards([[1, 2], [6]], 5)


def test_reads_a_logged_sample():
    sample = {
        "doc_id": 0,
        "arguments": {"gen_args_0": {"arg_0": "Q: What is 1 plus 2?\n\nA:", "arg_1": {"until": ["\n"]}}},
        "resps": [[" 3"]],
    }
    assert bg.sample_context(sample) == "Q: What is 1 plus 2?\n\nA:"
    assert bg.sample_answer(sample) == " 3"
