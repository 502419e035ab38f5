"""The fair-cycle judgement of a recorded fairness graph (checker/engine/liveness.py says what
is judged and why): strongly connected components, fair components, lassos.

Its own module because it needs numpy and scipy, which take a quarter of a second to
import: a command that judges no liveness property never loads them.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import breadth_first_order, connected_components

from leadercheck.checker.engine.liveness import LASSO_CANDIDATES, UNFAIR, FairnessGraph
from leadercheck.checker.engine.successors import purpose_of, verify_trace
from leadercheck.checker.errors import ModelError
from leadercheck.checker.properties import Kind, Property
from leadercheck.checker.result import EndReason, PropertyResult, Verdict
from leadercheck.checker.trace import Trace


class Judge:
    """Judges liveness properties on a recorded graph; `trace_of(moves, purpose)` rebuilds
    traces (`purpose` names the trace in the error when it cannot be rebuilt).

    `moves_to(i)` gives the breadth-first moves from an initial state to state i
    (initial position first); `depth(i)` its level.
    """

    def __init__(
        self,
        graph: FairnessGraph,
        moves_to: Callable[[int], list[int]],
        trace_of: Callable[[list[int], str], Trace],
        depth: Callable[[int], int],
        end: EndReason,
        who: str = "the model",
    ) -> None:
        self.g = graph
        self.who = who  # the model, as a message names it
        self.moves_to = moves_to
        self.trace_of = trace_of
        self.depth = depth
        self.end = end
        n, m = graph.states, graph.expanded_count
        self.n = n
        self.expanded_mask = np.zeros(n, dtype=bool)
        self.expanded_mask[:m] = True
        # 32-bit views of the packed arrays (no copies but `src`): a graph costs its edges
        degrees = np.diff(np.frombuffer(graph.offsets, dtype=np.uint64)).astype(np.int32)
        self.src = np.repeat(np.arange(m, dtype=np.int32), degrees)
        del degrees
        self.dst = np.frombuffer(graph.targets, dtype=np.uint32).view(np.int32)
        self.cls = np.frombuffer(graph.classes, dtype=np.uint32).view(np.int32)
        fair = self.cls != UNFAIR
        # (state, class) pairs: which fair classes each expanded state enables
        names = len(graph.class_names)
        pairs = np.unique(self.src[fair].astype(np.int64) * names + self.cls[fair])
        del fair
        self.enabled_state = (pairs // names).astype(np.int32)
        self.enabled_class = (pairs % names).astype(np.int32)
        del pairs
        self.enabled_count = np.bincount(self.enabled_state, minlength=n)

    def judge(self, prop: Property, index: int) -> PropertyResult:
        if prop.kind is Kind.PERSISTS:
            return self._persists(prop, index)
        return self._leads_to(prop, index)

    # -- the two kinds -----------------------------------------------------------

    def _leads_to(self, prop: Property, k: int) -> PropertyResult:
        goal = np.frombuffer(bytes(self.g.goal[k]), dtype=np.uint8).astype(bool)
        trigger = np.frombuffer(bytes(self.g.trigger[k]), dtype=np.uint8).astype(bool)
        inside = ~goal & self.expanded_mask
        targets, label = self._fair_targets(inside)
        able = self._can_reach(inside, targets)
        starts = np.flatnonzero(trigger & able)
        if not len(starts):
            return self._no_lasso(prop, "holds on every fair behaviour")
        start = int(starts[0])
        into = self._path(start, lambda i: bool(targets[i]), inside)
        entry = into[-1][0] if into else start
        cycle = self._fair_cycle(entry, label, inside) if self._in_component(entry, label) else []
        return PropertyResult(prop, Verdict.VIOLATED, *self._lasso(prop, start, into, cycle))

    def _persists(self, prop: Property, k: int) -> PropertyResult:
        goal = np.frombuffer(bytes(self.g.goal[k]), dtype=np.uint8).astype(bool)
        inside = self.expanded_mask.copy()
        targets, label = self._fair_targets(inside)
        bad = np.flatnonzero(targets & ~goal)[:LASSO_CANDIDATES]
        if not len(bad):
            return self._no_lasso(prop, "holds for good on every fair behaviour")
        best: tuple[int, int, list[Edge]] | None = None
        for i in map(int, bad):
            cycle = self._fair_cycle(i, label, inside) if self._in_component(i, label) else []
            if best is None or self.depth(i) + len(cycle) < best[0]:
                best = (self.depth(i) + len(cycle), i, cycle)
        assert best is not None
        _, start, cycle = best
        return PropertyResult(prop, Verdict.VIOLATED, *self._lasso(prop, start, [], cycle))

    def _no_lasso(self, prop: Property, holds: str) -> PropertyResult:
        if self.end is not EndReason.EXHAUSTED:
            return PropertyResult(prop, Verdict.INCOMPLETE, None, self.end.value)
        return PropertyResult(prop, Verdict.HOLDS, None, holds)

    # -- components ------------------------------------------------------------

    def _fair_targets(self, inside: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """States a fair behaviour can stay in forever (inside), and component labels
        (-1 for a state in no fair component)."""
        n, names = self.n, len(self.g.class_names)
        keep = inside[self.src] & inside[self.dst]
        src, dst, cls = self.src[keep], self.dst[keep], self.cls[keep]
        matrix = csr_matrix((np.ones(len(src), dtype=np.int8), (src, dst)), shape=(n, n))
        _, labels = connected_components(matrix, directed=True, connection="strong")
        del matrix
        sizes = np.bincount(labels, minlength=n)
        looped = np.zeros(n, dtype=bool)
        looped[labels[src[src == dst]]] = True
        cyclic = (sizes > 1) | looped  # per component label
        # fair: every class enabled in all of a component's states is taken inside it
        labels = labels.astype(np.int64)
        comp_of_pair = labels[self.enabled_state]
        pair = np.unique(comp_of_pair * names + self.enabled_class, return_counts=True)
        del comp_of_pair
        always_on = pair[0][pair[1] == sizes[pair[0] // names]]
        internal = labels[src] == labels[dst]
        taken = np.unique(labels[src[internal]] * names + cls[internal])
        del src, dst, cls, internal
        missing = np.setdiff1d(always_on, taken, assume_unique=True) // names
        fair = cyclic.copy()
        fair[missing] = False
        in_fair = fair[labels] & inside
        stutter = inside & (self.enabled_count == 0)
        label = np.where(in_fair, labels, -1)
        return in_fair | stutter, label

    def _in_component(self, i: int, label: np.ndarray) -> bool:
        return bool(label[i] >= 0)

    def _can_reach(self, inside: np.ndarray, targets: np.ndarray) -> np.ndarray:
        """Per state: whether it reaches a target through `inside` states only."""
        n = self.n
        keep = inside[self.src] & inside[self.dst]
        # reversed edges, plus a virtual root n pointing at every target
        tgt = np.flatnonzero(targets).astype(np.int32)
        rows = np.concatenate([self.dst[keep], np.full(len(tgt), n, dtype=np.int32)])
        cols = np.concatenate([self.src[keep], tgt])
        back = csr_matrix((np.ones(len(rows), dtype=np.int8), (rows, cols)), shape=(n + 1, n + 1))
        order = breadth_first_order(back, n, directed=True, return_predecessors=False)
        able = np.zeros(n + 1, dtype=bool)
        able[order] = True
        return able[:n]

    # -- paths and cycles ------------------------------------------------------

    def _path(self, start: int, done: Callable[[int], bool], inside: np.ndarray) -> list[Edge]:
        """The shortest path (first edges first) from `start` to a `done` node via `inside`."""
        if done(start):
            return []
        g = self.g
        seen = {start: (-1, -1)}
        queue = deque([start])
        while queue:
            node = queue.popleft()
            first = g.offsets[node]
            for e in g.out(node):
                target = g.targets[e]
                if target in seen or not inside[target]:
                    continue
                seen[target] = (node, e - first)
                if done(target):
                    path = []
                    at = target
                    while at != start:
                        prev, move = seen[at]
                        path.append((at, move))
                        at = prev
                    return path[::-1]
                queue.append(target)
        raise AssertionError("no path where one was proven to exist")

    def _enabled(self, i: int) -> set[int]:
        g = self.g
        return {g.classes[e] for e in g.out(i)} - {UNFAIR}

    def _fair_cycle(self, entry: int, label: np.ndarray, inside: np.ndarray) -> list[Edge]:
        """A short cycle from `entry` through its component that treats every class fairly.

        Start from a shortest cycle through `entry`; while some class is enabled in every
        state of the cycle and taken by none of its edges, add a detour from `entry` to the
        nearest state where it is disabled or to one of its edges (taken), and back. Each
        detour settles one class for good, and the component is fair, so one exists.
        """
        g = self.g
        comp = label[entry]
        members = (label == comp) & inside

        def home(i: int) -> bool:
            return i == entry

        cycle: list[Edge] = []
        first = g.offsets[entry]
        for e in g.out(entry):
            target = g.targets[e]
            if members[target]:
                candidate = [(target, e - first), *self._path(target, home, members)]
                if not cycle or len(candidate) < len(cycle):
                    cycle = candidate
        while True:
            on_cycle = [entry, *(t for t, _ in cycle)]
            everywhere = set.intersection(*(self._enabled(i) for i in on_cycle))
            froms = [entry, *(t for t, _ in cycle[:-1])]
            taken = {g.classes[g.offsets[a] + m] for a, (_, m) in zip(froms, cycle, strict=True)}
            # in the order of the classes' names, so the lasso does not depend on ids
            missing = sorted(everywhere - taken, key=lambda c: str(g.class_names[c]))
            if not missing:
                return cycle
            c = missing[0]

            def ready(i: int, c: int = c) -> bool:
                return c not in self._enabled(i) or any(
                    g.classes[e] == c and members[g.targets[e]] for e in g.out(i)
                )

            detour = self._path(entry, ready, members)
            at = detour[-1][0] if detour else entry
            if c in self._enabled(at):
                e = next(e for e in g.out(at) if g.classes[e] == c and members[g.targets[e]])
                detour.append((g.targets[e], e - g.offsets[at]))
                at = g.targets[e]
            cycle = [*detour, *self._path(at, home, members), *cycle]

    def _lasso(
        self, prop: Property, start: int, into: list[Edge], cycle: list[Edge]
    ) -> tuple[Trace, str]:
        moves = self.moves_to(start) + [m for _, m in into] + [m for _, m in cycle]
        trace = self.trace_of(moves, purpose_of(prop))
        loop_from = len(trace) - len(cycle)
        lasso = Trace(trace.steps, loop_from)
        verify_trace(prop, lasso, self.who)  # it really loops back
        steps = "1 step" if len(cycle) == 1 else f"{len(cycle)} steps"
        if prop.kind is Kind.PERSISTS and cycle:
            why = f"a fair cycle of {steps} (from step {loop_from}) back to where it fails"
        elif prop.kind is Kind.PERSISTS:
            why = f"stuck at step {loop_from}, where it fails and no fair action is enabled"
        elif cycle:
            why = f"a fair cycle of {steps} (from step {loop_from}) on which it never comes true"
        else:
            why = f"stuck at step {loop_from}, where no fair action is enabled"
        if prop.kind is Kind.LEADS_TO and prop.explain is not None:  # why, in the model's terms
            try:
                why += f": {prop.explain(lasso.steps[loop_from].state)}"
            except Exception as exc:
                raise ModelError(
                    f"{self.who}: the explanation of {prop.name} raised {type(exc).__name__}: "
                    f"{exc}",
                    lasso,
                ) from exc
        return lasso, why


Edge = tuple[int, int]  # (target, move) from the previous node of a path
