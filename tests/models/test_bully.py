"""The Bully algorithm: verdicts, shortest counterexamples and state count at the defaults,
and the message count of the worst election after the coordinator crashes."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from leadercheck.checker import CheckResult, Verdict, always, check, sometimes
from leadercheck.checker.engine.measure import measure
from leadercheck.checker.model import Action
from leadercheck.models.bully import (
    PROTOCOLS,
    WORST_ELECTION,
    BullyElection,
    BullyModel,
    CompactBullyElection,
    election_complete,
    election_ended,
    election_messages,
    election_over,
)
from leadercheck.models.cluster import ClusterState
from leadercheck.specs.claims import PROPERTIES
from tests.helpers import trace_shape, verdicts

SAFETY = ("single-leader", "no-stale-write")
WITNESSES = (
    "leader-elected",
    "write-accepted",
    "failover",
    "election-started",
    "leader-during-partition",
)


def run(props: Iterable[str] = SAFETY + WITNESSES, **params: int) -> CheckResult:
    entry = PROTOCOLS[0]
    model = entry.build(entry.resolve({k: str(v) for k, v in params.items()}))
    return check(model, [PROPERTIES[p] for p in props])


def test_verdicts_at_defaults() -> None:
    assert verdicts(run()) == {
        "single-leader": Verdict.VIOLATED,
        "no-stale-write": Verdict.VIOLATED,
        **{w: Verdict.HOLDS for w in WITNESSES},
    }


@pytest.mark.slow  # the default suite stays under 3 minutes; CI runs it
def test_reachable_state_count_at_defaults() -> None:
    entry = PROTOCOLS[0]
    model = entry.build(entry.resolve({}))
    assert check(model, [always("anything", lambda s: True)]).stats.distinct_states == 83_583


RESTARTED_N2_DECLARES_BEHIND_A_PARTITION = [
    ("heartbeat", "n3", None),
    ("crash", "n2", None),
    ("restart", "n2", None),
    ("election", "n2", None),
    ("partition", "network", None),  # {n3} | {n1, n2}: the ELECTION to n3 is lost
    ("tick", "clock", None),
    ("declare", "n2", None),  # no OK came; n3 still leads its side
]


def test_single_leader_counterexample_is_the_isolated_coordinator() -> None:
    r = run(SAFETY).result("single-leader")
    assert trace_shape(r.trace) == RESTARTED_N2_DECLARES_BEHIND_A_PARTITION
    assert r.trace is not None and r.trace.actions[4].note.startswith("{n3} | {n1, n2}")
    assert r.reason == "n2 and n3 are both leader at the same time"


def test_no_stale_write_counterexample_is_the_old_coordinator_writing_last() -> None:
    r = run(SAFETY).result("no-stale-write")
    assert trace_shape(r.trace) == RESTARTED_N2_DECLARES_BEHIND_A_PARTITION + [
        ("write", "n2", "storage"),
        ("write", "n3", "storage"),
    ]
    assert r.trace is not None
    assert [a.note for a in r.trace.actions[-2:]] == [
        "accepted, from leadership #2",
        "accepted, from leadership #1",
    ]


def test_a_partition_alone_splits_the_cluster() -> None:
    """The textbook failure: the isolated highest node keeps leading, the rest elect n2."""
    r = run(("single-leader",), crashes=0).result("single-leader")
    assert r.verdict is Verdict.VIOLATED and r.trace is not None
    assert len(r.trace) == 11
    assert r.trace.actions[1] == Action(
        "partition", "network", None, "{n3} | {n1, n2}, 2 in flight lost"
    )
    assert r.trace.actions[-1] == Action("declare", "n2", None, "no OK; COORDINATOR to n1")
    assert sorted(i for i, _ in r.trace.last.state.leaders()) == [2, 3]


def test_without_faults_one_leader_and_no_election() -> None:
    result = run(crashes=0, partitions=0)
    assert result.result("single-leader").verdict is Verdict.HOLDS
    assert result.result("no-stale-write").verdict is Verdict.HOLDS
    assert result.result("election-started").verdict is Verdict.VIOLATED  # nothing happens


def test_one_lost_heartbeat_makes_an_election_but_never_two_leaders() -> None:
    """Not vacuous: elections and a new leadership happen, yet safety holds."""
    result = run(crashes=0, partitions=0, losses=1)
    assert result.result("single-leader").verdict is Verdict.HOLDS
    assert result.result("no-stale-write").verdict is Verdict.HOLDS
    assert result.result("election-started").verdict is Verdict.HOLDS
    failover = result.result("failover")
    assert failover.verdict is Verdict.HOLDS  # n3 answers n2's ELECTION, stands and wins again
    assert ("lose", "network", None) in trace_shape(failover.trace)
    assert failover.trace is not None and failover.trace.actions[-1].name == "declare"


# The worst election, by hand. Live nodes are n1..n(N-1); nN has crashed. Every election
# of node i sends N - i ELECTIONs (the one to nN included), each answered by one OK from
# a live receiver; only n(N-1) ever declares (every other node hears its OK), each time
# sending N - 2 COORDINATORs. A node holds a new election only on noticing the crash
# (once, while it still follows nN) or on an ELECTION that finds it neither electing nor
# waiting. Time stops while messages are in flight, and n(N-1) declares on the tick after
# it stands, so: before n(N-1)'s first declaration each node holds at most one election;
# after it, only the ELECTIONs of nodes that noticed late (before the COORDINATOR reached
# them) or were set off by such ELECTIONs can start a second one, all within that one
# tick, and n(N-1)'s second declaration ends everything (no ELECTION is in flight at a
# tick). n1 holds at most one election (nobody below it), every other node at most two.
#   N = 3: n1 once: 2 ELECTION + 1 OK from n2; n2 twice: 2 x (1 ELECTION + 1 COORDINATOR)
#          = 3 + 4 = 7: n2 notices, tick, n2 declares, n1 notices before the COORDINATOR
#          arrives, its ELECTION makes n2 stand again, tick, n2 declares again.
#   N = 4: n1 once: 3 ELECTION + 2 OK; n2 twice: 2 x (2 ELECTION + 1 OK from n3);
#          n3 twice: 2 x (1 ELECTION + 2 COORDINATOR) = 5 + 6 + 6 = 17.
#   In general 2(N-1)^2 - 1, and the search finds every bound reached.
@pytest.mark.parametrize(("nodes", "worst"), [(3, 7), (4, 17), (5, 31)])
def test_worst_election_messages(nodes: int, worst: int) -> None:
    found = measure(BullyElection(nodes), election_messages, election_complete)
    assert found is not None and found.worst == worst


class _Unreduced(BullyElection):
    """The election model with every OK in flight like any other message."""

    def send(
        self, s: ClusterState, i: int, kind: str, to: Iterable[int]
    ) -> tuple[ClusterState, str]:
        return BullyModel.send(self, s, i, kind, to)


@pytest.mark.parametrize(("nodes", "worst"), [(3, 7), (4, 17)])
def test_delivering_oks_at_once_changes_no_worst_case(nodes: int, worst: int) -> None:
    model = _Unreduced(nodes)
    result = check(
        model,
        [
            sometimes("reached", lambda s: model.complete(s) and s.extra == worst),
            sometimes("exceeded", lambda s: model.complete(s) and s.extra > worst),
        ],
    )
    assert verdicts(result) == {"reached": Verdict.HOLDS, "exceeded": Verdict.VIOLATED}


def _late_noticer_schedule(nodes: int) -> ClusterState:
    """n2 notices first and everyone above it stands; after the first COORDINATOR is sent,
    n1 notices, hears the COORDINATOR, and its ELECTIONs set everyone off again."""
    model = BullyElection(nodes)
    state, declared = model.initial_states()[0], 0
    rank = {"declare": 1, "COORDINATOR": 2, "ELECTION": 3, "tick": 4}
    noticer = "n2"
    while not (declared == 2 and model.complete(state) and not state.net.msgs):
        enabled = [
            (a, s)
            for a, s in model.successors(state)
            if a.name in rank or (a.name == "election" and a.actor == noticer)
        ]
        action, state = min(enabled, key=lambda pair: rank.get(pair[0].name, 0))
        if action.name == "declare":
            declared, noticer = declared + 1, "n1"
    return state


@pytest.mark.parametrize("nodes", [3, 4, 5, 6, 7])
def test_one_schedule_reaches_the_bound_beyond_the_search(nodes: int) -> None:
    """The bound by one concrete schedule of `BullyElection`, up to N = 7."""
    assert _late_noticer_schedule(nodes).extra == 2 * (nodes - 1) ** 2 - 1


# -- the message cost of an election (`verify --protocol bully --stats`) ------------------


def _end_totals(model: BullyElection) -> set[int]:
    """The message totals of `BullyElection`'s end states (over: nothing left in flight)."""
    totals: set[int] = set()
    check(model, [always("record", lambda s: not (election_over(s) and totals.add(s.extra)))])
    return totals


def _compact_totals(nodes: int) -> set[int]:
    totals: set[int] = set()
    model = CompactBullyElection(nodes)
    check(model, [always("record", lambda s: not (election_ended(s) and totals.add(s.sent)))])
    return totals


@pytest.mark.parametrize("nodes", [3, 4, 5, pytest.param(6, marks=pytest.mark.slow)])
def test_the_compact_election_ends_with_exactly_the_full_models_totals(nodes: int) -> None:
    """Its three merges (see its docstring) lose and add no total."""
    assert _compact_totals(nodes) == _end_totals(BullyElection(nodes))


def test_a_second_copy_of_an_election_is_delivered_and_answered() -> None:
    """n2 stands, follows n3, and stands again on n1's ELECTION while its first ELECTION to
    n3 is still in flight: two copies, two deliveries, two OKs. Merged in one message, the
    count took 16 (17 less the lost OK), a total no election has."""
    model = BullyElection(4)
    two = sometimes("two copies", lambda s: len({m.epoch for m in s.net.msgs}) == 2)
    assert check(model, [two]).result("two copies").verdict is Verdict.HOLDS
    assert 16 not in _end_totals(model)


# Per election, node i sends N - i ELECTIONs (the one to the crashed nN included) and gets
# N - 1 - i OKs; only n(N-1) declares, sending N - 2 COORDINATORs each time. So with e_i the
# elections of node i, a total is sum_i e_i (2N - 2i - 1) + e_(N-1) (N - 2).
#   N = 3: n1 costs 3, n2 costs 1 + 1 = 2 an election.
#     2 = n2 notices first and alone (e = 0, 1); 5 = n1 notices before the tick and makes n2
#     stand (1, 1); 7 = n1 notices only after n2 declared, before the COORDINATOR reaches it,
#     and its ELECTION makes n2 stand again (1, 2). Mean (2 + 5 + 7) / 3 = 4.67.
#   N = 4: n1 costs 5, n2 3, n3 1 + 2 = 3: e = (0,0,1) 3; (0,1,1) 6; (0,1,2) 9 (n2 notices
#     late); (1,1,1) 11; (1,1,2) 14; (1,2,2) 17. n2 stands again only on n1's ELECTION after
#     its COORDINATOR, which makes n3 stand again too. Mean 60 / 6 = 10.0.
#   N = 5: ten totals from 4 (n4 alone: 1 + 3) to 31, mean 177 / 10 = 17.7.
# The end state is the same for every election but for the count, so the mean is over
# the distinct totals, and `count` is how many there are.
@pytest.mark.parametrize(
    ("nodes", "worst", "best", "mean", "ends"),
    [(3, 7, 2, 14 / 3, 3), (4, 17, 3, 10.0, 6), (5, 31, 4, 17.7, 10)],
)
def test_message_cost_table(nodes: int, worst: int, best: int, mean: float, ends: int) -> None:
    m = WORST_ELECTION
    found = measure(m.build(nodes), m.value, m.where)
    assert found is not None
    assert (found.worst, found.best, found.count) == (worst, best, ends)
    assert found.mean == pytest.approx(mean)


def test_the_totals_for_four_nodes_are_the_hand_counted_ones() -> None:
    assert _compact_totals(4) == {3, 6, 9, 11, 14, 17}
    assert sum(_compact_totals(5)) == 177


@pytest.mark.parametrize("nodes", [3, 4, 5, 6, pytest.param(7, marks=pytest.mark.slow)])
def test_worst_election_is_quadratic_and_best_linear(nodes: int) -> None:
    """Worst 2(N-1)^2 - 1 (every node but n1 stands twice), best N - 1 (n(N-1) alone)."""
    m = WORST_ELECTION
    found = measure(m.build(nodes), m.value, m.where)
    assert found is not None
    assert found.worst == 2 * (nodes - 1) ** 2 - 1
    assert found.best == nodes - 1


def test_measure_covers_three_to_seven_nodes() -> None:
    assert WORST_ELECTION.sizes == (3, 4, 5, 6, 7)
    assert PROTOCOLS[0].measures == (WORST_ELECTION,)
