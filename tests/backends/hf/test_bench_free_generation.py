"""The peer side of ``bench/bench_free_generation.py``: the lm-eval task it writes asks lm-eval's
``generate_until`` for exactly our rendered prompts (chat template applied, as text), with the
``free`` protocol's stop and budget, greedy; and its commands time the like-for-like pair."""

from __future__ import annotations

from pathlib import Path

import bench_free_generation as bf  # bench/ is on the test path (pyproject.toml)
import pytest

from synthprobe.prompts import protocols as proto

#: prompts as a chat template renders them: special tokens, newlines, a trailing newline, braces
#: and quotes a template engine could eat, outer white space
PROMPTS = [
    "<|im_start|>user\nComplete the sentence: 3 + 4 = ...\n\nReply with the answer only.<|im_end|>\n"
    "<|im_start|>assistant\n",
    '<|im_start|>user\n{{ not a variable }} "quoted" {% raw %} 100%\t<|im_end|>\n<|im_start|>assistant\n',
    "  leading and trailing white space \n\n",
]


def test_the_budget_and_stop_are_the_free_protocols():
    assert bf.budget() == proto.MAX_NEW_TOKENS["free", False] == 16
    assert bf.STOP == list(proto.stop_strings("free", cot=False))


def test_lm_eval_builds_exactly_our_prompts_from_the_written_task(tmp_path):
    pytest.importorskip("lm_eval")
    from lm_eval.tasks import TaskManager

    folder = bf.peer_task(tmp_path / "lmeval", PROMPTS, ["7", "x", "y"], bf.budget())
    manager = TaskManager(include_path=str(folder), include_defaults=False)
    task = manager.load([bf.TASK])["tasks"][bf.TASK]
    task.build_all_requests(rank=0, world_size=1)
    instances = sorted(task.instances, key=lambda inst: inst.doc_id)
    assert [inst.request_type for inst in instances] == ["generate_until"] * len(PROMPTS)
    assert [inst.args[0] for inst in instances] == PROMPTS  # the context is our text, nothing added
    for inst in instances:
        kwargs = inst.args[1]
        assert kwargs["until"] == bf.STOP
        assert kwargs["max_gen_toks"] == 16
        assert kwargs["do_sample"] is False


def test_the_pair_runs_the_same_model_batch_and_no_chat_template_on_the_peer():
    folder = Path("/models/smollm2")
    cmds = bf.commands(Path("/w"), 64, 32, folder, 0)
    ours, _ = cmds["A"]
    peer, _ = cmds["B"]
    assert ours[ours.index("--protocol") + 1] == "free"
    assert ours[ours.index("--limit") + 1] == "64"
    assert ours[ours.index("--chat-template") + 1] == "auto"
    assert ours[ours.index("--dtype") + 1] == "float32"
    assert ours[ours.index("--batch-size") + 1] == "32" == peer[peer.index("--batch_size") + 1]
    assert "--no-cache" in ours and "--save-predictions" in ours
    assert peer[peer.index("--model_args") + 1] == f"pretrained={folder},dtype=float32"
    assert peer[peer.index("--tasks") + 1] == bf.TASK
    assert peer[peer.index("--include_path") + 1] == "/w/lmeval"
    assert "--apply_chat_template" not in peer  # the prompts are already rendered
    assert peer[peer.index("--device") + 1] == "cpu"
