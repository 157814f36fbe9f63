"""synthprobe.loglik / synthprobe.generate: lazy, and the same numbers as the backend."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest

import synthprobe
from synthprobe.models.generation import greedy_generate

from gpt3_model import embedded_backend, one_torch_thread

_one_thread = pytest.fixture(autouse=True, scope="module")(one_torch_thread)


def test_import_stays_light():
    code = ("import sys, synthprobe; assert callable(synthprobe.loglik) and callable(synthprobe.generate); "
            "print('torch' in sys.modules, 'transformers' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
    assert {"loglik", "generate"} <= set(dir(synthprobe))
    with pytest.raises(AttributeError):
        synthprobe.no_such_helper  # noqa: B018


def test_helpers_reject_other_objects():
    with pytest.raises(TypeError):
        synthprobe.generate(42, "hi")


@pytest.mark.slow
def test_helpers_match_the_backend():
    backend = embedded_backend()
    ctx = "Q: What is 17 minus 14?\n\nA: 3\n\nQ: What is 2 plus 2?\n\nA:"
    good, bad = synthprobe.loglik(backend, ctx, " 4"), synthprobe.loglik(backend, ctx, " 9")
    assert good == pytest.approx(backend.loglikelihood([(ctx, " 4")])[0].logprob, abs=1e-6)
    assert math.isfinite(good) and good < 0 and good > bad
    text = synthprobe.generate(backend, ctx, max_new_tokens=6, stop="\n")
    assert text == greedy_generate(backend.model, backend.tokenizer, [ctx], max_new_tokens=6, stop="\n",
                                   progress=False)[0]
    assert "\n" not in text
    # a spec string loads the model once and gives the same numbers
    assert synthprobe.loglik("smollm2-135m-instruct", ctx, " 4") == pytest.approx(good, abs=1e-4)
