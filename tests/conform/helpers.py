"""Saved traces as model steps, and a conformance run of one, for the conformance tests."""

from __future__ import annotations

from pathlib import Path

from leadercheck.checker.conform.harness import ModelStep, model_steps
from leadercheck.checker.conform.run import Report, conform_trace
from leadercheck.checker.conform.world import Timing
from leadercheck.checker.protocols import built_in, load_catalogue
from leadercheck.checker.render.trace_file import load_trace
from leadercheck.checker.replay import replay

ROOT = Path(__file__).resolve().parents[2]


def trace_steps(
    trace: Path, protocol: str | None = None, model: str | None = None
) -> tuple[str, dict[str, int], list[ModelStep]]:
    """The trace's steps replayed on its protocol (or `protocol`, with the trace's params)."""
    saved = load_trace(trace)
    catalogue = load_catalogue(model) if model else built_in()
    entry = catalogue.lookup(protocol or saved.protocol)
    known = {p.name for p in entry.params}
    params = {k: v for k, v in saved.params.items() if k in known}
    built = entry.build(params)
    replayed = replay(built, saved, None, compare_states=protocol is None)
    assert replayed.completed, [s.finding() for s in replayed.steps]
    actions = [s.replayed for s in replayed.steps if s.replayed is not None]
    return entry.name, params, model_steps(built, replayed.visited, actions)


def conform(
    trace: Path,
    system: str,
    protocol: str | None = None,
    timing: Timing | None = None,
    model: str | None = None,
) -> Report:
    name, params, steps = trace_steps(trace, protocol, model)
    return conform_trace(name, params, steps, system, timing or Timing(), trace_name=str(trace))
