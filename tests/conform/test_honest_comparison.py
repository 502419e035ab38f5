"""The comparison is honest without a server: the settle window comes from the tick and
the system and is stated, the client's own belief is compared, a fault without effect is
said so, and a run says whether the trace's anomaly happened (issue 29)."""

from __future__ import annotations

from typing import Any

import pytest

from leadercheck.checker.conform.anomaly import DOWN, Belief, anomaly_record, real_breaks
from leadercheck.checker.conform.bindings import binding_for
from leadercheck.checker.conform.bindings.lease_facts import model_outcome, real_outcome
from leadercheck.checker.conform.harness import _node_fault
from leadercheck.checker.conform.report import time_mapping
from leadercheck.checker.conform.world import GIVEN, Timing, settle_window
from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.model import Action

LEASE = {"nodes": 3, "ttl": 2, "tokens": 3, "crashes": 1, "partitions": 1, "losses": 1, "pauses": 1}


@pytest.mark.parametrize(
    ("system", "tick", "window", "why"),
    [
        ("etcd", 1.0, 0.6, "etcd carries out an expiry up to 0.5 s late"),
        ("etcd", 2.0, 1.0, "half a tick"),
        ("zookeeper", 1.0, 0.5, "half a tick"),
        ("zookeeper", 0.5, 0.5, "zookeeper carries out an expiry up to 0.4 s late"),
        ("postgres", 1.0, 0.5, "half a tick"),
        ("redis", 0.2, 0.1, "half a tick"),
    ],
)
def test_the_settle_window_is_derived_from_the_tick_and_the_system(
    system: str, tick: float, window: float, why: str
) -> None:
    lag = {"etcd": 0.5, "zookeeper": 0.4}.get(system, 0.0)
    assert settle_window(tick, lag, system) == (window, why)


def test_a_ttl_scale_of_one_and_a_half_ends_a_lease_outside_the_window() -> None:
    """A TTL of 2 ticks granted 1.5 times too long ends a whole tick late: more than the
    window at every tick the etcd binding accepts, so the comparison must catch it."""
    binding = binding_for("lease-no-fencing", "etcd", LEASE)
    accepted = []
    for tick in (0.5, 1.0, 2.0, 5.0):
        try:
            binding.check_timing(Timing(tick=tick, ttl_scale=1.5))
        except LeadercheckError:
            continue  # etcd grants whole seconds: 2 x 0.5 s x 1.5 is refused before a run
        timing = binding.settled(Timing(tick=tick, ttl_scale=1.5))
        late = timing.ttl_seconds(2) - 2 * tick
        assert late > timing.settle, (tick, timing)
        accepted.append(tick)
    assert accepted == [1.0, 2.0, 5.0]


def test_the_report_states_the_window_and_why() -> None:
    etcd = binding_for("lease-no-fencing", "etcd", LEASE).settled(Timing())
    assert time_mapping(etcd).endswith(
        "facts may take up to 0.6 s to show (etcd carries out an expiry up to 0.5 s late)"
    )
    given = binding_for("lease-no-fencing", "etcd", LEASE).settled(
        Timing(settle=2.0, settle_why=GIVEN)
    )
    assert given.settle == 2.0 and time_mapping(given).endswith("(given with --settle)")


def test_the_check_step_compares_the_clients_own_belief() -> None:
    check = Action("check", "n1", None, "still leader: token 1, 2 ticks left")
    leader = {"n1": {"role": "leader"}}
    assert model_outcome(check, leader, leader) == "believes it leads"
    told = {"ok": True, "op": "check", "result": {"believes_leader": False, "token": 5}}
    assert real_outcome("check", told) == "believes it does not lead"
    told["result"] = {"believes_leader": True, "token": 5}
    assert real_outcome("check", told) == "believes it leads"


class _Agent:
    """Stands in for a client process: what _node_fault reads and calls."""

    def __init__(self, background: str | None) -> None:
        self.name, self.background, self.calls = "n1", background, []
        self.process = type("P", (), {"pid": 42})()

    def __getattr__(self, op: str) -> Any:
        return lambda: self.calls.append(op)


def test_a_pause_of_a_client_that_runs_nothing_between_calls_is_said_to_change_nothing() -> None:
    idle = _node_fault(None, _Agent(None), "pause")  # type: ignore[arg-type]
    assert idle.effect is False
    assert (
        idle.event
        == "SIGSTOP n1 (pid 42): no effect of its own: its client runs nothing between calls"
    )
    busy = _node_fault(None, _Agent("keep-alive thread"), "pause")  # type: ignore[arg-type]
    assert busy.effect is True and busy.event.endswith("its keep-alive thread stops")


def test_the_anomaly_is_found_in_the_real_facts_and_beliefs() -> None:
    no, lead1, lead2 = Belief(False), Belief(True, "1"), Belief(True, "2")
    steps = [
        (0, {"storage": "no writes"}, {"n1": no, "n2": no}),
        (1, {"storage": "no writes"}, {"n1": lead1, "n2": no}),
        (2, {"storage": "highest token 2"}, {"n1": lead1, "n2": lead2}),
        (3, {"storage": "highest token 2, a stale write accepted"}, {"n1": DOWN, "n2": lead2}),
    ]
    breaks = real_breaks(steps)
    assert set(breaks) == {"no-stale-write"}  # two tokens are a stale leader, not two leaders
    assert breaks["no-stale-write"].step == 3
    twice = real_breaks([(4, {}, {"n1": lead1, "n3": lead1})])
    assert twice["single-leader"].evidence == "n1 and n3 both believe they lead (token 1)"
    lock = real_breaks([(5, {}, {"n1": Belief(True), "n2": Belief(True)})])
    assert lock["single-leader"].evidence == "n1 and n2 both believe they lead"
    assert (
        Belief(True, "7").words() == "leads (token 7)" and Belief(False).words() == "does not lead"
    )


def test_a_run_says_whether_the_traces_anomaly_happened() -> None:
    breaks = real_breaks([(10, {"storage": "highest token 2, a stale write accepted"}, {})])
    done = anomaly_record("no-stale-write", 10, breaks, "etcd", 10)
    assert done is not None and done["reproduced"] is True
    assert done["text"].startswith("ANOMALY REPRODUCED: no-stale-write broken on etcd at step 10")
    missed = anomaly_record("no-stale-write", 10, {}, "etcd", 10)
    assert missed is not None and missed["reproduced"] is False
    assert missed["text"].startswith(
        "ANOMALY NOT REPRODUCED: the model breaks no-stale-write at step 10"
    )
    cut = anomaly_record("no-stale-write", None, {}, "etcd", 7)
    assert cut is not None and cut["text"].startswith("no anomaly: the model breaks")
    other = anomaly_record("no-lost-ack-write", 8, {}, "postgres", 8)
    assert other is not None and other["observable"] is False
