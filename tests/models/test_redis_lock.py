"""redis-lock: redis-py's Lock on one Redis. No timer and no token: a holder whose key
expired unseen, or was lost in a Redis restart, still believes it holds *the* lock while
another takes it (single-leader), and its late write lands (no-stale-write). A token
drawn from a counter that outlives the restart, checked by the storage, fixes both."""

from __future__ import annotations

from functools import cache
from typing import Any

from leadercheck.checker import CheckResult, Verdict, check
from leadercheck.models.redis_lock import PROTOCOLS
from leadercheck.specs.claims import PROPERTIES
from tests.models import protocol_runs
from tests.models.protocol_runs import steps

CLAIMS = ("single-leader", "no-stale-write", "write-accepted", "failover")


def build(name: str, **params: str) -> Any:
    return protocol_runs.build(PROTOCOLS, name, **params)


@cache
def verdicts(name: str, **params: str) -> CheckResult:
    return check(build(name, **params), [PROPERTIES[c] for c in CLAIMS])


def test_a_holder_whose_key_expired_unseen_still_believes_it_holds_the_lock() -> None:
    result = verdicts("redis-lock")
    assert [r.verdict for r in result.results] == [
        Verdict.VIOLATED,
        Verdict.VIOLATED,
        Verdict.HOLDS,
        Verdict.HOLDS,
    ]
    assert steps(result, "single-leader") == [
        ("n1", "acquire"), ("clock", "tick"), ("clock", "tick"), ("n2", "acquire"),
    ]  # fmt: skip


def test_a_redis_restart_loses_the_lock_and_lets_a_late_write_land_without_a_pause() -> None:
    assert steps(verdicts("redis-lock"), "no-stale-write") == [
        ("n1", "acquire"), ("n1", "check"), ("store", "crash"), ("store", "restart"),
        ("n2", "acquire"), ("n2", "check"), ("n2", "write"), ("n1", "write"),
    ]  # fmt: skip
    # without restarts the pause between owned() and the write is the way, and longer
    without = verdicts("redis-lock", **{"store-crashes": "0"})
    names = [name for _, name in steps(without, "no-stale-write")]
    assert "pause" in names and "crash" not in names


def test_fencing_with_a_token_that_outlives_the_restart_holds_everything() -> None:
    result = verdicts("redis-lock-fencing", nodes="2", tokens="2")
    assert [r.verdict for r in result.results] == [Verdict.HOLDS] * 4


def test_a_check_or_an_extend_that_finds_the_lock_gone_lets_it_go() -> None:
    """owned() and extend() ask Redis; the tick alone never ends the belief."""
    model = build("redis-lock", nodes="2")
    state = model.initial_states()[0]
    state = dict((a.name, s) for a, s in model.successors(state) if a.actor == "n1")["acquire"]
    for _ in range(2):
        state = dict((a.name, s) for a, s in model.successors(state))["tick"]
    assert state.node(1).token  # the key expired in Redis; n1 still believes
    moves = {a.name: (a, s) for a, s in model.successors(state) if a.actor == "n1"}
    check_action, checked = moves["check"]
    assert check_action.shown().note == "not leader: the lock is gone"
    assert not checked.node(1).token and not checked.node(1).pending
    renew_action, renewed = moves["renew"]
    assert renew_action.shown().note == "refused: the lock is not its own"
    assert not renewed.node(1).token


def test_a_node_cut_off_from_redis_can_neither_check_nor_extend() -> None:
    model = build("redis-lock", nodes="2")
    state = model.initial_states()[0]
    state = dict((a.name, s) for a, s in model.successors(state) if a.actor == "n1")["acquire"]
    state = dict((a.name, s) for a, s in model.successors(state))["tick"]
    cut = [s for a, s in model.successors(state) if a.name == "partition" and a.actor == "n1"]
    assert cut, "a partition of n1 from the store is among the moves"
    names = {a.name for a, _ in model.successors(cut[0]) if a.actor == "n1"}
    assert "check" not in names and "renew" not in names
