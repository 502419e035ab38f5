"""Leadership by gossip: verdicts, shortest counterexamples and state count at the defaults,
and views converging once the faults are repaired."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from leadercheck.checker import CheckResult, Verdict, always, check
from leadercheck.checker.model import Action
from leadercheck.models.cluster import ClusterState
from leadercheck.models.gossip import PROTOCOLS, GossipModel
from leadercheck.specs.claims import PROPERTIES
from tests.helpers import trace_shape, verdicts

SAFETY = ("single-leader", "no-stale-write")
WITNESSES = ("leader-elected", "write-accepted", "failover", "leader-during-partition")


def build(**params: int) -> GossipModel:
    entry = PROTOCOLS[0]
    model = entry.build(entry.resolve({k: str(v) for k, v in params.items()}))
    assert isinstance(model, GossipModel)
    return model


def run(props: Iterable[str] = SAFETY + WITNESSES, **params: int) -> CheckResult:
    return check(build(**params), [PROPERTIES[p] for p in props])


def test_verdicts_at_defaults() -> None:
    assert verdicts(run()) == {
        "single-leader": Verdict.VIOLATED,
        "no-stale-write": Verdict.VIOLATED,
        **{w: Verdict.HOLDS for w in WITNESSES},
    }


@pytest.mark.slow  # the default suite stays under 3 minutes; CI runs it
def test_reachable_state_count_at_defaults() -> None:
    result = check(build(), [always("anything", lambda s: True)])
    assert result.stats.distinct_states == 122_639


ISOLATED_N1_TAKES_OVER = [
    ("gossip", "n1", "n2"),
    ("gossip", "n3", "n1"),
    ("crash", "n2", None),
    ("tick", "clock", None),
    ("gossip", "n3", "n2"),
    ("partition", "network", None),  # {n1} | {n2, n3}
    ("gossip", "n1", "n3"),
    ("tick", "clock", None),
    ("gossip", "n1", "n2"),
    ("gossip", "n3", "n1"),
    ("tick", "clock", None),  # n1 last heard of n3 three ticks ago
    ("settle", "n1", None),
]


def test_single_leader_counterexample_is_an_isolated_node_taking_over() -> None:
    r = run(SAFETY).result("single-leader")
    assert trace_shape(r.trace) == ISOLATED_N1_TAKES_OVER
    assert r.trace is not None
    assert r.trace.actions[-1].note == "n3 timed out; n1 takes over"
    assert r.reason == "n1 and n3 are both leader at the same time"


def test_no_stale_write_counterexample_is_the_old_leader_writing_last() -> None:
    r = run(SAFETY).result("no-stale-write")
    assert trace_shape(r.trace) == ISOLATED_N1_TAKES_OVER + [
        ("write", "n1", "storage"),
        ("write", "n3", "storage"),
    ]
    assert r.trace is not None
    assert r.trace.actions[-1].note == "accepted, from leadership #1"


def test_the_old_leader_leads_again_as_soon_as_it_restarts() -> None:
    r = run(("single-leader",), partitions=0).result("single-leader")
    assert r.verdict is Verdict.VIOLATED and r.trace is not None
    assert len(r.trace) == 13
    assert ("crash", "n3", None) in trace_shape(r.trace)
    assert r.trace.actions[-4:] == (
        Action("tick", "clock"),
        Action("settle", "n2", None, "n3 timed out; n2 takes over"),
        Action("restart", "n3"),
        Action("gossip", "n1", "n3", "views merged; n3 takes over"),
    )
    assert r.reason == "n2 and n3 are both leader at the same time"


def test_without_faults_one_leader_and_no_failover() -> None:
    result = run(crashes=0, partitions=0)
    assert result.result("single-leader").verdict is Verdict.HOLDS
    assert result.result("no-stale-write").verdict is Verdict.HOLDS
    assert result.result("leader-elected").verdict is Verdict.HOLDS
    assert result.result("failover").verdict is Verdict.VIOLATED  # nobody is ever suspected


def test_a_lost_reply_only_delays_the_news() -> None:
    result = run(SAFETY, crashes=0, partitions=0, losses=1)
    assert verdicts(result) == {"single-leader": Verdict.HOLDS, "no-stale-write": Verdict.HOLDS}


def test_a_timeout_shorter_than_the_gossip_period_suspects_live_nodes() -> None:
    """Round-robin over three peers reaches each one every third tick."""
    short = run(("single-leader",), nodes=4, timeout=2, crashes=0, partitions=0)
    r = short.result("single-leader")
    assert r.verdict is Verdict.VIOLATED and r.trace is not None
    assert {a.name for a in r.trace.actions} == {"gossip", "tick", "settle"}
    enough = run(("single-leader",), nodes=4, timeout=3, crashes=0, partitions=0)
    assert enough.result("single-leader").verdict is Verdict.HOLDS


def _repair_and_gossip(model: GossipModel, state: ClusterState, ticks: int) -> ClusterState:
    """Heal, restart and resume everything, then only gossip and settle for `ticks` ticks."""
    preference = ("heal", "restart", "resume", "settle", "gossip", "tick")
    while ticks:
        enabled = [(a, s) for a, s in model.successors(state) if a.name in preference]
        action, state = min(enabled, key=lambda pair: preference.index(pair[0].name))
        ticks -= action.name == "tick"
    return state


def test_views_converge_once_the_faults_are_repaired() -> None:
    model = build()
    split = run(("single-leader",)).result("single-leader").trace
    assert split is not None and len(split.last.state.leaders()) == 2
    state = _repair_and_gossip(model, split.last.state, ticks=model.timeout)
    assert state.leaders() == ((3, None),)
    assert all(
        n.leader == 3 and all(n.view[k - 1] for k in (1, 2, 3) if k != i)
        for i, n in enumerate(state.nodes, start=1)
    )
