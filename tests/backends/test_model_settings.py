"""A model's own settings (``--model NAME=SPEC,KEY=VALUE``) and the BOS rule: parsing, checks,
how they override the run-wide flags, and what synthprobe knows of a model's BOS
(docs/command-line.md, "A model's own settings")."""

from __future__ import annotations

import pytest

from synthprobe.backends import bos
from synthprobe.backends.refs import ModelRef, model_refs, parse_model_ref
from synthprobe.benchmarks.deeparithmark.scoring.score import ScoreConfig
from synthprobe.cli import main
from synthprobe.errors import InputError
from synthprobe.scoring.settings import RunSettings, for_model

SMOL_TEMPLATE = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"


def test_settings_follow_the_spec_after_commas_typed_as_json():
    ref = parse_model_ref("gemma=gemma-3-270m,bos=true,max_context=2048,dtype=float32,adapter=./lora")
    assert (ref.name, ref.spec) == ("gemma", "gemma-3-270m")
    assert ref.run_settings() == {"bos": True, "max_context": 2048, "dtype": "float32"}
    assert ref.engine_settings() == {"adapter": "./lora"}
    assert parse_model_ref("smollm2-135m-instruct") == ModelRef("smollm2-135m-instruct")
    assert parse_model_ref("x,bos=false").settings == {"bos": False}  # unnamed models too


def test_a_local_path_with_a_comma_is_taken_whole(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run,bos=true").mkdir()
    assert parse_model_ref("run,bos=true") == ModelRef("run,bos=true")


@pytest.mark.parametrize(
    "text,words",
    [
        ("g=x,bos=yes", "expected bos=true or false in 'g=x,bos=yes', got bos=yes"),
        ("g=x,max_context=1.5", "expected max_context=a whole number"),
        ("g=x,fast", "expected KEY=VALUE after the model's SPEC and a comma, got 'fast'"),
        ("g=x,bos=true,bos=false", "bos is given twice"),
    ],
)
def test_a_bad_setting_is_one_error_naming_the_model_value(text, words):
    with pytest.raises(InputError, match="--model") as info:
        model_refs([text])
    assert words in str(info.value)


def test_a_models_own_values_override_the_run_wide_ones_for_it_alone():
    shared = ScoreConfig(models=[], bos=None, dtype="bfloat16", max_context=1024, model_args={"threads": 2})
    ref = parse_model_ref("g=gemma-3-270m,bos=true,dtype=float32,max_context=512,revision=main")
    own = for_model(shared, ref)
    assert (own.bos, own.dtype, own.max_context) == (True, "float32", 512)
    assert own.model_args == {"threads": 2, "revision": "main"}
    assert (shared.bos, shared.dtype, shared.max_context, shared.model_args) == (None, "bfloat16", 1024, {"threads": 2})
    assert for_model(shared, parse_model_ref("plain")) is shared
    chat = for_model(shared, parse_model_ref("g=x,chat_template=auto,system_prompt=Be brief."))
    assert (chat.chat.source, chat.chat.system_prompt, shared.chat.enabled) == ("auto", "Be brief.", False)


def test_a_models_own_value_is_checked_like_the_flag():
    with pytest.raises(InputError, match="--max-context"):
        for_model(ScoreConfig(models=[]), parse_model_ref("g=x,max_context=1"))
    with pytest.raises(InputError, match="system prompt needs a chat template") as info:
        for_model(RunSettings(), parse_model_ref("g=x,system_prompt=hi"))
    assert "--model g=x,chat_template=" in str(info.value)


def test_gemma_is_trained_with_bos_a_chat_marker_bos_without_and_the_rest_is_unknown():
    gemma = bos.trained_with("gemma3_text", "<bos>", None)
    smol = bos.trained_with("llama", "<|im_start|>", SMOL_TEMPLATE)
    plain = bos.trained_with("llama", "<s>", None)
    assert (gemma.wants, smol.wants, plain.wants) == (True, False, None)
    assert "lm-eval" in gemma.why and "'<|im_start|>' is a chat-turn marker" in smol.why
    # not given: as trained (off when nothing is known, as the protocols have it); given: as given
    assert [bos.resolve(None, n) for n in (gemma, smol, plain)] == [True, False, False]
    assert [bos.resolve(False, gemma), bos.resolve(True, smol)] == [False, True]


def test_a_run_wide_bos_against_a_known_need_is_a_warning_naming_the_per_model_setting():
    smol = bos.trained_with("llama", "<|im_start|>", SMOL_TEMPLATE)
    gemma = bos.trained_with("gemma3_text", "<bos>", None)
    said = bos.contradiction("smol", True, smol)
    assert said.startswith("warning: --bos applies to every model, but smol must run without one")
    assert "--model NAME=SPEC,bos=false" in said
    assert "gemma needs a BOS token" in bos.contradiction("gemma", False, gemma)
    # nothing to say: no run-wide setting, a setting that agrees, or nothing known
    assert bos.contradiction("smol", None, smol) is None
    assert bos.contradiction("gemma", True, gemma) is None
    assert bos.contradiction("x", True, bos.BosNeed(None)) is None


@pytest.mark.parametrize(
    "value,words",
    [
        ("smol=smollm2-135m-instruct,bos=maybe", "expected bos=true or false"),
        ("smol=smollm2-135m-instruct,max_context=x", "expected max_context=a whole number"),
        ("smol=smollm2-135m-instruct,tokenizer", "expected KEY=VALUE"),
    ],
)
def test_bad_per_model_settings_exit_2_before_any_model_loads(tmp_path, capsys, value, words):
    out = tmp_path / "r.json"
    rc = main(["score", "deeparithmark", "--model", value, "--limit", "2", "--output", str(out)])
    err = capsys.readouterr().err
    assert rc == 2 and words in err and "--model" in err
    assert not out.exists()


def test_an_engine_key_the_engine_lacks_is_refused_before_loading(tmp_path, capsys):
    out = tmp_path / "r.json"
    rc = main(["score", "deeparithmark", "--model", "smol=smollm2-135m-instruct,no_such_key=1", "--output", str(out)])
    assert rc == 2 and "no_such_key" in capsys.readouterr().err and not out.exists()
