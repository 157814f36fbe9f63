"""`--ray-address` against a real Ray cluster started from the command line on this machine
(`ray start --head` plus a second `ray start --address` node, one CPU each), as a user would
run one: `synthprobe sweep` gives the bytes of a serial run through the GCS address and through
Ray Client (ray://), `synthprobe contamination --ray` flags what the local scan flags, and an
address where no cluster answers ends the command at once with one line.

The cluster runs with token authentication and a token of its own (``RAY_AUTH_TOKEN_PATH``),
so a stray ``~/.ray/auth_token`` neither breaks nor joins it. Teardown ends every process of
the two ``ray start`` sessions (SIGTERM, then SIGKILL) and checks that none is left."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.contamination.test_scan import flags, plants, write_corpus  # noqa: F401 - the shared fixture

pytest.importorskip("ray")

SRC = Path(__file__).resolve().parents[2] / "src"
RAY = Path(sys.executable).with_name("ray")
LIMIT = 3


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _session_of(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[3])  # field 6: the session id


def _processes_in(sessions: set[int]) -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and _session_of(int(p)) in sessions]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _stop(sessions: set[int]) -> None:
    """SIGTERM every process of the ``ray start`` sessions, SIGKILL what is left after 5 s."""
    for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 10)):
        for pid in _processes_in(sessions):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and any(_alive(p) for p in _processes_in(sessions)):
            time.sleep(0.2)


@pytest.fixture(scope="module")
def cluster(_real_cache_root):
    """A head (GCS + Ray Client server) and a second node, one CPU each, with this checkout on
    the workers' PYTHONPATH, the HF libraries offline and a score cache of the cluster's own."""
    tmp = Path(tempfile.mkdtemp(prefix="rc", dir="/tmp"))  # Ray's socket paths must stay short
    cache = tmp / "cache"
    for name in ("models", "digests"):
        (cache / name).parent.mkdir(parents=True, exist_ok=True)
        (cache / name).symlink_to(_real_cache_root / name, target_is_directory=True)
    token = tmp / "token"
    token.write_text(secrets.token_hex(32))
    # no PYTHONPATH: the nodes get this checkout's synthprobe from the driver (py_modules)
    env = {
        **{k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "SYNTHPROBE_CACHE": str(cache),
        "RAY_AUTH_MODE": "token",
        "RAY_AUTH_TOKEN_PATH": str(token),
        "RAY_USAGE_STATS_ENABLED": "0",
    }
    gcs, client = _free_port(), _free_port()
    sessions: set[int] = set()
    commands = [
        [
            str(RAY),
            "start",
            "--head",
            "--port",
            str(gcs),
            "--num-cpus",
            "1",
            "--temp-dir",
            str(tmp / "ray"),
            "--ray-client-server-port",
            str(client),
            "--disable-usage-stats",
            "--include-dashboard",
            "false",
        ],
        [str(RAY), "start", "--address", f"127.0.0.1:{gcs}", "--num-cpus", "1"],
    ]
    try:
        for cmd in commands:
            # its own session: every daemon it leaves behind keeps that session id
            proc = subprocess.Popen(
                cmd, env=env, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
            )
            sessions.add(proc.pid)
            out, _ = proc.communicate(timeout=120)
            assert proc.returncode == 0, out[-3000:]
        probe = subprocess.run(
            [
                sys.executable,
                "-c",
                "import ray, json; ray.init(address={!r}, log_to_driver=False); "
                "print(json.dumps(sorted(n['Resources'].get('CPU', 0) for n in ray.nodes() if n['Alive'])))".format(
                    f"127.0.0.1:{gcs}"
                ),
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert probe.returncode == 0, probe.stderr[-3000:]
        # Ray takes a second node on the same host: two alive nodes of one CPU each
        assert json.loads(probe.stdout.strip().splitlines()[-1]) == [1.0, 1.0]
        yield {"gcs": f"127.0.0.1:{gcs}", "client": f"ray://127.0.0.1:{client}", "env": env, "cache": cache, "tmp": tmp}
    finally:
        _stop(sessions)
        left = [p for p in _processes_in(sessions) if _alive(p)]
        shutil.rmtree(tmp, ignore_errors=True)
        assert not left, f"Ray processes outlived the cluster: {left}"


def _driver_env(cluster, tmp_path: Path) -> dict:
    """The driver's environment: this checkout, the cluster's token, and a score cache that is
    not the cluster's."""
    cache = tmp_path / "driver-cache"
    cache.mkdir()
    return {**cluster["env"], "PYTHONPATH": str(SRC), "SYNTHPROBE_CACHE": str(cache)}


@pytest.mark.slow
@pytest.mark.parametrize("form", ["gcs", "client"])
def test_workers_run_the_drivers_synthprobe(cluster, tmp_path, form):
    """The nodes were started without this checkout on their path: a task sees the copy of the
    driver's package that connect_ray ships, byte for byte, not the venv's installed one."""
    script = (
        "import hashlib, json, pathlib, ray, synthprobe\n"
        "from synthprobe.ray_cluster import connect_ray\n"
        "def digest():\n"
        "    import hashlib, pathlib, synthprobe\n"
        "    root = pathlib.Path(synthprobe.__file__).parent\n"
        "    files = sorted(p for p in root.rglob('*.py'))\n"
        "    h = hashlib.sha256(b''.join(p.relative_to(root).as_posix().encode() + p.read_bytes() for p in files))\n"
        "    return str(root), h.hexdigest()\n"
        f"connect_ray({cluster[form]!r}, log_to_driver=False)\n"
        "print(json.dumps([digest(), ray.get(ray.remote(digest).remote())]))\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env=_driver_env(cluster, tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    (here, mine), (there, theirs) = json.loads(r.stdout.strip().splitlines()[-1])
    assert Path(here) == SRC / "synthprobe"
    assert Path(there) != Path(here) and "runtime_resources" in there, there
    assert theirs == mine


def _sweep(cwd: Path, env: dict, out: str, *extra: str, timeout: float = 600):
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "synthprobe",
            "sweep",
            "--model",
            "smollm2-135m-instruct",
            "--seeds",
            "release,1",
            "--limit",
            str(LIMIT),
            "--batch-size",
            "1",
            "--no-progress",
            "--data-dir",
            str(cwd / "data"),
            "--output",
            str(cwd / out),
            *extra,
        ],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture(scope="module")
def serial_sweep(cluster, tmp_path_factory):
    d = tmp_path_factory.mktemp("rsweep")
    env = _driver_env(cluster, tmp_path_factory.mktemp("serial"))
    r = _sweep(d, env, "serial.json", "--serial")
    assert r.returncode == 0, r.stderr
    return d


def _job_pids(stderr_and_out: str) -> list[int]:
    return [int(x.rsplit("pid ", 1)[1].rstrip(")")) for x in stderr_and_out.splitlines() if x.startswith("job ")]


@pytest.mark.slow
@pytest.mark.parametrize("form", ["gcs", "client"])
def test_sweep_on_the_cluster_writes_the_serial_bytes(cluster, serial_sweep, tmp_path, form):
    env = _driver_env(cluster, tmp_path)
    before = set((cluster["cache"] / "scores").glob("*")) if (cluster["cache"] / "scores").is_dir() else set()
    r = _sweep(serial_sweep, env, f"{form}.json", "--ray-address", cluster[form])
    assert r.returncode == 0, r.stderr
    assert f"on Ray at {cluster[form]}" in r.stderr
    assert (serial_sweep / f"{form}.json").read_bytes() == (serial_sweep / "serial.json").read_bytes()
    # two one-CPU jobs on two one-CPU nodes: they ran at once, in two worker processes
    pids = _job_pids(r.stdout + r.stderr)
    assert len(pids) == 2 and len(set(pids)) == 2, r.stdout + r.stderr
    # the jobs' score cache is the nodes' ($SYNTHPROBE_CACHE of `ray start`), not the driver's
    assert not (Path(env["SYNTHPROBE_CACHE"]) / "scores").exists()
    if form == "gcs":
        assert len(set((cluster["cache"] / "scores").glob("*.jsonl")) - before) == 2


@pytest.mark.slow
def test_a_job_bigger_than_every_node_fails_at_once(cluster, serial_sweep, tmp_path):
    """The cluster has two CPUs, but no node has two: Ray would keep such a task pending forever."""
    t0 = time.monotonic()
    r = _sweep(
        serial_sweep,
        _driver_env(cluster, tmp_path),
        "big.json",
        "--ray-address",
        cluster["gcs"],
        "--cpus-per-job",
        "2",
        timeout=300,
    )
    assert r.returncode == 1, r.stderr
    lines = [x for x in r.stderr.splitlines() if x.startswith("synthprobe: error:")]
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert "asks Ray for 2 CPU but no node of the cluster has that much (nodes: 1 CPU/0 GPU)" in lines[0]
    assert time.monotonic() - t0 < 120
    assert not (serial_sweep / "big.json").exists()


@pytest.mark.slow
def test_contamination_on_the_cluster_flags_what_the_local_scan_flags(cluster, plants, tmp_path):  # noqa: F811
    corpus = tmp_path / "corpus"
    write_corpus("jsonl", plants["docs"], corpus / "jsonl")
    write_corpus("text", plants["docs"], corpus / "text")
    env = _driver_env(cluster, tmp_path)
    docs = {}
    for name, extra in (("local", []), ("cluster", ["--ray", "--ray-address", cluster["gcs"]])):
        out = tmp_path / f"{name}.json"
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "synthprobe",
                "contamination",
                "--corpus",
                str(corpus),
                "--task",
                plants["release"],
                "--task",
                plants["gpt3"],
                "--shard-bytes",
                "4096",
                "--output",
                str(out),
                "--no-progress",
                *extra,
            ],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert r.returncode == 0, r.stderr
        docs[name] = json.loads(out.read_text("utf-8"))
    local, ray = docs["local"]["contamination"], docs["cluster"]["contamination"]
    assert ray["run"]["engine"] == "ray" and local["run"]["engine"] == "local"
    assert ray["run"]["shards"] == local["run"]["shards"] > 2
    assert ray["tasks"] == local["tasks"] and ray["corpus"] == local["corpus"]
    assert flags(docs["cluster"]) == plants["expected"]


def _listener():
    """A TCP port that accepts connections and never answers (not a Ray head)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    return s


@pytest.mark.slow
@pytest.mark.parametrize("command", ["sweep", "contamination"])
def test_an_address_without_a_cluster_fails_fast_with_one_line(tmp_path, command, plants):  # noqa: F811
    dead = _free_port()  # nothing listens there
    quiet = _listener()
    env = {
        **os.environ,
        "PYTHONPATH": str(SRC),
        "SYNTHPROBE_RAY_CONNECT_TIMEOUT": "15",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
    }
    if command == "sweep":
        base = [
            command,
            "--model",
            "smollm2-135m-instruct",
            "--seeds",
            "release",
            "--limit",
            "2",
            "--no-progress",
            "--data-dir",
            str(tmp_path / "data"),
        ]
    else:
        write_corpus("text", plants["docs"][:5], tmp_path / "corpus")
        base = [command, "--corpus", str(tmp_path / "corpus"), "--task", plants["release"], "--ray", "--no-progress"]
    out = tmp_path / "out.json"
    try:
        cases = [
            (f"127.0.0.1:{dead}", 1, 30),
            (f"ray://127.0.0.1:{dead}", 1, 30),
            (f"127.0.0.1:{quiet.getsockname()[1]}", 1, 60),
            ("127.0.0.1", 2, 30),
            ("ray://h:x", 2, 30),
        ]
        for address, code, bound in cases:
            t0 = time.monotonic()
            r = subprocess.run(
                [sys.executable, "-m", "synthprobe", *base, "--output", str(out), "--ray-address", address],
                cwd=tmp_path,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
            took = time.monotonic() - t0
            assert r.returncode == code, (address, r.stderr)
            lines = [x for x in r.stderr.splitlines() if x.startswith("synthprobe: error:")]
            assert len(lines) == 1 and "Traceback" not in r.stderr, (address, r.stderr)
            assert "--ray-address" in lines[0] if code == 2 else f"cannot reach a Ray cluster at {address}" in lines[0]
            assert took < bound, (address, took)
            assert not out.exists()
    finally:
        quiet.close()
