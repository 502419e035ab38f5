"""What watches an exploration (checker/engine/explore.py): the observers.

- `Claims`: the state claims still undecided, checked on each new state (`StateClaims`
  does the deciding, for every strategy: breadth first, random walks, bitstate, so a
  claim means the same whichever search runs). An invariant (`always`) is decided by the
  first state that breaks it, a `sometimes` claim by the first state that meets it;
- `FairnessObserver`: the fairness graph that liveness claims are judged on
  (checker/engine/liveness.py): a bit per claim on each new state, and every edge with its class;
- `EdgeLog`: every edge with its action, for a drawn state graph or a digest of the order;
- `Checkpointing`: at a level's start, the exploration's snapshot saved when it is due,
  and where a bound or Ctrl-C stops the exploration, always.

An observer sees each new state in index order (`visit`: True when it decided something;
the exploration stops when every observer is `done`), the edges of each expanded state if
it asks for them (`edges = True`), each level's start (`level`) and an early stop
(`stopped`). It saves its part of a checkpoint as data (checker/engine/snapshot.py) and
loads it back, checking it against the restored store (what no observer saved is
Unreadable), and forgets what it made of the states and expansions from given indices on
(`rewind`: Ctrl-C in an expansion undoes it).
What a model's predicate raises (anything but the user's Ctrl-C) comes out as
`ObserverRaised`, which the exploration turns into a ModelError with the trace to the state.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from operator import le
from typing import TYPE_CHECKING, Any, Protocol

from leadercheck.checker.engine.frontier import Frontier
from leadercheck.checker.engine.interrupts import from_model
from leadercheck.checker.engine.liveness import FairnessGraph
from leadercheck.checker.engine.snapshot import (
    Unreadable,
    Values,
    array_of,
    count_of,
    record_of,
    values_of,
)
from leadercheck.checker.engine.store import Store
from leadercheck.checker.properties import LIVENESS, Kind, Property

if TYPE_CHECKING:
    from leadercheck.checker.engine.checkpoint import Checkpoints


class Exploring(Protocol):
    """What an observer sees of the exploration it watches (explore.py's Explorer): named
    here, so that observers need not import the loop that calls them."""

    store: Store
    frontier: Frontier
    generated: int

    def snapshot(self) -> dict[str, Any]: ...


class ClaimRaised(Exception):
    """A claim's predicate raised on a state (the search turns it into a ModelError)."""

    def __init__(self, name: str, error: BaseException) -> None:
        super().__init__(f"{name}: {type(error).__name__}: {error}")
        self.name = name
        self.error = error


class StateClaims:
    """The state properties not yet decided and, for each decided one, where it was.

    `where` is whatever the search remembers a state by (an index in breadth-first order,
    a walk and its moves); `found` maps each decided claim's name to it.
    """

    def __init__(self, properties: Iterable[Property]) -> None:
        # (name, predicate, whether it is an invariant) of each claim not yet decided
        self.pending: list[tuple[str, Any, bool]] = [
            (p.name, p.predicate, p.kind is Kind.ALWAYS)
            for p in properties
            if p.kind not in LIVENESS
        ]
        self.claims = tuple(self.pending)  # every one, decided or not, in order
        self.invariants = frozenset(name for name, _, inv in self.pending if inv)
        self.found: dict[str, Any] = {}

    def visit(self, state: Any, where: Any) -> tuple[str, ...]:
        """Check every pending claim on `state`; the names it decides (recorded at `where`).

        A claim is decided when its predicate is false for an invariant, true for a
        `sometimes` claim; what a predicate raises comes out as ClaimRaised.
        """
        decided: list[str] | None = None
        for name, predicate, invariant in self.pending:
            try:
                if bool(predicate(state)) is not invariant:
                    self.found[name] = where
                    decided = [name] if decided is None else [*decided, name]
            except BaseException as exc:  # user code: anything but the user's Ctrl-C
                if not from_model(exc):
                    raise
                raise ClaimRaised(name, exc) from exc
        if decided is None:
            return ()
        self.pending = [u for u in self.pending if u[0] not in self.found]
        return tuple(decided)

    def drop(self, names: Sequence[str]) -> None:
        """Stop checking `names` (decided elsewhere: by another worker, or before a resume)."""
        gone = set(names)
        self.pending = [u for u in self.pending if u[0] not in gone]

    def undecide(self, names: Iterable[str]) -> None:
        """Check `names` again, as if never decided (their deciding state was taken back)."""
        back = set(names)
        for name in back:
            self.found.pop(name, None)
        pending = {u[0] for u in self.pending} | back
        self.pending = [u for u in self.claims if u[0] in pending]

    @property
    def done(self) -> bool:
        """Whether every claim is decided (never, while one is pending)."""
        return not self.pending

    def broken(self, names: Iterable[str]) -> bool:
        """Whether any of `names` is an invariant (its decision is a violation)."""
        return any(name in self.invariants for name in names)


class ObserverRaised(Exception):
    """Model code (a claim's predicate) raised on the state of index `index`."""

    def __init__(self, name: str, error: BaseException, index: int) -> None:
        super().__init__(f"{name}: {type(error).__name__}: {error}")
        self.name, self.error, self.index = name, error, index


class Observer:
    """Watches an exploration; by default sees nothing and is done."""

    edges = False  # whether it needs every expanded state's edges
    done = True  # whether the exploration may stop for it

    def visit(self, state: Any, index: int, initial: bool) -> bool:
        """A new state; True if that decided something."""
        return False

    def expanded(self, index: int, targets: list[int], actions: list[Any]) -> None:
        """The edges of expanded state `index` (in `successors` order), if `edges`."""

    def level(self, explorer: Exploring) -> None:
        """A level starts (the frontier holds exactly it)."""

    def stopped(self, explorer: Exploring) -> None:
        """A bound or Ctrl-C stopped the exploration (a snapshot may be taken now)."""

    def rewind(self, stored: int, expanded: int) -> None:
        """Forget the states from index `stored` on and the expansions from `expanded` on."""

    def save(self) -> Any:
        """Its part of a snapshot, as data (None: nothing)."""
        return None

    def load(self, saved: Any, explorer: Exploring) -> None:
        """Take back what `save` gave, the explorer's store and frontier restored already."""
        if saved is not None:
            raise Unreadable("a part for an observer that saves none")


class Claims(Observer):
    """The state claims, each decided at the index of the first state that decides it."""

    def __init__(self, properties: Iterable[Property]) -> None:
        self.claims = StateClaims(properties)
        self.found: dict[str, Any] = self.claims.found

    @property
    def done(self) -> bool:  # type: ignore[override]
        return self.claims.done

    def visit(self, state: Any, index: int, initial: bool) -> bool:
        try:
            return bool(self.claims.visit(state, index))
        except ClaimRaised as exc:
            raise ObserverRaised(exc.name, exc.error, index) from exc.error

    def rewind(self, stored: int, expanded: int) -> None:
        self.claims.undecide([name for name, index in self.found.items() if index >= stored])

    def save(self) -> Any:
        return dict(self.found)  # name -> index of the state that decided it

    def load(self, saved: Any, explorer: Exploring) -> None:
        names = {name for name, _, _ in self.claims.claims}
        if type(saved) is not dict or not set(saved) <= names:
            raise Unreadable("decided claims that are not this search's")
        for name in saved:
            count_of(saved, name, len(explorer.store) - 1)
        self.found.update(saved)
        self.claims.drop(list(saved))


class FairnessObserver(Observer):
    """Records the fairness graph of the liveness claims; never done before the end."""

    edges = True
    done = False

    def __init__(self, graph: FairnessGraph, fairness: Any) -> None:
        self.graph = graph
        self.fairness = fairness  # the model's: action -> its fairness class

    def visit(self, state: Any, index: int, initial: bool) -> bool:
        try:
            self.graph.visit(state, initial)
        except BaseException as exc:  # user code: anything but the user's Ctrl-C
            if not from_model(exc):
                raise
            raise ObserverRaised("a liveness property", exc, index) from exc
        return False

    def expanded(self, index: int, targets: list[int], actions: list[Any]) -> None:
        class_id, fairness = self.graph.class_id, self.fairness
        self.graph.expanded(targets, [class_id(fairness(action)) for action in actions])

    def rewind(self, stored: int, expanded: int) -> None:
        graph = self.graph
        for bits in (*graph.goal, *graph.trigger):
            del bits[stored:]
        graph.initial_count = min(graph.initial_count, stored)  # the first states are initial
        del graph.offsets[expanded + 1 :]
        edges = graph.offsets[-1]
        del graph.targets[edges:]
        del graph.classes[edges:]

    def save(self) -> Any:
        graph = self.graph
        return {
            "initial_count": graph.initial_count,
            "goal": list(graph.goal),
            "trigger": list(graph.trigger),
            "offsets": graph.offsets,
            "targets": graph.targets,
            "classes": graph.classes,
            "class_names": Values(graph.class_names),  # class_ids is their index
        }

    def load(self, saved: Any, explorer: Exploring) -> None:
        """The graph saved, checked to be one of the restored store: a bit per claim and
        state, an edge list per expanded state, edges to stored states of known classes."""
        graph, stored = self.graph, len(explorer.store)
        keys = ("initial_count", "goal", "trigger", "offsets", "targets", "classes")
        saved = record_of(saved, *keys, "class_names")
        offsets = array_of(saved, "offsets", "Q")
        targets, classes = array_of(saved, "targets", "I"), array_of(saved, "classes", "I")
        names = values_of(saved, "class_names")
        goal, trigger = saved["goal"], saved["trigger"]
        kinds = [p.kind is Kind.LEADS_TO for p in graph.properties]
        if (
            type(goal) is not list
            or type(trigger) is not list
            or len(goal) != len(kinds)
            or len(trigger) != len(kinds)
            or any(type(bits) is not bytearray for bits in (*goal, *trigger))
            or any(len(bits) != stored or bits.translate(None, b"\0\1") for bits in goal)
            or any(
                len(bits) != (stored if leads else 0) or bits.translate(None, b"\0\1")
                for bits, leads in zip(trigger, kinds, strict=True)
            )
        ):
            raise Unreadable("a fairness graph whose claims' bits are not one per state")
        if (
            len(offsets) != explorer.frontier.next + 1
            or offsets[0] != 0
            or not all(map(le, offsets, offsets[1:]))
            or offsets[-1] != len(targets)
            or len(classes) != len(targets)
            or max(targets, default=-1) >= stored
            or not names
            or names[0] is not None
            or max(classes, default=0) >= len(names)
        ):
            raise Unreadable("a fairness graph whose edges are not between stored states")
        graph.initial_count = count_of(saved, "initial_count", stored)
        graph.goal, graph.trigger = goal, trigger
        graph.offsets, graph.targets, graph.classes = offsets, targets, classes
        graph.class_names = names
        graph.class_ids = {name: k for k, name in enumerate(names) if k}
        if len(graph.class_ids) != len(names) - 1:
            raise Unreadable("a fairness graph that names a class twice")


class EdgeLog(Observer):
    """Every edge (from, to, action) in the order the exploration records them."""

    edges = True

    def __init__(self) -> None:
        self.edges_seen: list[tuple[int, int, Any]] = []

    def expanded(self, index: int, targets: list[int], actions: list[Any]) -> None:
        self.edges_seen.extend(zip([index] * len(targets), targets, actions, strict=True))

    def rewind(self, stored: int, expanded: int) -> None:
        self.edges_seen = [edge for edge in self.edges_seen if edge[0] < expanded]


class Checkpointing(Observer):
    """At a level's start, the exploration's snapshot, saved when one is due; where a
    bound or Ctrl-C stops the exploration, saved whether due or not (unless it was just
    saved there), so that `--resume` goes on from where it stopped."""

    def __init__(self, checkpoints: Checkpoints) -> None:
        self.checkpoints = checkpoints
        self.saved_at: tuple[int, int, int] | None = None  # (stored, next, generated)

    def level(self, explorer: Exploring) -> None:
        if self.checkpoints.due():
            self._save(explorer)

    def stopped(self, explorer: Exploring) -> None:
        if self.saved_at != self._where(explorer):
            self._save(explorer)

    def _save(self, explorer: Exploring) -> None:
        self.checkpoints.save(explorer.snapshot())
        if self.checkpoints.failure is None:
            self.saved_at = self._where(explorer)

    @staticmethod
    def _where(explorer: Exploring) -> tuple[int, int, int]:
        return len(explorer.store), explorer.frontier.next, explorer.generated
