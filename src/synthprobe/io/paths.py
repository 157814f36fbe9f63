"""Paths: the model's part of a default output name (:func:`slug`) and the files shipped in
``synthprobe/resources`` (:func:`resource_path`)."""

from __future__ import annotations

import re
from pathlib import Path


def slug(spec: str) -> str:
    """The model's part of a default output name (``benchmarks/<benchmark>_<slug>.json``), the
    same for every scoring command: a GGUF file's stem, else the last part of the path or hub id
    (``HuggingFaceTB/SmolLM2-135M-Instruct`` and the alias ``smollm2-135m-instruct`` both give
    ``smollm2-135m-instruct``), lower-cased, runs of other characters as ``-``."""
    name = Path(spec).stem if spec.lower().endswith(".gguf") else spec.rstrip("/").split("/")[-1]
    return re.sub(r"[^a-z0-9._-]+", "-", name.lower()).strip("-") or "model"


def resource_path(name: str) -> Path:
    """Path of a file shipped in ``synthprobe/resources``."""
    from importlib import resources

    return Path(str(resources.files("synthprobe").joinpath("resources", name)))
