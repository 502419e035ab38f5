"""Raft-style election and its broken variants: verdicts, counterexamples and state counts.

The protocols are built from `models.raft.PROTOCOLS` directly and judged on the properties
proposed for specs/expected.toml (listed here), so these tests do not depend on the catalogue.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from checker import CheckResult, Verdict, always, check
from checker.model import Action
from models.cluster import ClusterState, Message
from models.raft import PROTOCOLS, REQUEST_VOTE, RaftModel, RaftNode
from specs.claims import PROPERTIES
from tests.helpers import trace_shape

ENTRIES = {p.name: p for p in PROTOCOLS}

EXPECTED: dict[str, dict[str, Verdict]] = {
    "raft": {
        "single-leader": Verdict.HOLDS,
        "no-stale-write": Verdict.VIOLATED,
        "leader-elected": Verdict.HOLDS,
        "election-started": Verdict.HOLDS,
        "failover": Verdict.HOLDS,
        "leader-during-partition": Verdict.HOLDS,
    },
    "raft-no-quorum": {
        "single-leader": Verdict.VIOLATED,
        "no-stale-write": Verdict.VIOLATED,
        "leader-elected": Verdict.HOLDS,
        "failover": Verdict.HOLDS,
    },
    "raft-volatile-vote": {
        "single-leader": Verdict.VIOLATED,
        "no-stale-write": Verdict.VIOLATED,
        "leader-elected": Verdict.HOLDS,
        "failover": Verdict.HOLDS,
    },
    "even-quorum": {
        "single-leader": Verdict.HOLDS,
        "election-started": Verdict.HOLDS,
        "leader-during-partition": Verdict.VIOLATED,
    },
}


def build(name: str, **params: int) -> RaftModel:
    entry = ENTRIES[name]
    model = entry.build(entry.resolve({k: str(v) for k, v in params.items()}))
    assert isinstance(model, RaftModel)
    return model


def run(name: str, *props: str, **params: int) -> CheckResult:
    """Check `name` on `props` (default: its expected properties), overriding parameters."""
    names = props or tuple(EXPECTED[name])
    return check(build(name, **params), [PROPERTIES[p] for p in names])


def steps(result: CheckResult, prop: str) -> list[tuple[str, str, str | None]]:
    return trace_shape(result.result(prop).trace)


@pytest.fixture(scope="module")
def raft() -> CheckResult:
    return run("raft")


# -- verdicts and state counts at the defaults ---------------------------------------


def test_raft_verdicts_and_reachable_states_at_defaults(raft: CheckResult) -> None:
    assert {r.prop.name: r.verdict for r in raft.results} == EXPECTED["raft"]
    # single-leader holds, so the search ran to the end: this is the whole reachable set
    assert raft.end.name == "EXHAUSTED"
    assert raft.stats.distinct_states == 49_106
    assert raft.stats.depth == 14


@pytest.mark.parametrize("name", ["raft-no-quorum", "raft-volatile-vote", "even-quorum"])
def test_variant_verdicts_at_defaults(name: str) -> None:
    result = run(name)
    assert {r.prop.name: r.verdict for r in result.results} == EXPECTED[name]


@pytest.mark.parametrize(
    ("name", "distinct"),
    [("raft-no-quorum", 11_442), ("raft-volatile-vote", 18_283), ("even-quorum", 1_024)],
)
def test_reachable_state_count_at_defaults(name: str, distinct: int) -> None:
    result = check(build(name), [always("anything", lambda s: True)])
    assert result.stats.distinct_states == distinct


# -- raft: safe elections, unsafe writes ---------------------------------------------


def test_raft_witnesses_are_short(raft: CheckResult) -> None:
    lengths = {r.prop.name: len(r.trace) for r in raft.results if r.trace is not None}
    assert lengths == {
        "no-stale-write": 8,
        "leader-elected": 3,
        "election-started": 1,
        "failover": 4,
        "leader-during-partition": 4,
    }


def test_raft_stale_write_needs_no_fault_only_a_late_vote(raft: CheckResult) -> None:
    """n1 wins term 1 after n2 has started term 2; nothing tells n1, and the storage checks
    nothing, so n1's term-1 write lands after n2's term-2 write."""
    assert steps(raft, "no-stale-write") == [
        ("timeout", "n1", None),
        ("RequestVote", "n1", "n2"),
        ("timeout", "n2", None),
        ("RequestVote", "n2", "n3"),
        ("VoteGranted", "n2", "n1"),
        ("VoteGranted", "n3", "n2"),
        ("write", "n2", "storage"),
        ("write", "n1", "storage"),
    ]
    trace = raft.result("no-stale-write").trace
    assert trace is not None
    assert trace.actions[4].note == "2 votes, 2 needed: leader t1"
    assert sorted(trace.last.state.leaders()) == [(1, 1), (2, 2)]
    faultless = run("raft", "no-stale-write", crashes=0, partitions=0)
    assert faultless.result("no-stale-write").verdict is Verdict.VIOLATED


def test_raft_without_faults_keeps_one_leader_per_term_and_fails_over() -> None:
    result = run("raft", "single-leader", "failover", crashes=0, partitions=0)
    assert result.result("single-leader").verdict is Verdict.HOLDS
    assert result.result("failover").verdict is Verdict.HOLDS


def test_one_term_allows_no_failover() -> None:
    assert run("raft", "failover", terms=1).result("failover").verdict is Verdict.VIOLATED


def elections(model: RaftModel) -> Iterator[tuple[Action, ClusterState, int]]:
    """Every step, over the whole reachable set, that makes a node leader: (step, after, node)."""
    start = model.initial_states()
    seen, todo = set(start), list(start)
    while todo:
        s = todo.pop()
        for action, after in model.successors(s):
            for i in model.ids:
                if after.node(i).is_leader and not s.node(i).is_leader:
                    yield action, after, i
            if after not in seen:
                seen.add(after)
                todo.append(after)


def split_elections(model: RaftModel) -> list[tuple[Action, bool]]:
    """Elections won while the network is split, each with whether the winner's side is
    a minority (half the nodes or fewer)."""
    return [
        (action, 2 * sum(after.net.connected(i, j) for j in model.ids) <= model.n)
        for action, after, i in elections(model)
        if after.net.island
    ]


def test_a_minority_side_never_elects_a_leader() -> None:
    """On three nodes a win during a split needs a vote delivered across the split, which
    the partition forbids. (On five, a candidate may win on the small side with votes it
    collected before the split: real Raft allows that, and it is still one leader per term.)

    A leader elected before the split may lead on in a minority, since nothing here makes
    a leader step down for want of a quorum: that is what leader-during-partition sees.
    """
    won = split_elections(build("raft"))
    assert won and not any(minority for _, minority in won)
    broken = [action for action, minority in split_elections(build("raft-no-quorum")) if minority]
    assert {action.name for action in broken} == {"timeout"}  # a lone node elects itself


def test_a_newer_term_deposes_a_leader_who_then_votes() -> None:
    model = build("raft")
    leader = RaftNode(role="leader", term=1, voted=1, votes=frozenset({1, 2}))
    s = model.initial_states()[0].with_node(1, leader)
    action, after = model.deliver(s, Message(REQUEST_VOTE, 2, 1, 2))
    assert action.note == "adopts term 2, steps down from leader; grants its term 2 vote"
    assert after.node(1) == RaftNode(term=2, voted=2)
    assert after.net.msgs == (Message("VoteGranted", 1, 2, 2),)


def test_crash_keeps_term_and_vote_but_not_role() -> None:
    model = build("raft")
    leader = RaftNode(role="leader", term=2, voted=1, votes=frozenset({1, 3}))
    assert model.restart_node(model.crash_node(leader), 1) == RaftNode(term=2, voted=1)


# -- raft-no-quorum: a majority of what the candidate sees ---------------------------


def test_no_quorum_split_brain_behind_a_partition() -> None:
    result = run("raft-no-quorum")
    r = result.result("single-leader")
    assert steps(result, "single-leader") == [
        ("timeout", "n1", None),
        ("RequestVote", "n1", "n2"),
        ("VoteGranted", "n2", "n1"),
        ("partition", "network", None),
        ("timeout", "n3", None),
    ]
    assert r.trace is not None
    assert r.trace.actions[-1].note == "term 1: nobody reachable, 1 vote, 1 needed: leader t1"
    assert r.reason == "n1 and n3 are both leader of epoch 1"
    assert len(steps(result, "no-stale-write")) == 7


def test_no_quorum_is_safe_while_everyone_is_visible() -> None:
    result = run("raft-no-quorum", "single-leader", "failover", partitions=0, crashes=1)
    assert result.result("single-leader").verdict is Verdict.HOLDS
    assert result.result("failover").verdict is Verdict.HOLDS


# -- raft-volatile-vote: the vote forgotten on restart -------------------------------


def test_volatile_vote_double_vote_after_a_restart() -> None:
    result = run("raft-volatile-vote")
    assert steps(result, "single-leader") == [
        ("timeout", "n1", None),
        ("RequestVote", "n1", "n2"),
        ("VoteGranted", "n2", "n1"),
        ("crash", "n2", None),
        ("restart", "n2", None),
        ("timeout", "n3", None),
        ("RequestVote", "n3", "n2"),
        ("VoteGranted", "n2", "n3"),
    ]
    assert result.result("single-leader").reason == "n1 and n3 are both leader of epoch 1"


def test_volatile_vote_is_safe_without_crashes() -> None:
    result = run("raft-volatile-vote", "single-leader", "failover", crashes=0, partitions=1)
    assert result.result("single-leader").verdict is Verdict.HOLDS
    assert result.result("failover").verdict is Verdict.HOLDS


def test_the_same_schedule_on_raft_leaves_n2_bound_to_its_vote() -> None:
    """Replaying the crash and restart on raft: n2 remembers voting for n1 in term 1 and
    refuses n3, whose candidacy then has nothing left to wait for."""
    broken = run("raft-volatile-vote").result("single-leader").trace
    assert broken is not None
    model = build("raft")
    state = model.initial_states()[0]
    for action in broken.actions[:6]:
        state = next(s for a, s in model.successors(state) if a == action)
    assert state.node(2) == RaftNode(term=1, voted=1)
    request = broken.actions[6]
    action, state = next((a, s) for a, s in model.successors(state) if a[:3] == request[:3])
    assert action.note == "refuses in term 1"
    assert state.node(2) == RaftNode(term=1, voted=1)
    assert state.leaders() == ((1, 1),)
    # the refusal brings n3 no newer term, so it is dropped at once
    assert all(m.kind == REQUEST_VOTE for m in state.net.msgs)


# -- even-quorum: a half is not a majority -------------------------------------------


def test_even_split_is_in_place_from_the_start_and_never_heals() -> None:
    model = build("even-quorum")
    start = model.initial_states()[0]
    assert start.net.island == frozenset({1, 2})
    names = {a.name for s in [start] for a, _ in model.successors(s)}
    assert names == {"timeout", "tick"}
    assert run("even-quorum", "leader-elected").result("leader-elected").verdict is (
        Verdict.VIOLATED
    )


def test_five_nodes_split_two_three_elect_on_the_three_side() -> None:
    result = run("even-quorum", "leader-during-partition", nodes=5)
    r = result.result("leader-during-partition")
    assert r.verdict is Verdict.HOLDS and r.trace is not None
    assert len(r.trace) == 5
    assert [i for i, _ in r.trace.last.state.leaders()] == [3]
