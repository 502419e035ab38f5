"""Re-executing a saved trace on a model, step by step, and saying where it parts from the record.

The saved trace is matched action by action against the successors of the current
state: an action is found by (name, actor, target); a differing note is where two
variants of a protocol part; an action that is not enabled ends the replay. When the
model is the one that recorded the trace, each replayed state is also compared with
the recorded full state. Protocol-agnostic: the caller supplies the model and the
property.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from leadercheck.checker.errors import ModelError
from leadercheck.checker.model import Action, Model
from leadercheck.checker.properties import Kind, Property

JsonState = Mapping[str, Mapping[str, Any]]


@dataclass(frozen=True)
class RecordedStep:
    """One step as a trace file holds it; `action` is None for the initial state."""

    index: int
    action: Action | None
    summary: Mapping[str, str]
    state: JsonState


@dataclass(frozen=True)
class SavedTrace:
    """A parsed trace file: which model made it, the property, and the recorded steps."""

    protocol: str
    params: Mapping[str, int]
    property_name: str
    property_kind: str
    property_description: str
    verdict: str
    trace_kind: str
    reason: str
    steps: tuple[RecordedStep, ...]
    loop_from: int | None = None  # a lasso: the last state returns to this step's state
    model: str | None = None  # how to load a user's model again (--model); None: built in

    @property
    def actions(self) -> tuple[Action, ...]:
        return tuple(s.action for s in self.steps[1:] if s.action is not None)


@dataclass(frozen=True)
class ReplayedStep:
    """The outcome of one recorded step: the replayed action (None if not enabled)."""

    index: int
    recorded: Action
    replayed: Action | None
    state_differences: tuple[str, ...] = ()

    @property
    def enabled(self) -> bool:
        return self.replayed is not None

    @property
    def note_differs(self) -> bool:
        return self.replayed is not None and self.replayed.note != self.recorded.note

    @property
    def exact(self) -> bool:
        return self.enabled and not self.note_differs and not self.state_differences

    def finding(self) -> str | None:
        """One line saying how this step differs from the record, or None if it does not."""
        if self.replayed is None:
            return f"step {self.index}: {self.recorded} is not enabled"
        if self.note_differs:
            return f"step {self.index}: {self.replayed}, recorded: {self.recorded.note or '(none)'}"
        if self.state_differences:
            return f"step {self.index}: the state differs from the recorded one: " + "; ".join(
                self.state_differences
            )
        return None


@dataclass(frozen=True)
class Replay:
    """Every replayed step, the state reached, and the property judged on it."""

    initial_differences: tuple[str, ...]
    steps: tuple[ReplayedStep, ...]
    final_state: Any
    prop: Property | None
    prop_broken: bool | None  # ALWAYS: predicate false; SOMETIMES: predicate true
    total_steps: int
    visited: tuple[Any, ...] = ()  # the initial state, then each replayed step's state
    expect_broken: bool = True  # what the record says of the property at the end
    broken_at: int | None = None  # the first step whose state breaks it (or reaches a goal)

    @property
    def completed(self) -> bool:
        return len(self.steps) == self.total_steps and all(s.enabled for s in self.steps)

    @property
    def last_index(self) -> int:
        """The index of the last step that was actually executed (0: none was)."""
        executed = [s.index for s in self.steps if s.enabled]
        return executed[-1] if executed else 0

    @property
    def findings(self) -> list[str]:
        lines = []
        if self.initial_differences:
            lines.append(
                "step 0: no initial state matches the recorded one: "
                + "; ".join(self.initial_differences)
            )
        lines += [f for s in self.steps if (f := s.finding()) is not None]
        return lines

    @property
    def first_parting(self) -> int | None:
        """The step where the replay first differs from the record, if any."""
        if self.initial_differences:
            return 0
        for s in self.steps:
            if not s.exact:
                return s.index
        return None

    @property
    def violated(self) -> bool:
        """The property fails along the replayed trace: an invariant or a liveness claim
        broken at its end, or a witness (`sometimes`) that no longer reaches its goal. What
        `verify replay` exits 1 for, on the trace's own protocol and on another alike."""
        if self.prop is None or self.prop_broken is None:
            return False
        return not self.prop_broken if self.prop.kind is Kind.SOMETIMES else self.prop_broken

    @property
    def reproduces(self) -> bool:
        """Every step enabled, same notes and states, and the property still breaks (or,
        for a trace recorded as holding, still holds)."""
        broken_as_recorded = self.prop_broken is self.expect_broken
        return self.completed and self.first_parting is None and broken_as_recorded


def normalise(view: Mapping[str, Mapping[str, object]]) -> dict[str, dict[str, Any]]:
    """A model's `describe` output as it reads back from a trace file."""
    loaded: dict[str, dict[str, Any]] = json.loads(
        json.dumps({k: dict(v) for k, v in view.items()})
    )
    return loaded


def state_differences(recorded: JsonState, replayed: JsonState, limit: int = 3) -> tuple[str, ...]:
    """Short descriptions of the fields where two full states differ, at most `limit`."""
    found: list[str] = []
    for part in sorted(set(recorded) | set(replayed)):
        old, new = recorded.get(part), replayed.get(part)
        if old == new:
            continue
        if old is None or new is None:
            found.append(f"{part} is {'missing from the replay' if new is None else 'new'}")
            continue
        for key in sorted(set(old) | set(new)):
            if old.get(key) != new.get(key):
                found.append(
                    f"{part}.{key}: recorded {json.dumps(old.get(key))}, "
                    f"replayed {json.dumps(new.get(key))}"
                )
    if len(found) > limit:
        found = found[:limit] + [f"{len(found) - limit} more"]
    return tuple(found)


def action_key(action: Action) -> tuple[str, str, str | None]:
    """What a replay matches an action by: name, actor and target (the note may differ)."""
    return (action.name, action.actor, action.target)


def _successors(model: Model[Any], state: Any, index: int) -> list[tuple[Action, Any]]:
    try:
        return [(action.shown(), after) for action, after in model.successors(state)]
    except Exception as exc:  # a model bug: report it with where the replay was
        raise ModelError(f"the model raised at step {index} of the replay: {exc!r}") from exc


def _start(model: Model[Any], saved: SavedTrace, compare: bool) -> tuple[Any, tuple[str, ...]]:
    """The initial state to replay from, and how it differs from the record (if compared)."""
    initials = list(model.initial_states())
    if not initials:
        raise ModelError("the model has no initial state")
    first = saved.steps[0]
    if compare:
        for s in initials:
            if normalise(model.describe(s)) == first.state:
                return s, ()
        return initials[0], state_differences(first.state, normalise(model.describe(initials[0])))
    for s in initials:
        if dict(model.summary(s)) == dict(first.summary):
            return s, ()
    return initials[0], ()


def _best(
    model: Model[Any],
    candidates: list[tuple[Action, Any]],
    recorded: Action,
    recorded_state: JsonState,
    compare_states: bool,
) -> tuple[Action, Any]:
    """The candidate with the recorded note and state if there is one, else the first."""

    def rank(pair: tuple[Action, Any]) -> int:
        action, nxt = pair
        same_note = action.note == recorded.note
        same_state = compare_states and normalise(model.describe(nxt)) == recorded_state
        return -(2 * same_note + same_state)

    return min(candidates, key=rank)


def replay(
    model: Model[Any],
    saved: SavedTrace,
    prop: Property | None = None,
    compare_states: bool = True,
) -> Replay:
    """Re-execute `saved` on `model`; stop at the first recorded action that is not enabled.

    `compare_states` compares every replayed state with the recorded one (only meaningful
    on the model that recorded the trace). `prop`, when given, is judged on every state
    reached: an invariant is broken, and a witness reaches its goal, at the first state
    where it does, not only at the last (a fix replayed on a schedule may break the claim
    midway and mend it by the end); a liveness claim is judged on the lasso.
    """
    prop = None if prop is None else prop.on(model)  # a claim that reads its model
    state, initial_diff = _start(model, saved, compare_states)
    visited = [state]
    done: list[ReplayedStep] = []
    for step in saved.steps[1:]:
        assert step.action is not None
        recorded = step.action
        wanted = action_key(recorded)
        candidates = [
            (a, s) for a, s in _successors(model, state, step.index) if action_key(a) == wanted
        ]
        if not candidates:
            done.append(ReplayedStep(step.index, recorded, None))
            break

        action, state = _best(model, candidates, recorded, step.state, compare_states)
        diffs: tuple[str, ...] = ()
        if compare_states:
            diffs = state_differences(step.state, normalise(model.describe(state)))
        done.append(ReplayedStep(step.index, recorded, action, diffs))
        visited.append(state)
    broken: bool | None = None
    broken_at: int | None = None
    if prop is not None and prop.kind in (Kind.ALWAYS, Kind.SOMETIMES):
        goal = prop.kind is Kind.SOMETIMES  # an invariant breaks where it is false
        broken_at = next(
            (k for k, s in enumerate(visited) if bool(prop.predicate(s)) is goal), None
        )
        broken = broken_at is not None
    elif prop is not None and saved.loop_from is not None:
        # a lasso breaks the liveness claim again if its loop closes and never meets the
        # goal (leads-to), or keeps coming back to where it fails (eventually-always)
        loop = visited[saved.loop_from :]
        closes = len(visited) == len(saved.steps) and loop[-1] == loop[0]
        met = [bool(prop.predicate(s)) for s in loop]
        broken = closes and not (any(met) if prop.kind is Kind.LEADS_TO else all(met))
    elif prop is not None:  # a liveness claim on a trace with no loop: judged at its end
        broken = not prop.predicate(state)
    # a trace recorded as HOLDS (a schedule kept by `conform --random --keep`) reproduces
    # when the invariant holds again along it
    expect = not (prop is not None and prop.kind is Kind.ALWAYS and saved.verdict == "HOLDS")
    return Replay(
        initial_diff,
        tuple(done),
        state,
        prop,
        broken,
        len(saved.steps) - 1,
        tuple(visited),
        expect,
        broken_at,
    )
