"""The benchmark's own sub-command (its registry part ``commands``): ``synthprobe probe larger``
prints a few of its questions. The command line imports this module only when a command line
names the benchmark after a verb of :data:`VERBS`."""

from __future__ import annotations

from synthprobe.commandline import int_at_least

#: the verbs this module adds to
VERBS = ("probe",)


def show(args) -> int:
    from synthprobe_larger import build

    for item in build(args.n, args.seed):
        print(item["question"])
    return 0


def register(verbs: dict) -> None:
    p = verbs["probe"].add_parser("larger", help="print a few questions of Which is larger")
    p.add_argument("--n", type=int_at_least(1), default=2, metavar="N", help="how many (default: %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="seed (default: %(default)s)")
    p.set_defaults(func=show)
