"""Patroni failover: verdicts, shortest counterexamples and exact state counts at the defaults."""

from __future__ import annotations

from typing import Any

import pytest

from leadercheck.checker import CheckResult, Verdict, always, check, sometimes
from leadercheck.checker.model import Action, Model
from leadercheck.models.patroni import PROTOCOLS
from leadercheck.specs.claims import PROPERTIES
from tests.helpers import shape

ENTRIES = {entry.name: entry for entry in PROTOCOLS}
CLAIMS = ("single-leader", "no-stale-write", "no-lost-ack-write", "write-accepted", "failover")


def _model(name: str, **params: int) -> Model[Any]:
    entry = ENTRIES[name]
    return entry.build(entry.resolve({k: str(v) for k, v in params.items()}))


def _run(name: str, claims: tuple[str, ...] = CLAIMS, **params: int) -> CheckResult:
    return check(_model(name, **params), [PROPERTIES[c] for c in claims])


def _key(a: Action) -> tuple[str, str, str | None]:
    return (a.name, a.actor, a.target)


@pytest.fixture(scope="module")
def results() -> dict[str, CheckResult]:
    return {name: _run(name) for name in ENTRIES}


@pytest.mark.parametrize(
    ("name", "verdicts"),
    [
        ("patroni", ["HOLDS", "VIOLATED", "VIOLATED", "HOLDS", "HOLDS"]),
        ("patroni-sync", ["HOLDS", "VIOLATED", "HOLDS", "HOLDS", "HOLDS"]),
    ],
)
def test_verdicts_at_defaults(
    results: dict[str, CheckResult], name: str, verdicts: list[str]
) -> None:
    assert [results[name].result(c).verdict.value for c in CLAIMS] == verdicts


@pytest.mark.parametrize(
    ("name", "distinct"),
    [("patroni", 14_800), pytest.param("patroni-sync", 39_622, marks=pytest.mark.slow)],
)
def test_reachable_state_count_at_defaults(name: str, distinct: int) -> None:
    anything = always("anything", lambda s: True)
    assert check(_model(name), [anything]).stats.distinct_states == distinct


def test_async_counterexample_is_the_acked_write_that_never_left_the_primary(
    results: dict[str, CheckResult],
) -> None:
    r = results["patroni"].result("no-lost-ack-write")
    assert r.trace is not None
    assert shape(r.trace.actions) == [
        ("acquire", "n1", "store"),
        ("refresh", "proxy", "store"),
        ("client write", "proxy", "n1"),
        ("tick", "clock", None),
        ("crash", "n1", None),
        ("tick", "clock", None),
        ("acquire", "n2", "store"),
    ]
    assert r.trace.actions[2].note == "w1 committed, acked before any replica has it"
    last = r.trace.last.state
    assert last.node(2).pg == 2 and last.node(2).log == ()
    assert last.node(1).log == (1,)  # the acknowledged write survives only on the dead node


@pytest.mark.parametrize(("name", "length"), [("patroni", 8), ("patroni-sync", 9)])
def test_stale_write_is_the_paused_primary_writing_before_it_demotes(
    results: dict[str, CheckResult], name: str, length: int
) -> None:
    r = results[name].result("no-stale-write")
    assert r.trace is not None and len(r.trace) == length
    steps = shape(r.trace.actions)
    assert steps[-5:] == [
        ("tick", "clock", None),
        ("acquire", "n2", "store"),
        ("write", "n2", "storage"),
        ("resume", "n1", None),
        ("write", "n1", "storage"),
    ]
    assert ("pause", "n1", None) in steps
    assert r.trace.actions[-1].note == "token 1 accepted, STALE"
    assert r.trace.last.state.node(1).pg == 1  # Postgres still primary: the demotion is due


def test_the_same_schedule_cannot_fail_over_in_synchronous_mode(
    results: dict[str, CheckResult],
) -> None:
    """Replaying the async counterexample: the write waits for a standby, and nobody may promote."""
    broken = results["patroni"].result("no-lost-ack-write").trace
    assert broken is not None
    model = _model("patroni-sync")
    state = model.initial_states()[0]
    *prefix, takeover = broken.actions
    for action in prefix:
        (state,) = [s for a, s in model.successors(state) if _key(a) == _key(action)]
    assert state.extra.acked == frozenset()  # never acknowledged: no synchronous standby
    assert _key(takeover) not in {_key(a) for a, _ in model.successors(state)}


def test_async_loses_no_write_without_a_failover() -> None:
    result = _run("patroni", crashes=0, pauses=0)
    assert result.result("no-lost-ack-write").verdict is Verdict.HOLDS
    assert result.result("failover").verdict is Verdict.VIOLATED  # the witness catches it


def test_stale_write_needs_a_pause() -> None:
    """A primary cut from the DCS demotes before its key expires: only a pause outlives it."""
    result = _run("patroni", crashes=1, partitions=1, losses=1, pauses=0)
    assert result.result("no-stale-write").verdict is Verdict.HOLDS
    assert result.result("no-lost-ack-write").verdict is Verdict.VIOLATED


@pytest.mark.parametrize(
    "faults",
    [
        # the defaults and a partition take 2-3 s each: with the slow tests (CI runs them)
        pytest.param({"crashes": 1, "pauses": 1}, marks=pytest.mark.slow),
        pytest.param({"crashes": 1, "partitions": 1, "pauses": 0}, marks=pytest.mark.slow),
        {"crashes": 1, "losses": 1, "pauses": 0},
    ],
)
def test_sync_mode_keeps_every_acked_write_through_a_failover(faults: dict[str, int]) -> None:
    """Not vacuous: a write is acknowledged and then a new primary is promoted."""
    acked_then_failover = sometimes(
        "acked-then-failover",
        lambda s: bool(s.extra.acked) and any(n.up and n.tenure >= 2 for n in s.nodes),
    )
    model = _model("patroni-sync", **faults)
    result = check(model, [PROPERTIES["no-lost-ack-write"], acked_then_failover])
    assert [r.verdict for r in result.results] == [Verdict.HOLDS, Verdict.HOLDS]
    witness = result.result("acked-then-failover").trace
    assert witness is not None
    assert "ack" in [a.name for a in witness.actions]
    promoted = [i for i, n in enumerate(witness.last.state.nodes, start=1) if n.tenure >= 2]
    assert all(witness.last.state.node(i).log == (1,) for i in promoted)
