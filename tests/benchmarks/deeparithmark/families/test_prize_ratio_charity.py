"""prize_ratio_charity: charity off a prize, a ratio split, then a share or a purchase."""

from __future__ import annotations

from fractions import Fraction

from family_checks import check_deterministic_and_varied, check_release_rates, draw, offered, whole

NAME = "prize_ratio_charity"


def expected_pool(params: dict, answer: int) -> dict[str, int]:
    prize, c, (a, b) = Fraction(params["prize"]), params["charity"], params["ratio"]
    spent, cousins, people = params["spent"], params["cousins"], params["people"]
    parts = a + b
    gift = prize * c / 100
    rest = prize - gift

    def finish(mine: Fraction) -> Fraction:
        return mine / people if params["final"] == "share" else mine - spent

    pool = {
        "forgot the charity share": finish(prize / parts * a),
        "added the charity share": finish((prize + gift) / parts * a),
        "took the charity share off twice": finish((prize - 2 * gift) / parts * a),
        "took the charity off one part only": finish(prize / parts * a - gift),
        "took the charity percentage off the part again": finish(rest / parts * a * (100 - c) / 100),
        "took the other winner's part": finish(rest / parts * b),
        "split the rest in half instead of by the ratio": finish(rest / 2),
        "divided by the other ratio term, not the total parts": finish(rest / b * a),
        "gave one ratio part instead of the winner's part": finish(rest / parts),
    }
    mine = rest / parts * a
    if params["final"] == "share":
        pool["forgot to share the part"] = mine
        pool["left the sharer out of the split"] = mine / cousins
    else:
        pool["forgot the amount spent"] = mine
        pool["added the amount spent"] = mine + spent
        pool["took the amount spent off twice"] = mine - 2 * spent
        pool["took the spending off before the ratio split"] = (rest - spent) / parts * a
    out = {k: whole(Fraction(v)) for k, v in pool.items()}
    return offered(out, answer)


def test_contract_and_rates():
    check_release_rates(NAME, depth=5, mean_words=(33, 40), max_words=45, mistake_kinds=15)


def test_answer_and_mistakes_recomputed_from_params():
    problems, _ = draw(NAME, 160, seed=3)
    assert {p.params["final"] for p in problems} == {"share", "spend"}
    for p in problems:
        prize, c, (a, b) = p.params["prize"], p.params["charity"], p.params["ratio"]
        rest = prize * (100 - c)
        assert rest % (100 * (a + b)) == 0
        mine = rest // (100 * (a + b)) * a
        if p.params["final"] == "share":
            assert mine % p.params["people"] == 0 and p.answer == mine // p.params["people"]
            assert p.params["people"] == p.params["cousins"] + 1
        else:
            assert p.answer == mine - p.params["spent"] and f"${p.params['spent']}" in p.ctx
        assert dict(p.mistakes) == expected_pool(p.params, p.answer)
        assert f"${prize}" in p.ctx and f"{c}%" in p.ctx and f"{a} : {b}" in p.ctx
        assert p.params["winner"] in p.ctx and p.params["partner"] in p.ctx
        assert p.kind == "money" and p.render(p.answer) == f" ${p.answer}."
        assert p.steps[1] == f"total parts: {a} + {b} = {a + b}"


def test_the_winner_usually_holds_the_larger_part():
    """Two draws in three give the asked-about winner the larger part, which puts the
    'other part' and 'split in half' mistakes below the answer and balances the pool."""
    problems, _ = draw(NAME, 300, seed=4)
    larger = sum(p.params["ratio"][0] > p.params["ratio"][1] for p in problems) / len(problems)
    assert 0.55 <= larger <= 0.8


def test_deterministic_and_varied():
    problems = check_deterministic_and_varied(NAME)
    assert len({p.params["ratio"] for p in problems}) >= 15


def expected_extra(params: dict, answer: int) -> dict[str, int]:
    """The extra mistakes of the role-balanced groups, redone by hand from the params."""
    prize, c, (a, b) = Fraction(params["prize"]), params["charity"], params["ratio"]
    spent, cousins, people = params["spent"], params["cousins"], params["people"]
    rest = prize * (100 - c) / 100  # after the charity share
    one_part = rest / (a + b)
    if params["final"] == "share":
        pool = {
            "took the other winner's part and left the sharer out": one_part * b / cousins,
            "took the other winner's part and counted the sharer twice": one_part * b / (people + 1),
            "took the other winner's part and forgot to share": one_part * b,
            "gave one ratio part and left the sharer out": one_part / cousins,
            "split the rest in half and left the sharer out": rest / 2 / cousins,
            "skipped the ratio split and shared the whole rest": rest / people,
            "skipped the ratio split and left the sharer out": rest / cousins,
            "counted the sharer twice": one_part * a / (people + 1),
        }
    else:
        pool = {
            "took the other winner's part and forgot the amount spent": one_part * b,
            "gave one ratio part and forgot the amount spent": one_part,
            "took the charity share off twice and forgot the amount spent": prize * (100 - 2 * c) / 100 / (a + b) * a,
            "forgot the charity share and took the amount spent off twice": prize / (a + b) * a - 2 * spent,
        }
    return offered({k: whole(Fraction(v)) for k, v in pool.items()}, answer)


def test_extra_mistakes_recomputed_from_params():
    problems, _ = draw(NAME, 400, seed=11)
    assert {p.params["final"] for p in problems} == {"share", "spend"}
    seen = set()
    for p in problems:
        assert dict(p.mistakes) == expected_pool(p.params, p.answer)
        assert dict(p.extra_mistakes) == expected_extra(p.params, p.answer)
        assert not set(p.extra_mistakes) & set(p.mistakes)
        seen |= set(p.extra_mistakes)
    assert len(seen) == 12  # every extra mistake comes out whole on some draws
