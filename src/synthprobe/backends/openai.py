"""The OpenAI-compatible completions engine: ``--model openai:URL`` (vLLM, SGLang, llama-cpp-python, ...).

``openai:http://127.0.0.1:8000/v1`` (or ``--model-arg base_url=…``) scores a model behind any
server that implements the legacy ``POST /v1/completions`` endpoint. Options (``--model-arg``):

``model=ID``
    the served model (default: the first id of ``GET /v1/models``).
``api_key_env=NAME``
    the environment variable holding the API key (default ``OPENAI_API_KEY``; unset means no
    key). The key is sent as a bearer token and never appears in results, logs or errors.
``concurrency=N`` (default 8), ``timeout=SECONDS`` (default 300), ``max_retries=N`` (default 4)
    requests in flight, the limit of one try, and retries (exponential backoff) on 429, 5xx,
    timeouts and dropped connections. A refused connection is not retried: it ends the run with
    an error naming the URL (credentials and query removed).
``deadline=SECONDS`` (default 900), ``notice_after=SECONDS`` (default 60)
    the most one request (GET or POST) may take in all, tries and waits for ``Retry-After``
    included, after which the run stops with one error and keeps the items already scored in the
    score cache; and when a line says that a request is still waiting.

Log-likelihood: the prompt ``context + continuation`` goes out with ``echo=true, logprobs=1,
max_tokens=1, temperature=0``; the server returns every prompt token with its text, character
offset, log-probability and top-1 alternative. The continuation's score is the sum over the
prompt tokens that END after ``len(context)``: a token starting at or after the boundary, and
also one that **straddles** it (it carries continuation characters, so the continuation
cannot appear without it; such tokens are counted in ``timing["boundary_straddles"]``). A
token is greedy when its log-probability is at least the best ``top_logprobs`` entry.

Unlike the HF engine, the server tokenises the joined text (the ArithMark 3.0 protocol
tokenises context and ending apart); for byte-level BPE vocabularies and endings that start
with a space the two agree. The context is never left-truncated here: a prompt longer than
the server's window is the server's error. ``--bos`` is refused.

Refusing silent nonsense: every echo response is checked (prompt log-probabilities present,
not null past the first token, tokens and offsets spelling the prompt); a server that ignores
``echo`` (llama.cpp's ``llama-server``) or answers in the chat-style ``logprobs.content`` shape
stops the run with a :class:`ScoringError` that says what it returned. The first request of a
backend runs alone, so that message comes before anything else is sent.

First tokens (:meth:`OpenAIBackend.first_token`): the greedy request of ``generate`` with
``logprobs: top_k``; the first generated position's ``choices[0].logprobs.top_logprobs[0]`` (token
string -> log-probability) gives the ``top_k`` most likely first tokens, and each candidate is
matched by exact token string (None outside them: a server gives its ``top_k`` only). A server
that returns none stops the run at its first request (sent alone) with one :class:`ScoringError`.

Identity: ``fingerprint`` is ``openai:<model id>@<url>`` (stable, so the per-item score cache
works; a different model served under the same id and URL would share it), and ``describe()``
records the model id, the URL without credentials and ``weights_fingerprinted: false``.
"""

from __future__ import annotations

import asyncio
import math
import os
import re
import sys
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from datetime import UTC
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from synthprobe.backends.base import (
    BaseBackend,
    ChoiceCallback,
    ChoiceRun,
    EndingScore,
    FirstToken,
    Generation,
    ModelLoadError,
    ScoringError,
    TokenBudgetSpent,
    first_token_arguments,
)
from synthprobe.errors import InputError

#: ``--model-arg`` keys of this engine (the model block's own options are handled apart).
OPTIONS = (
    "base_url",
    "model",
    "api_key_env",
    "concurrency",
    "timeout",
    "max_retries",
    "deadline",
    "notice_after",
    "max_tokens_total",
)
DEFAULTS = {
    "api_key_env": "OPENAI_API_KEY",
    "concurrency": 8,
    "timeout": 300.0,
    "max_retries": 4,
    "deadline": 900.0,
    "notice_after": 60.0,
    "max_tokens_total": None,
}

#: What to do when a server cannot give prompt log-probabilities.
ECHO_HINT = (
    "use a server that implements echo with logprobs on /v1/completions (vLLM, SGLang, "
    "llama-cpp-python's server), or a generation protocol (--protocol letters or --protocol free)"
)


# -- the URL and the options ----------------------------------------------------------------------


def clean_url(url: str) -> str:
    """``url`` without ``user:password@``, query string or fragment: what messages and results show."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


def _check_url(url: Any, engine: str = "openai") -> str:
    if not isinstance(url, str) or not url.strip():
        raise InputError(
            f"expected the server's URL, e.g. {engine}:http://127.0.0.1:8000/v1 or --model-arg "
            "base_url=http://127.0.0.1:8000/v1",
            field="--model",
        )
    url = url.strip()
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 -- raises ValueError on a bad port
    except ValueError:
        raise InputError(
            f"{clean_url(url) if '://' in url else 'the server URL'} is not a valid URL", field="--model"
        ) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(
            f"expected an http:// or https:// URL such as http://127.0.0.1:8000/v1 for the {engine} engine",
            field="--model",
        )
    return url.rstrip("/")


def _number(options: dict, key: str, kind: type, low: float, high: float):
    value = options.get(key, DEFAULTS[key])
    field = "--max-tokens-total" if key == "max_tokens_total" else f"--model-arg {key}"
    ok = (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and (kind is float or isinstance(value, int))
        and math.isfinite(value)
        and low <= value <= high
    )
    if not ok:
        want = "a whole number" if kind is int else "a number"
        raise InputError(f"expected {want} from {low:g} to {high:g}, got {value!r}", field=field)
    return kind(value)


def _settings(spec: str, options: dict, engine: str = "openai") -> dict[str, Any]:
    """Check ``spec`` and every option without touching the network; return the engine's settings."""
    if "api_key" in options:
        raise InputError(
            "an API key never goes on the command line; put it in an environment variable and "
            "pass its name: --model-arg api_key_env=NAME (default OPENAI_API_KEY)",
            field="--model-arg api_key",
        )
    engine_keys = set(options) - {"dtype", "device", "trust_remote_code", "bos", "progress", "threads"}
    unknown = sorted(engine_keys - set(OPTIONS))
    if unknown:
        raise InputError(
            f"the {engine} engine has no option {', '.join(unknown)}; it takes {', '.join(OPTIONS)}",
            field="--model-arg",
        )
    if options.get("dtype") not in (None, "auto"):
        raise InputError(
            "the server decides the dtype (start vLLM with --dtype float32, say); leave --dtype "
            f"out with the {engine} engine",
            field="--dtype",
        )
    if options.get("device", "auto") != "auto":
        raise InputError(
            f"the server decides the device; leave --device out with the {engine} engine", field="--device"
        )
    if options.get("threads") is not None:
        raise InputError(
            f"the server decides its threads; leave --threads out with the {engine} engine", field="--threads"
        )
    if options.get("bos"):
        raise InputError(
            f"--bos is not available with the {engine} engine (the server tokenises the prompt)", field="--bos"
        )
    url = options.get("base_url")
    if spec and url is not None and _check_url(spec, engine) != _check_url(url, engine):
        raise InputError(
            f"give the server's URL once: {engine}:URL or --model-arg base_url=URL, not two different ones",
            field="--model-arg base_url",
        )
    url = _check_url(spec or url, engine)
    model = options.get("model")
    if model is not None and (not isinstance(model, str) or not model.strip()):
        raise InputError(f"expected the served model's id, got {model!r}", field="--model-arg model")
    env = options.get("api_key_env", DEFAULTS["api_key_env"])
    if not isinstance(env, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", env):
        raise InputError(f"expected the name of an environment variable, got {env!r}", field="--model-arg api_key_env")
    if "api_key_env" in options and not os.environ.get(env):
        raise InputError(
            f"the environment variable {env} is not set (it should hold the API key)", field="--model-arg api_key_env"
        )
    budget = options.get("max_tokens_total")
    return {
        "url": url,
        "model": model,
        "api_key_env": env,
        "concurrency": _number(options, "concurrency", int, 1, 1024),
        "timeout": _number(options, "timeout", float, 0.1, 86400),
        "max_retries": _number(options, "max_retries", int, 0, 20),
        "deadline": _number(options, "deadline", float, 0.1, 7 * 86400),
        "notice_after": _number(options, "notice_after", float, 0.1, 86400),
        "max_tokens_total": None if budget is None else _number(options, "max_tokens_total", int, 1, 10**15),
    }


def check_logprob(value: Any, where: str, what: str) -> float:
    """``value`` as a log-probability, or a :class:`ScoringError` naming the server and what it sent:
    a number, not NaN, not above zero. ``-inf`` passes (an impossible token is a true answer); the
    caller refuses it where it would decide a choice by a tie."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if ok and not math.isnan(value) and value <= 0:
        return float(value)
    why = "not a number" if not ok else "NaN" if math.isnan(value) else "above zero"
    raise ScoringError(
        f"{where} returned a log-probability of {value!r} for {what}: {why}, which no "
        "log-probability can be; the server's answer is unusable"
    )


# -- HTTP -----------------------------------------------------------------------------------------


def retry_after_seconds(value: str | None) -> float | None:
    """A ``Retry-After`` header in seconds: a delay (``"7"``) or an HTTP date (``"Wed, 21 Oct 2026
    07:28:00 GMT"``, counted from now, never below 0); None when absent or unreadable."""
    from datetime import datetime
    from email.utils import parsedate_to_datetime

    if not isinstance(value, str) or not value.strip():
        return None
    value = value.strip()
    if re.fullmatch(r"[0-9]+(\.[0-9]+)?", value):
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


class _Retryable(Exception):
    """An answer worth asking again (408, 429 or 5xx), with the server's ``Retry-After`` if it sent one."""

    def __init__(self, status: int, body: str, retry_after: float | None = None):
        super().__init__(f"HTTP {status}: {body}")
        self.status = status
        self.retry_after = retry_after


def _is_retryable(exc: BaseException) -> bool:
    import httpx

    if isinstance(exc, httpx.ConnectError):  # refused: nobody is listening, asking again will not help
        return False
    return isinstance(
        exc, (_Retryable, httpx.TimeoutException, httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)
    )


class _BudgetReached(Exception):
    """``--max-tokens-total`` is reached: send nothing more."""


class _Wait:
    """tenacity's wait: the server's ``Retry-After`` when it gave one, else exponential backoff."""

    def __init__(self, cap: float):
        from tenacity import wait_exponential

        self.backoff = wait_exponential(multiplier=0.5, max=8)
        self.cap = cap

    def __call__(self, state) -> float:
        exc = state.outcome.exception() if state.outcome is not None else None
        after = getattr(exc, "retry_after", None)
        return min(after, self.cap) if after is not None else self.backoff(state)


class _Limiter:
    """Requests in flight, adapted to a server that pushes back (AIMD, as TCP does): a 429 or 503
    halves the limit (at most once a second, so one burst of refusals counts once), every answer
    that comes back whole adds ``1 / limit`` to it, up to the ``ceiling`` the user asked for.
    ``async with limiter:`` holds one slot; ``say`` reports each change."""

    def __init__(self, ceiling: int, say: Callable[[str], None]):
        self.ceiling = ceiling
        self.limit = float(ceiling)
        self.in_flight = 0
        self.lowest = ceiling
        self.say = say
        self._cut_at = -math.inf
        self._cond: asyncio.Condition | None = None

    @property
    def cond(self) -> asyncio.Condition:
        if self._cond is None:
            self._cond = asyncio.Condition()
        return self._cond

    async def __aenter__(self) -> _Limiter:
        async with self.cond:
            await self.cond.wait_for(lambda: self.in_flight < int(self.limit))
            self.in_flight += 1
        return self

    async def __aexit__(self, *exc) -> None:
        self.in_flight -= 1  # at once, so a cancellation while waiting for the lock cannot lose the slot
        async with self.cond:
            self.cond.notify_all()

    async def drained(self) -> None:
        """Wait until no request is in flight."""
        async with self.cond:
            await self.cond.wait_for(lambda: self.in_flight == 0)

    def pushed_back(self, status: int, retry_after: float | None) -> None:
        now = time.monotonic()
        if now - self._cut_at < 1.0:
            return
        self._cut_at = now
        old = int(self.limit)
        self.limit = max(1.0, self.limit / 2)
        self.lowest = min(self.lowest, int(self.limit))
        wait = f", Retry-After {retry_after:g} s" if retry_after is not None else ""
        if int(self.limit) < old:
            self.say(f"server pushes back (HTTP {status}{wait}): requests in flight {old} -> {int(self.limit)}")
        else:
            self.say(f"server pushes back (HTTP {status}{wait}) at 1 request in flight")

    def answered(self) -> None:
        if self.limit >= self.ceiling:
            return
        old = int(self.limit)
        self.limit = min(float(self.ceiling), self.limit + 1 / self.limit)
        if int(self.limit) > old and int(self.limit) in (self.ceiling, 2 * old):
            self.say(
                f"server answers again: requests in flight {old} -> {int(self.limit)}"
                + (" (the set maximum)" if int(self.limit) == self.ceiling else "")
            )


class OpenAIBackend(BaseBackend):
    """A model behind an OpenAI-compatible server (see the module docstring)."""

    dtype = "server"
    device = "server"
    #: The engine's name in specs, messages and results.
    engine = "openai"

    def __init__(self, settings: dict[str, Any], *, progress: bool = True):
        import httpx

        self._base = settings["url"]
        self.url = clean_url(self._base)
        self.concurrency = settings["concurrency"]
        self.max_retries = settings["max_retries"]
        self.deadline = settings["deadline"]
        self.notice_after = settings["notice_after"]
        self.max_tokens_total = settings["max_tokens_total"]
        self.progress = progress
        self._key = os.environ.get(settings["api_key_env"]) or None
        parts = urlsplit(self._base)
        userinfo = parts.netloc.rpartition("@")[0]
        self._secrets = [
            s
            for s in (self._key, userinfo and userinfo + "@", parts.query and "?" + parts.query, parts.password)
            if s and (s == self._key or len(s) > 3)
        ]
        self._root = self._base[:-3] if parts.path.rstrip("/").endswith("/v1") else self._base
        headers = {"Authorization": f"Bearer {self._key}"} if self._key else {}
        self._timeout = httpx.Timeout(settings["timeout"], connect=min(settings["timeout"], 30.0))
        self._headers = headers
        self._loop = asyncio.new_event_loop()
        self._client: Any = None
        self._limiter = _Limiter(self.concurrency, self._say)
        self._sync = httpx.Client(headers=headers, timeout=self._timeout)
        self._checked = False
        self._tokenize: bool | None = None
        self._token_counts: dict[str, int] = {}
        self._noticed_at = -math.inf
        self.straddles = 0
        #: Tokens the server reported spending (``usage``), over every request of this backend.
        self.tokens = {"requests": 0, "prompt_tokens": 0, "completion_tokens": 0}
        try:
            served = self._models()
        except BaseException:
            self.close()
            raise
        ids = [m.get("id") for m in served if isinstance(m, dict) and isinstance(m.get("id"), str)]
        wanted = settings["model"]
        if wanted is None:
            if not ids:
                raise ModelLoadError(f"{self.url}/models lists no model; pass --model-arg model=ID")
            wanted = ids[0]
        elif ids and wanted not in ids:
            raise ModelLoadError(f"{self.url} does not serve model {wanted!r}; it serves {', '.join(ids)}")
        card = next((m for m in served if isinstance(m, dict) and m.get("id") == wanted), {})
        self.model_id = wanted
        self.owned_by = card.get("owned_by")
        max_len = card.get("max_model_len")
        self.max_length = max_len if isinstance(max_len, int) and max_len > 0 else None
        self.name = wanted.rstrip("/").rsplit("/", 1)[-1] or wanted
        self.fingerprint = f"{self.engine}:{wanted}@{self.url}"

    # -- plumbing --------------------------------------------------------------------------
    def _say(self, text: str) -> None:
        """One line on stderr about this server (rate limits, slow answers), above any progress bar."""
        from tqdm.auto import tqdm

        tqdm.write(self._scrub(f"synthprobe: {self.engine}:{self.url}: {text}"), file=sys.stderr)

    def _scrub(self, text: str) -> str:
        text = text.replace(self._base, self.url)
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    def _fail(self, what: str, exc: BaseException, error: type = ScoringError) -> Exception:
        import httpx

        if isinstance(exc, httpx.ConnectError):
            reason = "connection refused or host unreachable: is the server running?"
        elif isinstance(exc, TimeoutError):  # the request's deadline, tries and waits included
            reason = (
                f"no answer within {self.deadline:g} s (--model-arg deadline; tries and waits for Retry-After included)"
            )
        elif isinstance(exc, httpx.TimeoutException):
            reason = f"no answer in time after {self.max_retries + 1} tries ({type(exc).__name__})"
        elif isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)):
            reason = f"the connection dropped after {self.max_retries + 1} tries ({type(exc).__name__}: {exc})"
        elif isinstance(exc, _Retryable):
            reason = f"{exc} (after {self.max_retries + 1} tries)"
        else:
            reason = f"{type(exc).__name__}: {exc}"
        return error(self._scrub(f"{what} failed: {reason}"))

    def _retrying(self, asynchronous: bool):
        from tenacity import AsyncRetrying, Retrying, retry_if_exception, stop_after_attempt

        kind = AsyncRetrying if asynchronous else Retrying
        return kind(
            stop=stop_after_attempt(self.max_retries + 1),
            wait=_Wait(self.deadline),
            retry=retry_if_exception(_is_retryable),
            reraise=True,
        )

    @staticmethod
    def _answer(response, what: str) -> Any:
        if response.status_code in (408, 429) or response.status_code >= 500:
            after = (
                retry_after_seconds(response.headers.get("retry-after")) if response.status_code in (429, 503) else None
            )
            raise _Retryable(response.status_code, response.text[:300], after)
        if response.status_code >= 400:
            raise ScoringError(f"{what} answered HTTP {response.status_code}: {response.text[:500]}")
        try:
            return response.json()
        except ValueError:
            raise ScoringError(f"{what} answered with something that is not JSON: {response.text[:200]!r}") from None

    def _get(self, url: str, what: str, *, error: type = ScoringError) -> Any:
        """A GET bounded, as every POST is, by ``deadline`` in all: each try waits at most what is
        left of it, so a server that accepts the connection and never answers ends the run once."""
        import httpx

        end = time.monotonic() + self.deadline
        try:
            for attempt in self._retrying(False):
                with attempt:
                    left = end - time.monotonic()
                    if left <= 0:
                        raise TimeoutError
                    try:
                        response = self._sync.get(
                            url,
                            timeout=httpx.Timeout(
                                min(self._timeout.read, left), connect=min(self._timeout.connect, left)
                            ),
                        )
                    except httpx.TimeoutException:
                        if end - time.monotonic() <= 0.05:  # the deadline, not one try's limit, ran out
                            raise TimeoutError from None
                        raise
                    return self._answer(response, what)
        except (ScoringError, ModelLoadError) as exc:
            raise error(self._scrub(str(exc))) from None
        except Exception as exc:
            raise self._fail(what, exc, error) from None

    def usage(self) -> dict[str, Any]:
        """Tokens spent so far as the server reported them (``usage`` of every answer), for results."""
        out: dict[str, Any] = {
            **self.tokens,
            "total_tokens": self.tokens["prompt_tokens"] + self.tokens["completion_tokens"],
        }
        if self.max_tokens_total is not None:
            out["max_tokens_total"] = self.max_tokens_total
        if self._limiter.lowest < self.concurrency:
            out["lowest_concurrency"] = self._limiter.lowest
        return out

    def _spent(self) -> bool:
        return (
            self.max_tokens_total is not None
            and self.tokens["prompt_tokens"] + self.tokens["completion_tokens"] >= self.max_tokens_total
        )

    async def _stop_for_budget(self) -> None:
        """Let the requests already sent finish (their answers are kept), then stop the run."""
        await self._limiter.drained()
        spent = self.tokens["prompt_tokens"] + self.tokens["completion_tokens"]
        raise TokenBudgetSpent(
            f"{self.engine}:{self.url}: the token budget is spent: {spent:,} tokens used "
            f"({self.tokens['prompt_tokens']:,} prompt + {self.tokens['completion_tokens']:,} "
            f"completion) of --max-tokens-total {self.max_tokens_total:,}; no further "
            "request was sent"
        )

    def _count(self, doc: Any) -> dict[str, int]:
        """Add an answer's ``usage`` to the backend's totals; return its prompt and completion tokens."""
        usage = doc.get("usage") if isinstance(doc, dict) else None
        got = {}
        if isinstance(usage, dict):
            for key in ("prompt_tokens", "completion_tokens"):
                value = usage.get(key)
                if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                    got[key] = value
                    self.tokens[key] += value
        self.tokens["requests"] += 1
        return got

    async def _post(self, path: str, body: dict, sem: _Limiter) -> dict:
        """One request under the limiter, retried on 429/5xx/timeouts (waiting out ``Retry-After``)
        and bounded by ``deadline`` in all; the answer's ``usage`` is counted."""
        what = f"POST {self.url}{path}"
        loop = asyncio.get_running_loop()
        if self._spent():
            await self._stop_for_budget()
        try:
            # the deadline starts when the request first gets a slot (not while it queues behind others)
            async with asyncio.timeout(None) as bound:
                async for attempt in self._retrying(True):
                    with attempt:
                        async with sem:
                            if bound.when() is None:
                                bound.reschedule(loop.time() + self.deadline)
                            if self._spent():
                                raise _BudgetReached
                            started = time.monotonic()
                            handle = loop.call_later(
                                self.notice_after, self._waited, what, started, attempt.retry_state.attempt_number
                            )
                            try:
                                response = await self._client.post(self._base + path, json=body)
                            finally:
                                handle.cancel()
                            try:
                                doc = self._answer(response, what)
                            except _Retryable as exc:
                                if exc.status in (429, 503):
                                    sem.pushed_back(exc.status, exc.retry_after)
                                raise
                            sem.answered()
                            self._count(doc)
                            return doc
        except _BudgetReached:
            await self._stop_for_budget()
        except ScoringError as exc:
            raise type(exc)(self._scrub(str(exc))) from None
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            raise self._fail(what, exc) from None
        raise AssertionError("unreachable")

    def _waited(self, what: str, started: float, attempt: int) -> None:
        """A request has waited ``notice_after`` seconds: say so (once per that interval per backend)."""
        now = time.monotonic()
        if now - self._noticed_at < self.notice_after:
            return
        self._noticed_at = now
        self._say(
            f"{what} has had no answer for {now - started:.0f} s (try {attempt} of {self.max_retries + 1}; "
            f"each try times out after {self._timeout.read:g} s, the request after {self.deadline:g} s "
            "in all)"
        )

    def _run(self, make: Callable[[_Limiter], Awaitable[Any]]) -> Any:
        """Run a coroutine on this backend's loop; on any failure or Ctrl-C cancel what is still in flight."""
        import httpx

        async def main():
            if self._client is None:
                limits = httpx.Limits(max_connections=self.concurrency, max_keepalive_connections=self.concurrency)
                self._client = httpx.AsyncClient(headers=self._headers, timeout=self._timeout, limits=limits)
            return await make(self._limiter)

        task = self._loop.create_task(main())
        try:
            return self._loop.run_until_complete(task)
        finally:
            pending = [t for t in asyncio.all_tasks(self._loop) if not t.done()]
            for t in pending:
                t.cancel()
            if pending:
                self._loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))

    @staticmethod
    async def _all(coros: Iterable[Awaitable[Any]]) -> list[Any]:
        """Await every coroutine; the first failure cancels the rest and is raised as itself."""
        try:
            async with asyncio.TaskGroup() as group:
                tasks = [group.create_task(c) for c in coros]
        except BaseExceptionGroup as eg:
            first = eg.exceptions[0]
            while isinstance(first, BaseExceptionGroup):
                first = first.exceptions[0]
            raise first from None
        return [t.result() for t in tasks]

    def _bar(self, total: int, desc: str, progress: bool):
        from tqdm.auto import tqdm

        return tqdm(
            total=total,
            desc=desc,
            unit="item",
            disable=not (progress and self.progress) or total == 0,
            dynamic_ncols=True,
        )

    def _models(self) -> list[Any]:
        doc = self._get(f"{self._base}/models", f"GET {self.url}/models", error=ModelLoadError)
        data = doc.get("data") if isinstance(doc, dict) else None
        if not isinstance(data, list):
            raise ModelLoadError(f"{self.url}/models did not answer with an OpenAI model list ({str(doc)[:200]})")
        return data

    # -- log-likelihood --------------------------------------------------------------------
    def _check_echo(self, prompt: str, doc: dict) -> tuple[list[str], list[float | None], list[dict | None], list[int]]:
        """The prompt tokens of an echo answer, or a ScoringError saying why the answer is unusable."""
        where = f"{self.url} (model {self.model_id})"
        chance = "log-likelihood scores from it would be chance"
        choices = doc.get("choices") if isinstance(doc, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise ScoringError(f"{where} answered /completions without choices: {str(doc)[:200]}")
        lp = choices[0].get("logprobs")
        usage = doc.get("usage") if isinstance(doc.get("usage"), dict) else {}
        n_prompt = usage.get("prompt_tokens")
        if not isinstance(lp, dict):
            raise ScoringError(
                f"{where} returned no log-probabilities for an echo request (logprobs is "
                f"{lp!r}); it does not implement echo with logprobs, so {chance}; {ECHO_HINT}"
            )
        if "content" in lp and "token_logprobs" not in lp:
            raise ScoringError(
                f"{where} answered in the chat-style 'logprobs.content' shape, without "
                f"'tokens'/'token_logprobs'/'text_offset' for the prompt (current llama.cpp "
                f"llama-server does this); it does not implement echo, so {chance}; {ECHO_HINT}"
            )
        tokens, lps, tops, offs = (lp.get(k) for k in ("tokens", "token_logprobs", "top_logprobs", "text_offset"))
        if not all(isinstance(x, list) for x in (tokens, lps, offs)):
            raise ScoringError(
                f"{where} returned logprobs without the lists tokens, token_logprobs and "
                f"text_offset (keys: {', '.join(sorted(lp))}); {chance}"
            )
        if not isinstance(n_prompt, int) or n_prompt < 1:
            n_prompt = sum(1 for o in offs if isinstance(o, int) and o < len(prompt))
        if not len(tokens) == len(lps) == len(offs):
            raise ScoringError(
                f"{where} returned {len(tokens)} tokens but {len(lps)} log-probabilities and "
                f"{len(offs)} offsets; {chance}"
            )
        if len(tokens) < n_prompt:
            raise ScoringError(
                f"{where} returned log-probabilities for {len(tokens)} generated token{'s' if len(tokens) != 1 else ''}"
                f" only, not for the {n_prompt} prompt tokens: it does not implement echo (llama.cpp's "
                f"llama-server is known to do this); {chance}; {ECHO_HINT}"
            )
        n_sent = len(tokens)
        tokens, lps, offs = tokens[:n_prompt], lps[:n_prompt], offs[:n_prompt]
        tops = list(tops[:n_prompt]) if isinstance(tops, list) else [None] * n_prompt
        if not any(isinstance(o, int) and o < len(prompt) for o in offs):
            raise ScoringError(
                f"{where} echoed no prompt tokens at all for an echo request (it answered "
                f"with {n_sent} token{'s' if n_sent != 1 else ''} after the prompt's "
                f"{len(prompt)} characters): it does not implement echo, so {chance}; {ECHO_HINT}"
            )
        if lps[1:] and all(v is None for v in lps[1:]):
            raise ScoringError(
                f"{where} returned null log-probabilities for all {n_prompt - 1} prompt tokens "
                f"after the first; it does not score the prompt, so {chance}; {ECHO_HINT}"
            )
        for i, v in enumerate(lps[1:], start=1):
            if v is None:
                bad = sum(1 for v in lps[1:] if v is None)
                raise ScoringError(
                    f"{where} returned null log-probabilities for {bad} of the {n_prompt - 1} "
                    f"prompt tokens after the first; it does not score the prompt, so {chance}"
                )
            check_logprob(v, where, f"prompt token {i} ({tokens[i]!r})")
        for i, top in enumerate(tops):
            if isinstance(top, dict):
                for alt, v in top.items():
                    if v is not None:
                        check_logprob(v, where, f"the top_logprobs entry {alt!r} of prompt token {i}")
        pos = 0
        for tok, off in zip(tokens, offs):
            ok = isinstance(tok, str) and isinstance(off, int) and off == pos
            if ok and "\ufffd" not in tok and not tok.startswith("bytes:"):
                ok = prompt.startswith(tok, off)
            if not ok:
                raise ScoringError(
                    f"{where} returned prompt tokens that do not spell the prompt (token {tok!r} "
                    f"at text_offset {off!r}, expected offset {pos}); the offsets cannot place "
                    f"the continuation, so the answer is unusable"
                )
            pos = off + len(tok) if "\ufffd" not in tok and not tok.startswith("bytes:") else off + 1
        if pos < len(prompt) and "\ufffd" not in "".join(tokens):
            raise ScoringError(
                f"{where} returned prompt tokens covering {pos} of the prompt's {len(prompt)} "
                f"characters: it does not echo the whole prompt, so {chance}; {ECHO_HINT}"
            )
        return tokens, lps, tops, offs

    async def _loglik(self, context: str, continuation: str, sem) -> tuple[EndingScore, bool]:
        if not context:
            raise InputError("an empty context cannot be scored through a server (there is no BOS stand-in)")
        if not continuation:
            raise InputError("an empty continuation has no log-likelihood")
        prompt = context + continuation
        body = {
            "model": self.model_id,
            "prompt": prompt,
            "echo": True,
            "logprobs": 1,
            "max_tokens": 1,
            "temperature": 0,
        }
        if self.owned_by == "vllm":
            body["add_special_tokens"] = False  # the protocol adds no BOS; vLLM's default would
        doc = await self._post("/completions", body, sem)
        tokens, lps, tops, offs = self._check_echo(prompt, doc)
        boundary = len(context)
        total, n, greedy, straddle = 0.0, 0, True, False
        for i, (tok, lp, off) in enumerate(zip(tokens, lps, offs)):
            end = off + max(len(tok), 1)
            if end <= boundary:
                continue
            if off < boundary:
                straddle = True
            if lp is None:  # only the very first prompt token can be null
                raise ScoringError(
                    f"{self.url}: the continuation starts at the prompt's first token, which has "
                    "no log-probability; the context is too short to score"
                )
            total += float(lp)
            n += 1
            top = tops[i]
            if isinstance(top, dict) and top:
                greedy = greedy and float(lp) >= max(float(v) for v in top.values() if v is not None)
            else:
                greedy = False
        return EndingScore(total, n, len(continuation), greedy), straddle

    async def _first_then_rest(self, jobs: list[tuple[str, str]], sem, done: Callable[[int, EndingScore], None]):
        """Score ``jobs``; the backend's first request runs alone so a broken endpoint stops the run at once."""
        out: list[EndingScore | None] = [None] * len(jobs)

        async def one(j: int):
            score, straddle = await self._loglik(*jobs[j], sem)
            self.straddles += straddle
            out[j] = score
            done(j, score)

        start = 0
        if not self._checked and jobs:
            await one(0)
            self._checked = True
            start = 1
        await self._all(one(j) for j in range(start, len(jobs)))
        return out

    def loglikelihood(
        self, pairs: Iterable[tuple[str, str]], *, batch_size: int = 32, max_context: int = 1024, progress: bool = False
    ) -> list[EndingScore]:
        """``log P(continuation | context)`` per pair, ``concurrency`` requests in flight."""
        jobs = list(pairs)
        with self._bar(len(jobs), f"loglikelihood · {self.name}", progress) as bar:
            return self._run(lambda sem: self._first_then_rest(jobs, sem, lambda j, s: bar.update(1)))

    def run_choices(
        self,
        items: Sequence[Any],
        *,
        batch_size: int = 32,
        max_context: int = 1024,
        scorer: str = "onepass",
        progress: bool = True,
        on_item: ChoiceCallback | None = None,
        desc: str | None = None,
        source: str | None = None,
    ) -> ChoiceRun:
        """Every ending of every item in flight together (``concurrency`` requests at a time);
        ``on_item`` fires as each item's last ending comes back. The scorer is always ``reference``
        (the server sees each ending with its context); ``max_context`` is the server's business."""
        t0 = time.perf_counter()
        jobs, owner = [], []
        for k, item in enumerate(items):
            for e in item.endings:
                jobs.append((item.ctx, e))
                owner.append(k)
        left = [len(item.endings) for item in items]
        rows: list[list[EndingScore | None]] = [[None] * len(item.endings) for item in items]
        first = [0] * len(items)
        for j, k in enumerate(owner):
            if j == 0 or owner[j - 1] != k:
                first[k] = j
        straddles0 = self.straddles

        with self._bar(len(items), desc or f"score · {self.name}", progress) as bar:

            def done(j: int, score: EndingScore) -> None:
                k = owner[j]
                rows[k][j - first[k]] = score
                left[k] -= 1
                if left[k] == 0:
                    self._refuse_impossible_tie(items[k], rows[k])
                    bar.update(1)
                    if on_item is not None:
                        on_item(k, list(rows[k]), False)

            self._run(lambda sem: self._first_then_rest(jobs, sem, done))
        eval_s = time.perf_counter() - t0
        reason = None if scorer == "reference" else "a server scores each ending with its context on its own"
        return ChoiceRun(
            scores=[list(r) for r in rows],
            truncated=[False] * len(items),
            scorer_used="reference",
            fallback_reason=reason,
            timing={
                "eval_s": round(eval_s, 3),
                "items_per_s": round(len(items) / eval_s, 3) if items and eval_s > 0 else None,
                "concurrency": self.concurrency,
                "boundary_straddles": self.straddles - straddles0,
            },
        )

    def _refuse_impossible_tie(self, item: Any, row: list) -> None:
        """-inf is a true answer for an impossible ending beside possible ones; when every ending is
        -inf the choice would fall to a tie (the lowest index) silently, so the run stops instead."""
        if row and all(s is not None and s.logprob == -math.inf for s in row):
            raise ScoringError(
                f"{self.url} (model {self.model_id}) returned a log-probability of -inf for every "
                f"ending of item {getattr(item, 'id', '?')!r}: no ending is possible, so a choice "
                "would be a silent tie; the server's answer is unusable"
            )

    # -- generation ------------------------------------------------------------------------
    @staticmethod
    def _stops(stop: str | Sequence[str] | None) -> list[str]:
        stops = [stop] if isinstance(stop, str) else list(stop or [])
        for s in stops:
            if not isinstance(s, str) or not s:
                raise ValueError(f"stop strings must be non-empty strings, got {s!r}")
        return stops

    # What differs between /completions and /chat/completions (the openai-chat engine overrides these).
    endpoint = "/completions"

    def _prompt_body(self, prompt: Any) -> dict[str, Any]:
        if not isinstance(prompt, str):
            raise TypeError(f"the {self.engine} engine takes prompts as strings, got {type(prompt).__name__}")
        body: dict[str, Any] = {"prompt": prompt}
        if self.owned_by == "vllm":
            body["add_special_tokens"] = False
        return body

    #: Asks for each choice's own tokens, so ``n > 1`` samples can say how long each one is.
    per_choice_tokens: dict[str, Any] = {"logprobs": 0}

    @staticmethod
    def _choice_text(choice: dict) -> Any:
        return choice.get("text")

    @staticmethod
    def _choice_tokens(choice: dict) -> list | None:
        lp = choice.get("logprobs")
        own = lp.get("tokens") if isinstance(lp, dict) else None
        return own if isinstance(own, list) else None

    def _generation(
        self, choice: dict, n_tokens: int | None, prompt_tokens: int | None, stops: list[str], skip_ws: bool
    ) -> Generation:
        text = self._choice_text(choice)
        if not isinstance(text, str):
            raise ScoringError(f"{self.url} answered {self.endpoint} without a text: {str(choice)[:200]}")
        reason = choice.get("finish_reason")
        finish = "length" if reason == "length" else ("stop" if isinstance(choice.get("stop_reason"), str) else "eos")
        if skip_ws:  # stop strings were left to us: they count only after the leading whitespace
            text = text.lstrip()
            cuts = [text.find(s) for s in stops if s in text]
            if cuts:
                text, finish = text[: min(cuts)], "stop"
        return Generation(text, finish, n_tokens if n_tokens is not None else 0, prompt_tokens)

    async def _complete(
        self, prompt: Any, *, n: int, max_new_tokens: int, stops: list[str], skip_ws: bool, sem, **sampling
    ) -> list[Generation]:
        """``n`` continuations of one prompt in one request (a string, or for the chat engine a list
        of messages), each with the tokens the server reported for it."""
        if max_new_tokens == 0:
            return [Generation("", "length", 0)] * n
        return (
            await self._request(
                prompt, n=n, max_new_tokens=max_new_tokens, stops=stops, skip_ws=skip_ws, sem=sem, **sampling
            )
        )[1]

    async def _request(
        self, prompt: Any, *, n: int, max_new_tokens: int, stops: list[str], skip_ws: bool, sem, **sampling
    ) -> tuple[list[dict], list[Generation]]:
        """:meth:`_complete`'s request (``max_new_tokens`` >= 1): the choices as the server sent
        them, in index order, and their generations (``first_token`` reads the choices' logprobs)."""
        body = {"model": self.model_id, **self._prompt_body(prompt), "max_tokens": max_new_tokens, "n": n, **sampling}
        if n > 1:  # usage counts the tokens of all choices together; each choice's tokens say its own
            body.update(self.per_choice_tokens)
        if stops and not skip_ws:
            body["stop"] = stops
        doc = await self._post(self.endpoint, body, sem)
        choices = doc.get("choices") if isinstance(doc, dict) else None
        if not isinstance(choices, list) or len(choices) != n or not all(isinstance(c, dict) for c in choices):
            raise ScoringError(f"{self.url} answered {self.endpoint} with {len(choices or [])} choices, expected {n}")
        choices = sorted(choices, key=lambda c: c.get("index", 0))
        usage = doc.get("usage") if isinstance(doc.get("usage"), dict) else {}
        total, n_prompt = usage.get("completion_tokens"), usage.get("prompt_tokens")
        n_prompt = n_prompt if isinstance(n_prompt, int) and not isinstance(n_prompt, bool) else None
        counts = []
        for c in choices:
            own = self._choice_tokens(c)
            counts.append(len(own) if own is not None else (total if isinstance(total, int) and n == 1 else None))
        return choices, [self._generation(c, k, n_prompt, stops, skip_ws) for c, k in zip(choices, counts)]

    def _many(self, prompts: Sequence[str], desc: str, progress: bool, call, *, alone_first: bool = False) -> list[Any]:
        """``call(i, prompt, sem)`` for every prompt, ``concurrency`` in flight, results in prompt order;
        ``alone_first``: the first prompt's request runs alone, so a server that cannot answer the
        kind of request at all stops the run before anything else is sent."""
        if isinstance(prompts, str):
            raise TypeError("prompts must be a sequence of strings, not one string")
        prompts = list(prompts)
        if not prompts:
            return []
        with self._bar(len(prompts), desc, progress) as bar:

            async def one(i: int, sem):
                out = await call(i, prompts[i], sem)
                bar.update(1)
                return out

            async def every(sem):
                head = [await one(0, sem)] if alone_first else []
                return head + await self._all(one(i, sem) for i in range(len(head), len(prompts)))

            return self._run(every)

    def generate(
        self,
        prompts: Sequence[str],
        max_new_tokens: int,
        stop: str | Sequence[str] | None = None,
        *,
        batch_size: int = 16,
        progress: bool = True,
        details: bool = False,
        skip_leading_whitespace: bool = False,
    ) -> list[str] | list[Generation]:
        """Greedy (temperature 0) continuations, cut before the first stop string (with
        ``skip_leading_whitespace``, stop strings count only after the leading whitespace, which
        is dropped; they are then applied here, not by the server)."""
        stops = self._stops(stop)
        if not isinstance(max_new_tokens, int) or isinstance(max_new_tokens, bool) or max_new_tokens < 0:
            raise ValueError(f"max_new_tokens must be an integer >= 0, got {max_new_tokens!r}")

        async def call(i: int, prompt: str, sem) -> Generation:
            return (
                await self._complete(
                    prompt,
                    n=1,
                    max_new_tokens=max_new_tokens,
                    stops=stops,
                    skip_ws=skip_leading_whitespace,
                    sem=sem,
                    temperature=0,
                )
            )[0]

        gens = self._many(prompts, f"generate · {self.name}", progress, call)
        return gens if details else [g.text for g in gens]

    def sample(
        self,
        prompts: Sequence[str],
        *,
        n: int,
        temperature: float,
        seeds: Sequence[int],
        max_new_tokens: int,
        top_p: float = 1.0,
        stop: str | Sequence[str] | None = None,
        batch_size: int = 16,
        progress: bool = True,
        skip_leading_whitespace: bool = False,
    ) -> list[list[Generation]]:
        """``n`` samples per prompt in one request each, with that prompt's seed (servers that take
        ``seed``, as vLLM does, then give the same samples for the same seed)."""
        stops = self._stops(stop)
        if isinstance(prompts, str):
            raise TypeError("prompts must be a sequence of strings, not one string")
        prompts = list(prompts)
        if len(seeds) != len(prompts):
            raise ValueError(f"expected one seed per prompt ({len(prompts)}), got {len(seeds)}")

        async def call(i: int, prompt: str, sem) -> list[Generation]:
            return await self._complete(
                prompt,
                n=n,
                max_new_tokens=max_new_tokens,
                stops=stops,
                skip_ws=skip_leading_whitespace,
                sem=sem,
                temperature=temperature,
                top_p=top_p,
                seed=int(seeds[i]),
            )

        return self._many(prompts, f"sample · {self.name}", progress, call)

    # -- the first token -------------------------------------------------------------------
    def _top_request(self, top_k: int) -> dict[str, Any]:
        """The request fields that ask for the ``top_k`` most likely tokens at each generated position."""
        return {"logprobs": top_k}

    #: How :meth:`_top_request`'s fields and the answer's place of them read in messages.
    top_fields = ("logprobs: top_k", "choices[0].logprobs.top_logprobs[0]")

    @staticmethod
    def _first_alternatives(choice: dict) -> list[tuple[Any, Any]] | None:
        """The first generated position's alternatives as ``(token, logprob)`` pairs, as the server
        sent them (``logprobs.top_logprobs[0]``, a token -> logprob object), or None when absent."""
        lp = choice.get("logprobs")
        tops = lp.get("top_logprobs") if isinstance(lp, dict) else None
        first = tops[0] if isinstance(tops, list) and tops else None
        return list(first.items()) if isinstance(first, dict) and first else None

    def _first_token(
        self, choice: dict, gen: Generation, candidates: Sequence[str], top_k: int, index: int
    ) -> FirstToken:
        """One :class:`FirstToken` from a choice: its ``top_k`` most likely first tokens (the server
        may add the chosen token beside them; it is kept for the candidates, not for ``top``) and
        each candidate matched by exact token string."""
        where = f"{self.url} (model {self.model_id})"
        pairs = self._first_alternatives(choice)
        if pairs is None:
            asked, place = self.top_fields
            raise ScoringError(
                f"{where} returned no log-probabilities for the first generated token of prompt {index} "
                f"(asked with {asked}; {place} is missing from its answer): it does not return "
                "top log-probabilities, so first-token scores cannot be read from it; use a server that "
                "does (vLLM, SGLang) or a protocol that generates (letters, free)"
            )
        best: dict[str, float] = {}
        for token, value in pairs:
            if not isinstance(token, str):
                raise ScoringError(f"{where} returned a top_logprobs token that is not a string: {token!r:.80}")
            lp = check_logprob(value, where, f"the first-token alternative {token!r}")
            if token not in best or lp > best[token]:  # two ids may decode to one string
                best[token] = lp
        top = tuple(sorted(best.items(), key=lambda t: -t[1])[:top_k])
        return FirstToken({c: best.get(c) for c in candidates}, top, gen, len(top))

    def first_token(
        self,
        prompts: Sequence[str],
        candidates: Sequence[str],
        max_new_tokens: int = 2,
        stop: str | Sequence[str] | None = None,
        *,
        top_k: int = 20,
        batch_size: int = 16,
        progress: bool = True,
    ) -> list[FirstToken]:
        """The first generated token's ``top_k`` alternatives and the greedy (temperature 0)
        continuation, in one request per prompt through :meth:`generate`'s request path (limiter,
        retries, deadline, token budget). A candidate is matched by exact token string; one
        outside the ``top_k`` that came back is None. The first request runs alone, so a server
        that returns no log-probabilities stops the run with one :class:`ScoringError`."""
        stops = self._stops(stop)
        candidates = first_token_arguments(candidates, max_new_tokens, top_k)

        async def call(i: int, prompt: Any, sem) -> FirstToken:
            choices, gens = await self._request(
                prompt,
                n=1,
                max_new_tokens=max_new_tokens,
                stops=stops,
                skip_ws=False,
                sem=sem,
                temperature=0,
                **self._top_request(top_k),
            )
            return self._first_token(choices[0], gens[0], candidates, top_k, i)

        return self._many(prompts, f"first tokens · {self.name}", progress, call, alone_first=True)

    # -- the rest --------------------------------------------------------------------------
    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` from the server's ``/tokenize`` (vLLM, SGLang); without one, the base
        class's upper bound (UTF-8 bytes)."""
        if text in self._token_counts:
            return self._token_counts[text]
        if self._tokenize is False:
            return super().count_tokens(text)
        body = {"model": self.model_id, "prompt": text, "add_special_tokens": False}
        response = None
        try:
            response = self._sync.post(f"{self._root}/tokenize", json=body)
        except Exception:
            response = None
        if response is None or response.status_code in (404, 405):
            self._tokenize = False
            return super().count_tokens(text)
        doc = self._answer(response, f"POST {self.url}/tokenize")
        count = doc.get("count") if isinstance(doc, dict) else None
        if not isinstance(count, int):
            tokens = doc.get("tokens") if isinstance(doc, dict) else None
            count = len(tokens) if isinstance(tokens, list) else None
        if count is None:
            self._tokenize = False
            return super().count_tokens(text)
        self._tokenize = True
        self._token_counts[text] = count
        return count

    def describe(self) -> dict[str, Any]:
        return {
            "spec": f"{self.engine}:{self.url}",
            "name": self.name,
            "source": self.engine,
            "endpoint": self.endpoint,
            "server_url": self.url,
            "server_model": self.model_id,
            "owned_by": self.owned_by,
            "weights_fingerprinted": False,
            "fingerprint": self.fingerprint,
            "params": None,
            "dtype": self.dtype,
            "device": self.device,
            "bos": False,
            "max_positions": self.max_length,
            "concurrency": self.concurrency,
        }

    def runtime(self) -> dict[str, Any]:
        import httpx

        return {"httpx": httpx.__version__, "concurrency": self.concurrency}

    def close(self) -> None:
        if self._client is not None and not self._loop.is_closed():
            self._loop.run_until_complete(self._client.aclose())
        self._client = None
        if not self._loop.is_closed():
            self._loop.close()
        self._sync.close()


#: What this engine can do (see :func:`synthprobe.backends.check_backend`'s ``needs``).
CAN = frozenset({"loglikelihood", "generate", "sample", "first_token"})


def check(spec: str, **options) -> None:
    """Check the URL and options before anything is sent (raises :class:`InputError`)."""
    _settings(spec, options)


def load(spec: str, **options) -> OpenAIBackend:
    """Connect to the server at ``spec`` (or ``base_url``), pick the model and return the backend;
    a server that cannot be reached is a :class:`ModelLoadError` naming the URL."""
    settings = _settings(spec, options)
    return OpenAIBackend(settings, progress=bool(options.get("progress", True)))


def identify(spec: str, **options) -> OpenAIBackend:
    """The model's identity in the score cache (:func:`synthprobe.backends.identify_backend`): a
    server's backend holds no weights, so it is the backend itself, made by asking the server which
    models it serves (one request); the plan closes it once its cached items are counted."""
    return load(spec, **options)
