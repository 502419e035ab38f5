"""advisory-lock: a PostgreSQL session advisory lock. No TTL: a pause keeps the session
and the lock (nobody takes over), while a crash or a reset connection ends the session at
once and hands the lock on, the old holder believing it holds it until it next looks.
Its late write lands unfenced; a token from a sequence, checked by the storage, stops it."""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Any

from leadercheck.checker import CheckResult, Verdict, check
from leadercheck.models.advisory_lock import PROTOCOLS
from leadercheck.specs.claims import PROPERTIES
from tests.models import protocol_runs
from tests.models.protocol_runs import steps

CLAIMS = ("single-leader", "no-stale-write", "write-accepted", "failover")


def build(name: str, **params: str) -> Any:
    return protocol_runs.build(PROTOCOLS, name, **params)


@cache
def verdicts(name: str) -> CheckResult:
    return check(build(name), [PROPERTIES[c] for c in CLAIMS])


def walk(model: Any, plan: Iterable[tuple[str, str]]) -> Any:
    """The state after taking each (actor, action) of `plan` from the initial state."""
    state = model.initial_states()[0]
    for actor, name in plan:
        moves = {(a.actor, a.name): s for a, s in model.successors(state)}
        assert (actor, name) in moves, (actor, name, sorted(moves))
        state = moves[(actor, name)]
    return state


def test_a_reset_connection_hands_the_lock_on_while_its_holder_still_believes() -> None:
    result = verdicts("advisory-lock")
    assert [r.verdict for r in result.results] == [
        Verdict.VIOLATED, Verdict.VIOLATED, Verdict.HOLDS, Verdict.HOLDS,
    ]  # fmt: skip
    assert steps(result, "single-leader") == [
        ("n1", "acquire"), ("n1", "partition"), ("n2", "acquire"),
    ]  # fmt: skip
    assert steps(result, "no-stale-write")[-2:] == [("n2", "write"), ("n1", "write")]


def test_fencing_with_a_sequence_holds_everything() -> None:
    result = verdicts("advisory-lock-fencing")
    assert [r.verdict for r in result.results] == [Verdict.HOLDS] * 4


def test_a_pause_keeps_the_session_and_the_lock_however_long() -> None:
    model = build("advisory-lock", nodes="2")
    paused = walk(model, [("n1", "acquire"), ("n1", "pause"), ("clock", "tick"), ("clock", "tick")])
    assert paused.store.holder == 1 and paused.node(1).token
    assert ("n2", "acquire") not in {(a.actor, a.name) for a, _ in model.successors(paused)}


def test_a_crash_lets_the_lock_go_at_once() -> None:
    model = build("advisory-lock", nodes="2")
    crashed = walk(model, [("n1", "acquire"), ("n1", "crash")])
    assert crashed.store.holder == 0
    assert ("n2", "acquire") in {(a.actor, a.name) for a, _ in model.successors(crashed)}


def test_after_the_heal_the_old_holders_check_finds_the_lock_gone() -> None:
    model = build("advisory-lock", nodes="2")
    state = walk(model, [("n1", "acquire"), ("n1", "partition"), ("network", "heal")])
    moves = {(a.actor, a.name): (a, s) for a, s in model.successors(state)}
    action, after = moves[("n1", "check")]
    assert action.shown().note == "not leader: its session ended, and the lock with it"
    assert not after.node(1).token
