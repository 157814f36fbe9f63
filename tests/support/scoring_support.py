"""Shared pieces for the scoring, model and analysis tests.

* ``write_fixture(path)``: a small ArithMark-format file (the card's example item and
  others like it, with depth/template/option metadata), written by the test itself.
* ``embedded_tokenizer()``: the embedded model's tokenizer (from the dequantised cache).
* ``tiny_llama(...)``: a randomly initialised 2-layer Llama with that tokenizer's vocabulary,
  built in memory; ``save_tiny_llama(folder)`` writes it as a local model folder.
* ``embedded_backend()``: the real embedded model, loaded once per test process.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[2]
RELEASE = REPO / "data" / "deeparithmark-1.jsonl"

CARD_ITEM = {
    "ind": 3,
    "activity_label": "deeparithmark::deeparithmark-1::multi_step_inventory::depth4::hard",
    "ctx": "A warehouse held 420 units. A delivery added 260, then 210 units were shipped out, and 40 were "
    "found damaged. The rest were packed into crates of 16. The number of full crates packed was",
    "endings": [" 26 crates.", " 29 crates.", " 27 crates.", " 31 crates."],
    "label": "0",
    "source_id": "deeparithmark_v1_multi_step_inventory_depth4_0003",
    "split": "test",
    "split_type": "synthetic",
    "metadata": {
        "answer": "26",
        "unit": "crates",
        "topic": "multi_step_inventory",
        "depth": 4,
        "option_values": [26, 29, 27, 31],
        "option_sources": [
            "correct",
            "forgot the damaged units",
            "counted the loose units as a crate",
            "added the damaged units",
        ],
        "answer_rank": 0,
        "solution_steps": [
            "after delivery: 420 + 260 = 680",
            "after shipping: 680 - 210 = 470",
            "good units: 470 - 40 = 430",
            "full crates: 430 / 16 = 26 (remainder 14)",
        ],
        "template": "inventory_boxes",
    },
}


def _item(ind, template, topic, depth, ctx, unit, values, sources, label, fmt="{v} " + "{unit}.", endings=None):
    endings = endings or [" " + fmt.format(v=v, unit=unit) for v in values]
    ranks = sorted(values)
    return {
        "ind": ind,
        "activity_label": f"deeparithmark::deeparithmark-1::{topic}::depth{depth}::easy",
        "ctx": ctx,
        "endings": endings,
        "label": str(label),
        "source_id": f"deeparithmark_v1_{template}_depth{depth}_{ind:04d}",
        "split": "test",
        "split_type": "synthetic",
        "metadata": {
            "answer": str(values[label]),
            "unit": unit,
            "topic": topic,
            "depth": depth,
            "option_values": values,
            "option_sources": sources,
            "answer_rank": ranks.index(values[label]),
            "solution_steps": ["step"] * depth,
            "template": template,
        },
    }


def fixture_items() -> list[dict]:
    items = [dict(CARD_ITEM)]
    items.append(
        _item(
            10,
            "money_discount_fee",
            "money_discount_fee",
            2,
            "Aisha bought a guitar priced at $295 during a 40% off sale, and a $10 handling fee was "
            "added at checkout. In total, Aisha paid",
            "",
            [177, 187, 167, 128],
            [
                "forgot the fee",
                "correct",
                "subtracted the fee instead of adding it",
                "took the discount amount as the price",
            ],
            1,
            fmt="${v}.",
        )
    )
    items.append(
        _item(
            11,
            "time_clock_end",
            "time_clock_end",
            2,
            "A meeting started at 9:40 and ran for 75 minutes, then a 20-minute break followed. The break ended at",
            "",
            [675, 655, 695, 665],  # minutes after midnight
            ["correct", "forgot the break", "added the break twice", "counted 65 minutes"],
            0,
            endings=[" 11:15 a.m.", " 10:55 a.m.", " 11:35 a.m.", " 11:05 a.m."],
        )
    )
    items.append(
        _item(
            12,
            "share_then_split",
            "share_then_split",
            3,
            "Three friends won 840 marbles and kept a quarter for the club. They shared the rest "
            "equally, so each friend got",
            "marbles",
            [210, 280, 70, 315],
            ["correct", "split before keeping the quarter", "took the quarter as the share", "split among two friends"],
            0,
        )
    )
    items.append(
        _item(
            13,
            "tank_fill",
            "tank_fill",
            4,
            "A water tank had 101 litres in it. A pump added 13 litres a minute for 45 minutes, "
            "then a valve let out 8 litres a minute for 30 minutes. The tank finished with",
            "litres",
            [326, 446, 836, 686],
            ["drained for the filling time", "correct", "kept filling during the draining", "forgot the start volume"],
            1,
        )
    )
    items.append(
        _item(
            14,
            "salary_overtime_tax",
            "salary_overtime_tax",
            5,
            "Lena earns $18 an hour for 40 hours and 1.5 times that for 6 overtime hours. After "
            "a 20% tax and a $12 union fee, her weekly take-home pay is",
            "",
            [753, 657, 641, 815],
            ["forgot the union fee", "correct", "taxed after the fee", "no overtime premium"],
            1,
            fmt="${v}.",
        )
    )
    items.append(
        _item(
            15,
            "inventory_percent_chain",
            "multi_step_inventory",
            5,
            "A store had 500 lamps. It sold 20% on Monday and 25% of the rest on Tuesday, received "
            "60 more, and packed all of them onto pallets of 40. The number of full pallets was",
            "pallets",
            [10, 9, 11, 12],
            ["correct", "took 25% of the original", "forgot the delivery", "sold 20% twice"],
            0,
        )
    )
    items.append(
        _item(
            16,
            "tank_fill",
            "tank_fill",
            4,
            "A pool held 250 litres. A hose added 12 litres a minute for 20 minutes, then 5 litres "
            "a minute leaked out for 14 minutes. Finally 30 litres were drained. The pool held",
            "litres",
            [400, 470, 300, 430],
            ["correct", "forgot the drain", "forgot the hose", "forgot the leak"],
            0,
        )
    )
    return items


def write_fixture(path: Path, items: list[dict] | None = None) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in (items or fixture_items())), encoding="utf-8")
    return path


def data_items(n: int, tmp_path: Path) -> Path:
    """The release file when it exists (first ``n`` items copied), else the fixture."""
    if RELEASE.is_file():
        lines = RELEASE.read_text(encoding="utf-8").splitlines()[:n]
        out = tmp_path / "slice.jsonl"
        out.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return out
    return write_fixture(tmp_path / "fixture.jsonl")


@functools.lru_cache(maxsize=1)
def embedded_folder() -> Path:
    from synthprobe.backends.hf import gguf as gguf_cache
    from synthprobe.backends.spec import EMBEDDED_ALIAS, resolve_spec

    return gguf_cache.convert(resolve_spec(EMBEDDED_ALIAS).gguf_path, progress=False)


@functools.lru_cache(maxsize=1)
def embedded_tokenizer():
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(embedded_folder()))


def tiny_llama(seed: int = 0, **overrides):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    tok = embedded_tokenizer()
    kwargs = dict(
        vocab_size=len(tok),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        tie_word_embeddings=True,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
    )
    kwargs.update(overrides)
    torch.manual_seed(seed)
    model = LlamaForCausalLM(LlamaConfig(**kwargs)).eval()
    # Larger weights than the default init make the distributions peaked, so differences show.
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() == 2:
                p.normal_(0.0, 0.2)
    return model


def save_tiny_llama(folder: Path, seed: int = 0) -> Path:
    model = tiny_llama(seed)
    model.save_pretrained(str(folder))
    embedded_tokenizer().save_pretrained(str(folder))
    return folder


@functools.lru_cache(maxsize=1)
def embedded_backend():
    from synthprobe.backends import load_backend

    return load_backend("smollm2-135m-instruct", dtype="float32", device="cpu", progress=False)


def max_abs_diff(a, b) -> float:
    return max(abs(x.logprob - y.logprob) for ra, rb in zip(a, b) for x, y in zip(ra, rb))


#: A small chat template whose rendering is easy to read back: ``<role>content</role>`` lines, then
#: ``<assistant>`` when the assistant turn is opened.
TURNS_TEMPLATE = (
    "{% for m in messages %}<{{ m['role'] }}>{{ m['content'] }}</{{ m['role'] }}>\n{% endfor %}"
    "{% if add_generation_prompt %}<assistant>{% endif %}"
)


def write_turns_template(path: Path) -> Path:
    """:data:`TURNS_TEMPLATE` as a Jinja file at ``path`` (a test's ``--chat-template PATH``)."""
    path.write_text(TURNS_TEMPLATE, encoding="utf-8")
    return path
