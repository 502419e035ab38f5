"""Traces: a sequence of steps from an initial state, with what each participant looked like."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from leadercheck.checker.model import Action


@dataclass(frozen=True)
class Step:
    """One state of a trace and the action that led to it (None for the initial state)."""

    index: int
    action: Action | None
    view: Mapping[str, Mapping[str, object]]
    summary: Mapping[str, str]
    state: Any


@dataclass(frozen=True)
class Trace:
    """Steps in order; `steps[0]` is the initial state, so `len(trace)` counts actions."""

    steps: tuple[Step, ...]
    # A lasso (a liveness counterexample): the last step returns to the state of
    # steps[loop_from], and the steps after loop_from repeat forever. loop_from equal to
    # the last index means the behaviour stays in the last state forever (no fair action
    # is enabled there).
    loop_from: int | None = None

    def __len__(self) -> int:
        return len(self.steps) - 1

    @property
    def actions(self) -> tuple[Action, ...]:
        return tuple(step.action for step in self.steps[1:] if step.action is not None)

    @property
    def last(self) -> Step:
        return self.steps[-1]

    @property
    def participants(self) -> tuple[str, ...]:
        """The lifelines: every participant any step summarises, in first-seen order."""
        seen: dict[str, None] = {}
        for step in self.steps:
            for name in step.summary:
                seen.setdefault(name, None)
        return tuple(seen)
