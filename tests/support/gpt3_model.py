"""The embedded model for the GPT-3 task tests, loaded once per test process."""

from __future__ import annotations

import functools
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@functools.lru_cache(maxsize=1)
def embedded_backend():
    """The embedded SmolLM2-135M-Instruct as a synthprobe backend (fp32, CPU)."""
    from synthprobe.backends import load_backend

    return load_backend("smollm2-135m-instruct", dtype="float32", device="cpu", progress=False)


def one_torch_thread():
    """Set torch to one thread for a test module and restore it after.

    Small generation batches run faster on one thread than on CPU cores shared with other
    jobs, where two spinning threads wait on each other.
    """
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
