"""Batched greedy decoding for causal LMs, with early stop at a stop string.

:func:`greedy_generate` is what every free-form task (arithmetic, word unscrambling) uses.
It returns the text that one-prompt-at-a-time greedy decoding returns, only faster. (Padding
changes the shapes of the matrix products and so the order of float sums, by ~1e-6: where
the two best next tokens are that close, either run may pick either; ``bench/bench_generation.py``
reports such ties.)

* prompts are sorted by token length (longest first) so a batch holds prompts of similar
  length and little padding; results come back in the caller's order;
* the tokens every prompt of a batch starts with (a chat template's system turn, a question's
  fixed opening, the demonstrations of a few-shot prompt) are read once and their cache copied to
  every row: with the chat template, a quarter of a Deep Arithmark prompt's tokens;
* each batch's own tokens are left-padded, with an attention mask and explicit ``position_ids``
  (so a padded prompt sees the same positions as when it is run alone), and decoded with the KV
  cache, computing logits for the last position only;
* where a batch's lengths spread, its prompt pass runs in groups of rows of near one length
  (:func:`row_groups`), each padded to its own longest row, and the groups' caches are joined
  into the one the whole batch's pass would have made: the pass does no work on the padding the
  batch's longest row would give a short one;
* after every step each unfinished sequence is checked: it is done when its decoded
  continuation contains a stop string or it emits an end-of-sequence token; finished rows are
  dropped from the batch (and from the cache), and the batch ends when all are done;
* the continuation is cut before the first stop string.

Tokenisation uses ``add_special_tokens=False`` by default (no BOS), matching the log-likelihood
scorer; pass ``add_special_tokens=True`` for models that need their BOS token.

:func:`sample_generate` runs the same decoding loop with temperature / nucleus (top-p)
sampling instead of the argmax: ``n`` samples per prompt as ``n`` rows of one batch (the
prompt is read once and its cache copied to the ``n`` rows), drawn with one seeded
:class:`torch.Generator` per prompt, so a prompt's samples depend only on the
prompt, its seed and the settings. With ``details=True`` (greedy) and always for sampling,
every continuation comes back as a :class:`Generation` that also says why it ended: a stop
string, an end-of-sequence token, or the ``max_new_tokens`` budget (then it is truncated).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import torch

from synthprobe.backends.base import FinishReason, FirstToken, Generation, first_token_arguments


def sample_arguments(
    prompts, *, n: int, temperature: float, top_p: float, seeds: Sequence[int], stop: str | Sequence[str] | None
) -> tuple[list[str], list[int], tuple[str, ...]]:
    """The checked arguments of a ``sample`` call, for every engine: ``(prompts, seeds, stops)``.
    Raises ValueError naming the argument that is out of range."""
    prompts = list(prompts) if not isinstance(prompts, str) else prompts
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0 for sampling, got {temperature!r}")
    if not 0 < top_p <= 1:
        raise ValueError(f"top_p must be in (0, 1], got {top_p!r}")
    seeds = list(seeds)
    if len(seeds) != len(prompts) or not all(isinstance(x, int) and not isinstance(x, bool) for x in seeds):
        raise ValueError(f"expected one integer seed per prompt ({len(prompts)}), got {seeds!r:.80}")
    return prompts, seeds, _as_stops(stop)


def _as_stops(stop: str | Sequence[str] | None) -> tuple[str, ...]:
    if stop is None:
        return ()
    if isinstance(stop, str):
        stops = (stop,)
    else:
        stops = tuple(stop)
    for s in stops:
        if not isinstance(s, str) or not s:
            raise ValueError(f"stop strings must be non-empty strings, got {s!r}")
    return stops


def cut_at_stop(text: str, stops: str | Sequence[str] | None) -> str:
    """``text`` up to (not including) the earliest occurrence of any stop string."""
    cut = len(text)
    for s in _as_stops(stops):
        pos = text.find(s)
        if pos != -1:
            cut = min(cut, pos)
    return text[:cut]


def _eos_ids(model, tokenizer) -> set[int]:
    ids: set[int] = set()
    gen_cfg = getattr(model, "generation_config", None)
    value = getattr(gen_cfg, "eos_token_id", None) if gen_cfg is not None else None
    if value is None:
        value = getattr(tokenizer, "eos_token_id", None)
    if isinstance(value, int):
        ids.add(value)
    elif value is not None:
        ids.update(int(v) for v in value)
    return ids


def _pad_id(tokenizer) -> int:
    for attr in ("pad_token_id", "eos_token_id", "unk_token_id"):
        value = getattr(tokenizer, attr, None)
        if isinstance(value, int):
            return value
    return 0


def _accepts(model, name: str) -> bool:
    try:
        return name in inspect.signature(model.forward).parameters
    except (TypeError, ValueError):
        return False


def _max_positions(model) -> int | None:
    cfg = getattr(model, "config", None)
    value = getattr(cfg, "max_position_embeddings", None) if cfg is not None else None
    return int(value) if isinstance(value, int) and value > 0 else None


def _device(model) -> torch.device:
    try:
        return next(model.parameters()).device
    except (StopIteration, AttributeError):
        return torch.device("cpu")


def _encode(
    tokenizer, model, prompts, *, max_new_tokens: int, batch_size: int, add_special_tokens: bool, bos_id: int | None
) -> list[list[int]]:
    """:func:`encode_prompts` within ``model``'s positions."""
    return encode_prompts(
        tokenizer,
        prompts,
        max_new_tokens=max_new_tokens,
        batch_size=batch_size,
        add_special_tokens=add_special_tokens,
        bos_id=bos_id,
        limit=_max_positions(model),
    )


def encode_prompts(
    tokenizer,
    prompts,
    *,
    max_new_tokens: int,
    batch_size: int,
    add_special_tokens: bool,
    bos_id: int | None,
    limit: int | None,
) -> list[list[int]]:
    """Check the generation arguments and tokenise ``prompts`` (raises ``TypeError`` /
    ``ValueError``); every prompt plus ``max_new_tokens`` must fit ``limit`` positions. Shared by
    every engine that tokenises with the HF tokenizer (this one and vLLM's)."""
    if isinstance(prompts, str):
        raise TypeError("prompts must be a sequence of strings, not one string")
    if not isinstance(max_new_tokens, int) or isinstance(max_new_tokens, bool) or max_new_tokens < 0:
        raise ValueError(f"max_new_tokens must be an integer >= 0, got {max_new_tokens!r}")
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
        raise ValueError(f"batch_size must be an integer >= 1, got {batch_size!r}")
    for i, p in enumerate(prompts):
        if not isinstance(p, str):
            raise TypeError(f"prompt {i} is {type(p).__name__}, expected str")
    if not prompts:
        return []
    encoded = tokenizer(list(prompts), add_special_tokens=add_special_tokens)["input_ids"]
    if bos_id is not None:  # the backend's --bos: one BOS before every prompt, as for scoring
        encoded = [[bos_id, *ids] for ids in encoded]
    for i, ids in enumerate(encoded):
        if not ids:
            raise ValueError(f"prompt {i} encodes to no tokens; decoding needs a context")
        if limit is not None and len(ids) + max_new_tokens > limit:
            raise ValueError(
                f"prompt {i} has {len(ids)} tokens; with max_new_tokens={max_new_tokens} "
                f"it exceeds the model's {limit} positions"
            )
    return encoded


def _argmax(logits: torch.Tensor, rows: list[int], live: list[bool]) -> list[int]:
    return logits.argmax(dim=-1).tolist()


@torch.inference_mode()
def greedy_generate(
    model,
    tokenizer,
    prompts: Sequence[str],
    *,
    max_new_tokens: int,
    stop: str | Sequence[str] | None = None,
    batch_size: int = 16,
    progress: bool = True,
    add_special_tokens: bool = False,
    bos_id: int | None = None,
    desc: str = "generating",
    details: bool = False,
    skip_leading_whitespace: bool = False,
) -> list[str] | list[Generation]:
    """Greedy continuations of ``prompts``, cut before the first ``stop`` string.

    ``model`` is a Hugging Face causal LM, ``tokenizer`` its tokenizer. At most
    ``max_new_tokens`` tokens are generated per prompt; a sequence also ends at an
    end-of-sequence token (not part of the returned text). ``batch_size`` prompts are decoded
    together; the result does not depend on it. ``progress`` shows a tqdm bar. ``bos_id``,
    when given, is put before every prompt's tokens.

    ``details=True`` returns :class:`Generation` objects (text, how it ended, token count)
    instead of strings. ``skip_leading_whitespace=True`` drops the continuation's leading
    whitespace and looks for stop strings only after it, so that a prompt ending in ``"is:"``
    may be answered on the next line when the stop string is ``"\n"``.
    """
    prompts = list(prompts) if not isinstance(prompts, str) else prompts
    stops = _as_stops(stop)
    encoded = _encode(
        tokenizer,
        model,
        prompts,
        max_new_tokens=max_new_tokens,
        batch_size=batch_size,
        add_special_tokens=add_special_tokens,
        bos_id=bos_id,
    )
    if not prompts:
        return []
    if max_new_tokens == 0:
        empty = Generation("", "length", 0)
        return [empty] * len(prompts) if details else [""] * len(prompts)

    results = _greedy_batches(
        model,
        tokenizer,
        encoded,
        stops=stops,
        max_new_tokens=max_new_tokens,
        batch_size=batch_size,
        progress=progress,
        desc=desc,
        skip_leading_whitespace=skip_leading_whitespace,
        chooser=lambda rows: _argmax,
    )
    if details:
        return results
    return [g.text for g in results]


def _greedy_batches(
    model,
    tokenizer,
    encoded: list[list[int]],
    *,
    stops: tuple[str, ...],
    max_new_tokens: int,
    batch_size: int,
    progress: bool,
    desc: str,
    skip_leading_whitespace: bool,
    chooser: Callable[[list[int]], Callable[[torch.Tensor, list[int], list[bool]], list[int]]],
) -> list[Generation]:
    """Greedy decoding of ``encoded`` prompts, longest first, ``batch_size`` per batch;
    ``chooser(rows)`` gives the ``choose`` of the batch holding prompts ``rows`` (in batch order)."""
    from tqdm.auto import tqdm

    setup = _decoding_setup(model, tokenizer)
    order = sorted(range(len(encoded)), key=lambda i: (-len(encoded[i]), i))
    results: list[Generation | None] = [None] * len(encoded)

    with tqdm(total=len(encoded), desc=desc, unit="prompt", disable=not progress, dynamic_ncols=True) as bar:
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            gens = _decode_batch(
                model,
                tokenizer,
                [encoded[i] for i in rows],
                stops=stops,
                max_new_tokens=max_new_tokens,
                choose=chooser(rows),
                skip_leading_whitespace=skip_leading_whitespace,
                **setup,
            )
            for i, gen in zip(rows, gens):
                results[i] = gen
            bar.update(len(rows))
    return results  # type: ignore[return-value]


def candidate_ids(tokenizer, candidates: Sequence[str]) -> dict[str, int | None]:
    """Each candidate string's token id where it is exactly one token (encoded without special
    tokens and decoded back to itself); None where it is not. ``candidates`` as
    :func:`~synthprobe.backends.base.first_token_arguments` returns them."""
    out: dict[str, int | None] = {}
    for c in candidates:
        ids = tokenizer(c, add_special_tokens=False)["input_ids"]
        out[c] = ids[0] if len(ids) == 1 and tokenizer.decode(ids) == c else None
    return out


@torch.inference_mode()
def greedy_first_token(
    model,
    tokenizer,
    prompts: Sequence[str],
    candidates: Sequence[str],
    *,
    max_new_tokens: int = 2,
    stop: str | Sequence[str] | None = None,
    top_k: int = 20,
    batch_size: int = 16,
    progress: bool = True,
    add_special_tokens: bool = False,
    bos_id: int | None = None,
    desc: str = "first tokens",
) -> list[FirstToken]:
    """:func:`greedy_generate` that also reads, from the logits of the prompt pass, each
    ``candidates`` string's log-probability as the first generated token (exact: the whole
    vocabulary's log-softmax in fp32) and the ``top_k`` most likely first tokens.

    The decoding loop, batches and padding are :func:`greedy_generate`'s, so each
    ``FirstToken.generation`` is the text ``greedy_generate`` returns for the same prompts and
    ``batch_size``: with ``max_new_tokens=2``, a first token followed by an end-of-sequence token
    or a stop string is an answer that ends after it."""
    prompts = list(prompts) if not isinstance(prompts, str) else prompts
    stops = _as_stops(stop)
    ids = candidate_ids(tokenizer, first_token_arguments(candidates, max_new_tokens, top_k))
    encoded = _encode(
        tokenizer,
        model,
        prompts,
        max_new_tokens=max_new_tokens,
        batch_size=batch_size,
        add_special_tokens=add_special_tokens,
        bos_id=bos_id,
    )
    if not prompts:
        return []
    known = [(c, i) for c, i in ids.items() if i is not None]
    read: dict[int, tuple[dict[str, float | None], tuple[tuple[str, float], ...]]] = {}

    def chooser(rows: list[int]):
        first = [True]

        def choose(logits: torch.Tensor, active: list[int], live: list[bool]) -> list[int]:
            if first[0]:  # the prompt pass: every row of the batch, in batch order
                first[0] = False
                logp = torch.log_softmax(logits.float(), dim=-1)
                k = min(top_k, logp.shape[-1])
                best = logp.topk(k, dim=-1)
                cand_lp = logp[:, [i for _, i in known]].tolist() if known else [[] for _ in rows]
                for r, prompt_index in enumerate(rows):
                    values = dict.fromkeys(ids)
                    values.update({c: lp for (c, _), lp in zip(known, cand_lp[r])})
                    top = tuple(
                        (tokenizer.decode([t]), lp) for t, lp in zip(best.indices[r].tolist(), best.values[r].tolist())
                    )
                    read[prompt_index] = (values, top)
            return logits.argmax(dim=-1).tolist()

        return choose

    gens = _greedy_batches(
        model,
        tokenizer,
        encoded,
        stops=stops,
        max_new_tokens=max_new_tokens,
        batch_size=batch_size,
        progress=progress,
        desc=desc,
        skip_leading_whitespace=False,
        chooser=chooser,
    )
    return [FirstToken(read[i][0], read[i][1], g, None) for i, g in enumerate(gens)]


def _nucleus_sampler(
    temperature: float, top_p: float, group_of_row: list[int], generators: list[torch.Generator]
) -> Callable[[torch.Tensor, list[int], list[bool]], list[int]]:
    """Draw the next token of every live row: softmax(logits / temperature), cut to the smallest
    set of tokens whose probability reaches ``top_p``, one draw per row from the generator of
    the row's prompt (prompts in increasing order, rows in batch order)."""

    def choose(logits: torch.Tensor, rows: list[int], live: list[bool]) -> list[int]:
        probs = torch.softmax(logits.float() / temperature, dim=-1)
        if top_p < 1.0:
            sorted_p, index = probs.sort(dim=-1, descending=True, stable=True)
            before = sorted_p.cumsum(dim=-1) - sorted_p  # mass of the more likely tokens
            sorted_p = sorted_p.masked_fill(before >= top_p, 0.0)
            probs = torch.zeros_like(probs).scatter_(-1, index, sorted_p)
        tokens = [0] * len(rows)
        groups: dict[int, list[int]] = {}
        for k, row in enumerate(rows):
            if live[k]:
                groups.setdefault(group_of_row[row], []).append(k)
        for g in sorted(groups):
            ks = groups[g]
            pick = torch.tensor(ks, dtype=torch.long, device=probs.device)
            drawn = torch.multinomial(probs.index_select(0, pick), 1, generator=generators[g]).squeeze(1)
            for k, tok in zip(ks, drawn.tolist()):
                tokens[k] = tok
        return tokens

    return choose


@torch.inference_mode()
def sample_generate(
    model,
    tokenizer,
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
    add_special_tokens: bool = False,
    bos_id: int | None = None,
    desc: str = "sampling",
    skip_leading_whitespace: bool = False,
) -> list[list[Generation]]:
    """``n`` sampled continuations per prompt (temperature, then nucleus ``top_p``; no top-k).

    ``seeds`` holds one seed per prompt: the prompt's ``n`` rows draw from one
    :class:`torch.Generator` seeded with it, so the same prompt, seed and settings give the
    same samples (on the same machine and software). A batch holds whole prompts (at least
    one; ``batch_size`` rows where ``n`` allows). Stop strings, end-of-sequence tokens,
    ``bos_id`` and ``skip_leading_whitespace`` work as in :func:`greedy_generate`.
    """
    prompts, seeds, stops = sample_arguments(prompts, n=n, temperature=temperature, top_p=top_p, seeds=seeds, stop=stop)
    encoded = _encode(
        tokenizer,
        model,
        prompts,
        max_new_tokens=max_new_tokens,
        batch_size=batch_size,
        add_special_tokens=add_special_tokens,
        bos_id=bos_id,
    )
    if not prompts:
        return []
    if max_new_tokens == 0:
        return [[Generation("", "length", 0)] * n for _ in prompts]

    from tqdm.auto import tqdm

    setup = _decoding_setup(model, tokenizer)
    order = sorted(range(len(prompts)), key=lambda i: (-len(encoded[i]), i))
    per_batch = max(1, batch_size // n)
    results: list[list[Generation]] = [[] for _ in prompts]

    with tqdm(total=len(prompts), desc=desc, unit="prompt", disable=not progress, dynamic_ncols=True) as bar:
        for start in range(0, len(order), per_batch):
            chunk = order[start : start + per_batch]
            group_of_row = [g for g in range(len(chunk)) for _ in range(n)]
            generators = [torch.Generator(device=setup["device"]).manual_seed(int(seeds[i]) % (1 << 64)) for i in chunk]
            gens = _decode_batch(
                model,
                tokenizer,
                [encoded[i] for i in chunk],
                stops=stops,
                max_new_tokens=max_new_tokens,
                choose=_nucleus_sampler(temperature, top_p, group_of_row, generators),
                skip_leading_whitespace=skip_leading_whitespace,
                repeat=n,
                **setup,
            )
            for g, i in enumerate(chunk):
                results[i] = gens[g * n : (g + 1) * n]
            bar.update(len(chunk))
    return results


def _decoding_setup(model, tokenizer) -> dict[str, Any]:
    """What every decoding batch needs to know about the model: device, padding and
    end-of-sequence ids, and how the model takes its cache and logits cut."""
    return {
        "device": _device(model),
        "eos": _eos_ids(model, tokenizer),
        "pad": _pad_id(tokenizer),
        "keep_last": _accepts(model, "logits_to_keep"),
        "cache_kw": "cache" if _accepts(model, "cache") else "past_key_values",
    }


def shared_prefix_length(batch: Sequence[Sequence[int]]) -> int:
    """How many leading tokens every prompt of ``batch`` has in common, leaving each prompt at
    least one token of its own (the pass over those gives its first next-token logits)."""
    if len(batch) < 2:
        return 0
    limit = min(len(ids) for ids in batch) - 1
    first = batch[0]
    n = 0
    while n < limit and all(ids[n] == first[n] for ids in batch):
        n += 1
    return n


def row_groups(lengths: Sequence[int], *, min_rows: int = 8, most: int = 4, overhead: float = 0.02) -> list[range]:
    """Contiguous row ranges of a batch (``lengths``: each row's own tokens, longest first) whose
    prompt passes, each padded to its own longest row, feed the fewest positions: at most ``most``
    groups of at least ``min_rows`` rows (fewer rows make smaller, slower matrix products), each
    group beyond the first charged ``overhead`` of the single pass's positions (its own call
    through every layer). One range over every row where splitting saves less than that."""
    k = len(lengths)
    whole = [range(k)]
    if k < 2 * min_rows or any(a < b for a, b in zip(lengths, lengths[1:])):
        return whole
    single = k * lengths[0]
    charge = overhead * single
    # best[(j, g)] = (positions, start of the last group) for rows [0, j) in g groups
    best: dict[tuple[int, int], tuple[float, int]] = {(0, 0): (0.0, 0)}
    for g in range(1, most + 1):
        for j in range(g * min_rows, k + 1):
            options = [
                (best[(i, g - 1)][0] + (j - i) * lengths[i] + (charge if g > 1 else 0.0), i)
                for i in range((g - 1) * min_rows, j - min_rows + 1)
                if (i, g - 1) in best
            ]
            if options:
                best[(j, g)] = min(options)
    groups = min((best[(k, g)][0], g) for g in range(1, most + 1) if (k, g) in best)[1]
    if groups == 1:
        return whole
    bounds, j = [k], k
    for g in range(groups, 0, -1):
        j = best[(j, g)][1]
        bounds.append(j)
    bounds.reverse()
    return [range(a, b) for a, b in zip(bounds, bounds[1:])]


def _joinable(cache) -> bool:
    """Whether ``cache`` holds every layer's keys and values as plain ``[rows, heads, positions,
    dim]`` tensors that grow by concatenation (transformers' ``DynamicLayer``), so caches of the
    same prefix can be padded and stacked row-wise (a sliding window's or a quantised layer can not)."""
    layers = getattr(cache, "layers", None)
    return bool(layers) and all(type(layer).__name__ == "DynamicLayer" for layer in layers)


def _grouped_prompt_pass(
    model, prefix, groups: list[range], *, input_ids, mask, positions, shared: int, cache_kw: str, extra: dict
):
    """The prompt pass of a left-padded batch run group by group (:func:`row_groups`), each group
    cut to its own longest row so that no group reads the padding the longest row of the batch
    would give it, then the groups' caches joined into the cache the whole batch's pass would
    have made (zeros where the dropped padding columns were: the attention mask hides them as it
    hid the padding). ``prefix`` is the batch's shared opening read for one row.
    Returns ``(cache, logits of every row's last position)``."""
    import copy

    width = input_ids.shape[1]
    caches, cuts, logits = [], [], []
    for rows in groups:
        sl = slice(rows.start, rows.stop)
        cut = int((mask[rows.start, shared:] == 0).sum())  # the group's longest row's own padding
        cache = copy.deepcopy(prefix)
        cache.batch_repeat_interleave(len(rows))
        out = model(
            input_ids=input_ids[sl, cut:],
            attention_mask=torch.cat([mask[sl, :shared], mask[sl, shared + cut :]], dim=1),
            position_ids=positions[sl, cut:],
            use_cache=True,
            **{cache_kw: cache},
            **extra,
        )
        got = getattr(out, "cache", None)
        caches.append(got if got is not None else out.past_key_values)
        cuts.append(cut)
        logits.append(out.logits[:, -1, :])
    joined = caches[0]
    for i, layer in enumerate(joined.layers):
        for name in ("keys", "values"):
            first = getattr(layer, name)
            full = first.new_zeros((input_ids.shape[0], first.shape[1], shared + width, first.shape[3]))
            for rows, cache, cut in zip(groups, caches, cuts):  # one copy of each group's tensor
                t = getattr(cache.layers[i], name)
                full[rows.start : rows.stop, :, :shared] = t[:, :, :shared]
                full[rows.start : rows.stop, :, shared + cut :] = t[:, :, shared:]
            setattr(layer, name, full)
    assert joined.get_seq_length() == shared + width
    return joined, torch.cat(logits, dim=0)


def _read_shared_prefix(
    model, batch: list[list[int]], *, device, cache_kw: str, extra: dict, copies: bool = True
) -> tuple[Any, int]:
    """Read the tokens every prompt of ``batch`` starts with once (a chat template's system turn,
    a question's fixed opening, the demonstrations of a few-shot prompt) and copy their cache to
    every row (``copies=False``: leave it one row): ``(cache, shared)``; ``(None, 0)`` when there
    is nothing to share or the model's cache cannot be copied to several rows."""
    shared = shared_prefix_length(batch)
    if not shared:
        return None, 0
    ids = torch.tensor([batch[0][:shared]], dtype=torch.long, device=device)
    out = model(
        input_ids=ids,
        attention_mask=torch.ones_like(ids),
        position_ids=torch.arange(shared, device=device)[None],
        use_cache=True,
        **{cache_kw: None},
        **extra,
    )
    past = getattr(out, "cache", None)
    if past is None:
        past = out.past_key_values
    if not hasattr(past, "batch_repeat_interleave"):
        return None, 0
    if copies:
        past.batch_repeat_interleave(len(batch))
    return past, shared


def _decode_batch(
    model,
    tokenizer,
    batch: list[list[int]],
    *,
    device,
    pad: int,
    eos: set[int],
    stops: tuple[str, ...],
    max_new_tokens: int,
    keep_last: bool,
    cache_kw: str,
    choose=_argmax,
    skip_leading_whitespace: bool = False,
    repeat: int = 1,
) -> list[Generation]:
    """Decode one left-padded batch. ``choose(logits, rows, live)`` picks the next token of every
    row held in the cache (``rows``: their batch indices; ``live``: which are still unfinished).

    With ``repeat`` > 1 every prompt is read once and its cache copied to ``repeat`` rows
    (prompt ``i`` becomes rows ``i * repeat`` .. ``i * repeat + repeat - 1``), so ``n`` samples
    of a long prompt cost one pass over it, not ``n``.
    """
    k = len(batch)
    extra = {"logits_to_keep": 1} if keep_last else {}
    past, shared = _read_shared_prefix(model, batch, device=device, cache_kw=cache_kw, extra=extra, copies=False)
    tails = [ids[shared:] for ids in batch]
    # a batch whose rows' lengths spread reads its prompts in groups, each padded to its own
    # longest row (no work on the batch's padding), when its opening's cache can be joined
    groups = row_groups([len(t) for t in tails]) if past is not None and repeat == 1 and keep_last else []
    if len(groups) < 2 or not _joinable(past):
        groups = []
        if past is not None:
            past.batch_repeat_interleave(k)
    width = max(len(ids) for ids in tails)
    input_ids = torch.full((k, width), pad, dtype=torch.long)
    mask = torch.zeros((k, width), dtype=torch.long)
    for r, ids in enumerate(tails):
        input_ids[r, width - len(ids) :] = torch.tensor(ids, dtype=torch.long)
        mask[r, width - len(ids) :] = 1
    positions = shared + (mask.cumsum(-1) - 1).clamp(min=0)
    if shared:  # [shared prefix][left padding][the prompt's own tokens]
        mask = torch.cat([mask.new_ones((k, shared)), mask], dim=1)
    input_ids, mask, positions = input_ids.to(device), mask.to(device), positions.to(device)
    n = k * repeat
    expanded = repeat == 1

    generated: list[list[int]] = [[] for _ in range(n)]
    texts: list[str | None] = [None] * n  # set when a row finishes
    finish: list[FinishReason] = ["length"] * n
    active = list(range(n))  # batch rows held in the cache, in cache order
    next_pos = mask.sum(-1)  # position of each active row's next token

    for step in range(max_new_tokens):
        if step == 0 and groups:
            past, logits = _grouped_prompt_pass(
                model,
                past,
                groups,
                input_ids=input_ids,
                mask=mask,
                positions=positions,
                shared=shared,
                cache_kw=cache_kw,
                extra=extra,
            )
        else:
            out = model(
                input_ids=input_ids,
                attention_mask=mask,
                position_ids=positions,
                use_cache=True,
                **{cache_kw: past},
                **extra,
            )
            past = getattr(out, "cache", None)
            if past is None:
                past = out.past_key_values
            logits = out.logits[:, -1, :]
        if not expanded:  # after the prompt pass: one cache row per sample
            if hasattr(past, "batch_repeat_interleave"):
                past.batch_repeat_interleave(repeat)
                logits = logits.repeat_interleave(repeat, dim=0)
            else:  # a cache that cannot be copied: read the rows again
                out = model(
                    input_ids=input_ids.repeat_interleave(repeat, dim=0),
                    attention_mask=mask.repeat_interleave(repeat, dim=0),
                    position_ids=positions.repeat_interleave(repeat, dim=0),
                    use_cache=True,
                    **{cache_kw: None},
                    **extra,
                )
                past = getattr(out, "cache", None)
                if past is None:
                    past = out.past_key_values
                logits = out.logits[:, -1, :]
            mask = mask.repeat_interleave(repeat, dim=0)
            next_pos = next_pos.repeat_interleave(repeat, dim=0)
            expanded = True
        tokens = choose(logits, active, [texts[row] is None for row in active])
        for row, tok in zip(active, tokens):
            if texts[row] is not None:  # finished earlier, kept for a cache that cannot shrink
                continue
            if tok in eos:
                texts[row] = tokenizer.decode(generated[row], skip_special_tokens=True)
                finish[row] = "eos"
                continue
            generated[row].append(tok)
            if stops:
                text = tokenizer.decode(generated[row], skip_special_tokens=True)
                if any(s in (text.lstrip() if skip_leading_whitespace else text) for s in stops):
                    texts[row] = text
                    finish[row] = "stop"
        unfinished = [k for k, row in enumerate(active) if texts[row] is None]
        if not unfinished:
            break
        if len(unfinished) < len(active) and hasattr(past, "batch_select_indices"):
            keep = torch.tensor(unfinished, dtype=torch.long, device=device)
            past.batch_select_indices(keep)
            active = [active[k] for k in unfinished]
            tokens = [tokens[k] for k in unfinished]
            mask = mask.index_select(0, keep)
            next_pos = next_pos.index_select(0, keep)
        input_ids = torch.tensor(tokens, dtype=torch.long, device=device)[:, None]
        mask = torch.cat([mask, mask.new_ones((mask.shape[0], 1))], dim=1)
        positions = next_pos[:, None].clone()
        next_pos = next_pos + 1
    for row in range(n):
        if texts[row] is None:
            texts[row] = tokenizer.decode(generated[row], skip_special_tokens=True)
    if skip_leading_whitespace:
        texts = [t.lstrip() for t in texts]
    return [Generation(cut_at_stop(t, stops), finish[row], len(generated[row])) for row, t in enumerate(texts)]
