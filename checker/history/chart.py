"""A history drawn as the usual sequence chart: the model's path through it, as a Trace.

The search's path has its budgets filled up after every step (unobserved.py), which is
no state of the model with any one set of parameters; so the path is replayed on the
model with each unbounded budget set to what the path spent, and the chart, its JSON
and its parameters are those of a real run of the model (`verify explain` reads it).
Each step that took an event says which, in its note.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from leadercheck.checker.engine.successors import rebuild_trace
from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.history.events import History, seconds
from leadercheck.checker.history.fit import Fitted
from leadercheck.checker.history.permits import Permission
from leadercheck.checker.history.unobserved import Step
from leadercheck.checker.model import Model
from leadercheck.checker.properties import Property, always, sometimes
from leadercheck.checker.render.context import TraceContext
from leadercheck.checker.render.lanes import is_tick
from leadercheck.checker.result import PropertyResult, Verdict
from leadercheck.checker.trace import Trace
from leadercheck.models.cluster import ClusterModel, ClusterState, Faults
from leadercheck.models.cluster.base import BUILT_IN_FAULTS

CHART_STEPS = 200  # a longer path is drawn as its last steps up to the point of interest
PERMITTED = "history-permitted"
_MEANING = "the model takes every event of the history, in order and in time"
TAKEN = sometimes(PERMITTED, lambda state: True, _MEANING)
REFUSED = always(PERMITTED, lambda state: True, _MEANING)

_ANY_BUDGET = Faults()  # budgets aside: two states that differ only there are alike
Build = Callable[[Mapping[str, int]], Model[Any]]


def replayed(build: Build, fitted: Fitted, steps: Sequence[Step]) -> tuple[Trace, dict[str, int]]:
    """The path as a trace of the model whose unbounded budgets are what the path spent,
    and those parameters."""
    roomy = {**fitted.values, **{b: len(steps) + 1 for b in fitted.unbounded}}
    model = build(roomy)
    _, last = _follow(model, steps)
    first = model.initial_states()[0]
    values = dict(fitted.values)
    for budget in fitted.unbounded:
        values[budget] = _left(model, first, budget) - _left(model, last, budget)
    model = build(values)
    moves, _ = _follow(model, steps)
    return rebuild_trace(model, model.initial_states(), [0, *moves]), values


def _follow(model: Model[Any], steps: Sequence[Step]) -> tuple[list[int], Any]:
    """Each step's position among the successors of the state before it (its action, and
    its state but for the budgets), and the last state."""
    state = model.initial_states()[0]
    moves: list[int] = []
    for number, (action, wanted) in enumerate(steps, start=1):
        for k, (taken, after) in enumerate(model.successors(state)):
            if taken == action and _unbudgeted(after) == _unbudgeted(wanted):
                moves.append(k)
                state = after
                break
        else:
            raise LeadercheckError(
                f"the path through the history could not be replayed at step {number} "
                f"({action}): the model did not repeat itself"
            )
    return moves, state


def _unbudgeted(state: Any) -> Any:
    return state._replace(faults=_ANY_BUDGET) if isinstance(state, ClusterState) else state


def _left(model: Model[Any], state: Any, budget: str) -> int:
    """What is left of a budget (a parameter's name) in a cluster state."""
    faults = state.faults
    if budget in BUILT_IN_FAULTS:
        return int(getattr(faults, budget))
    assert isinstance(model, ClusterModel), "only cluster models have budgets"
    names = [kind.name for kind in model.fault_kinds]
    return int(faults.extra[names.index(budget)])


def marked(trace: Trace, history: History, permission: Permission) -> Trace:
    """The trace with each step that took an event saying so in its note (a lose taken
    without a step of its own marks nothing)."""
    steps = list(trace.steps)
    before = 0
    for event, after in zip(history.events, permission.taken_after, strict=False):
        step = steps[after]
        if after > before and step.action is not None:
            note = f"{step.action.note}; event {event.number} at {seconds(event.at)}"
            steps[after] = replace(step, action=step.action._replace(note=note.lstrip("; ")))
        before = after
    return Trace(tuple(steps), trace.loop_from)


def contexts(
    trace: Trace,
    history: History,
    fitted: Fitted,
    params: Mapping[str, int],
    permission: Permission,
    broken: Sequence[tuple[Property, str, int]],
) -> dict[str, TraceContext]:
    """The charts to write, by file-name suffix: the path the model takes (`history`), and
    for each claim the events break (property, reason, breaking event's number) within the
    taken prefix, the path up to the event that breaks it (`<claim>`)."""
    name = history.source.rsplit("/", 1)[-1]
    tick = f"a tick is {seconds(fitted.tick)}"
    if history.nodes is not None and list(history.nodes) != [
        f"n{k}" for k in range(1, 1 + len(history.nodes))
    ]:
        tick += "; " + ", ".join(f"n{k} is {real}" for k, real in enumerate(history.nodes, 1))
    drawn: dict[str, TraceContext] = {}
    if permission.permitted:
        outcome = PropertyResult(
            TAKEN, Verdict.HOLDS, trace, f"every event taken: {permission.events} events"
        )
        title = f"{name}: the model takes every event ({fitted.protocol.name}, {tick})"
    else:
        refusal = permission.refusal
        what = refusal.event.named() if refusal is not None else "the rest (interrupted)"
        outcome = PropertyResult(REFUSED, Verdict.VIOLATED, trace, f"the model cannot take {what}")
        taken = f"{permission.taken} of {permission.events} events"
        title = f"{name}: the model takes {taken} ({fitted.protocol.name}, {tick})"
    drawn["history"] = _context(fitted, params, outcome, title)
    for prop, reason, event in broken:
        if event > permission.taken:
            continue  # past what the model takes: no path of the model reaches it
        cut = Trace(trace.steps[: permission.taken_after[event - 1] + 1])
        outcome = PropertyResult(prop, Verdict.VIOLATED, cut, reason)
        title = f"{name}: {prop.name} broken at event {event} ({fitted.protocol.name}, {tick})"
        drawn[prop.name] = _context(fitted, params, outcome, title)
    return drawn


def _context(
    fitted: Fitted, params: Mapping[str, int], outcome: PropertyResult, title: str
) -> TraceContext:
    """The chart of `outcome`, its trace cut to its last CHART_STEPS steps (the title says
    which, and from when the time column counts)."""
    trace = outcome.trace
    assert trace is not None, "every chart has a trace"
    first = len(trace) - CHART_STEPS
    if first > 0:
        ticks = sum(is_tick(step.action) for step in trace.steps[1 : first + 1])
        start = trace.steps[first]
        steps = [replace(start, index=0, action=None)] + [
            replace(step, index=k) for k, step in enumerate(trace.steps[first + 1 :], start=1)
        ]
        outcome = replace(outcome, trace=Trace(tuple(steps)))
        title += (
            f"; its last {CHART_STEPS} of {len(trace)} steps, time counted from "
            f"{seconds(ticks * fitted.tick)}"
        )
    return TraceContext(
        fitted.protocol.name, dict(params), outcome, title=title, tick_seconds=float(fitted.tick)
    )
