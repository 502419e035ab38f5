"""Saved traces as model steps, and a conformance run of one, for the conformance tests."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from leadercheck.checker.app.main import main
from leadercheck.checker.conform.bindings.base import Binding
from leadercheck.checker.conform.harness import ModelStep, model_steps
from leadercheck.checker.conform.run import Report, conform_trace
from leadercheck.checker.conform.world import Timing
from leadercheck.checker.engine.replay import replay
from leadercheck.checker.model import Action
from leadercheck.checker.protocols.catalogue import built_in, load_catalogue
from leadercheck.checker.render.trace_file import load_trace

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


def scheduled(
    protocol: str,
    params: dict[str, int],
    plan: Sequence[tuple[str, str]],
    system: str,
    binding: Binding | None = None,
) -> Report:
    """A schedule of (action, actor) picked from the model's successors, made real (the
    parameters not given at their defaults)."""
    entry = built_in().lookup(protocol)
    params = dict(entry.resolve({k: str(v) for k, v in params.items()}))
    model = entry.build(params)
    visited: list[Any] = [model.initial_states()[0]]
    actions: list[Action] = []
    for name, actor in plan:
        found = [
            (a, s) for a, s in model.successors(visited[-1]) if (a.name, a.actor) == (name, actor)
        ]
        assert found, f"the model offers no {name} by {actor} after {[str(a) for a in actions]}"
        actions.append(found[0][0])
        visited.append(found[0][1])
    steps = model_steps(model, visited, actions)
    return conform_trace(protocol, params, steps, system, Timing(), binding=binding)


def verify(*args: str) -> Result:
    """`verify ARGS...` in this process, its exit code and output kept."""
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def plan_steps(
    protocol: str, plan: Sequence[tuple[str, str | None, str]]
) -> tuple[dict[str, int], list[ModelStep]]:
    """The model's steps of `plan` on `protocol` (default parameters), each (action, actor
    or None, a word of its note or "") the one successor that fits; a plan the model does
    not allow fails here, before anything runs."""
    entry = built_in().lookup(protocol)
    params = {p.name: p.default for p in entry.params}
    model = entry.build(params)
    state = model.initial_states()[0]
    visited, actions = [state], []
    for name, actor, word in plan:
        fits = [
            (action, after)
            for action, after in model.successors(state)
            if action.name == name
            and actor in (None, action.actor)
            and ((word in action.shown().note) if word else "reply lost" not in action.shown().note)
        ]
        assert len(fits) == 1, (name, actor, [str(a.shown()) for a, _ in model.successors(state)])
        action, state = fits[0]
        actions.append(action)
        visited.append(state)
    return params, model_steps(model, visited, actions)
