"""Liveness: `trigger ~> goal` and `<>[] P` under weak fairness, with lassos as counterexamples.

A leads-to property fails when some fair behaviour reaches a trigger state and never
afterwards a goal state. Such a behaviour ends in a strongly connected set of non-goal
states it loops in forever, or in a non-goal state it never leaves. The search therefore
keeps the whole reachable graph (states, and each edge's fairness class from
`Model.fairness`), restricts it to the non-goal states, and looks for

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
a state where it is disabled. A cycle that is unfair is never reported, even if it is
the only cycle that avoids the goal.

An `eventually_always` (persistence, <>[] P) property fails when some fair behaviour
keeps returning to a state where P is false: a fair component of the whole graph that
contains such a state, or a stuttering state where P is false. Its lasso is the shortest
trace to the first such state, then a fair cycle through its component back to it.
(Weak fairness is judged on maximal components: a class enabled in every state of one
and taken in none stays so in every cycle inside it.)

Symmetry and partial-order reduction are not applied here: the graph is explored whole.
"""

from __future__ import annotations

import resource
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import networkx as nx

from checker.errors import ModelError
from checker.model import Model
from checker.properties import Kind, Property
from checker.result import EndReason, PropertyResult, Stats, Verdict
from checker.successors import rebuild_trace
from checker.trace import Trace


class FairnessGraph:
    """The reachable graph: state ids in breadth-first order, edges with their classes.

    Unlike checker/graph.py (a small graph with labels, for drawing) it keeps what a
    liveness judgement needs: each edge's fairness class and move, and parent links for
    traces; a state bound makes the verdict INCOMPLETE instead of refusing.
    """

    def __init__(self, model: Model[Any], max_states: int | None = None) -> None:
        self.model = model
        self.initial = list(model.initial_states())
        self.states: list[Any] = []
        self.index: dict[Any, int] = {}
        self.parent: list[tuple[int, int]] = []  # (parent id, move); (-1, initial position)
        self.depth: list[int] = []  # breadth-first level of each state
        self.edges: list[list[tuple[int, str | None, int]]] = []  # (target, class, move)
        self.end = EndReason.EXHAUSTED
        for position, state in enumerate(self.initial):
            self._add(state, (-1, position))
        done = 0
        while done < len(self.states):
            state = self.states[done]
            out = []
            try:
                successors = list(model.successors(state))
            except Exception as exc:
                trace = self.trace_to(done)
                raise ModelError(
                    f"model raised {type(exc).__name__} in successors after {len(trace)} "
                    f"steps: {exc}",
                    trace,
                ) from exc
            for move, (action, succ) in enumerate(successors):
                target = self.index.get(succ)
                if target is None:
                    if max_states is not None and len(self.states) >= max_states:
                        self.end = EndReason.MAX_STATES
                        return
                    target = self._add(succ, (done, move))
                out.append((target, model.fairness(action), move))
            self.edges.append(out)
            done += 1

    def _add(self, state: Any, parent: tuple[int, int]) -> int:
        found = self.index.get(state)
        if found is not None:
            return found
        self.index[state] = len(self.states)
        self.states.append(state)
        self.parent.append(parent)
        self.depth.append(0 if parent[0] < 0 else self.depth[parent[0]] + 1)
        return len(self.states) - 1

    def moves_to(self, node: int) -> list[int]:
        """The breadth-first moves from an initial state to `node` (initial position first)."""
        moves = []
        while node >= 0:
            parent, move = self.parent[node]
            moves.append(move)
            node = parent
        moves.reverse()
        return moves

    def trace_to(self, node: int) -> Trace:
        return rebuild_trace(self.model, self.initial, self.moves_to(node))

    def enabled(self, node: int) -> set[str]:
        return {c for _, c, _ in self.edges[node] if c is not None}


def check_leads_to(graph: FairnessGraph, prop: Property) -> PropertyResult:
    """The verdict on one LEADS_TO property over an explored graph."""
    assert prop.kind is Kind.LEADS_TO
    states = graph.states
    goal = [bool(prop.predicate(s)) for s in states]
    if prop.trigger is None:
        initial = {graph.index[s] for s in graph.initial}
        trigger = [i in initial for i in range(len(states))]
    else:
        trigger = [bool(prop.trigger(s)) for s in states]
    inside = [not g for g in goal]
    targets, component_of = _fair_targets(graph, inside)
    able = _can_reach(graph, inside, targets)
    start = next((i for i in range(len(states)) if trigger[i] and able[i]), None)
    if start is None:
        if graph.end is not EndReason.EXHAUSTED:
            return PropertyResult(prop, Verdict.INCOMPLETE, None, graph.end.value)
        return PropertyResult(prop, Verdict.HOLDS, None, "holds on every fair behaviour")
    into = _path(graph, start, lambda i: i in targets, lambda i: inside[i])
    entry = into[-1][0] if into else start
    component = component_of.get(entry)
    cycle = [] if component is None else _fair_cycle(graph, entry, component)
    return PropertyResult(prop, Verdict.VIOLATED, *_lasso(graph, prop, start, into, cycle))


def check_persists(graph: FairnessGraph, prop: Property) -> PropertyResult:
    """The verdict on one PERSISTS (eventually always) property over an explored graph."""
    assert prop.kind is Kind.PERSISTS
    everywhere = [True] * len(graph.states)
    targets, component_of = _fair_targets(graph, everywhere)
    bad = [i for i in sorted(targets) if not prop.predicate(graph.states[i])]
    if not bad:
        if graph.end is not EndReason.EXHAUSTED:
            return PropertyResult(prop, Verdict.INCOMPLETE, None, graph.end.value)
        return PropertyResult(prop, Verdict.HOLDS, None, "holds for good on every fair behaviour")
    best: tuple[int, int, list[Edge]] | None = None  # (lasso length, state, cycle)
    for i in bad[:LASSO_CANDIDATES]:
        component = component_of.get(i)
        cycle = [] if component is None else _fair_cycle(graph, i, component)
        if best is None or graph.depth[i] + len(cycle) < best[0]:
            best = (graph.depth[i] + len(cycle), i, cycle)
    assert best is not None
    _, start, cycle = best
    return PropertyResult(prop, Verdict.VIOLATED, *_lasso(graph, prop, start, [], cycle))


# How many of the first failing states (breadth-first) a persistence lasso may start from;
# the shortest lasso among them is reported.
LASSO_CANDIDATES = 64


def _fair_targets(
    graph: FairnessGraph, inside: list[bool]
) -> tuple[set[int], dict[int, frozenset[int]]]:
    """Non-goal states a fair behaviour can stay in forever, and their fair components."""
    targets = {
        i for i in range(len(graph.states)) if inside[i] and not graph.enabled(i)
    }  # stuttering: nothing fair is enabled
    sub = nx.DiGraph()
    sub.add_nodes_from(i for i, ok in enumerate(inside) if ok)
    sub.add_edges_from(
        (i, t) for i, ok in enumerate(inside) if ok for t, _, _ in graph.edges[i] if inside[t]
    )
    component_of: dict[int, frozenset[int]] = {}
    for members in nx.strongly_connected_components(sub):
        nodes = frozenset(members)
        if len(nodes) == 1:
            (only,) = nodes
            if not sub.has_edge(only, only):
                continue
        if _fair(graph, nodes):
            targets |= nodes
            for i in nodes:
                component_of[i] = nodes
    return targets, component_of


def _fair(graph: FairnessGraph, nodes: frozenset[int]) -> bool:
    """Whether a cycle through all of `nodes` can be weakly fair."""
    always_on = set.intersection(*(graph.enabled(i) for i in nodes))
    taken = {c for i in nodes for t, c, _ in graph.edges[i] if t in nodes}
    return always_on <= taken


def _can_reach(graph: FairnessGraph, inside: list[bool], targets: set[int]) -> list[bool]:
    """Per state: whether it reaches a target through non-goal states only."""
    back: list[list[int]] = [[] for _ in graph.states]
    for i, out in enumerate(graph.edges):
        if inside[i]:
            for t, _, _ in out:
                if inside[t]:
                    back[t].append(i)
    able = [False] * len(graph.states)
    queue = deque(sorted(targets))
    for t in queue:
        able[t] = True
    while queue:
        for i in back[queue.popleft()]:
            if not able[i]:
                able[i] = True
                queue.append(i)
    return able


Edge = tuple[int, int]  # (target, move) from the previous node of a path


def _path(
    graph: FairnessGraph, start: int, done: Callable[[int], bool], allowed: Callable[[int], bool]
) -> list[Edge]:
    """The shortest path (first edges first) from `start` to a `done` node through `allowed`."""
    if done(start):
        return []
    seen = {start: (-1, -1, -1)}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for target, _, move in graph.edges[node]:
            if target in seen or not allowed(target):
                continue
            seen[target] = (node, target, move)
            if done(target):
                path = []
                at = target
                while at != start:
                    prev, _, mv = seen[at]
                    path.append((at, mv))
                    at = prev
                return path[::-1]
            queue.append(target)
    raise AssertionError("no path where one was proven to exist")


def _fair_cycle(graph: FairnessGraph, entry: int, nodes: frozenset[int]) -> list[Edge]:
    """A short cycle from `entry` through `nodes` that treats every fairness class fairly.

    Start from a shortest cycle through `entry`; while some class is enabled in every
    state of the cycle and taken by none of its edges, add a detour from `entry` to the
    nearest state where it is disabled or to one of its edges (taken), and back. Each
    detour settles one class for good (enabled everywhere only shrinks as states are
    added, taken only grows), and the component is fair, so such a detour always exists.
    """

    def inside(i: int) -> bool:
        return i in nodes

    def home(i: int) -> bool:
        return i == entry

    cycle: list[Edge] = []
    for target, _, move in graph.edges[entry]:
        if target in nodes:
            candidate = [(target, move), *_path(graph, target, home, inside)]
            if not cycle or len(candidate) < len(cycle):
                cycle = candidate
    while True:
        on_cycle = [entry, *(t for t, _ in cycle)]
        everywhere = set.intersection(*(graph.enabled(i) for i in on_cycle))
        froms = [entry, *(t for t, _ in cycle[:-1])]
        taken = {_class_of(graph, a, m) for a, (_, m) in zip(froms, cycle, strict=True)}
        missing = sorted(everywhere - taken)
        if not missing:
            return cycle
        c = missing[0]

        def ready(i: int, c: str = c) -> bool:
            return c not in graph.enabled(i) or any(
                cc == c and t in nodes for t, cc, _ in graph.edges[i]
            )

        detour = _path(graph, entry, ready, inside)
        at = detour[-1][0] if detour else entry
        if c in graph.enabled(at):
            step = next((t, m) for t, cc, m in graph.edges[at] if cc == c and t in nodes)
            detour.append(step)
            at = step[0]
        cycle = [*detour, *_path(graph, at, home, inside), *cycle]


def _class_of(graph: FairnessGraph, node: int, move: int) -> str | None:
    return next(c for _, c, m in graph.edges[node] if m == move)


def _lasso(
    graph: FairnessGraph, prop: Property, start: int, into: list[Edge], cycle: list[Edge]
) -> tuple[Trace, str]:
    moves = graph.moves_to(start) + [m for _, m in into] + [m for _, m in cycle]
    trace = rebuild_trace(graph.model, graph.initial, moves)
    loop_from = len(trace) - len(cycle)
    lasso = Trace(trace.steps, loop_from)
    steps = "1 step" if len(cycle) == 1 else f"{len(cycle)} steps"
    if prop.kind is Kind.PERSISTS and cycle:
        why = f"a fair cycle of {steps} (from step {loop_from}) back to where it fails"
    elif prop.kind is Kind.PERSISTS:
        why = f"stuck at step {loop_from}, where it fails and no fair action is enabled"
    elif cycle:
        why = f"a fair cycle of {steps} (from step {loop_from}) on which it never comes true"
    else:
        why = f"stuck at step {loop_from}, where no fair action is enabled"
    return lasso, why


def check_liveness(
    model: Model[Any], properties: Sequence[Property], max_states: int | None = None
) -> tuple[list[PropertyResult], Stats]:
    """Explore the whole graph once and judge every liveness property on it."""
    start = time.perf_counter()
    graph = FairnessGraph(model, max_states)
    results = [
        check_persists(graph, p) if p.kind is Kind.PERSISTS else check_leads_to(graph, p)
        for p in properties
    ]
    transitions = sum(len(out) for out in graph.edges)
    stats = Stats(
        distinct_states=len(graph.states),
        generated_states=len(graph.initial) + transitions,
        transitions=transitions,
        depth=max(graph.depth, default=0),
        seconds=time.perf_counter() - start,
        peak_memory_bytes=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
    )
    return results, stats
