"""Dequantised GGUF weights, cached so only the first load pays for the conversion.

transformers reads a ``.gguf`` file with ``gguf_file=...`` by dequantising every tensor
(~30-60 s for the 135 M embedded model on two CPU cores, and ~17 s more for its tokenizer),
and ``save_pretrained`` refuses a model loaded that way. We therefore write the dequantised
state dict ourselves:

``$SYNTHPROBE_CACHE/models/<sha256 of the .gguf file>/``
    ``model.safetensors`` (fp32, tied weights stored once), ``config.json`` without
    ``quantization_config``, the tokenizer files, and ``synthprobe-gguf.json`` (provenance:
    source file, its SHA-256, parameter count).

The folder is assembled under a temporary name and renamed into place, so a crash or a
concurrent conversion never leaves a half-written cache entry. Before the rename, the
written weights are reloaded and compared tensor by tensor with the ones in memory.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

from synthprobe.backends.base import ModelLoadError
from synthprobe.backends.spec import cache_root
from synthprobe.io.read import sha256_file
from synthprobe.io.write import atomic_write_text

PROVENANCE = "synthprobe-gguf.json"


def file_digest(path: str | Path) -> str:
    """SHA-256 of a file, memoised under the cache root by (real path, size, mtime)."""
    path = Path(path).resolve()
    st = path.stat()
    key = hashlib.sha256(f"{path}\x1f{st.st_size}\x1f{st.st_mtime_ns}".encode()).hexdigest()[:32]
    memo = cache_root() / "digests" / key
    with contextlib.suppress(OSError):
        text = memo.read_text().strip()
        if len(text) == 64:
            return text
    digest = sha256_file(path)
    with contextlib.suppress(OSError):
        atomic_write_text(memo, digest + "\n")
    return digest


def cache_dir_for(gguf_path: str | Path) -> Path:
    return cache_root() / "models" / file_digest(gguf_path)


def cached_folder(gguf_path: str | Path) -> Path | None:
    """The complete cache folder of this GGUF file, or None."""
    folder = cache_dir_for(gguf_path)
    return folder if (folder / PROVENANCE).is_file() else None


def _tied_names(model) -> set[str]:
    """Parameter names that are tied copies of another parameter and need not be stored."""
    tied = getattr(model, "_tied_weights_keys", None)
    if getattr(model.config, "tie_word_embeddings", False) and isinstance(tied, dict):
        return set(tied)
    if getattr(model.config, "tie_word_embeddings", False) and isinstance(tied, (list, tuple)):
        return set(tied)
    return set()


def convert(gguf_path: str | Path, *, progress: bool = True) -> Path:
    """Dequantise ``gguf_path`` into the cache (if not there yet) and return the folder."""
    import torch
    from safetensors.torch import load_file, save_file
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf_path = Path(gguf_path)
    done = cached_folder(gguf_path)
    if done is not None:
        return done
    target = cache_dir_for(gguf_path)
    folder, name = str(gguf_path.parent), gguf_path.name
    if progress:
        print(f"synthprobe: dequantising {name} once into {target} (later loads take seconds)", flush=True)
    try:
        tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
        model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    except Exception as exc:  # transformers raises many types for unreadable/unsupported files
        raise ModelLoadError(f"could not read GGUF file {gguf_path}: {type(exc).__name__}: {exc}") from exc

    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        skip = _tied_names(model)
        state = {k: v.detach().contiguous() for k, v in model.state_dict().items() if k not in skip}
        save_file(state, str(tmp / "model.safetensors"), metadata={"format": "pt"})
        config = model.config.to_dict()
        config.pop("quantization_config", None)
        config.pop("_name_or_path", None)
        config["dtype"] = "float32"
        (tmp / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
        tokenizer.save_pretrained(str(tmp))
        reread = load_file(str(tmp / "model.safetensors"))
        for k, v in state.items():
            if not torch.equal(reread[k], v):
                raise ModelLoadError(f"cached weights differ from the GGUF weights at {k}")
        n_params = sum(p.numel() for p in model.parameters())
        (tmp / PROVENANCE).write_text(
            json.dumps(
                {
                    "source_file": name,
                    "source_sha256": file_digest(gguf_path),
                    "n_params": n_params,
                    "tied": sorted(skip),
                },
                indent=2,
                sort_keys=True,
            )
            + "\n"
        )
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o777 & ~umask)  # mkdtemp makes it private; a cache folder need not be
        try:
            os.rename(tmp, target)
        except OSError:
            # Another process finished first (target exists and is non-empty): keep theirs.
            if cached_folder(gguf_path) is None:
                raise
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    shutil.rmtree(tmp, ignore_errors=True)
    return target
