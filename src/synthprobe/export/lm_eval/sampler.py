"""The few-shot sampler the exported GPT-3 YAMLs use (through the generated
``synthprobe_fewshot.py``): synthprobe's own demonstration draw inside lm-eval."""

from __future__ import annotations

import json


def demo_sampler(task: str, seed: int) -> type:
    """An lm-eval few-shot sampler class that draws demonstrations as ``synthprobe score gpt3``
    does: :func:`synthprobe.seeding.draw_demos` for the test document's index in the
    pool, so K distinct pool items, never the test item, from a hash of (task, seed, index) —
    the same demonstrations whatever ``--limit``, document order or lm-eval ``--seed``.

    The pool is the task's few-shot split, which the exported YAMLs make the test split itself.
    """
    from lm_eval.api.samplers import ContextSampler

    from synthprobe.seeding import draw_demos

    def key(doc: dict) -> str:
        return json.dumps(dict(doc), sort_keys=True, ensure_ascii=False)

    class DemoSampler(ContextSampler):
        _pool: list | None = None
        _index: dict[str, int] | None = None

        def sample(self, n: int, eval_doc: dict | None = None, df=None, **kwargs) -> list:
            if self._pool is None:
                self._pool = self.fewshot_docs()
                self._index = {key(d): i for i, d in enumerate(self._pool)}
            if n <= 0:
                return []
            where = self._index.get(key(eval_doc)) if eval_doc is not None else None
            if where is None:
                raise ValueError(
                    f"{task}: the test document is not in the few-shot pool; "
                    "synthprobe's demonstration draw needs fewshot_split equal to "
                    "test_split"
                )
            return [self._pool[j] for j in draw_demos(task, seed, where, len(self._pool), n)]

    DemoSampler.__name__ = DemoSampler.__qualname__ = f"DemoSampler_{task}_seed{seed}"
    return DemoSampler
