"""raft-election: the reference counts of ../shared/benchmarks/raft-election.md (TLC and Spin
agree on them), the verdicts and shortest counterexamples of the broken variants."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from leadercheck.checker import CheckResult, Verdict, always, check
from leadercheck.checker.errors import LeadercheckError
from leadercheck.models.raft_election import PROTOCOLS, ElectionState, RaftElectionModel
from leadercheck.specs.claims import PROPERTIES


def model(**params: int | str) -> RaftElectionModel:
    entry = PROTOCOLS[0]
    built = entry.build(entry.resolve({k: str(v) for k, v in params.items()}))
    assert isinstance(built, RaftElectionModel)
    return built


def run(props: Iterable[str], **params: int | str) -> CheckResult:
    return check(model(**params), [PROPERTIES[p] for p in props])


def counts(**params: int | str) -> tuple[int, int, int]:
    stats = check(model(**params), [always("anything", lambda s: True)]).stats
    return stats.distinct_states, stats.generated_states, stats.depth


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        (dict(N=3, NC=3, MaxTerm=2, variant="correct"), (1_588, 9_769, 9)),
        (dict(N=3, NC=2, MaxTerm=3, variant="correct"), (71_329, 667_295, 15)),
        (dict(N=3, NC=3, MaxTerm=2, variant="noquorum"), (1_588, 9_769, 9)),
        pytest.param(
            dict(N=5, NC=2, MaxTerm=2, variant="correct"),
            (107_029, 917_389, 14),
            marks=pytest.mark.slow,
        ),
    ],
)
def test_reference_counts(params: dict[str, int | str], expected: tuple[int, int, int]) -> None:
    """Distinct states, generated states and diameter as TLC and Spin report them."""
    assert counts(**params) == expected


@pytest.mark.slow  # 2.1 s; the reference counts at the defaults stay
def test_defaults_hold() -> None:
    result = run(("single-leader", "leader-elected"))
    assert {r.prop.name: r.verdict for r in result.results} == {
        "single-leader": Verdict.HOLDS,
        "leader-elected": Verdict.HOLDS,
    }


def test_correct_holds_with_three_candidates() -> None:
    assert run(("single-leader",), N=3, NC=3, MaxTerm=2).verdict is Verdict.HOLDS


@pytest.mark.parametrize(
    "params",
    [
        dict(N=3, NC=3, MaxTerm=2, variant="forgetvote"),
        dict(N=4, NC=2, MaxTerm=2, variant="noquorum"),
    ],
)
def test_broken_variants_elect_two_leaders_in_eight_steps(params: dict[str, int | str]) -> None:
    result = run(("single-leader",), **params).result("single-leader")
    assert result.verdict is Verdict.VIOLATED
    assert result.trace is not None
    assert len(result.trace) == 8
    names = [a.name for a in result.trace.actions]
    assert names.count("timeout") == 2
    assert names.count("become-leader") == 2
    last = result.trace.last.state
    assert isinstance(last, ElectionState)
    (a, ta), (b, tb) = last.leaders()
    assert a != b and ta == tb == 2


def test_nc_above_n_is_refused() -> None:
    with pytest.raises(LeadercheckError, match="NC=4"):
        model(N=3, NC=4)


def test_state_reads_as_the_claims_expect() -> None:
    m = model(N=3, NC=3, MaxTerm=2)
    (state,) = m.initial_states()
    assert state.leaders() == ()
    assert not state.storage.stale and state.storage.hi_epoch == 0
    assert all(n.up and not n.paused and n.role == "follower" for n in state.nodes)
    (_, candidate), *_ = m.successors(state)
    assert m.summary(candidate) == {
        "n1": "candidate t2 (votes n1)",
        "n2": "follower t1",
        "n3": "follower t1",
    }
    assert m.describe(candidate)["network"] == {"msgs": ["RV(t2,n1->n2)", "RV(t2,n1->n3)"]}
    # a self-loop and a repeat both count: every enabled instance yields one successor
    first = [a.name for a, _ in m.successors(candidate)]
    assert first.count("handle-request-vote") == 2 and first.count("drop") == 2
