"""A send to a node that is down or behind a partition cannot leave: it is in no state,
so the step that made it says so (`Action.unreached`), and the search is unchanged."""

from __future__ import annotations

from leadercheck.models.bully import BullyModel
from leadercheck.models.catalogue import lookup
from leadercheck.models.cluster import ClusterState, FaultBounds, Message
from leadercheck.models.heartbeat import HEARTBEAT
from leadercheck.models.heartbeat import PROTOCOLS as HEARTBEAT_PROTOCOLS
from leadercheck.models.raft import REQUEST_VOTE


def _start(model: object) -> ClusterState:
    (s,) = model.initial_states()  # type: ignore[attr-defined]
    return s  # type: ignore[no-any-return]


def test_post_keeps_what_can_arrive_and_returns_the_rest() -> None:
    model = BullyModel(3, timeout=2, faults=FaultBounds())
    s = _start(model)
    s = s.with_node(2, s.node(2)._replace(up=False))
    s = s._replace(net=s.net.split(frozenset({3})))
    to = [Message("PING", 1, 2), Message("PING", 1, 3)]
    after, unreached = s.post(*to)
    assert unreached == (Message("PING", 1, 2), Message("PING", 1, 3)) and after.net.msgs == ()
    after, unreached = s._replace(net=s.net.heal()).post(*to)
    assert unreached == (Message("PING", 1, 2),) and after.net.msgs == (Message("PING", 1, 3),)


def test_bullys_heartbeat_to_a_crashed_node_is_unreached_and_named() -> None:
    model = BullyModel(3, timeout=2, faults=FaultBounds())
    s = _start(model)
    s = s.with_node(1, model.crash_node(s.node(1)))
    (action, after), *_ = [(a, t) for a, t in model.node_steps(s, 3) if a.name == "heartbeat"]
    assert [str(m) for m in action.unreached] == ["COORDINATOR(n3->n1)"]
    assert "(n1 unreachable)" in action.shown().note
    assert [str(m) for m in after.net.msgs] == ["COORDINATOR(n3->n2)"]


def test_heartbeats_and_votes_across_a_partition_are_unreached() -> None:
    entry = HEARTBEAT_PROTOCOLS[0]
    model = entry.build(entry.resolve({}))
    s = _start(model)
    s = s._replace(net=s.net.split(frozenset({1})))
    (beat,) = [a for a, _ in model.node_steps(s, 1) if a.name == "send heartbeat"]
    assert {(m.kind, m.dst) for m in beat.unreached} == {(HEARTBEAT, 2), (HEARTBEAT, 3)}

    entry = lookup("raft")
    raft = entry.build(entry.resolve({}))
    s = _start(raft)
    s = s._replace(net=s.net.split(frozenset({1})))
    (timeout,) = [a for a, _ in raft.node_steps(s, 1) if a.name == "timeout"]
    assert {(m.kind, m.dst) for m in timeout.unreached} == {(REQUEST_VOTE, 2), (REQUEST_VOTE, 3)}
