"""Running a catalogue protocol the way `verify` does, for tests."""

from __future__ import annotations

from collections.abc import Iterable

from leadercheck.checker import Action, CheckResult, Trace, Verdict, always, check
from leadercheck.models.catalogue import lookup
from leadercheck.specs import load_expectations


def run_protocol(name: str, **params: int) -> CheckResult:
    """Check `name` on its specs properties, with parameters overriding the defaults."""
    protocol = lookup(name)
    model = protocol.build(protocol.resolve({k: str(v) for k, v in params.items()}))
    return check(model, load_expectations().properties(name))


def reachable_count(name: str, **params: int) -> int:
    """Every reachable state of `name`, searched to the end whatever the verdicts."""
    protocol = lookup(name)
    model = protocol.build(protocol.resolve({k: str(v) for k, v in params.items()}))
    return check(model, [always("anything", lambda s: True)]).stats.distinct_states


Shape = tuple[str, str, str | None]


def verdicts(result: CheckResult) -> dict[str, Verdict]:
    return {r.prop.name: r.verdict for r in result.results}


def shape(actions: Iterable[Action]) -> list[Shape]:
    """Who did what to whom, without the notes (which carry outcomes)."""
    return [(a.name, a.actor, a.target) for a in actions]


def trace_shape(trace: Trace | None) -> list[Shape]:
    assert trace is not None
    return shape(trace.actions)
