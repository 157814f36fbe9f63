"""Your own checkpoint: real folders written by ``save_pretrained`` (with and without the
tokenizer), a LoRA adapter trained here for a few steps, a local hub cache for ``revision=``,
mistyped paths, and a hub that cannot be reached. The slow tests run the real CLI."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from synthprobe.backends.spec import resolve_spec
from synthprobe.errors import InputError

ROOT = Path(__file__).resolve().parents[3]
EMBEDDED = "smollm2-135m-instruct"
TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.json",
    "merges.txt",
    "chat_template.jinja",
)


# -- spec resolution (no model loads) -------------------------------------------------------------


def _model_folder(path: Path) -> Path:
    path.mkdir(parents=True)
    (path / "config.json").write_text("{}")
    return path


def test_a_local_folder_that_exists_wins_over_the_alias(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _model_folder(tmp_path / EMBEDDED)
    spec = resolve_spec(EMBEDDED)
    assert spec.kind == "folder" and spec.location == str((tmp_path / EMBEDDED).resolve())


def test_a_missing_path_says_no_such_folder_and_names_the_nearest(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _model_folder(tmp_path / "runs" / "checkpoint-500")
    cases = {
        "./runs/checkpoint-50": ("'runs'", "runs/checkpoint-500"),  # typo in the last part
        "runs/checkpoint-5000": ("'runs'", "runs/checkpoint-500"),  # no ./, but runs/ is here
        "./run/checkpoint-500": ("'.'", "runs"),  # typo in the first part
        f"{tmp_path}/runz/checkpoint-500": (repr(str(tmp_path)), "runs"),
    }
    for spec, (nearest, meant) in cases.items():
        with pytest.raises(InputError) as err:
            resolve_spec(spec)
        text = str(err.value)
        assert "no such folder" in text and f"nearest existing folder is {nearest}" in text, text
        assert meant in text, text


def test_a_bare_name_close_to_a_local_model_folder_is_taken_for_a_typo(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _model_folder(tmp_path / "my-finetune")
    with pytest.raises(InputError, match=r"no such folder.*did you mean \./my-finetune"):
        resolve_spec("my-finetun")
    assert resolve_spec("gpt2").kind == "hub"  # nothing close here: a hub id
    assert resolve_spec("HuggingFaceTB/SmolLM2-135M").kind == "hub"  # owner/ is no local folder


def test_checkpoint_options_are_checked_before_loading(tmp_path):
    from synthprobe.backends.hf.backend import check

    folder = _model_folder(tmp_path / "weights-only")
    with pytest.raises(InputError, match=r"no tokenizer files.*--model-arg tokenizer=PATH_OR_ID"):
        check(str(folder))
    with pytest.raises(InputError, match="names a commit, branch or tag of a hub repository"):
        check(str(folder), tokenizer=str(folder), revision="main")
    with pytest.raises(InputError, match="adapter=.*no such folder"):
        check(EMBEDDED, adapter=str(tmp_path / "nope"))
    (tmp_path / "lora").mkdir()
    with pytest.raises(InputError, match="no adapter_config.json"):
        check(EMBEDDED, adapter=str(tmp_path / "lora"))
    (tmp_path / "lora" / "adapter_config.json").write_text(json.dumps({"base_model_name_or_path": "org/base"}))
    with pytest.raises(InputError, match="is a PEFT adapter.*--model org/base --model-arg adapter="):
        resolve_spec(str(tmp_path / "lora"))


# -- real folders and the real CLI ----------------------------------------------------------------


def _env(**extra) -> dict:
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_DATASETS_OFFLINE="1")
    env.update(extra)
    return {k: v for k, v in env.items() if v is not None}


def _score(*args, cwd, env=None, timeout=900) -> subprocess.CompletedProcess:
    cmd = [
        sys.executable,
        "-m",
        "synthprobe",
        "score",
        "deeparithmark",
        "--limit",
        "2",
        "--no-progress",
        "--save-predictions",
        "--data",
        str(ROOT / "data" / "deeparithmark-1.jsonl"),
        *args,
    ]
    return subprocess.run(cmd, cwd=cwd, env=env or _env(), capture_output=True, text=True, timeout=timeout)


def _entry(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))["models"][0]


def _scores(entry: dict) -> list:
    return [(p["id"], p["logprob"]) for p in entry["results"]["deeparithmark"]["predictions"]]


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """``full``: the embedded model saved with its tokenizer; ``weights``: the same weights
    without a tokenizer (as a training run's output often is); ``lora``: a LoRA adapter on it,
    trained here for a few steps on a few tokens."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from synthprobe.backends import load_backend

    root = tmp_path_factory.mktemp("checkpoints")
    full, weights, lora = root / "full", root / "weights", root / "lora"
    lm = load_backend(EMBEDDED, dtype="float32", device="cpu", progress=False)
    lm.model.save_pretrained(full)
    lm.tokenizer.save_pretrained(full)
    lm.close()
    weights.mkdir()
    for p in full.iterdir():
        if p.name not in TOKENIZER_FILES:
            os.link(p, weights / p.name)
    assert not any((weights / n).exists() for n in TOKENIZER_FILES)

    torch.manual_seed(0)
    tok = AutoTokenizer.from_pretrained(full)
    model = AutoModelForCausalLM.from_pretrained(full, dtype=torch.float32)
    peft_model = get_peft_model(
        model, LoraConfig(r=4, lora_alpha=16, lora_dropout=0.0, target_modules=["q_proj", "v_proj"])
    )
    batch = tok(["Tom had 12 apples and bought 30 more, so he has 42 apples."], return_tensors="pt")
    opt = torch.optim.AdamW([p for p in peft_model.parameters() if p.requires_grad], lr=5e-3)
    for _ in range(4):
        loss = peft_model(**batch, labels=batch["input_ids"]).loss
        loss.backward()
        opt.step()
        opt.zero_grad()
    peft_model.save_pretrained(lora)
    return {"full": full, "weights": weights, "lora": lora, "root": root}


@pytest.fixture(scope="module")
def base_run(folders):
    out = folders["root"] / "base.json"
    res = _score("--model", EMBEDDED, "--output", str(out), cwd=folders["root"])
    assert res.returncode == 0, res.stderr
    return _entry(out)


@pytest.mark.slow
def test_a_saved_folder_scores_exactly_as_the_model_it_was_saved_from(folders, base_run, tmp_path):
    out = tmp_path / "full.json"
    res = _score("--model", str(folders["full"]), "--output", str(out), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert res.stdout.rstrip().splitlines()[-1] == f"results: {out}"
    assert _scores(_entry(out)) == _scores(base_run)


@pytest.mark.slow
def test_a_folder_without_a_tokenizer_says_so_and_takes_one(folders, base_run, tmp_path):
    out = tmp_path / "weights.json"
    res = _score("--model", str(folders["weights"]), "--output", str(out), cwd=tmp_path)
    assert res.returncode == 2 and "holds no tokenizer files" in res.stderr, res.stderr
    assert "--model-arg tokenizer=PATH_OR_ID" in res.stderr and "sentencepiece" not in res.stderr
    assert not out.exists()
    res = _score(
        "--model",
        str(folders["weights"]),
        "--model-arg",
        f"tokenizer={folders['full']}",
        "--output",
        str(out),
        cwd=tmp_path,
    )
    assert res.returncode == 0, res.stderr
    entry = _entry(out)
    assert entry["model"]["tokenizer"] == str(folders["full"].resolve())
    assert _scores(entry) == _scores(base_run)


@pytest.mark.slow
def test_a_lora_adapter_is_applied_and_recorded(folders, base_run, tmp_path):
    out = tmp_path / "lora.json"
    res = _score(
        "--model", str(folders["full"]), "--model-arg", f"adapter={folders['lora']}", "--output", str(out), cwd=tmp_path
    )
    assert res.returncode == 0, res.stderr
    entry = _entry(out)
    adapter = entry["model"]["adapter"]
    assert adapter["path"] == str(folders["lora"].resolve())
    assert set(adapter["files"]) >= {"adapter_config.json", "adapter_model.safetensors"}
    assert all(len(d) == 64 for d in adapter["files"].values())
    assert entry["model"]["fingerprint"] != base_run["model"]["fingerprint"]
    assert [i for i, _ in _scores(entry)] == [i for i, _ in _scores(base_run)]
    assert _scores(entry) != _scores(base_run)  # the trained adapter moves the log-likelihoods
    wrong = _score("--model", str(folders["lora"]), "--output", str(tmp_path / "x.json"), cwd=tmp_path)
    assert wrong.returncode == 2 and "is a PEFT adapter" in wrong.stderr and "adapter=" in wrong.stderr


def _hub_cache(root: Path, folder: Path, repo: str, commit: str) -> Path:
    """A local Hugging Face hub cache holding ``folder`` as ``repo`` at ``commit`` (branch main)."""
    cache = root / "hub"
    entry = cache / f"models--{repo.replace('/', '--')}"
    snap = entry / "snapshots" / commit
    snap.mkdir(parents=True)
    for p in folder.iterdir():
        os.link(p, snap / p.name)
    (entry / "refs").mkdir()
    (entry / "refs" / "main").write_text(commit)
    return cache


@pytest.mark.slow
def test_revision_loads_from_the_hub_cache_and_is_recorded(folders, base_run, tmp_path):
    commit = "0123456789abcdef0123456789abcdef01234567"
    cache = _hub_cache(tmp_path, folders["full"], "someone/smol", commit)
    env = _env(HF_HUB_CACHE=str(cache))
    out = tmp_path / "rev.json"
    res = _score("--model", "someone/smol", "--model-arg", "revision=main", "--output", str(out), cwd=tmp_path, env=env)
    assert res.returncode == 0, res.stderr
    entry = _entry(out)
    assert entry["model"]["revision"] == "main" and entry["model"]["source"] == "hub"
    assert _scores(entry) == _scores(base_run)
    missing = _score(
        "--model",
        "someone/smol",
        "--model-arg",
        "revision=" + "f" * 40,
        "--output",
        str(tmp_path / "x.json"),
        cwd=tmp_path,
        env=env,
    )
    assert missing.returncode == 1 and "not in the local Hugging Face cache" in missing.stderr, missing.stderr


@pytest.mark.slow
def test_an_unreachable_hub_ends_the_load_at_once_with_the_advice(tmp_path):
    # Nothing listens on port 9: the hub is unreachable for sure, whatever this machine's network.
    env = _env(
        HF_HUB_OFFLINE=None,
        TRANSFORMERS_OFFLINE=None,
        HF_ENDPOINT="http://127.0.0.1:9",
        HF_HUB_CACHE=str(tmp_path / "empty-hub"),
    )
    started = time.perf_counter()
    res = _score(
        "--model",
        "someone/not-cached-anywhere",
        "--output",
        str(tmp_path / "x.json"),
        cwd=tmp_path,
        env=env,
        timeout=300,
    )
    elapsed = time.perf_counter() - started
    assert res.returncode == 1, res.stderr
    assert "not in the local Hugging Face cache and the hub cannot be reached" in res.stderr, res.stderr
    assert "Retrying" not in res.stderr and elapsed < 40, elapsed  # the load itself ends at once
    assert not (tmp_path / "x.json").exists()


@pytest.mark.slow
def test_the_vllm_engine_takes_the_adapter_and_records_it(folders, base_run, tmp_path, vllm_python):
    """vLLM loads the base with the adapter merged in by peft (the project's peft, put on the
    vLLM environment's path), and agrees with the HF engine on it."""
    import peft

    hf_out = tmp_path / "hf.json"
    res = _score(
        "--model",
        str(folders["full"]),
        "--model-arg",
        f"adapter={folders['lora']}",
        "--output",
        str(hf_out),
        cwd=tmp_path,
    )
    assert res.returncode == 0, res.stderr
    extra = tmp_path / "peft-path"
    extra.mkdir()
    (extra / "peft").symlink_to(Path(peft.__file__).parent, target_is_directory=True)
    out = tmp_path / "vllm.json"
    env = _env(
        PYTHONPATH=f"{ROOT / 'src'}{os.pathsep}{extra}",
        VLLM_CPU_KVCACHE_SPACE="2",
        VLLM_NO_USAGE_STATS="1",
        DO_NOT_TRACK="1",
    )
    cmd = [
        str(vllm_python),
        "-m",
        "synthprobe",
        "score",
        "deeparithmark",
        "--limit",
        "2",
        "--no-progress",
        "--save-predictions",
        "--dtype",
        "float32",
        "--data",
        str(ROOT / "data" / "deeparithmark-1.jsonl"),
        "--model",
        f"vllm:{folders['full']}",
        "--model-arg",
        f"adapter={folders['lora']}",
        "--model-arg",
        "enforce_eager=true",
        "--model-arg",
        "block_size=32",
        "--output",
        str(out),
    ]
    res = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1800)
    assert res.returncode == 0, res.stderr[-3000:]
    entry, hf = _entry(out), _entry(hf_out)
    assert entry["model"]["adapter"]["files"] == hf["model"]["adapter"]["files"]
    for (i, a), (j, b) in zip(_scores(entry), _scores(hf)):
        assert i == j and all(abs(x - y) < 1e-3 for x, y in zip(a, b))
    shutil.rmtree(extra)
