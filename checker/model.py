"""The interface a model implements so the engine can search it.

A model is a transition system: initial states and, for each state, the enabled
actions in a fixed order with the state each one leads to. States must be
immutable and hashable. `describe` and `summary` only serve traces and diagrams;
the search itself never calls them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Generic, NamedTuple, TypeVar

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

    def next_states(self, state: S) -> Iterable[S]:
        """The next states of `successors`, in the same order, without building the labels.

        The search only needs states; labels are rebuilt for the few states on a trace.
        A model may override this for speed, but must keep the order of `successors`.
        """
        return [succ for _, succ in self.successors(state)]

    # -- fairness (liveness properties) -------------------------------------------

    def fairness(self, action: Action) -> str | None:
        """The weak-fairness class of `action`, or None if it is never forced to happen.

        A behaviour is fair when no class stays enabled forever without one of its
        actions being taken. The default makes each actor's actions one class (weak
        fairness per process); a model returns None for faults.
        """
        return action.actor

    # -- partial-order reduction (optional) -------------------------------------

    def local_moves(self, state: S) -> Sequence[int]:
        """Positions, in `successors` order, of the enabled actions of `state` that are local.

        An action is local when (1) no property can see it: it changes nothing a claim
        reads; (2) it commutes with every other action that is enabled in `state` or can
        become enabled before it is taken: in either order the two reach the same state
        and neither disables the other; (3) nothing but itself disables it. Exploring
        only one local action from `state` then loses no reachable violation
        (checker/por.py). The default declares none, which is always sound.
        """
        return ()

    # -- symmetry (optional): node positions whose ids are interchangeable ---------

    def symmetry_groups(self) -> Sequence[Sequence[int]]:
        """Groups of node positions (0-based) that may be renamed among themselves.

        Empty when the model declares no symmetry. Renaming nodes of one group must map
        reachable states to reachable states and keep every property's truth value.
        """
        return ()

    def permute(self, state: S, perm: Sequence[int]) -> S:
        """`state` with node position i renamed to perm[i] everywhere it occurs."""
        raise NotImplementedError(f"{type(self).__name__} declares symmetry but no permute")

    def order_key(self, state: S) -> Any:
        """A total order on states that picks an orbit's representative among candidates.

        The state itself by default; a model whose states do not compare (None beside
        ints) returns something that does, and that does not vary between runs.
        """
        return state

    def node_keys(self, state: S) -> Sequence[Any]:
        """Per node position, a comparable key that renaming carries along with the node.

        Only prunes the renamings tried when picking an orbit's representative; the
        default (all keys equal) tries every renaming of each group.
        """
        return ()

    def describe(self, state: S) -> Mapping[str, Mapping[str, object]]:
        """The full state, grouped by participant, as plain JSON-ready values."""
        return {"state": {"value": repr(state)}}

    def summary(self, state: S) -> Mapping[str, str]:
        """One short line per participant (the lifelines of a diagram), in display order."""
        return {}
