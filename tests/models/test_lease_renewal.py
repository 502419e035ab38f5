"""lease-renewal and too-short-timeout: the exact boundary of false failover, the worst failover
time, state counts, and that each verdict is not vacuous."""

from __future__ import annotations

import json
from functools import cache
from itertools import product
from typing import Any

import pytest

from leadercheck.checker import CheckResult, Verdict, always, check, sometimes
from leadercheck.checker.engine.measure import measure
from leadercheck.models.cluster import FaultBounds, Store
from leadercheck.models.lease_renewal import (
    FAILOVER,
    PROTOCOLS,
    LeaseRenewalModel,
    RenewalNode,
    build,
    failover_done,
    failover_ticks,
    healthy_leader_deposed,
)
from leadercheck.specs.claims import single_leader
from tests.helpers import shape, verdicts


def _model(name: str, **params: int) -> LeaseRenewalModel:
    entry = {p.name: p for p in PROTOCOLS}[name]
    model = entry.build(entry.resolve({k: str(v) for k, v in params.items()}))
    assert isinstance(model, LeaseRenewalModel)
    return model


def _leader_within_the_lease(s: Any) -> bool:
    """Every live leader holds the store's lease, and its own copy ends no later."""
    return all(
        s.store.holder == i and s.store.token == n.token and s.store.ttl_left >= n.left
        for i, n in enumerate(s.nodes, start=1)
        if n.up and n.is_leader
    )


NOT_DEPOSED = always("not-deposed", lambda s: not healthy_leader_deposed(s))
DEPOSED = sometimes("deposed", healthy_leader_deposed)
FAILOVER_DONE = sometimes("failover-done", failover_done)
WITHIN_LEASE = always("leader-within-lease", _leader_within_the_lease)
PAUSE_WITHIN_GC = always("pause-within-gc", lambda s: all(n.stalled <= 1 for n in s.nodes))


@cache
def _defaults(name: str) -> CheckResult:
    """One exhaustive run at the defaults (the invariants hold, so the search runs to the end)."""
    props = [NOT_DEPOSED, single_leader, WITHIN_LEASE, PAUSE_WITHIN_GC, DEPOSED, FAILOVER_DONE]
    return check(_model(name), props)


def test_protocol_entries() -> None:
    assert [p.name for p in PROTOCOLS] == ["lease-renewal", "too-short-timeout"]
    defaults = {p.name: p.default for p in PROTOCOLS[0].params}
    assert defaults == {
        "nodes": 3,
        "ttl": 4,
        "renew": 1,
        "delay": 1,
        "gc": 1,
        "tokens": 3,
        "crashes": 1,
        "pauses": 1,
    }
    assert {p.name: p.default for p in PROTOCOLS[1].params} == {**defaults, "ttl": 2, "crashes": 0}
    assert all(p.measures == (FAILOVER,) for p in PROTOCOLS)


def test_lease_renewal_at_defaults_never_deposes_a_healthy_leader() -> None:
    result = _defaults("lease-renewal")
    assert verdicts(result) == {
        "not-deposed": Verdict.HOLDS,
        "single-leader": Verdict.HOLDS,
        "leader-within-lease": Verdict.HOLDS,
        "pause-within-gc": Verdict.HOLDS,
        "deposed": Verdict.VIOLATED,  # no witness: unreachable
        "failover-done": Verdict.HOLDS,
    }
    assert result.stats.distinct_states == 26_946
    assert result.stats.depth == 42


def test_a_failover_completes_after_the_leader_crashes() -> None:
    """Not vacuous: the lease does pass on, once its holder has crashed."""
    witness = _defaults("lease-renewal").result("failover-done").trace
    assert witness is not None and len(witness) == 22
    names = [a.name for a in witness.actions]
    assert names.count("crash") == 1 and names[-1] == "acquire"
    assert witness.actions[-1].note == "CAS ok: token 2"
    last = witness.last.state
    crashed = names.index("crash")
    assert witness.steps[crashed].state.store.holder == int(witness.actions[crashed].actor[1:])
    assert failover_ticks(last) == names[crashed:].count("tick") == 3


def test_too_short_timeout_at_defaults_deposes_a_healthy_leader() -> None:
    result = _defaults("too-short-timeout")
    assert verdicts(result) == {
        "not-deposed": Verdict.VIOLATED,
        "single-leader": Verdict.HOLDS,
        "leader-within-lease": Verdict.HOLDS,
        "pause-within-gc": Verdict.HOLDS,
        "deposed": Verdict.HOLDS,
        "failover-done": Verdict.VIOLATED,  # no crash at these defaults
    }
    assert result.stats.distinct_states == 16_392
    assert result.stats.depth == 53


def test_the_witness_is_a_late_renewal_not_a_fault() -> None:
    witness = _defaults("too-short-timeout").result("deposed").trace
    assert witness is not None
    assert shape(witness.actions) == [
        ("send", "n1", "store"),
        ("acquire", "n1", "store"),
        ("send", "n2", "store"),
        ("acquire", "n2", "store"),
        ("send", "n3", "store"),
        ("acquire", "n3", "store"),
        ("tick", "clock", None),
        ("send", "n1", "store"),  # the renewal, in flight for the whole tick
        ("send", "n2", "store"),
        ("send", "n3", "store"),
        ("tick", "clock", None),
        ("acquire", "n2", "store"),  # arrives first
    ]
    notes = [a.note for a in witness.actions]
    assert notes[7] == "renew t1"
    assert notes[10] == "lease t1 expires, n1's own copy runs out"
    assert notes[11] == "CAS ok: token 2"
    last = witness.last.state
    assert last.node(1).up and not last.node(1).paused and last.node(1).request == "renew t1"
    assert last.store.holder == 2 and last.node(2).tenure == 2
    assert not last.node(1).is_leader  # it stepped down on its own clock: one leader


@pytest.mark.parametrize(
    ("ttl", "renew", "delay", "gc"),
    list(product(range(1, 5), range(1, 3), range(3), range(2))),
)
def test_a_healthy_leader_is_deposed_exactly_when_ttl_is_at_most_renew_delay_gc(
    ttl: int, renew: int, delay: int, gc: int
) -> None:
    """The safe verdict is not vacuous: one tick less of TTL and the checker finds a deposal."""
    model = build(2, ttl, renew, delay, gc, tokens=2, crashes=0, pauses=1)
    found = check(model, [DEPOSED]).result("deposed").verdict is Verdict.HOLDS
    assert found == (ttl <= renew + delay + gc)


@pytest.mark.parametrize(("ttl", "deposed"), [(4, True), (5, False)])
def test_pauses_back_to_back_add_up(ttl: int, deposed: bool) -> None:
    """Two pauses of 1 tick, one after the other, are one stall of 2: ttl <= R + D + 2G."""
    model = build(2, ttl, 1, delay=1, gc=1, tokens=2, crashes=0, pauses=2)
    found = check(model, [DEPOSED]).result("deposed").verdict is Verdict.HOLDS
    assert found is deposed


def test_worst_failover_is_ttl_plus_renew_plus_delay_plus_gc_minus_one() -> None:
    """The measure's sizes: a leader and a standby, delay 1, gc 1, one crash, one pause."""
    sizes: tuple[tuple[int, int], ...] = FAILOVER.sizes  # type: ignore[assignment]
    worst = {}
    for ttl, renew in sizes:
        model = FAILOVER.build((ttl, renew))  # type: ignore[arg-type]
        found = measure(model, failover_ticks, failover_done)
        assert found is not None
        assert found.worst == ttl + renew + 1 + 1 - 1
        worst[ttl, renew] = found.worst
    at_renew_1 = [worst[(ttl, 1)] for ttl in (2, 3, 4, 5)]
    assert at_renew_1 == sorted(set(at_renew_1))  # a shorter TTL fails over strictly faster


def test_one_pause_cannot_stall_two_standbys() -> None:
    """With three nodes the pause delays only one of the two pollers: gc drops out."""
    model = build(3, ttl=4, renew=1, delay=1, gc=1, tokens=2, crashes=1, pauses=1)
    found = measure(model, failover_ticks, failover_done)
    assert found is not None and found.worst == 4 + 1 + 1 - 1


def test_a_paused_node_resumes_within_gc() -> None:
    """The forced resume: no node stays paused past gc ticks, and time waits for it."""
    model = build(2, ttl=3, renew=1, delay=2, gc=2, tokens=2, crashes=0, pauses=1)
    within = always("within-gc", lambda s: all(n.stalled <= 2 for n in s.nodes))
    reached = sometimes("paused-for-gc", lambda s: any(n.stalled == 2 for n in s.nodes))
    result = check(model, [within, reached])
    assert verdicts(result) == {"within-gc": Verdict.HOLDS, "paused-for-gc": Verdict.HOLDS}
    paused = model.initial_states()[0].with_node(1, RenewalNode(paused=True, stalled=2, wait=1))
    assert [a.name for a, _ in model.successors(paused)] == ["send", "resume", "pause"]  # no tick


def test_a_paused_nodes_request_still_arrives() -> None:
    model = build(2, ttl=3, renew=1, delay=1, gc=1, tokens=2, crashes=0, pauses=1)
    start = model.initial_states()[0]
    state = start.with_node(1, RenewalNode(paused=True, flight=1, wait=1))
    steps = list(model.successors(state))
    assert [(a.name, a.actor) for a, _ in steps[:2]] == [("acquire", "n1"), ("send", "n2")]
    acquire, after = steps[0]
    assert (acquire.actor, acquire.note) == ("n1", "CAS ok: token 1")
    assert after.node(1) == RenewalNode(paused=True, token=1, left=2, wait=1)


def test_a_renewal_late_for_its_own_copy_but_not_the_store_keeps_the_lease() -> None:
    """The holder's copy ran out with its renewal in flight; the store still had time."""
    model = build(2, ttl=5, renew=1, delay=3, gc=0, tokens=2, crashes=0, pauses=0)
    start = model.initial_states()[0]
    waiting = RenewalNode(token=0, left=0, flight=3, renews=1)
    state = start.with_node(1, waiting)._replace(store=Store(1, 1, 2, 1))
    action, after = next(step for step in model.successors(state) if step[0].actor == "n1")
    assert (action.name, action.note) == ("renew", "renewed t1, ttl 5")
    assert after.node(1).tenure == 1 and after.node(1).left == 2 and after.store.ttl_left == 5
    assert check(model, [NOT_DEPOSED]).result("not-deposed").verdict is Verdict.HOLDS


def test_a_crashed_holder_replaced_is_a_failover_not_a_deposal() -> None:
    model = LeaseRenewalModel(2, 2, 1, 0, 0, 2, FaultBounds(crashes=1))
    result = check(model, [NOT_DEPOSED, FAILOVER_DONE])
    assert verdicts(result) == {"not-deposed": Verdict.HOLDS, "failover-done": Verdict.HOLDS}


@pytest.mark.slow  # 2 s: with the slow set, which CI runs
def test_describe_is_json_ready_with_the_ghosts() -> None:
    trace = _defaults("lease-renewal").result("failover-done").trace
    assert trace is not None
    model = _model("lease-renewal")
    view = model.describe(trace.last.state)
    json.dumps(view)
    assert view["ghost"] == {
        "healthy_leader_deposed": False,
        "outage_ticks": None,
        "failover_ticks": 3,
        "holder_crashed": False,
    }
    assert view["store"]["ttl"] == 4
    assert "storage" not in model.summary(trace.last.state)
