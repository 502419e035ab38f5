"""The interface a model implements so the engine can search it.

A model is a transition system: initial states and, for each state, the enabled
actions in a fixed order with the state each one leads to. States must be
immutable and hashable. `describe` and `summary` only serve traces and diagrams;
the search itself never calls them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Generic, NamedTuple, TypeVar

from leadercheck.checker.total_order import value_key

S = TypeVar("S")


# What kind of move an action is. Faults and recoveries are never forced by fairness; a
# tick is the clock's; a step is the protocol's own.
STEP, FAULT, RECOVERY, TICK = "step", "fault", "recovery", "tick"
UNKNOWN_KIND = ""  # the kind of an action read from a trace file that predates kinds
KINDS = (STEP, FAULT, RECOVERY, TICK)
UNFORCED = frozenset({FAULT, RECOVERY})
CLOCK_CLASS = "clock"
BY_KIND = ""  # the `fairness` of an action that leaves its class to its kind and its model

Note = str | Callable[[], str]


class Action(NamedTuple):
    """Who did what to whom, and what kind of move it is: the label of one step.

    `actor` and `target` name participants (lifelines in a diagram); a step with no
    target is an event on the actor's lifeline. A saved trace is replayed by matching
    (name, actor, target), then the note.

    The declarations the engine reads, never a position in a list or a name pattern:

    - `kind`: STEP (the protocol's), FAULT, RECOVERY or TICK;
    - `fairness`: its weak-fairness class, None if nothing forces it, or BY_KIND (the
      default) to leave it to `Model.fairness`: faults and recoveries unforced, ticks
      the clock's, steps the model's default class;
    - `local`: for partial-order reduction, it meets the conditions of `Model.local_moves`
      in the state that offers it;
    - `unreached`: the messages this step sent that could not leave (to a participant
      behind a partition, or down), each written as the model's network writes a message
      in flight; never in the state, so a chart can still draw them ending in a cross.

    `note`, the human sentence, may be a function of no arguments: it is then called
    only for the steps that are shown (a trace, a diagram), never during a search.
    """

    name: str
    actor: str
    target: str | None = None
    note: Note = ""
    kind: str = STEP
    fairness: str | None = BY_KIND
    local: bool = False
    unreached: tuple[object, ...] = ()

    def shown(self) -> Action:
        """This action with its note written out, as traces and diagrams hold it."""
        note = self.note
        return self if isinstance(note, str) else self._replace(note=note())

    def then(self, more: str) -> Action:
        """This action with `more` added to its note (lazily if the note is lazy)."""
        note = self.note
        if isinstance(note, str):
            return self._replace(note=f"{note}{more}")
        return self._replace(note=lambda: f"{note()}{more}")

    def label(self) -> tuple[str, str, str | None, str]:
        """What identifies the action: name, actor, target and the note as shown."""
        return (self.name, self.actor, self.target, self.shown().note)  # type: ignore[return-value]

    def __eq__(self, other: object) -> bool:
        """Two actions are the same action when their labels are equal (how a saved trace,
        which records no declarations, is replayed); kind, fairness and locality are what
        the model declares about it."""
        if not isinstance(other, Action):
            return NotImplemented
        return self.label() == other.label()

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash(self.label())

    def __str__(self) -> str:
        where = f"{self.actor} -> {self.target}" if self.target else self.actor
        text = f"{where}: {self.name}"
        note = self.shown().note
        return f"{text} ({note})" if note else text


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
        actions being taken. Read from the action's declarations: its own `fairness`
        when it names one (or None), else by its kind: faults and recoveries are never
        forced, ticks are the clock's, and a step is in `step_class(action)`.
        """
        declared = action.fairness
        if declared != BY_KIND:
            return declared
        kind = action.kind
        if kind in UNFORCED:
            return None
        if kind == TICK:
            return CLOCK_CLASS
        return self.step_class(action)

    def step_class(self, action: Action) -> str:
        """The fairness class of a protocol step that declares none: its actor's (weak
        fairness per process)."""
        return action.actor

    # -- partial-order reduction (optional) -------------------------------------

    def local_moves(self, state: S) -> Sequence[int]:
        """Positions, in `successors` order, of the actions of `state` declared local.

        An action is declared local (`Action.local`) when (1) no property can see it: it
        changes nothing a claim reads; (2) it commutes with every other action that is
        enabled in `state` or can become enabled before it is taken: in either order the
        two reach the same state and neither disables the other; (3) nothing but itself
        disables it. Exploring only one local action from `state` then loses no reachable
        violation (checker/engine/reductions/por.py). Declaring none is always sound. A model
        declares them on the actions it yields; this view of them serves tests and tools.
        """
        return tuple(k for k, (action, _) in enumerate(self.successors(state)) if action.local)

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

        By default `value_key(state)` (checker/total_order.py): a string that orders
        every value a state may hold (atoms, tuples, frozensets, enums, records), the same
        in every run. One of a model's own must order every two unequal states one way
        (not frozensets by `<`, which is subset) and not vary between runs; --symmetry and
        --lint refuse, in one line, one that leaves two renamings of a state unordered.
        """
        return value_key(state)

    def node_keys(self, state: S) -> Sequence[Any]:
        """Per node position, a key that renaming carries along with the node.

        Only prunes the renamings tried when picking an orbit's representative; the
        default (all keys equal) tries every renaming of each group. The keys of a state's
        nodes must be totally ordered (equal, or one below the other: `value_key` of
        what the node holds is); --symmetry refuses two that are neither.
        """
        return ()

    # -- a compiled twin (optional) ------------------------------------------------

    def kernel(self, symmetric: bool) -> Any:
        """This model's compiled kernel (a checker/kernel.py `Kernel`; that module stands on
        this one, so it is not named in the signature), canonicalising by its symmetry when
        `symmetric`; None (the default) when it has none, for these parameters, or without
        numba. Offered only by the exact class it was written for."""
        return None

    def describe(self, state: S) -> Mapping[str, Mapping[str, object]]:
        """The full state, grouped by participant, as plain JSON-ready values."""
        return {"state": {"value": repr(state)}}

    def summary(self, state: S) -> Mapping[str, str]:
        """One short line per participant (the lifelines of a diagram), in display order."""
        return {}


class Wrapper(Model[S]):
    """A model that stands for another (the guard's, around a user's model): messages name
    the model inside, whatever wraps it."""

    inner: Model[S]


def model_name(model: Model[Any]) -> str:
    """The class name a message calls a model by: the user's, through any `Wrapper`."""
    inner = model.inner if isinstance(model, Wrapper) else model
    return type(inner).__name__
