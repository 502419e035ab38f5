"""The interface a model implements so the engine can search it.

A model is a transition system: initial states and, for each state, the enabled
actions in a fixed order with the state each one leads to. States must be
immutable and hashable. `describe` and `summary` only serve traces and diagrams;
the search itself never calls them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from typing import Generic, NamedTuple, TypeVar

S = TypeVar("S")


class Action(NamedTuple):
    """Who did what to whom: the label of one step.

    `actor` and `target` name participants (lifelines in a diagram); a step with no
    target is an event on the actor's lifeline. Two actions are the same action when
    all four fields are equal, which is how a saved trace is replayed.
    """

    name: str
    actor: str
    target: str | None = None
    note: str = ""

    def __str__(self) -> str:
        where = f"{self.actor} -> {self.target}" if self.target else self.actor
        text = f"{where}: {self.name}"
        return f"{text} ({self.note})" if self.note else text


class Model(ABC, Generic[S]):
    """A finite transition system over hashable states."""

    @abstractmethod
    def initial_states(self) -> Sequence[S]:
        """The initial states, in a fixed order."""

    @abstractmethod
    def successors(self, state: S) -> Iterable[tuple[Action, S]]:
        """Every enabled action of `state` and its next state, always in the same order."""

    def describe(self, state: S) -> Mapping[str, Mapping[str, object]]:
        """The full state, grouped by participant, as plain JSON-ready values."""
        return {"state": {"value": repr(state)}}

    def summary(self, state: S) -> Mapping[str, str]:
        """One short line per participant (the lifelines of a diagram), in display order."""
        return {}
