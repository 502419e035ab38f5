"""lease-cas and lease-blind-write: verdicts, state counts and counterexamples at the defaults."""

from __future__ import annotations

from functools import cache

import pytest

from leadercheck.checker import CheckResult, Verdict, check, sometimes
from leadercheck.models.cluster import ClusterState
from leadercheck.models.lease_row import PROTOCOLS, LeaseRowModel, RowNode
from leadercheck.specs.claims import PROPERTIES
from tests.helpers import reachable_count

ENTRIES = {p.name: p for p in PROTOCOLS}
CLAIMS = ("single-leader", "no-stale-write", "write-accepted", "failover")


def build(name: str, **params: int) -> LeaseRowModel:
    entry = ENTRIES[name]
    model = entry.build(entry.resolve({k: str(v) for k, v in params.items()}))
    assert isinstance(model, LeaseRowModel)
    return model


@cache
def at_defaults(name: str) -> CheckResult:
    return check(build(name), [PROPERTIES[n] for n in CLAIMS])


def replay(
    model: LeaseRowModel, schedule: list[tuple[str, str]], start: ClusterState | None = None
) -> tuple[str, ClusterState]:
    """Take the first enabled step matching each (action, actor); the last note and state."""
    state = start or model.initial_states()[0]
    note = ""
    for name, actor in schedule:
        steps = [(a, s) for a, s in model.successors(state) if (a.name, a.actor) == (name, actor)]
        assert steps, f"{actor} {name} not enabled"
        action, state = steps[0]
        note = action.note
    return note, state


@pytest.mark.parametrize(
    ("name", "verdicts", "distinct"),
    [
        pytest.param(
            "lease-cas", ("HOLDS", "HOLDS", "HOLDS", "HOLDS"), 64_235, marks=pytest.mark.slow
        ),
        # 96,649 since the state records which leadership each token belongs to (37,036
        # before): two leaderships share a token here, and no-stale-write must tell them apart
        pytest.param(  # 5 s, the whole state graph; its verdicts' traces stay (below)
            "lease-blind-write",
            ("VIOLATED", "VIOLATED", "HOLDS", "HOLDS"),
            96_649,
            marks=pytest.mark.slow,
        ),
    ],
)
def test_verdicts_and_reachable_states_at_defaults(
    name: str, verdicts: tuple[str, ...], distinct: int
) -> None:
    result = at_defaults(name)
    assert [r.verdict.value for r in result.results] == list(verdicts)
    assert reachable_count(name) == distinct  # every state, whatever the verdicts


@pytest.mark.slow  # 4.5 s; k8s-lease's witnesses stay in the default suite
def test_witnesses_are_short() -> None:
    """A second leadership (`failover`) takes a lapse and a new update with the WHERE
    clause; the blind update makes one in the same four steps that make two leaders."""
    for name, lengths in (("lease-cas", [4, 6]), ("lease-blind-write", [4, 4])):
        result = at_defaults(name)
        assert [len(result.result(w).trace or ()) for w in ("write-accepted", "failover")] == (
            lengths
        )


def test_blind_write_counterexample_is_two_reads_of_the_free_row_then_two_updates() -> None:
    r = at_defaults("lease-blind-write").result("single-leader")
    assert r.trace is not None
    assert [(a.name, a.actor, a.target, a.note) for a in r.trace.actions] == [
        ("read", "n1", "store", "row free: token 0"),
        ("read", "n2", "store", "row free: token 0"),
        ("update", "n1", "store", "blind: token 1, ttl 2"),
        ("update", "n2", "store", "blind: token 1, ttl 2"),
    ]
    assert r.reason == "n1 and n2 are both leader of epoch 1"
    assert r.trace.last.state.store.holder == 2  # the row names only the last writer


def test_the_same_schedule_is_refused_by_the_where_clause() -> None:
    broken = at_defaults("lease-blind-write").result("single-leader").trace
    assert broken is not None
    note, state = replay(build("lease-cas"), [(a.name, a.actor) for a in broken.actions])
    assert note == "0 rows: token is 1, not 0"
    assert state.leaders() == ((1, 1),)


PAUSED_BETWEEN_READ_AND_UPDATE = [
    ("read", "n1"),
    ("pause", "n1"),
    ("read", "n2"),
    ("update", "n2"),
    ("tick", "clock"),
    ("resume", "n1"),
    ("update", "n1"),
]


def test_a_pause_between_read_and_update_overwrites_a_live_lease_without_the_where() -> None:
    note, state = replay(build("lease-blind-write"), PAUSED_BETWEEN_READ_AND_UPDATE)
    assert note == "blind: token 1, ttl 2"
    assert state.leaders() == ((1, 1), (2, 1))


def test_a_pause_between_read_and_update_is_harmless_with_the_where() -> None:
    note, state = replay(build("lease-cas"), PAUSED_BETWEEN_READ_AND_UPDATE)
    assert note == "0 rows: token is 1, not 0"
    assert state.leaders() == ((2, 1),)


def test_blind_write_needs_no_fault_at_all() -> None:
    model = build("lease-blind-write", pauses=0)
    result = check(model, [PROPERTIES["single-leader"]])
    r = result.result("single-leader")
    assert r.verdict is Verdict.VIOLATED and r.trace is not None and len(r.trace) == 4


def test_a_late_blind_write_lowers_the_token_and_fencing_refuses_its_writes() -> None:
    """The docstring's claim: the token can go down, yet no-stale-write holds (tested above)."""

    def lowered_leader(s: ClusterState) -> int:
        row = s.store.token  # the row's token, below one the storage has already accepted
        return next((i for i, t in s.leaders() if t == row < s.storage.hi_epoch), 0)

    claim = sometimes("token-lowered", lambda s: bool(lowered_leader(s)))
    model = build("lease-blind-write")
    r = check(model, [claim]).result("token-lowered")
    assert r.verdict is Verdict.HOLDS and r.trace is not None
    assert any(a.name == "pause" for a in r.trace.actions)  # only a paused writer comes late
    state = r.trace.last.state
    name = f"n{lowered_leader(state)}"
    note, after = replay(model, [("check", name), ("write", name)], state)
    assert "rejected" in note and not after.storage.stale


def test_the_read_is_kept_in_the_node_record_and_forgotten_on_a_crash() -> None:
    model = build("lease-cas", crashes=1)
    _, state = replay(model, [("read", "n1")])
    node = state.node(1)
    assert node == RowNode(seen=0)
    assert node.describe()["seen_token"] == 0 and node.summary() == "follower, read t0"
    assert model.crash_node(node) == RowNode(up=False)
