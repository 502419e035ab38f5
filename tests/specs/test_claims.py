"""The claims on hand-built cluster states, and the expectations file."""

from __future__ import annotations

from pathlib import Path

import pytest

from leadercheck.checker import LeadercheckError, Verdict
from leadercheck.models.cluster import ClusterState, Faults, Network, Storage, Store
from leadercheck.models.heartbeat import HeartbeatNode
from leadercheck.models.lease import LeaseNode
from leadercheck.specs import load_expectations, no_stale_write, single_leader


def _state(*nodes: object, storage: Storage | None = None) -> ClusterState:
    return ClusterState(tuple(nodes), Store(), storage or Storage(), Network(), Faults())


def test_two_leaders_of_one_token_break_single_leader() -> None:
    s = _state(LeaseNode(token=2, left=1), LeaseNode(token=2, left=2), LeaseNode())
    assert not single_leader.predicate(s)
    assert single_leader.why(s) == "n1 and n2 are both leader of epoch 2"


def test_leaders_of_different_tokens_are_allowed() -> None:
    s = _state(LeaseNode(token=1, left=1), LeaseNode(token=2, left=2))
    assert single_leader.predicate(s)


def test_a_crashed_node_is_not_a_leader() -> None:
    s = _state(LeaseNode(up=False, token=1), LeaseNode(token=1, left=1))
    assert single_leader.predicate(s)


def test_without_epochs_two_leaders_at_once_break_single_leader() -> None:
    s = _state(HeartbeatNode(leader=True, ghost=1), HeartbeatNode(leader=True, ghost=2))
    assert not single_leader.predicate(s)
    assert single_leader.why(s) == "n1 and n2 are both leader at the same time"


def test_no_stale_write_reads_the_ghost_flag() -> None:
    assert no_stale_write.predicate(_state(LeaseNode(), storage=Storage(3, False)))
    assert not no_stale_write.predicate(_state(LeaseNode(), storage=Storage(3, True)))


def test_expectations_file_lists_each_protocol_in_order() -> None:
    exp = load_expectations()
    assert [p.name for p in exp.properties("lease-no-fencing")] == [
        "no-stale-write",
        "single-leader",
        "write-accepted",
        "failover",
    ]
    assert exp.of("lease-no-fencing")[0].max_steps == 10
    assert exp.expected("heartbeat-no-quorum")["single-leader"] is Verdict.VIOLATED


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[x]\nsingle-leader = 'MAYBE'", "expected HOLDS or VIOLATED"),
        ("[x]\nsingle-leader = 'HOLDS'", "names no witness"),
        ("[x]\nfailover = 'VIOLATED'", "names no witness"),
        ("[x]\nfailover = { verdict = 'HOLDS', max_steps = -1 }", "max_steps must be"),
        ("[x]\nfailover = { verdict = 'HOLDS', steps = 1 }", "unknown key 'steps'"),
        ("[x]\nmystery = 'HOLDS'", "unknown property 'mystery'"),
        ("[x", "cannot read"),
        ("x = 1", "must be a table"),
    ],
)
def test_malformed_expectations_are_named(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "expected.toml"
    path.write_text(text)
    with pytest.raises(LeadercheckError, match=message):
        load_expectations(path)
