"""Joining a running Ray cluster (``--ray-address``): the address rules, the connection timeout and
:func:`connect_ray`, used by ``synthprobe sweep`` and ``synthprobe contamination``."""

from __future__ import annotations

from pathlib import Path

from synthprobe.errors import CommandFailed, InputError

#: seconds a command waits for the Ray cluster named by --ray-address before it gives up
RAY_CONNECT_TIMEOUT_S = 60
#: seconds the first TCP connection to the cluster's address may take
_RAY_PROBE_TIMEOUT_S = 5

RAY_ADDRESS_HELP = (
    f"'auto' (the cluster `ray start` runs on this machine), HOST:PORT (the head's GCS port, "
    f"6379 by default) or ray://HOST:PORT (Ray Client, 10001 by default). A cluster that does "
    f"not answer ends the command (exit 1) after at most {RAY_CONNECT_TIMEOUT_S} s "
    "($SYNTHPROBE_RAY_CONNECT_TIMEOUT)"
)


def ray_connect_timeout() -> float:
    """:data:`RAY_CONNECT_TIMEOUT_S`, or the seconds in ``$SYNTHPROBE_RAY_CONNECT_TIMEOUT``."""
    import os

    text = os.environ.get("SYNTHPROBE_RAY_CONNECT_TIMEOUT", "")
    try:
        value = float(text) if text else RAY_CONNECT_TIMEOUT_S
    except ValueError:
        raise InputError(f"expected seconds, got {text!r}", field="SYNTHPROBE_RAY_CONNECT_TIMEOUT") from None
    if not value > 0:
        raise InputError(f"expected seconds > 0, got {text!r}", field="SYNTHPROBE_RAY_CONNECT_TIMEOUT")
    return value


def ray_host_port(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of ``HOST:PORT`` or ``ray://HOST:PORT``; None for ``auto``/``local``."""
    if address in ("auto", "local"):
        return None
    rest = address[len("ray://") :] if address.startswith("ray://") else address
    host, sep, port = rest.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host or not port.isascii() or not port.isdigit() or not 0 < int(port) < 65536 or "/" in rest:
        raise InputError("expected 'auto', HOST:PORT or ray://HOST:PORT, got " + repr(address), field="--ray-address")
    return host, int(port)


def connect_ray(address: str, **init_kwargs):
    """Join the running Ray cluster at ``address`` (the --ray-address value) and return the
    ``ray`` module. A malformed address is an :class:`InputError`; a cluster that cannot be
    reached is a :class:`CommandFailed` with one line, raised at once when nothing listens at
    the address and after at most :data:`RAY_CONNECT_TIMEOUT_S` seconds otherwise (Ray's own
    connection loop can wait for minutes, so a watchdog ends the process if ``ray.init`` has
    not returned by then; nothing has been written at that point)."""
    import os
    import socket
    import sys
    import threading

    from synthprobe.errors import EXIT_FAILED

    hostport = ray_host_port(address)
    try:
        import ray
    except ImportError as exc:
        raise CommandFailed(f"--ray-address needs the package 'ray' ({exc}); pip install 'synthprobe[ray]'") from None
    where = f"cannot reach a Ray cluster at {address}"
    timeout = ray_connect_timeout()
    if hostport is not None:
        try:
            socket.create_connection(hostport, timeout=_RAY_PROBE_TIMEOUT_S).close()
        except OSError as exc:
            raise CommandFailed(
                f"{where}: {exc.strerror or type(exc).__name__} (is the head started, "
                f"e.g. `ray start --head`, and the port open?)"
            ) from None

    def give_up() -> None:
        sys.stderr.write(
            f"synthprobe: error: {where}: no answer within {timeout:g} s (is it a "
            "Ray head of the same Ray version, and does this machine have its auth token?)\n"
        )
        sys.stderr.flush()
        os._exit(EXIT_FAILED)

    watchdog = threading.Timer(timeout, give_up)
    watchdog.daemon = True
    watchdog.start()
    # the driver's own synthprobe goes to every worker (Ray's py_modules, uploaded once per
    # version of the code), so the nodes run the same code as the driver whatever they have
    # installed; its dependencies (torch, transformers, ray) must be installed on the nodes
    runtime_env = {"py_modules": [str(Path(__file__).resolve().parent)], "excludes": ["__pycache__", "*.pyc"]}
    try:
        ray.init(address=address, runtime_env=runtime_env, **init_kwargs)
    except Exception as exc:  # Ray raises ConnectionError, RuntimeError, ValueError, its own errors
        text = " ".join(str(exc).split())
        raise CommandFailed(f"{where}: {type(exc).__name__}: {text[:300]}") from None
    finally:
        watchdog.cancel()
    return ray
