"""lease-bench: the reference counts of ../shared/benchmarks/lease-fencing.md (TLC and Spin).

Distinct states, generated states (1 + every enabled action instance, self-loops
included) and the diameter must equal the reference rows exactly; a changed count is
a semantic difference from the benchmark's definition.
"""

from __future__ import annotations

from functools import cache

import pytest

from leadercheck.checker import CheckResult, EndReason, Verdict, always, check
from leadercheck.models.cluster import Storage
from leadercheck.models.lease_bench import PROTOCOLS, BenchState, LeaseBenchModel
from leadercheck.specs.claims import PROPERTIES

ENTRY = PROTOCOLS[0]


def build(**params: str) -> LeaseBenchModel:
    model = ENTRY.build(ENTRY.resolve(params))
    assert isinstance(model, LeaseBenchModel)
    return model


@cache
def claims(fencing: str) -> CheckResult:
    model = build(fencing=fencing)
    return check(model, [PROPERTIES[n] for n in ("no-stale-write", "write-accepted")])


@pytest.mark.parametrize(
    ("n", "ttl", "max_time", "distinct", "generated", "diameter"),
    [
        (2, 2, 4, 884, 3_185, 11),
        (2, 2, 8, 10_484, 39_541, 17),
        (3, 2, 6, 19_640, 97_861, 16),
    ],
)
def test_reference_counts_with_fencing(
    n: int, ttl: int, max_time: int, distinct: int, generated: int, diameter: int
) -> None:
    model = build(N=str(n), TTL=str(ttl), MaxTime=str(max_time), fencing="true")
    result = check(model, [always("anything", lambda s: True)])
    assert result.end is EndReason.EXHAUSTED
    assert result.stats.distinct_states == distinct
    assert result.stats.generated_states == generated
    assert result.stats.depth == diameter


def test_defaults_are_the_first_reference_row() -> None:
    assert ENTRY.name == "lease-bench"
    assert ENTRY.resolve({}) == {"N": 2, "TTL": 2, "MaxTime": 4, "fencing": 1}
    model = build()
    assert (model.n, model.ttl, model.max_time, model.fencing) == (2, 2, 4, True)
    assert build(fencing="false").fencing is False


def test_with_fencing_no_stale_write_holds_and_a_write_is_accepted() -> None:
    result = claims("true")
    assert [r.verdict for r in result.results] == [Verdict.HOLDS, Verdict.HOLDS]
    assert result.end is EndReason.EXHAUSTED


def test_without_fencing_the_shortest_counterexample_is_the_paused_old_leader() -> None:
    r = claims("false").result("no-stale-write")
    assert r.verdict is Verdict.VIOLATED
    assert r.trace is not None
    assert len(r.trace) == 8  # TTL + 6
    assert [(a.name, a.actor, a.target, a.note) for a in r.trace.actions] == [
        ("acquire", "n1", "store", ""),
        ("pause", "n1", None, ""),
        ("tick", "clock", None, ""),
        ("tick", "clock", None, ""),
        ("acquire", "n2", "store", ""),
        ("write", "n2", "storage", "token 2 accepted"),
        ("resume", "n1", None, ""),
        ("write", "n1", "storage", "token 1 accepted out of order"),
    ]
    last = r.trace.last.state
    assert last == BenchState(2, 2, 4, 2, (1, 2), (2, 4), (False, False), 2, True)
    assert last.leaders() == [(1, 1), (2, 2)]  # n1 still believes: it noticed nothing
    assert claims("false").result("write-accepted").verdict is Verdict.HOLDS


@pytest.mark.parametrize("ttl", [1, 3])
def test_counterexample_length_is_ttl_plus_six(ttl: int) -> None:
    model = build(TTL=str(ttl), fencing="false")
    r = check(model, [PROPERTIES["no-stale-write"]]).result("no-stale-write")
    assert r.trace is not None
    assert len(r.trace) == ttl + 6


def test_the_same_schedule_is_rejected_by_fencing() -> None:
    broken = claims("false").result("no-stale-write").trace
    assert broken is not None
    model = build()
    state = model.initial_states()[0]
    notes = []
    for action in broken.actions:
        steps = [(a, s) for a, s in model.successors(state) if (a.name, a.actor) == action[:2]]
        assert len(steps) == 1
        action_taken, state = steps[0]
        notes.append(action_taken.note)
    assert notes[-1] == "token 1 rejected"
    assert state.storage == Storage(2, False, 2)


def test_every_enabled_instance_is_one_successor_self_loops_included() -> None:
    model = build()
    s0 = model.initial_states()[0]
    assert [str(a) for a, _ in model.successors(s0)] == [
        "n1 -> store: acquire",
        "n2 -> store: acquire",
        "n1: pause",
        "n2: pause",
        "clock: tick",
    ]
    # n1 holds a lease of expiry TTL at time 0: renewing at once changes nothing.
    _, s1 = next(iter(model.successors(s0)))
    renew = [(a, s) for a, s in model.successors(s1) if a.name == "renew"]
    assert renew == [(renew[0][0], s1)]


def test_a_running_leader_drops_its_lease_at_the_tick_that_reaches_expiry() -> None:
    model = build(TTL="1")
    s = BenchState(0, 1, 1, 1, (1, 0), (1, 0), (False, False), 0, False)
    ticked = model._tick(s)
    assert (ticked.now, ticked.my_tok, ticked.my_exp) == (1, (0, 0), (0, 0))
    paused = s._replace(paused=(True, False))
    assert model._tick(paused).my_tok == (1, 0)  # a paused node notices nothing


def test_derived_views_for_the_shared_claims() -> None:
    s = BenchState(3, 2, 4, 2, (1, 2), (2, 4), (True, False), 1, False)
    assert s.leaders() == [(1, 1), (2, 2)]
    assert [(n.up, n.paused, n.is_leader, n.role, n.epoch, n.tenure) for n in s.nodes] == [
        (True, True, True, "leader", 1, 1),
        (True, False, True, "leader", 2, 2),
    ]
    assert s.storage == Storage(1, False, 1)
    idle = BenchState(0, 0, 0, 0, (0, 0), (0, 0), (False, False), 0, False)
    assert [(n.is_leader, n.role, n.epoch, n.tenure) for n in idle.nodes] == [
        (False, "follower", None, 0)
    ] * 2
    assert len(s) == 9  # exactly the nine components of the reference state


def test_describe_and_summary_name_every_participant() -> None:
    model = build()
    s = BenchState(3, 2, 4, 2, (1, 2), (2, 4), (True, False), 1, False)
    assert list(model.describe(s)) == ["n1", "n2", "store", "storage"]
    assert model.describe(s)["store"] == {"now": 3, "holder": "n2", "expires_at": 4, "token": 2}
    assert model.summary(s) == {
        "n1": "paused, leader t1 until 2",
        "n2": "leader t2 until 4",
        "store": "now 3, lease t2 to n2 until 4",
        "storage": "highest epoch 1",
    }
