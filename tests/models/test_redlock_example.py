"""The Redlock example (examples/redlock.py), checked through the engine as its user would.

The module is loaded from its path, as `verify --model` loads it; the claims in its
EXPECTED are looked up in its PROPERTIES first, then among the built-in ones. Each
protocol: its verdicts, its exact distinct-state count and its shortest traces.
"""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from leadercheck.checker import CheckResult, Kind, Property, Verdict, check
from leadercheck.models.params import ProtocolEntry
from leadercheck.specs.claims import PROPERTIES as BUILT_IN

PATH = Path(__file__).resolve().parents[2] / "examples" / "redlock.py"


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("redlock_example", PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


REDLOCK = load()
ENTRIES: dict[str, ProtocolEntry] = {e.name: e for e in REDLOCK.PROTOCOLS}


def claim(name: str) -> Property:
    own = {p.name: p for p in REDLOCK.PROPERTIES}
    return own[name] if name in own else BUILT_IN[name]


@cache
def run(protocol: str, **given: int) -> CheckResult:
    """Check `protocol` (with parameters changed by `given`) against its EXPECTED claims
    (once: the tests share the results)."""
    entry = ENTRIES[protocol]
    model = entry.build(entry.resolve({k.replace("_", "-"): str(v) for k, v in given.items()}))
    return check(model, [claim(name) for name in REDLOCK.EXPECTED[protocol]])


def moves(result: CheckResult, prop: str) -> list[tuple[str, str]]:
    trace = result.result(prop).trace
    assert trace is not None
    return [(a.actor, a.name) for a in trace.actions]


def test_the_module_exports_what_the_loader_reads() -> None:
    assert list(ENTRIES) == ["redlock", "redlock-gc-pause", "redlock-timing-ok"]
    assert set(REDLOCK.EXPECTED) == set(ENTRIES)
    for name, expected in REDLOCK.EXPECTED.items():
        witnesses = [c for c, v in expected.items() if claim(c).kind is Kind.SOMETIMES]
        assert "lock-acquired" in witnesses and expected["lock-acquired"] == "HOLDS", name
    params = [p.name for p in ENTRIES["redlock"].params]
    assert params == ["ttl", "drift", "locks", "pauses", "clock-jumps"]


def verdicts(result: CheckResult) -> dict[str, str]:
    return {r.prop.name: r.verdict.value for r in result.results}


def expected_verdicts(protocol: str) -> dict[str, str]:
    expected: dict[str, Any] = REDLOCK.EXPECTED[protocol]
    return {k: v if isinstance(v, str) else v["verdict"] for k, v in expected.items()}


@pytest.mark.parametrize(
    ("protocol", "states", "lengths"),
    [
        # the search stops once every claim is decided (183,926 are reachable)
        ("redlock", 38_471, {"single-leader": 11, "no-stale-write": 15, "lock-acquired": 5}),
        ("redlock-gc-pause", 28_137, {"no-stale-write": 18, "lock-acquired": 5}),
        ("redlock-timing-ok", 4_244, {"lock-acquired": 5, "write-accepted": 7, "failover": 11}),
    ],
)
def test_verdicts_states_and_shortest_traces_at_the_defaults(
    protocol: str, states: int, lengths: dict[str, int]
) -> None:
    result = run(protocol)
    assert verdicts(result) == expected_verdicts(protocol)
    assert result.stats.distinct_states == states
    found = {r.prop.name: len(r.trace) for r in result.results if r.trace is not None}
    assert found == lengths
    for name, value in REDLOCK.EXPECTED[protocol].items():
        if isinstance(value, dict):
            assert found[name] <= value["max_steps"]


def test_two_clients_hold_the_lock_after_a_clock_jump() -> None:
    """Kleppmann's first scenario: n1 holds A, B, C; C's clock jumps; n2 takes C, D, E."""
    assert moves(run("redlock"), "single-leader") == [
        ("n1", "SET NX"),
        ("n1", "SET NX"),
        ("n1", "SET NX"),
        ("n2", "SET NX"),
        ("n2", "SET NX"),
        ("C", "clock jump"),
        ("n2", "SET NX"),
        ("n2", "SET NX"),
        ("n1", "SET NX"),
        ("n2", "SET NX"),
        ("n1", "SET NX"),
    ]


def test_a_pause_between_check_and_write_lands_a_stale_write() -> None:
    steps = moves(run("redlock-gc-pause"), "no-stale-write")
    check_at, pause_at = steps.index(("n1", "check")), steps.index(("n1", "pause"))
    assert pause_at == check_at + 1 and ("n1", "resume") in steps
    assert steps[-1] == ("n1", "write") and ("n2", "write") in steps
    assert [a for a, name in steps if name == "tick"] == ["clock", "clock"]  # ttl: 2 ticks


@pytest.mark.parametrize(
    ("fault", "broken", "length"),
    [("clock_jumps", "single-leader", 11), ("pauses", "no-stale-write", 18)],
)
def test_the_safe_variant_breaks_once_its_timing_assumption_does(
    fault: str, broken: str, length: int
) -> None:
    """redlock-timing-ok is the same model with no fault left: give it one back."""
    result = run("redlock-timing-ok", **{fault: 1})
    assert result.result(broken).verdict is Verdict.VIOLATED
    trace = result.result(broken).trace
    assert trace is not None and len(trace) == length
