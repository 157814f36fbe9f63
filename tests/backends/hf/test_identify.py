"""The HF engine tells a model's identity in the score cache without loading its weights
(``identify``), so a run of several models counts a later model's cached items before its
estimate; on the real embedded model and a local folder."""

from __future__ import annotations

import json
import re

import pytest
from scoring_support import embedded_folder, save_tiny_llama

from synthprobe.backends import identify_backend, load_backend
from tests.support.cli import synthprobe

pytestmark = pytest.mark.slow

SAME = ("name", "fingerprint", "dtype", "device", "bos", "bos_need", "max_length")


@pytest.mark.parametrize("bos", [None, True])
def test_identify_gives_the_loaded_models_identity_without_its_weights(bos):
    embedded_folder()  # converted once (a GGUF not yet converted cannot be identified: below)
    stand = identify_backend("smollm2-135m-instruct", device="cpu", bos=bos)
    loaded = load_backend("smollm2-135m-instruct", device="cpu", bos=bos, progress=False)
    try:
        assert {k: getattr(stand, k) for k in SAME} == {k: getattr(loaded, k) for k in SAME}
        assert stand.chat_template_text() == loaded.chat_template_text()
        assert not hasattr(stand, "model")  # nothing of the weights
    finally:
        loaded.close()


def test_a_local_folder_is_identified_and_what_cannot_be_is_none(tmp_path):
    folder = save_tiny_llama(tmp_path / "tiny")
    stand = identify_backend(str(folder), device="cpu")
    loaded = load_backend(str(folder), device="cpu", progress=False)
    assert stand.fingerprint == loaded.fingerprint and stand.name == loaded.name
    # other weights, same config and tokenizer: another identity
    other = save_tiny_llama(tmp_path / "other", seed=1)
    assert identify_backend(str(other), device="cpu").fingerprint != stand.fingerprint
    # no such folder, no such GGUF file: nothing to identify (the run reckons the model in full)
    assert identify_backend(str(tmp_path / "missing"), device="cpu") is None
    assert identify_backend(str(tmp_path / "missing.gguf"), device="cpu") is None


def test_a_cached_later_model_is_counted_in_the_estimate_before_the_run(tmp_path):
    """The issue's case on the real model: the second model's items all cached, the estimate says
    so before the run and reckons it at ~0 s."""
    args = ["score", "deeparithmark", "--limit", "64", "--batch-size", "16", "--quiet"]
    first = synthprobe(*args, "--model", "b=smollm2-135m-instruct", "--output", tmp_path / "b.json", check=True)
    assert "estimate: about" in first.stderr, first.stderr
    both = synthprobe(
        *args,
        "--model",
        "a=smollm2-135m-instruct,bos=true",
        "--model",
        "b=smollm2-135m-instruct",
        "--output",
        tmp_path / "ab.json",
        check=True,
    )
    (line,) = [ln for ln in both.stderr.splitlines() if ln.startswith("estimate: ")]
    assert re.search(r"for 2 models: b at about 0 s \(64 of its 64 items in its score cache\)", line), line
    # the run proper does not take b's cached items off again (the pace refresh may still speak on
    # a loaded machine: a's 64 items can take over its 20 s)
    assert "the estimate had counted them as work" not in both.stderr, both.stderr
    entries = {e["model"]["name"]: e for e in json.loads((tmp_path / "ab.json").read_text(encoding="utf-8"))["models"]}
    assert entries["b"]["results"]["deeparithmark"]["cached_items"] == 64
