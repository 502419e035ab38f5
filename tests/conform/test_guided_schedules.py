"""Random schedules drawn toward danger, without a server: the guide's distances on the
lease model, the weights it gives, and what the coverage report counts."""

from __future__ import annotations

from leadercheck.checker.conform.bindings import binding_for
from leadercheck.checker.conform.guidance import CLOSER, DANGER, OTHER, build_guide
from leadercheck.checker.conform.harness import Conformance, Entry
from leadercheck.checker.conform.random_walks import Coverage
from leadercheck.checker.model import Action
from leadercheck.models.catalogue import lookup
from leadercheck.specs import PROPERTIES

PARAMS = {"nodes": "2"}


def _lease(name: str) -> tuple[object, object]:
    entry = lookup(name)
    values = entry.resolve(PARAMS)
    return entry.build(values), binding_for(name, "etcd", values)


def test_the_stale_write_is_ten_steps_from_the_start_of_the_fenced_lease() -> None:
    """acquire, check, pause, tick, tick, acquire, check, write, resume, then the refused
    write: the shortest way to a write the storage must refuse."""
    model, binding = _lease("lease-fencing")
    guide = build_guide(model, binding.risky, [PROPERTIES["no-stale-write"]])  # type: ignore[arg-type]
    assert guide is not None
    (start,) = model.initial_states()  # type: ignore[attr-defined]
    assert guide.now([start]) == 9  # nine steps, then the refused write is enabled


def test_on_the_unfenced_lease_the_violation_itself_is_the_danger() -> None:
    model, binding = _lease("lease-no-fencing")
    guide = build_guide(model, binding.risky, [PROPERTIES["no-stale-write"]])  # type: ignore[arg-type]
    assert guide is not None
    (start,) = model.initial_states()  # type: ignore[attr-defined]
    assert guide.now([start]) == 9  # the same schedule, whose last write lands


def test_moves_toward_danger_weigh_more() -> None:
    model, binding = _lease("lease-fencing")
    guide = build_guide(model, binding.risky, [PROPERTIES["no-stale-write"]])  # type: ignore[arg-type]
    assert guide is not None
    (start,) = model.initial_states()  # type: ignore[attr-defined]
    now = guide.now([start])
    weights = {
        str(a.shown()): guide.weight([(start, a, after)], now)
        for a, after in model.successors(start)  # type: ignore[attr-defined]
    }
    assert weights["n1 -> store: acquire (CAS ok: token 1, ttl 2)"] == CLOSER
    assert weights["clock: tick"] == OTHER
    assert max(weights.values()) < DANGER
    assert not binding.risky(Action("write", "n1", "storage", "token 2 accepted"))  # type: ignore[attr-defined]
    assert binding.risky(Action("write", "n1", "storage", "token 1 rejected: 1 < 2"))  # type: ignore[attr-defined]


def test_the_coverage_counts_actions_faults_and_anomalies() -> None:
    run = Conformance("lease-fencing", "etcd")
    stale = {"storage": "highest token 2, a stale write accepted"}
    run.entries = [
        Entry(0, 0, "initial state", "", 0.0, {}, {}),
        Entry(1, 0, "n1: pause", "SIGSTOP", 0.1, {}, {}, True, {}, "pause"),
        Entry(2, 0, "n2: pause", "SIGSTOP", 0.1, {}, {}, False, {}, "pause"),
        Entry(3, 0, "n1 -> store: acquire", "", 0.2, {}, {}, True, {}, "acquire"),
        Entry(4, 1, "n1 -> storage: write", "", 0.3, {}, stale, None, {}, "write"),
    ]
    run.dangerous_steps = 1
    coverage = Coverage()
    coverage.add(run)
    assert coverage.to_json() == {
        "actions": {"acquire": 1, "pause": 2, "write": 1},
        "faults_with_effect": {"acquire, reply lost": 1, "pause": 1},
        "faults_without_effect": {"pause": 1},
        "dangerous_steps": 1,
        "schedules_with_anomaly": {"no-stale-write": 1},
    }
