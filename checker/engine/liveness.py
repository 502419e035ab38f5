"""Liveness: `trigger ~> goal` and `<>[] P` under weak fairness, judged on a compact graph.

The graph is recorded by the breadth-first search itself (checker/engine/strategies/bfs.py), as an
observer of the same exploration that checks the invariants: per state only its index
(discovery order), a bit per liveness property (goal, trigger), and its outgoing edges as
packed arrays (target index and fairness class, in `successors` order, so an edge's
position among its state's edges is its move). No full state is kept; a lasso is rebuilt by
re-executing the model along moves, like every other trace.

A leads-to property fails when some fair behaviour reaches a trigger state and never
afterwards a goal state. Such a behaviour ends in a strongly connected set of non-goal
states it loops in forever, or in a non-goal state it never leaves. So the judgement
restricts the graph to the non-goal states and looks for

- a fair cycle: a strongly connected component in which every fairness class that is
  enabled in all of its states is taken by some edge inside it (weak fairness: a class
  enabled somewhere it is disabled is not enabled forever; a class enabled everywhere
  must be taken, and taking it inside the component keeps the cycle fair), or
- a stuttering state: a non-goal state where no fair class is enabled, so nothing forces
  the behaviour to leave it (an unfair action, a fault, is never forced to happen);

reachable, through non-goal states, from a reachable trigger state. The counterexample
is a lasso: the shortest trace to the first such trigger state (in breadth-first order),
the shortest non-goal path from it into the component, then a cycle through the
component that takes, for every class enabled somewhere in it, an edge of that class or
a state where it is disabled. A cycle that is unfair is never reported.

An `eventually_always` (persistence, <>[] P) property fails when some fair behaviour
keeps returning to a state where P is false: a fair component of the whole graph that
contains such a state, or a stuttering state where P is false. Its lasso is the shortest
trace to the first such state, then a fair cycle through its component back to it.

A partial graph (a bound or Ctrl-C stopped the search) is judged on its expanded states
only, whose edges are all known: a lasso found there is a real one (VIOLATED); finding
none proves nothing (INCOMPLETE). The judgement is checker/engine/fair_cycles.py: scipy's
strongly connected components over the packed arrays, so a million-state graph costs
arrays, not objects (and numpy is imported only when a graph is judged).
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Callable, Sequence
from typing import Any

from leadercheck.checker.properties import Kind, Property

UNFAIR = 0  # the class id of an edge no fairness forces
# How many of the first failing states (breadth-first) a persistence lasso may start from;
# the shortest lasso among them is reported.
LASSO_CANDIDATES = 64


class FairnessGraph:
    """The explored graph as a liveness judgement needs it: edges, classes, property bits.

    The search calls `visit` on each new state (in index order) and `expanded` with each
    expanded state's successors (in index order too); `fingerprint -> index` lives in
    the search's store. Fairness classes are interned to small ints (0: unfair).
    """

    def __init__(self, properties: Sequence[Property]) -> None:
        self.properties = tuple(properties)
        self.goal = [bytearray() for _ in self.properties]
        self.trigger = [bytearray() for _ in self.properties]
        self.offsets = array("Q", [0])  # edges of expanded state i: offsets[i]..offsets[i+1]
        self.targets = array("I")
        self.classes = array("I")
        self.class_ids: dict[Any, int] = {}
        self.class_names: list[Any] = [None]
        self.initial_count = 0

    # -- recording (the search calls these) ------------------------------------

    def visit(self, state: Any, initial: bool) -> None:
        """Evaluate each property's goal and trigger on a new state."""
        if initial:
            self.initial_count += 1
        for k, prop in enumerate(self.properties):
            self.goal[k].append(1 if prop.predicate(state) else 0)
            if prop.kind is Kind.LEADS_TO:
                fires = initial if prop.trigger is None else bool(prop.trigger(state))
                self.trigger[k].append(1 if fires else 0)

    def class_id(self, fairness: Any) -> int:
        """The id of a fairness class (None: unfair, 0)."""
        if fairness is None:
            return UNFAIR
        found = self.class_ids.get(fairness)
        if found is None:
            found = self.class_ids[fairness] = len(self.class_names)
            self.class_names.append(fairness)
        return found

    def expanded(self, targets: Sequence[int], classes: Sequence[int]) -> None:
        """The edges of the next state in index order, in `successors` order."""
        self.targets.extend(targets)
        self.classes.extend(classes)
        self.offsets.append(len(self.targets))

    # -- sizes ---------------------------------------------------------------

    @property
    def states(self) -> int:
        return len(self.goal[0]) if self.goal else 0

    @property
    def expanded_count(self) -> int:
        return len(self.offsets) - 1

    @property
    def edges(self) -> int:
        return len(self.targets)

    def out(self, i: int) -> range:
        """Edge ids of expanded state i (its moves are the offsets from the first)."""
        return range(self.offsets[i], self.offsets[i + 1])

    def nbytes(self) -> int:
        """Bytes held by the packed arrays (the store's fingerprints are counted there)."""
        arrays = (self.offsets, self.targets, self.classes)
        return sum(a.itemsize * len(a) for a in arrays) + sum(map(len, self.goal + self.trigger))


def level_of(level_starts: Sequence[int]) -> Callable[[int], int]:
    """The depth of state i, given the first index of each breadth-first level."""
    return lambda i: bisect_right(level_starts, i) - 1
