"""k8s-lease and k8s-lease-fencing: verdicts, state counts, the counterexample, and that the
verdicts are not vacuous (each holds for a reason the model can be seen to exercise)."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest

from leadercheck.checker import CheckResult, Verdict, always, check, sometimes
from leadercheck.checker.errors import LeadercheckError
from leadercheck.models.cluster import Store
from leadercheck.models.k8s_lease import PROTOCOLS, K8sLeaseModel, K8sNode
from leadercheck.specs.claims import PROPERTIES
from tests.helpers import shape, verdicts

JUDGED = ("no-stale-write", "single-leader", "write-accepted", "failover")


def _model(name: str, **params: int) -> K8sLeaseModel:
    entry = {p.name: p for p in PROTOCOLS}[name]
    model = entry.build(entry.resolve({k: str(v) for k, v in params.items()}))
    assert isinstance(model, K8sLeaseModel)
    return model


def _leader_within_its_lease(s: Any) -> bool:
    """Every live leader holds the Lease, and the Lease outlasts the leader's renewDeadline."""
    return all(
        s.store.holder == i and s.store.ttl_left > n.left
        for i, n in enumerate(s.nodes, start=1)
        if n.up and n.is_leader
    )


LEADER_WITHIN_LEASE = always("leader-within-lease", _leader_within_its_lease)


@cache
def _defaults(name: str) -> CheckResult:
    """One exhaustive run at the defaults (single-leader holds, so the search never stops early)."""
    return check(_model(name), [*(PROPERTIES[p] for p in JUDGED), LEADER_WITHIN_LEASE])


def test_protocol_entries() -> None:
    assert [p.name for p in PROTOCOLS] == ["k8s-lease", "k8s-lease-fencing"]
    assert {p.name: p.default for p in PROTOCOLS[0].params} == {
        "nodes": 3,
        "lease_duration": 3,
        "renew_deadline": 2,
        "retry_period": 1,
        "transitions": 2,
        "crashes": 0,
        "partitions": 1,
        "losses": 1,
        "pauses": 1,
    }


@pytest.mark.slow  # the default suite stays under 3 minutes; CI runs it
def test_k8s_lease_verdicts_and_state_count_at_defaults() -> None:
    result = _defaults("k8s-lease")
    assert verdicts(result) == {
        "no-stale-write": Verdict.VIOLATED,
        "single-leader": Verdict.HOLDS,
        "write-accepted": Verdict.HOLDS,
        "failover": Verdict.HOLDS,
        "leader-within-lease": Verdict.HOLDS,
    }
    assert result.stats.distinct_states == 52_895
    assert result.stats.depth == 27


@pytest.mark.slow  # the default suite stays under 3 minutes; CI runs it
def test_k8s_lease_fencing_verdicts_and_state_count_at_defaults() -> None:
    result = _defaults("k8s-lease-fencing")
    assert set(verdicts(result).values()) == {Verdict.HOLDS}
    assert result.stats.distinct_states == 51_476
    assert result.stats.depth == 26


@pytest.mark.slow  # 3 s; the default suite finds the violation in a longer lease (below)
def test_counterexample_is_the_paused_leader_writing_after_the_new_one() -> None:
    r = _defaults("k8s-lease").result("no-stale-write")
    assert r.trace is not None and len(r.trace) == 13
    assert shape(r.trace.actions) == [
        ("get", "n1", "store"),
        ("create", "n1", "store"),
        ("check", "n1", None),
        ("pause", "n1", None),
        ("tick", "clock", None),
        ("tick", "clock", None),
        ("tick", "clock", None),
        ("get", "n2", "store"),
        ("update", "n2", "store"),
        ("check", "n2", None),
        ("write", "n2", "storage"),
        ("resume", "n1", None),
        ("write", "n1", "storage"),
    ]
    notes = [a.note for a in r.trace.actions]
    assert notes[7] == "n1's t1 expired: will take over"
    assert notes[8] == "take over: t2 (leaseTransitions 1)"
    assert notes[-1] == "token 1 accepted"
    last = r.trace.last.state
    assert not last.node(1).is_leader and last.node(2).tenure == 2  # n1 stopped leading, late


@pytest.mark.slow  # 2.5 s, the whole fenced search; fencing's refusal stays (below)
def test_witnesses_are_short() -> None:
    result = _defaults("k8s-lease-fencing")
    accepted, failover = result.result("write-accepted"), result.result("failover")
    assert accepted.trace is not None and len(accepted.trace) == 4
    assert failover.trace is not None
    assert shape(failover.trace.actions) == [
        ("get", "n1", "store"),
        ("create", "n1", "store"),  # the reply is lost: n1 holds the Lease, unaware
        ("tick", "clock", None),
        ("tick", "clock", None),
        ("tick", "clock", None),
        ("get", "n2", "store"),
        ("update", "n2", "store"),
    ]
    assert failover.trace.actions[1].note.endswith("reply lost")


def test_the_same_schedule_is_refused_by_fencing() -> None:
    broken = _defaults("k8s-lease").result("no-stale-write").trace
    assert broken is not None
    model = _model("k8s-lease-fencing")
    state = model.initial_states()[0]
    for action in broken.actions:
        matches = [(a, s) for a, s in model.successors(state) if a == action]
        if not matches:  # only the final write differs: it is rejected
            matches = [(a, s) for a, s in model.successors(state) if a.name == "write"]
        last, state = matches[0]
    assert last.note == "token 1 rejected: 1 < 2"
    assert not state.storage.stale


def test_without_a_pause_no_write_is_stale() -> None:
    """The violation needs a pause between the check and the write, not just a slow network."""
    result = check(_model("k8s-lease", pauses=0), [PROPERTIES["no-stale-write"]])
    assert result.result("no-stale-write").verdict is Verdict.HOLDS


def test_counterexample_grows_with_the_lease_duration() -> None:
    model = _model("k8s-lease", lease_duration=4, renew_deadline=3, retry_period=2)
    trace = check(model, [PROPERTIES["no-stale-write"]]).result("no-stale-write").trace
    assert trace is not None and len(trace) == 14


def test_a_takeover_race_is_settled_by_the_resource_version() -> None:
    """Single-leader is not vacuous: two nodes read the expired Lease, only one UPDATE wins."""

    def racing(s: Any) -> bool:
        holder = s.store.holder
        readers = [i for i, n in enumerate(s.nodes, 1) if n.plan and n.fresh and i != holder]
        return holder != 0 and len(readers) == 2

    model = _model("k8s-lease")
    found = check(model, [sometimes("race", racing)]).result("race")
    assert found.verdict is Verdict.HOLDS and found.trace is not None
    assert [a.note for a in found.trace.actions if a.name == "get"][-2:] == [
        "n1's t1 expired: will take over"
    ] * 2
    state = found.trace.last.state
    won, state = next((a, s) for a, s in model.successors(state) if a.name == "update")
    assert won.actor == "n2" and won.note == "take over: t2 (leaseTransitions 1)"
    lost = next(a for a, _ in model.successors(state) if a.actor == "n3")
    assert (lost.name, lost.note) == ("update", "409 Conflict: resourceVersion")


def test_a_restarted_node_renews_its_own_lease_without_a_transition() -> None:
    model = _model("k8s-lease", crashes=1)
    start = model.initial_states()[0]
    state = start._replace(
        nodes=(K8sNode(up=False), K8sNode(), K8sNode()), store=Store(1, 1, 2), ghost=1
    )  # n1 was granted the Lease (the first leadership) before it crashed
    steps = []
    for name in ("restart", "get", "update"):
        action, state = next((a, s) for a, s in model.successors(state) if a.name == name)
        steps.append(action.note)
    assert steps == ["", "holder is me: will renew t1", "renew t1"]
    assert state.node(1).tenure == 1 and state.store == Store(1, 1, 3)


@pytest.mark.slow  # 1.8 s; the defaults' verdicts stay
def test_verdicts_with_a_crash_budget() -> None:
    result = check(
        _model("k8s-lease", crashes=1, partitions=0, transitions=1),
        [PROPERTIES[p] for p in JUDGED],
    )
    assert verdicts(result) == {
        "no-stale-write": Verdict.VIOLATED,
        "single-leader": Verdict.HOLDS,
        "write-accepted": Verdict.HOLDS,
        "failover": Verdict.HOLDS,
    }


def test_a_leader_cut_from_the_api_server_stops_before_its_lease_expires() -> None:
    model = _model("k8s-lease", losses=0, pauses=0)
    state = model.initial_states()[0]
    for name in ("get", "create", "partition"):
        _, state = next((a, s) for a, s in model.successors(state) if a.name == name)
    assert model.urgent(state, 1) is False  # it cannot renew, so time may pass
    _, state = next((a, s) for a, s in model.successors(state) if a.name == "tick")
    _, state = next((a, s) for a, s in model.successors(state) if a.name == "tick")
    assert not state.node(1).is_leader and state.store.ttl_left == 1


def test_describe_is_json_ready_and_names_the_lease_fields() -> None:
    trace = _defaults("k8s-lease").result("no-stale-write").trace
    assert trace is not None
    model = _model("k8s-lease")
    view = model.describe(trace.last.state)
    json.dumps(view)
    assert view["store"] == {
        "holderIdentity": "n2",
        "leaseTransitions": 1,
        "leaseDurationSeconds": 3,
        "ticks_until_renewTime_plus_leaseDuration": 3,
    }
    assert view["n2"]["renew_deadline_left"] == 2
    assert model.summary(trace.last.state)["n2"] == "leader t2"


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"lease_duration": 3, "renew_deadline": 3}, "lease_duration=3 must exceed"),
        ({"renew_deadline": 2, "retry_period": 2}, "renew_deadline=2 must exceed 1.2"),
    ],
)
def test_client_go_rejects_inconsistent_timings(params: dict[str, int], message: str) -> None:
    with pytest.raises(LeadercheckError, match=message):
        _model("k8s-lease", **params)
