"""``synthprobe study generate | serve | results``."""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import sys
from pathlib import Path

from synthprobe.commandline import add_limit_argument, add_overwrite_argument, any_int
from synthprobe.errors import InputError
from synthprobe.io.write import check_not_input, check_outputs
from synthprobe.study.store import ADMIN_ENV


def _cmd_generate(args) -> int:
    from synthprobe.backends.refs import parse_model_ref
    from synthprobe.commandline import chat_setup, load_backend_or_exit
    from synthprobe.study.articles import load_articles
    from synthprobe.study.generate import CONDITIONS, Settings, generate_items, write_items

    args.model = parse_model_ref(args.model).spec  # the study records specs; a NAME is not used here
    chat = chat_setup(args)

    check_outputs(
        [(args.out, "--out")],
        [(args.articles, "--articles"), (args.model, "--model"), (args.control_model, "--control-model")],
        overwrite=args.overwrite,
    )
    conditions = tuple(c.strip() for c in args.conditions.split(",") if c.strip())
    bad = [c for c in conditions if c not in CONDITIONS]
    if bad or not conditions or len(set(conditions)) != len(conditions):
        raise InputError(
            f"expected a comma-separated list of {', '.join(CONDITIONS)}, got {args.conditions!r}", field="--conditions"
        )
    settings = Settings(
        length=args.length,
        samples=args.samples,
        temperature=args.temperature,
        top_p=args.top_p,
        control_temperature=args.control_temperature,
        max_new_tokens=args.max_new_tokens,
        seed=args.seed,
    )
    for c in conditions:
        settings.sampling(c)  # validates temperature, top-p, samples, token budget
    articles = load_articles(args.articles, minimum=2)
    if args.limit is not None:
        # a quiz needs a human and a machine article; the model condition also needs the target's
        # context articles (three other articles for --length 200, one for --length 500)
        least = settings.variant.context_articles + 1 if "model" in conditions else 2
        if args.limit < least:
            why = (
                f"--length {args.length} conditions on {least - 1} other article(s)"
                if least > 2
                else "a quiz needs a human and a machine article"
            )
            raise InputError(f"must be at least {least} ({why})", field="--limit")
        articles = articles[: args.limit]
    if "model" in conditions and len(articles) <= settings.variant.context_articles:
        from synthprobe.io.paths import resource_path
        from synthprobe.study.articles import SAMPLE_FILE

        k = settings.variant.context_articles
        raise InputError(
            f"holds {len(articles)} article(s); the ~{args.length}-word variant (--length "
            f"{args.length}) conditions on {k} other article(s), so at least {k + 1} are needed",
            path=args.articles or resource_path(SAMPLE_FILE),
            field="--articles",
        )
    out = Path(args.out)
    if out.is_dir():
        raise InputError("is a folder; --out names the items file to write", path=out, field="--out")

    models = {}
    loaded: dict[str, object] = {}
    for c in conditions:
        spec = args.control_model if (c == "control" and args.control_model) else args.model
        if spec not in loaded:
            loaded[spec] = load_backend_or_exit(spec, args, bos=args.bos)
        models[c] = (spec, loaded[spec])
    items = generate_items(articles, settings, models=models, conditions=conditions, progress=args.progress, chat=chat)
    write_items(out, items)
    for c in conditions:
        rows = [it for it in items if it["condition"] == c]
        h = sum(it["human"]["words"] for it in rows) / len(rows)
        m = sum(it["machine"]["words"] for it in rows) / len(rows)
        cut = sum(not it["machine"]["complete"] for it in rows)
        note = (
            f"; {cut} chosen text(s) truncated (no sample finished within the token budget: raise --max-new-tokens)"
            if cut
            else ""
        )
        print(f"{c}: {len(rows)} articles, mean words human {h:.0f} : machine {m:.0f}{note}")
    print(f"wrote {len(items)} items -> {out}")
    return 0


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _cmd_serve(args) -> int:
    from synthprobe.study.items import load_items
    from synthprobe.study.store import Store

    if not 0 <= args.port <= 65535:
        raise InputError(f"expected 0..65535, got {args.port}", field="--port")
    if not 1 <= args.threads <= 64:
        raise InputError(f"expected 1..64, got {args.threads}", field="--threads")
    if not 1 <= args.lockout_after <= 1000:
        raise InputError(f"expected 1..1000, got {args.lockout_after}", field="--lockout-after")
    if not 1 <= args.lockout_seconds <= 24 * 3600:
        raise InputError(f"expected 1..86400 seconds, got {args.lockout_seconds}", field="--lockout-seconds")
    if not _is_loopback(args.host) and not args.allow_remote:
        raise InputError(
            f"{args.host} is not a loopback address; raters on other machines could reach the "
            "server. Pass --allow-remote to do this on purpose (behind HTTPS)",
            field="--host",
        )
    password = os.environ.get(ADMIN_ENV) or None
    if args.change_admin_password and password is None:
        raise InputError(
            f"--change-admin-password records the password in ${ADMIN_ENV}, which is not set",
            field="--change-admin-password",
        )
    check_not_input([(args.db, "--db")], [(args.items, "--items")])
    items = load_items(args.items) if args.items else None
    store = Store(args.db)
    store.initialise(
        items,
        items_label=str(args.items or ""),
        admin_password=password,
        replace_admin_password=args.change_admin_password,
    )

    import logging

    import waitress

    from synthprobe.study.app import LoginThrottle, create_app, log
    from synthprobe.study.limits import LOCKOUT_MAX_SECONDS, MAX_REQUEST_BODY

    if not log.handlers:  # refusals and failed admin logins go to stderr, one line each
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
        log.propagate = False
    throttle = LoginThrottle(
        after=args.lockout_after,
        seconds=args.lockout_seconds,
        max_seconds=max(LOCKOUT_MAX_SECONDS, args.lockout_seconds),
    )
    app = create_app(args.db, admin_password=password, throttle=throttle)
    # the body cap is enforced by waitress itself: a request whose Content-Length is larger is answered
    # 413 at once, before its body is read (forms are tiny; waitress would otherwise buffer up to 1 GiB)
    server = waitress.create_server(
        app,
        host=args.host,
        port=args.port,
        threads=args.threads,
        ident="synthprobe-study",
        max_request_body_size=MAX_REQUEST_BODY,
    )
    url = f"http://{args.host}:{server.effective_port}/"
    print(f"serving the study on {url} (database {args.db}); stop with Ctrl+C", flush=True)
    if password is None:
        print(f"admin pages disabled: set {ADMIN_ENV} to see results at {url}admin", flush=True)
    else:
        print(f"results at {url}admin (admin password from {ADMIN_ENV})", flush=True)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    return 0


def _cmd_results(args) -> int:
    from synthprobe.io.write import atomic_write_text, dumps_json
    from synthprobe.study import stats
    from synthprobe.study.store import Store

    outputs = [(args.csv, "--csv"), (args.json, "--json")]
    check_outputs(outputs, [(args.db, "--db")], overwrite=args.overwrite)
    if args.csv and args.json:
        check_not_input([(args.json, "--json")], [(args.csv, "--csv")])
        if Path(args.csv).resolve() == Path(args.json).resolve():
            raise InputError("is also --csv; expected two different files", path=args.json, field="--json")
    store = Store(args.db)
    store.check_readable()
    store.check_admin_password(os.environ.get(ADMIN_ENV))
    res = stats.summarise(store, include_incomplete=args.include_incomplete)
    if args.csv:
        atomic_write_text(args.csv, stats.answers_csv(store))
    if args.json:
        atomic_write_text(args.json, dumps_json(res))
    json.dump(res, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


def register(verbs: dict[str, argparse._SubParsersAction]) -> None:
    sub = verbs["study"]
    _register_generate(sub)
    _register_serve(sub)
    _register_results(sub)


def _register_generate(sub) -> None:
    """`study generate`: the articles each model writes for the raters."""
    from synthprobe.commandline import add_probe_model_args

    p = sub.add_parser(
        "generate",
        help="write model versions of human news articles (GPT-3's news study)",
        description="For every human article, condition the model on other full articles ('Title: ...', "
        "'Subtitle: ...', 'Article: ...'; three for --length 200, one for --length 500), then the "
        "article's title and subtitle; draw --samples samples and keep the one whose word count is "
        "closest to the human article's. The 'control' condition is deliberately weaker (title and "
        "subtitle only, high temperature), like GPT-3's control model. Writes one JSONL item per "
        "article and condition, atomically; the same seed gives the same file. To compare several "
        "models against one control (as GPT-3 did), generate the control once -- the first run with "
        "the default --conditions model,control (and --control-model if the control should come from "
        "another model) -- and the others with --conditions model, then concatenate the files for "
        "'study serve'; two runs that both write the same control repeat its item ids, which 'serve' "
        "refuses.",
    )
    p.add_argument(
        "--articles",
        default=None,
        metavar="FILE",
        help="JSONL of {title, subtitle, article[, id, source]} (default: synthprobe's 8-article "
        "self-written sample, which is not news)",
    )
    p.add_argument("--out", required=True, metavar="FILE", help="items JSONL to write (e.g. study.jsonl)")
    add_probe_model_args(p, chat=True)
    p.add_argument(
        "--control-model", default=None, metavar="MODEL", help="model for the control condition (default: --model)"
    )
    p.add_argument(
        "--length",
        type=any_int,
        default=200,
        choices=(200, 500),
        help="~200-word variant (3 context articles) or ~500-word variant (1 context article) (default: %(default)s)",
    )
    p.add_argument("--samples", type=any_int, default=5, help="samples per article (default: %(default)s)")
    p.add_argument(
        "--conditions",
        default="model,control",
        help="comma-separated conditions to generate: model, control (default: %(default)s; use "
        "'model' for every model after the first when they share one control)",
    )
    p.add_argument("--temperature", type=float, default=0.8, help="sampling temperature (default: %(default)s)")
    p.add_argument("--top-p", type=float, default=0.9, help="nucleus sampling mass (default: %(default)s)")
    p.add_argument(
        "--control-temperature",
        type=float,
        default=1.6,
        help="temperature of the control condition; top-p is 1 there (default: %(default)s)",
    )
    p.add_argument(
        "--max-new-tokens",
        type=any_int,
        default=None,
        help="token budget per sample (default: 400 for --length 200, 900 for --length 500)",
    )
    add_limit_argument(p, "use only the first N articles")
    add_overwrite_argument(p)
    p.set_defaults(func=_cmd_generate)


def _register_serve(sub) -> None:
    """`study serve`: the rater web app."""
    from synthprobe.study.limits import LOCKOUT_AFTER, LOCKOUT_SECONDS

    p = sub.add_parser(
        "serve",
        help="serve the rating web app to human raters",
        description="Serve the study: each rater gets a secret link, one experiment (model, condition, length) "
        "and quiz A or B (an article shown as human in A is shown as machine in B), and rates each "
        "article on GPT-3's five-point scale. Answers are stored in SQLite at once; raters resume "
        f"from their link. Results are at /admin, protected by the password in ${ADMIN_ENV} "
        "(admin pages are refused when it is unset); a salted hash of that password is recorded in "
        "the database, and 'study results' asks for the same password. Wrong admin passwords are "
        "throttled per client address: after --lockout-after failures the address is locked out of "
        "the admin pages (429 with Retry-After, even for the right password) for --lockout-seconds, "
        "doubling with each further lock-out up to an hour; failures and lock-outs are logged on "
        "stderr. Every form post must come from the server's own origin and carry the session's "
        "CSRF token; request bodies over 64 KiB are refused with 413. Listens on loopback only "
        "unless --allow-remote.",
    )
    p.add_argument("--db", required=True, metavar="FILE", help="study database (created on first use)")
    p.add_argument(
        "--items",
        default=None,
        metavar="FILE",
        help="items JSONL from 'study generate' (required the first time; later it must be the same items)",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: %(default)s)")
    p.add_argument("--port", type=any_int, default=8765, help="port; 0 picks a free one (default: %(default)s)")
    p.add_argument("--threads", type=any_int, default=8, help="worker threads (default: %(default)s)")
    p.add_argument(
        "--allow-remote", action="store_true", help="allow a non-loopback --host (put the server behind HTTPS)"
    )
    p.add_argument(
        "--lockout-after",
        type=any_int,
        default=LOCKOUT_AFTER,
        metavar="N",
        help="wrong admin passwords from one address (within 15 minutes) before it is locked out "
        "(default: %(default)s)",
    )
    p.add_argument(
        "--lockout-seconds",
        type=any_int,
        default=LOCKOUT_SECONDS,
        metavar="S",
        help="length of the first lock-out; each further one doubles it, up to an hour (default: %(default)s)",
    )
    p.add_argument(
        "--change-admin-password",
        action="store_true",
        help=f"record the password now in ${ADMIN_ENV} as the study's admin password, replacing the "
        "one recorded when the database was first served (without this flag a different password "
        "is refused)",
    )
    p.set_defaults(func=_cmd_serve)


def _register_results(sub) -> None:
    """`study results`: the raters' accuracy and the tests."""
    p = sub.add_parser(
        "results",
        help="accuracy per model and condition, as in GPT-3's Table 3.11",
        description="Print the study results as JSON: per experiment the mean rater accuracy (per rater: correct "
        '/ answers other than "I don\'t know", then the mean over raters), its 95% CI from the t '
        'distribution, a two-sample t-test against the control, and the "I don\'t know" rate. '
        f"Needs the study's admin password in ${ADMIN_ENV}, the one 'study serve' recorded in the "
        "database (the same password as the /admin pages).",
    )
    p.add_argument("--db", required=True, metavar="FILE", help="study database")
    p.add_argument("--csv", default=None, metavar="PATH", help="also write every answer to this CSV file")
    p.add_argument("--json", default=None, metavar="PATH", help="also write the JSON to this file")
    p.add_argument(
        "--include-incomplete",
        action="store_true",
        help="count raters who have not finished their quiz (default: finished raters only)",
    )
    add_overwrite_argument(p)
    p.set_defaults(func=_cmd_results)
