"""Raft-style election and its broken variants: verdicts, counterexamples and state counts.

The protocols are built from `models.raft.PROTOCOLS` directly and judged on the properties
proposed for specs/expected.toml (listed here), so these tests do not depend on the catalogue.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from leadercheck.checker import CheckResult, Verdict, always, check
from leadercheck.checker.engine.measure import measure
from leadercheck.checker.engine.settings import Reductions
from leadercheck.checker.model import Action
from leadercheck.models.cluster import ClusterModel, ClusterState, FaultBounds, Message
from leadercheck.models.raft import (
    ELECTION_MESSAGES,
    PROTOCOLS,
    REQUEST_VOTE,
    FirstTerm,
    FirstTermElection,
    RaftModel,
    RaftNode,
    first_term_messages,
    first_term_over,
)
from leadercheck.specs.claims import PROPERTIES
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


@pytest.mark.slow  # the default suite stays under 3 minutes; CI runs it
def test_raft_verdicts_and_reachable_states_at_defaults(raft: CheckResult) -> None:
    assert {r.prop.name: r.verdict for r in raft.results} == EXPECTED["raft"]
    # single-leader holds, so the search ran to the end: this is the whole reachable set
    assert raft.end.name == "EXHAUSTED"
    assert raft.stats.distinct_states == 101_370
    assert raft.stats.depth == 19


@pytest.mark.slow  # the default suite stays under 3 minutes; CI runs it
def test_stabilizing_adds_states_and_removes_none() -> None:
    """Timing may stabilize at any moment, so every state reachable without it still is:
    the 49,106 states of raft before the step existed are exactly the unstable ones."""
    unstable: list[int] = []

    def count(s: ClusterState) -> bool:
        if not s.extra.stable:
            unstable.append(1)
        return True

    check(build("raft"), [always("count", count)])
    assert len(unstable) == 49_106


@pytest.mark.parametrize("name", ["raft-no-quorum", "raft-volatile-vote", "even-quorum"])
def test_variant_verdicts_at_defaults(name: str) -> None:
    result = run(name)
    assert {r.prop.name: r.verdict for r in result.results} == EXPECTED[name]


@pytest.mark.parametrize(
    ("name", "distinct"),
    [
        ("raft-no-quorum", 11_442),
        pytest.param("raft-volatile-vote", 18_283, marks=pytest.mark.slow),  # 2.5 s
        ("even-quorum", 2_624),
    ],
)
def test_reachable_state_count_at_defaults(name: str, distinct: int) -> None:
    result = check(build(name), [always("anything", lambda s: True)])
    assert result.stats.distinct_states == distinct


# -- raft: safe elections, unsafe writes ---------------------------------------------


@pytest.mark.slow  # the default suite stays under 3 minutes; CI runs it
def test_raft_witnesses_are_short(raft: CheckResult) -> None:
    lengths = {r.prop.name: len(r.trace) for r in raft.results if r.trace is not None}
    assert lengths == {
        "no-stale-write": 8,
        "leader-elected": 3,
        "election-started": 1,
        "failover": 4,
        "leader-during-partition": 4,
    }


@pytest.mark.slow  # the default suite stays under 3 minutes; CI runs it
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


def test_one_term_allows_a_failover_only_in_the_term_kept_for_stable_timing() -> None:
    witness = run("raft", "failover", terms=1).result("failover").trace
    assert witness is not None
    names = [a.name for a in witness.actions]
    assert "stabilize" in names
    assert witness.last.state.extra.stable


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


@pytest.mark.slow  # the default suite stays under 3 minutes; CI runs it
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
    assert action.shown().note == "adopts term 2, steps down from leader; grants its term 2 vote"
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
    assert action.shown().note == "refuses in term 1"
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
    assert names == {"timeout", "tick", "stabilize"}
    assert run("even-quorum", "leader-elected").result("leader-elected").verdict is (
        Verdict.VIOLATED
    )


def test_five_nodes_split_two_three_elect_on_the_three_side() -> None:
    result = run("even-quorum", "leader-during-partition", nodes=5)
    r = result.result("leader-during-partition")
    assert r.verdict is Verdict.HOLDS and r.trace is not None
    assert len(r.trace) == 5
    assert [i for i, _ in r.trace.last.state.leaders()] == [3]


# -- the message cost of one election (`verify --protocol raft --stats`) ------------------


class _FullFirstTerm(RaftModel):
    """The reference for `FirstTermElection`: `RaftModel` itself with terms=1, no fault and
    no write, keeping every message (nothing dropped as useless), `extra` counting sends."""

    def __init__(self, nodes: int) -> None:
        super().__init__(nodes, 1, FaultBounds())

    def initial_extra(self) -> dict[str, object]:
        return {"extra": 0}

    def node_steps(self, s: ClusterState, i: int) -> Iterator[tuple[Action, ClusterState]]:
        for action, after in super().node_steps(s, i):
            if action.name == "timeout":  # no writes
                yield action, after._replace(extra=s.extra + len(after.net.msgs) - len(s.net.msgs))

    def deliver(self, s: ClusterState, msg: Message) -> tuple[Action, ClusterState]:
        action, after = super().deliver(s, msg)  # `s` is without msg: + 1 for a reply sent
        return action, after._replace(extra=s.extra + len(after.net.msgs) - len(s.net.msgs))

    def successors(self, s: ClusterState) -> Iterator[tuple[Action, ClusterState]]:
        return ClusterModel.successors(self, s)  # nothing dropped


def _reference_ends(nodes: int, symmetry: bool = False) -> set[tuple[tuple[int, ...], int]]:
    """(vote of each node, messages sent) of every end state of the reference."""
    ends: set[tuple[tuple[int, ...], int]] = set()

    def record(s: ClusterState) -> bool:
        if not s.net.msgs and s.leaders():
            ends.add((tuple(n.voted for n in s.nodes), s.extra))
        return True

    check(_FullFirstTerm(nodes), [always("r", record)], reductions=Reductions(symmetry=symmetry))
    return ends


def _compact_ends(nodes: int) -> set[tuple[tuple[int, ...], int]]:
    ends: set[tuple[tuple[int, ...], int]] = set()

    def record(s: FirstTerm) -> bool:
        if first_term_over(s):
            ends.add((s.votes, first_term_messages(s)))
        return True

    check(FirstTermElection(nodes), [always("r", record)])
    return ends


def test_first_term_election_ends_exactly_as_raft_itself() -> None:
    """Same end states (who voted for whom) with the same counts, for three nodes."""
    assert _compact_ends(3) == _reference_ends(3)


@pytest.mark.slow
def test_first_term_election_reaches_raft_s_totals_for_four_nodes() -> None:
    """Four nodes: 701,056 reference states; under symmetry 30,026 (the count is id-free)."""
    totals = {total for _, total in _reference_ends(4, symmetry=True)}
    assert totals == {total for _, total in _compact_ends(4)} == {6, 12}


# k candidates each send N - 1 RequestVotes, and every one is answered: 2k(N - 1) messages.
# A candidate votes for itself and refuses the others, so the winner's majority N // 2 + 1
# is itself and N // 2 of the N - k nodes that did not stand: k <= N - N // 2 = ceil(N / 2).
# Each end state (who stood, who voted for whom) is counted once in the mean:
#   N = 3 (majority 2): one candidate, 3 ways, 4 messages; two, 3 pairs x the third's vote
#     for either = 6 ways, 8 messages (three candidates: a split vote, no leader, no
#     election). Mean (3 x 4 + 6 x 8) / 9 = 6.67.
#   N = 4 (majority 3): one candidate, 4 ways, 6; two, both others vote for the winner:
#     6 pairs x 2 winners = 12 ways, 12. Mean (24 + 144) / 16 = 10.5.
#   N = 5 (majority 3): one, 5 ways, 8; two, 10 pairs x 2^3 votes of the other three (one
#     candidate always has two) = 80 ways, 16; three, 10 triples x 3 (both others vote
#     alike) = 30 ways, 24. Mean (40 + 1280 + 720) / 115 = 17.74.
@pytest.mark.parametrize(
    ("nodes", "worst", "best", "mean", "ends"),
    [(3, 8, 4, 60 / 9, 9), (4, 12, 6, 10.5, 16), (5, 24, 8, 2040 / 115, 115)],
)
def test_message_cost_table(nodes: int, worst: int, best: int, mean: float, ends: int) -> None:
    m = ELECTION_MESSAGES
    found = measure(m.build(nodes), m.value, m.where)
    assert found is not None
    assert (found.worst, found.best, found.count) == (worst, best, ends)
    assert found.mean == pytest.approx(mean)


@pytest.mark.parametrize("nodes", [3, 4, 5, 6, 7])
def test_best_election_is_linear_and_worst_grows_with_the_candidates(nodes: int) -> None:
    """Best 2(N - 1): one candidate. Worst 2(N - 1) ceil(N / 2): as many candidates as still
    leave the winner a majority; quadratic too, about half Bully's 2(N - 1)^2 - 1."""
    m = ELECTION_MESSAGES
    found = measure(m.build(nodes), m.value, m.where)
    assert found is not None
    assert found.best == 2 * (nodes - 1)
    assert found.worst == 2 * (nodes - 1) * -(-nodes // 2)


def test_raft_declares_the_measure_for_three_to_seven_nodes() -> None:
    assert ELECTION_MESSAGES.sizes == (3, 4, 5, 6, 7)
    assert ENTRIES["raft"].measures == (ELECTION_MESSAGES,)
