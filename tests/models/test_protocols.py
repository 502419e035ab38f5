"""Each protocol's verdicts, shortest counterexamples and exact state counts at its defaults.

A changed count is a semantic change to a model: explain it in the commit that makes it.
"""

from __future__ import annotations

import pytest

from leadercheck.checker import Verdict
from leadercheck.models.catalogue import lookup
from leadercheck.specs import load_expectations
from tests.helpers import reachable_count, run_protocol


@pytest.mark.parametrize(
    ("name", "distinct"),
    [
        pytest.param("lease-fencing", 75_455, marks=pytest.mark.slow),  # CI runs the slow set
        pytest.param("lease-no-fencing", 78_245, marks=pytest.mark.slow),
        ("heartbeat-no-quorum", 19_292),
    ],
)
def test_reachable_state_count_at_defaults(name: str, distinct: int) -> None:
    assert reachable_count(name) == distinct


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("lease-fencing", marks=pytest.mark.slow),  # the gate checks them too
        pytest.param("lease-no-fencing", marks=pytest.mark.slow),
        "heartbeat-no-quorum",
    ],
)
def test_verdicts_match_the_specs(name: str) -> None:
    result = run_protocol(name)
    expected = load_expectations().expected(name)
    assert {r.prop.name: r.verdict for r in result.results} == expected


@pytest.mark.slow  # the default suite stays under 3 minutes; CI runs it
def test_lease_no_fencing_counterexample_is_the_paused_old_leader() -> None:
    r = run_protocol("lease-no-fencing").result("no-stale-write")
    assert r.trace is not None
    assert [(a.name, a.actor, a.target) for a in r.trace.actions] == [
        ("acquire", "n1", "store"),
        ("check", "n1", None),
        ("pause", "n1", None),
        ("tick", "clock", None),
        ("tick", "clock", None),
        ("acquire", "n2", "store"),
        ("check", "n2", None),
        ("write", "n2", "storage"),
        ("resume", "n1", None),
        ("write", "n1", "storage"),
    ]
    assert r.trace.actions[-1].note == "token 1 accepted"
    assert r.trace.actions[-3].note == "token 2 accepted"


@pytest.mark.slow  # the default suite stays under 3 minutes; CI runs it
def test_the_same_schedule_is_refused_by_fencing() -> None:
    """Replaying the no-fencing counterexample on lease-fencing: the late write is rejected."""
    broken = run_protocol("lease-no-fencing").result("no-stale-write").trace
    assert broken is not None
    protocol = lookup("lease-fencing")
    model = protocol.build(protocol.resolve({}))
    state = model.initial_states()[0]
    for action in broken.actions:
        matches = [
            (a, s)
            for a, s in model.successors(state)
            if (a.name, a.actor, a.target) == (action.name, action.actor, action.target)
        ]
        assert matches, f"{action} not enabled under fencing"
        last_action, state = matches[0]
    assert last_action.note == "token 1 rejected: 1 < 2"
    assert not state.storage.stale


def test_counterexample_length_grows_with_the_ttl() -> None:
    r = run_protocol("lease-no-fencing", ttl=3, crashes=0, partitions=0, losses=0)
    trace = r.result("no-stale-write").trace
    assert trace is not None and len(trace) == 11


def test_lease_without_fencing_is_safe_if_nothing_pauses() -> None:
    """The violation needs a pause between the check and the write: the model is not vacuous."""
    result = run_protocol("lease-no-fencing", pauses=0)
    assert result.result("no-stale-write").verdict is Verdict.HOLDS


def test_heartbeat_split_brain_under_a_partition() -> None:
    r = run_protocol("heartbeat-no-quorum").result("single-leader")
    assert r.verdict is Verdict.VIOLATED and r.trace is not None
    assert len(r.trace) == 6
    assert any(a.name == "partition" for a in r.trace.actions)
    assert r.trace.actions[-1].name == "promote"
    assert r.reason == "n1 and n2 are both leader at the same time"
    assert sorted(n for n, _ in r.trace.last.state.leaders()) == [1, 2]


def test_heartbeat_without_faults_keeps_one_leader_but_never_fails_over() -> None:
    result = run_protocol("heartbeat-no-quorum", partitions=0, losses=0)
    assert result.result("single-leader").verdict is Verdict.HOLDS
    assert result.result("failover").verdict is Verdict.VIOLATED  # the witness catches it


def test_heartbeat_leader_crash_alone_elects_two_leaders() -> None:
    """No quorum: both followers time out on the same tick and both promote."""
    result = run_protocol("heartbeat-no-quorum", partitions=0, losses=0, crashes=1)
    assert result.result("single-leader").verdict is Verdict.VIOLATED


def test_every_successor_is_a_valid_state_and_actions_are_ordered() -> None:
    protocol = lookup("lease-fencing")
    model = protocol.build(protocol.resolve({"nodes": "2"}))
    first = [a for a, _ in model.successors(model.initial_states()[0])]
    again = [a for a, _ in model.successors(model.initial_states()[0])]
    assert first == again
    assert first[0].name == "acquire"
