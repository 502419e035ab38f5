"""The tutorial's Redlock (examples/redlock.py) made real on five Redis masters.

Kleppmann's two scenarios, as the model found them, happen on real Redis: the GC pause
(a checked write lands after the next holder's) and the clock jump (a master's own wall
clock jumps, through the preloaded shim: its key expires early, and two clients both count
three OKs). A TTL granted twice as long
as the model's is caught at the tick where the model's keys expire and Redis's do not.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from leadercheck.checker.conform.harness import ModelStep, model_steps
from leadercheck.checker.conform.run import Report, conform_trace
from leadercheck.checker.conform.servers import available
from leadercheck.checker.conform.world import Timing
from leadercheck.checker.protocols.catalogue import load_catalogue
from tests.conform.helpers import ROOT, conform

MODEL = str(ROOT / "examples/redlock.py")
TRACES = ROOT / "examples/counterexamples"

pytestmark = [
    pytest.mark.conform,
    pytest.mark.skipif(available("redis") is not None, reason=available("redis") or ""),
]


def run(trace: Path, timing: Timing | None = None) -> Report:
    return conform(trace, "redis", timing=timing, model=MODEL)


def timeline(report: Report) -> str:
    return "\n".join(
        f"{e.step} {e.model_event} | {e.real_event} {e.differences()}"
        for e in report.result.entries
    )


def calls(report: Report) -> list[str]:
    return [e.observed.get("call", "") for e in report.result.entries]


def scripted(protocol: str, schedule: Sequence[tuple[str, str, str | None]]) -> list[ModelStep]:
    """The model's steps along `schedule` (name, actor, target), as a saved trace holds them."""
    entry = load_catalogue(MODEL).lookup(protocol)
    model = entry.build({p.name: p.default for p in entry.params})
    state = model.initial_states()[0]
    visited, actions = [state], []
    for key in schedule:
        action, state = next(
            (a.shown(), s) for a, s in model.successors(state) if (a.name, a.actor, a.target) == key
        )
        visited.append(state)
        actions.append(action)
    return model_steps(model, visited, actions)


def sets(client: str, masters: str) -> list[tuple[str, str, str | None]]:
    return [("SET NX", client, m) for m in masters]


def test_gc_pause_stale_write_conforms() -> None:
    """n1 checks, is SIGSTOPped, its keys expire in Redis, n2 takes and writes, n1 writes."""
    report = run(TRACES / "redlock-gc-pause.json")
    assert report.result.verdict == "CONFORMS", timeline(report)
    last = report.result.entries[-1]
    assert last.observed["storage"] == "highest lock epoch 2, a stale write accepted"
    assert all(last.observed[m] == "held by n2" for m in "ABCDE")


def test_clock_jump_two_holders_conforms() -> None:
    """C's key expires early (C's wall clock jumps); n2 and then n1 each count three OKs."""
    report = run(TRACES / "redlock.json")
    assert report.result.verdict == "CONFORMS", timeline(report)
    jump = report.result.entries[6]
    assert "clock=the master's own" in jump.real_event and "jump_ms=2000" in jump.real_event
    assert jump.observed["C"] == "free" and jump.observed["call"] == "n1's key expires at once"
    assert calls(report)[-2:] == ["OK; 3 of 5 OK: held", "taken by n2; 3 of 5 OK: held"]


def test_clock_jump_stale_write_conforms() -> None:
    report = run(TRACES / "redlock.no-stale-write.json")
    assert report.result.verdict == "CONFORMS", timeline(report)
    assert report.result.entries[-1].observed["storage"] == (
        "highest lock epoch 2, a stale write accepted"
    )


def test_timing_ok_schedule_conforms() -> None:
    """No counterexample exists here; a schedule with a failed attempt (that unlocks what it
    took), writes, expiry and a second holder conforms instead."""
    schedule = [
        *sets("n1", "ABC"),
        *sets("n2", "ABCDE"),  # 2 of 5: fails and deletes its keys on D and E
        *sets("n1", "DE"),
        ("check", "n1", None),
        ("write", "n1", "storage"),
        ("tick", "clock", None),
        ("tick", "clock", None),
        *sets("n2", "ABCDE"),
        ("check", "n2", None),
        ("write", "n2", "storage"),
        ("release", "n2", None),
    ]
    steps = scripted("redlock-timing-ok", schedule)
    params = {"ttl": 2, "drift": 1, "locks": 2, "pauses": 0, "clock-jumps": 0}
    report = conform_trace("redlock-timing-ok", params, steps, "redis", Timing())
    assert report.result.verdict == "CONFORMS", timeline(report)
    assert "OK; 2 of 5 OK: failed" in calls(report)
    assert calls(report)[-1] == "deleted on A, B, C, D, E"


def test_wrong_ttl_mapping_diverges_at_a_tick() -> None:
    """PX twice the model's TTL: the keys outlive the model's second tick."""
    report = run(TRACES / "redlock-gc-pause.json", Timing(ttl_scale=2.0))
    assert report.result.verdict == "DIVERGES", timeline(report)
    where = report.result.divergence
    assert where is not None and where.model_event.startswith("clock: tick")
    assert "A: the model says 'free', the real system 'held by n1'" in where.differences()


def test_a_masters_wall_clock_jumps_for_real_and_alone() -> None:
    """The fault has its effect on the one master: its TIME leaps ahead and a key's PX
    runs out at once there, while the master beside it keeps real time and the key."""
    import redis  # noqa: PLC0415 (the conform extra's client library)

    from leadercheck.checker.conform.servers import RedisServers  # noqa: PLC0415

    with RedisServers(count=2, wall_clocks=True) as masters:
        jumping, steady = (redis.Redis(host=h, port=p) for h, p in masters.endpoints)
        for conn in (jumping, steady):
            assert conn.set("lock", "n1", px=60_000)
        before = jumping.time()[0]
        masters.clocks[0].jump(60_000)
        assert masters.clocks[0].ahead_ms == 60_000 and masters.clocks[1].ahead_ms == 0
        assert jumping.time()[0] - before >= 60
        assert abs(steady.time()[0] - before) <= 2
        assert jumping.get("lock") is None
        assert steady.get("lock") == b"n1" and steady.pttl("lock") > 50_000
