"""The ZooKeeper election recipe: verdicts, state counts and the shapes of its traces."""

from __future__ import annotations

import pytest

from leadercheck.checker import Action, CheckResult, Verdict, always, check, sometimes
from leadercheck.models.cluster import ClusterState
from leadercheck.models.zookeeper import PROTOCOLS, Election, Znode, ZooKeeperModel
from leadercheck.specs.claims import PROPERTIES
from tests.helpers import trace_shape

ENTRIES = {p.name: p for p in PROTOCOLS}
JUDGED = ("single-leader", "no-stale-write", "leader-elected", "failover")


def build(name: str, **params: int) -> ZooKeeperModel:
    entry = ENTRIES[name]
    model = entry.build(entry.resolve({k: str(v) for k, v in params.items()}))
    assert isinstance(model, ZooKeeperModel)
    return model


def run(name: str, *props: str, **params: int) -> CheckResult:
    return check(build(name, **params), [PROPERTIES[p] for p in props or JUDGED])


def steps(result: CheckResult, prop: str) -> list[tuple[str, str, str | None]]:
    return trace_shape(result.result(prop).trace)


def replay(model: ZooKeeperModel, schedule: list[tuple[str, str]]) -> tuple[Action, ClusterState]:
    """Follow (name, actor) steps from the initial state; returns the last action and state."""
    state = model.initial_states()[0]
    for name, actor in schedule:
        found = [(a, s) for a, s in model.successors(state) if (a.name, a.actor) == (name, actor)]
        assert found, f"{actor}: {name} is not enabled"
        action, state = found[0]
    return action, state


@pytest.mark.parametrize(
    ("name", "distinct"),
    [("zookeeper", 21_272), ("zookeeper-fencing", 20_188), ("zookeeper-multi", 20_188)],
)
def test_reachable_state_count_at_defaults(name: str, distinct: int) -> None:
    result = check(build(name), [always("anything", lambda s: True)])
    assert result.stats.distinct_states == distinct


@pytest.mark.parametrize(
    ("name", "stale"),
    [
        ("zookeeper", Verdict.VIOLATED),
        ("zookeeper-fencing", Verdict.HOLDS),
        ("zookeeper-multi", Verdict.HOLDS),
    ],
)
def test_verdicts_at_defaults(name: str, stale: Verdict) -> None:
    result = run(name)
    assert {r.prop.name: r.verdict for r in result.results} == {
        "single-leader": Verdict.HOLDS,
        "no-stale-write": stale,
        "leader-elected": Verdict.HOLDS,
        "failover": Verdict.HOLDS,
    }


def test_shortest_counterexample_is_a_leader_cut_off_from_the_ensemble() -> None:
    """No pause needed: a cut-off leader keeps leading until it hears of the expiry."""
    result = run("zookeeper", "no-stale-write")
    assert steps(result, "no-stale-write") == [
        ("create", "n1", "store"),
        ("check", "n1", "store"),
        ("partition", "n1", "store"),
        ("tick", "clock", None),
        ("tick", "clock", None),
        ("create", "n2", "store"),
        ("check", "n2", "store"),
        ("write", "n2", "storage"),
        ("write", "n1", "storage"),
    ]
    trace = result.result("no-stale-write").trace
    assert trace is not None
    assert trace.actions[4].note == "session expires: z1 (n1) deleted"
    assert trace.actions[-1].note == "epoch 1 accepted"
    assert sorted(trace.last.state.leaders()) == [(1, 1), (2, 2)]


def test_a_paused_leader_writes_after_its_session_expired() -> None:
    result = run("zookeeper", "no-stale-write", partitions=0)
    assert steps(result, "no-stale-write") == [
        ("create", "n1", "store"),
        ("check", "n1", "store"),
        ("pause", "n1", None),
        ("tick", "clock", None),
        ("tick", "clock", None),
        ("create", "n2", "store"),
        ("check", "n2", "store"),
        ("write", "n2", "storage"),
        ("resume", "n1", None),
        ("write", "n1", "storage"),
    ]


def test_fencing_refuses_the_same_schedule() -> None:
    trace = run("zookeeper", "no-stale-write").result("no-stale-write").trace
    assert trace is not None
    action, state = replay(build("zookeeper-fencing"), [(a.name, a.actor) for a in trace.actions])
    assert action.note == "epoch 1 rejected: 1 < 2"
    assert not state.storage.stale


def test_the_ensemble_refuses_the_paused_leaders_write_in_the_multi() -> None:
    """zookeeper-multi: the same late write fails the multi's check of z1, which expired
    with n1's session; the ensemble decides, no epoch is compared."""
    trace = run("zookeeper", "no-stale-write", partitions=0).result("no-stale-write").trace
    assert trace is not None
    action, state = replay(build("zookeeper-multi"), [(a.name, a.actor) for a in trace.actions])
    assert action.note == "epoch 1 rejected: z1 is gone"
    assert not state.storage.stale and state.storage.hi_epoch == 2


def test_a_leader_cut_from_the_ensemble_cannot_write_in_a_multi() -> None:
    trace = run("zookeeper", "no-stale-write").result("no-stale-write").trace
    assert trace is not None
    model = build("zookeeper-multi")
    schedule = [(a.name, a.actor) for a in trace.actions[:-1]]
    _, before = replay(model, schedule)
    assert before.node(1).is_leader  # it still believes it leads ...
    assert not any(a.name == "write" and a.actor == "n1" for a, _ in model.successors(before))


def test_the_old_leader_steps_down_once_it_hears_of_the_expiry() -> None:
    trace = run("zookeeper", "no-stale-write").result("no-stale-write").trace
    assert trace is not None
    schedule = [(a.name, a.actor) for a in trace.actions[:-1]] + [("heal", "network")]
    model = build("zookeeper")
    _, healed = replay(model, schedule)
    assert model.urgent(healed, 1)  # no tick before n1 hears SESSION_EXPIRED ...
    assert any(a.name == "write" and a.actor == "n1" for a, _ in model.successors(healed))
    action, after = replay(model, [*schedule, ("expired", "store")])  # ... but it may write first
    assert action.target == "n1" and not after.node(1).is_leader and after.node(1).seq == 0


def test_without_pauses_or_cuts_a_crash_fails_over_safely() -> None:
    """The violation needs a leader that outlives its session: the model is not broken."""
    result = run("zookeeper", crashes=1, partitions=0, pauses=0)
    assert result.result("no-stale-write").verdict is Verdict.HOLDS
    assert result.result("failover").verdict is Verdict.HOLDS
    assert ("crash", "n1", None) in steps(result, "failover")


def test_single_leader_holds_per_epoch_but_two_nodes_believe_at_once() -> None:
    one_at_a_time = always("one-believer", lambda s: len(s.leaders()) <= 1)
    result = check(build("zookeeper-fencing"), [PROPERTIES["single-leader"], one_at_a_time])
    assert result.result("single-leader").verdict is Verdict.HOLDS
    assert result.result("one-believer").verdict is Verdict.VIOLATED


def test_a_leader_takes_over_after_an_older_leader_wrote() -> None:
    """The HOLDS verdicts are not vacuous: a real handover, after an accepted write, happens."""
    handover = sometimes(
        "handover",
        lambda s: s.storage.hi_epoch > 0 and any(n.tenure > s.storage.hi_epoch for n in s.nodes),
    )
    result = check(build("zookeeper-fencing"), [handover, PROPERTIES["write-accepted"]])
    assert all(r.verdict is Verdict.HOLDS for r in result.results)


def test_a_fired_watch_rechecks_instead_of_assuming_leadership() -> None:
    """n3 watched candidate z2; when z2 expires, n3 must watch z1, which still leads."""
    schedule = [("create", "n1"), ("check", "n1"), ("create", "n2"), ("check", "n2")]
    schedule += [("create", "n3"), ("check", "n3"), ("pause", "n2"), ("tick", "clock")]
    schedule += [("tick", "clock"), ("watch fires", "store"), ("check", "n3")]
    action, state = replay(build("zookeeper"), schedule)
    assert action.note == "z1 is next lower: watch it"
    assert state.node(3).watch == 1 and not state.node(3).is_leader
    assert state.extra == Election((Znode(1, 1, 2), Znode(3, 3, 2)), last_seq=3)


def test_sessions_reset_when_heartbeated_and_expire_otherwise() -> None:
    election = Election().create(1, ttl=2).create(2, ttl=2)
    assert election.predecessor(2) == 1 and election.predecessor(1) == 0
    once, expired = election.tick(frozenset({1}), ttl=2)
    assert once.znodes == (Znode(1, 1, 2), Znode(2, 2, 1)) and not expired
    twice, expired = once.tick(frozenset({1}), ttl=2)
    assert twice.znodes == (Znode(1, 1, 2),) and expired == (Znode(2, 2, 0),)
    assert twice.create(3, ttl=2).last_seq == 3  # sequence numbers never go back


def test_a_resumed_or_reconnected_session_has_the_whole_timeout_again() -> None:
    """The schedule a real run diverged on (kazoo pings the moment it runs again): n2 is
    silent for a tick while paused, resumes and is cut off; its session must last the
    whole timeout from the resume (two more ticks), not expire at the first; the same
    after a heal."""
    model = build("zookeeper-multi", nodes=2)
    paused = [("create", "n2"), ("check", "n2"), ("pause", "n2"), ("tick", "clock")]
    _, silent = replay(model, paused)
    assert silent.extra.znodes == (Znode(1, 2, 1),)  # a tick of silence counted down
    action, state = replay(
        model, [*paused, ("resume", "n2"), ("partition", "n2"), ("tick", "clock")]
    )
    assert state.extra.znodes == (Znode(1, 2, 1),) and not action.note
    action, _ = replay(
        model,
        [*paused, ("resume", "n2"), ("partition", "n2"), ("tick", "clock"), ("tick", "clock")],
    )
    assert action.note == "session expires: z1 (n2) deleted"
    cut = [("create", "n2"), ("check", "n2"), ("partition", "n2"), ("tick", "clock")]
    _, healed = replay(model, [*cut, ("heal", "network")])
    assert healed.extra.znodes == (Znode(1, 2, 2),)
    _, paused_after = replay(model, [*cut, ("heal", "network"), ("pause", "n2"), ("tick", "clock")])
    assert paused_after.extra.znodes == (Znode(1, 2, 1),)  # not expired: the heal beat
