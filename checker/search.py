"""Exhaustive breadth-first search: shortest counterexamples and witnesses.

States are checked once, when first discovered; because discovery happens level by
level, the first state found that breaks an invariant (or meets a `sometimes`
claim) lies at the smallest possible depth, so its trace is a shortest one.

Memory: the search keeps only a 60-bit fingerprint of each visited state (a set of
ints, see checker/successors.py), plus, per state, the index of the state it was
discovered from and the position of the action among that state's successors (two
packed arrays). Full states are held only in the queue: the rest of the level being
expanded and the part of the next level discovered so far. A trace is rebuilt by
re-executing the model from an initial state along the stored action positions, as TLC
and Stateright do. Two different states with the same fingerprint would be taken for
one (the chance is about n^2 / 2^61 for n states: about 1e-6 for two million).

With symmetry, the stored states are canonical representatives (checker/symmetry.py);
the rebuilt trace is mapped back to concrete states that replay on the unreduced model.
"""

from __future__ import annotations

import resource
import time
from array import array
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from checker.errors import ModelError
from checker.model import Model
from checker.properties import LIVENESS, Kind, Property
from checker.result import CheckResult, EndReason, Progress, PropertyResult, Stats, Verdict
from checker.successors import (
    FP_MASK,
    KNOWN,
    NO_REDUCTIONS,
    Expander,
    Reductions,
    judge,
    make_expander,
    rebuild_trace,
)
from checker.trace import Trace

S = TypeVar("S")


def check(
    model: Model[S],
    properties: Sequence[Property],
    *,
    max_states: int | None = None,
    max_depth: int | None = None,
    max_memory: int | None = None,
    reductions: Reductions = NO_REDUCTIONS,
    progress: Callable[[Progress], None] | None = None,
) -> CheckResult:
    """Search every state reachable from the model's initial states and judge each property.

    The search stops early once every property is decided (each invariant violated,
    each `sometimes` claim witnessed); otherwise it runs until the reachable set is
    exhausted, a bound is hit (states, depth, or the process's resident memory in
    bytes) or the user interrupts it (Ctrl-C), in which case undecided properties are
    INCOMPLETE. `reductions` may store one state per orbit of the model's declared
    node symmetry (no effect on a model that declares none). `progress`, if given, is
    called every PROGRESS_EVERY new states; it decides itself whether to show anything.
    """

    def safety_search(safety: Sequence[Property]) -> CheckResult:
        search = _Search(model, safety, max_states, max_depth, max_memory, progress)
        search.canonical = reductions.canonical(model)
        search.por = reductions.por
        return search.run()

    return with_liveness(model, properties, max_states, safety_search)


def with_liveness(
    model: Model[S],
    properties: Sequence[Property],
    max_states: int | None,
    safety_search: Callable[[Sequence[Property]], CheckResult],
) -> CheckResult:
    """Judge the liveness properties on the whole fair graph (checker/liveness.py), the
    others with `safety_search`; results in the order given. Every engine goes through
    here, so none mistakes a liveness property for a reachability claim."""
    live = [p for p in properties if p.kind in LIVENESS]
    safety = [p for p in properties if p.kind not in LIVENESS]
    if not live:
        return safety_search(safety)
    from checker.liveness import check_liveness  # noqa: PLC0415 (only when asked for)

    judged, live_stats = check_liveness(model, live, max_states)
    if not safety:
        end = EndReason.EXHAUSTED
        if any(r.verdict is Verdict.INCOMPLETE for r in judged):
            end = EndReason.MAX_STATES
        return CheckResult(tuple(judged), live_stats, end)
    result = safety_search(safety)
    by_name = {r.prop.name: r for r in (*result.results, *judged)}
    return CheckResult(tuple(by_name[p.name] for p in properties), result.stats, result.end)


PROGRESS_EVERY = 2048
NO_PARENT = 0xFFFFFFFF


def resident_memory() -> int:
    """The process's resident memory now, in bytes (its peak where /proc is missing)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * resource.getpagesize()
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class _Search:
    def __init__(
        self,
        model: Model[Any],
        properties: Sequence[Property],
        max_states: int | None,
        max_depth: int | None,
        max_memory: int | None,
        progress: Callable[[Progress], None] | None = None,
    ) -> None:
        self.model = model
        self.progress = progress
        self.start = time.perf_counter()
        self._initial: list[Any] = []
        self.properties = tuple(properties)
        self.max_states = max_states
        self.max_depth = max_depth
        self.max_memory = max_memory
        self.canonical: Callable[[Any], Any] | None = None
        self.por = False
        self.seen: set[int] = set()
        self.parents = array("I")  # per state index: the index it was discovered from
        self.moves = array("I")  # per state index: its position among the parent's successors
        self.found: dict[str, int] = {}  # property name -> index of the state that decided it
        # (name, predicate, whether it is an invariant) of each property not yet decided
        self.undecided = [(p.name, p.predicate, p.kind is Kind.ALWAYS) for p in self.properties]
        self.generated = 0
        self.depth = 0
        self.current = NO_PARENT  # index of the state being expanded, for error traces

    def run(self) -> CheckResult:
        self.start = time.perf_counter()
        try:
            end = self._explore()
        except KeyboardInterrupt:
            end = EndReason.INTERRUPTED
        seconds = time.perf_counter() - self.start
        stats = Stats(
            distinct_states=len(self.parents),
            generated_states=self.generated,
            transitions=self.generated - len(self._initial),
            depth=self.depth,
            seconds=seconds,
            peak_memory_bytes=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        )
        results = tuple(self._judge(p, end) for p in self.properties)
        return CheckResult(results=results, stats=stats, end=end)

    # -- exploration -------------------------------------------------------

    def _add(self, state: Any, parent: int, move: int) -> bool:
        """Record `state` if new; False if it was seen before."""
        fp = hash(state) & FP_MASK
        if fp in self.seen:
            return False
        self.seen.add(fp)
        self.parents.append(parent)
        self.moves.append(move)
        return True

    def _explore(self) -> EndReason:
        initial = self._call(lambda: list(self.model.initial_states()), "initial_states")
        self._initial = initial
        self.generated = len(initial)
        frontier: list[Any] = []
        for move, state in enumerate(initial):
            if self.canonical is not None:
                state = self._call(lambda s=state: self.canonical(s), "permute")  # type: ignore[misc]
            if not self._add(state, NO_PARENT, move):
                continue
            frontier.append(state)
            if self._visit(state, len(self.parents) - 1):
                return EndReason.DECIDED
            if self._stop_bound() is not None:
                return self._stop_bound()  # type: ignore[return-value]
        expand = make_expander(self.model, self.seen, self.canonical, self.por)
        queue = deque(frontier)  # discovered, not yet expanded: the rest of a level, the next
        del frontier
        expanded = 0  # index of the next state to expand (indices follow discovery order)
        level_end = 0  # one past the index of the last state of the level being expanded
        seen, parents, moves = self.seen, self.parents, self.moves
        limit = self.max_states if self.max_states is not None else 1 << 62
        while queue:
            if expanded == level_end:  # a new level starts: the queue holds exactly it
                if self.max_depth is not None and self.depth >= self.max_depth:
                    beyond = self._beyond(queue, expand)
                    return EndReason.MAX_DEPTH if beyond else EndReason.EXHAUSTED
                level_end = len(parents)
            state = queue.popleft()
            self.current = current = expanded
            expanded += 1
            try:
                succs = expand(state)
                self.generated += len(succs)
                for move, succ in enumerate(succs):
                    if succ is None:  # skipped by a reduction
                        self.generated -= 1
                        continue
                    if succ is KNOWN:
                        continue
                    fp = hash(succ) & FP_MASK
                    if fp in seen:
                        continue
                    seen.add(fp)
                    parents.append(current)
                    moves.append(move)
                    queue.append(succ)
                    count = len(parents)
                    if count - 1 == level_end:
                        self.depth += 1
                    if self._visit(succ, count - 1):
                        return EndReason.DECIDED
                    if count % PROGRESS_EVERY == 0:
                        if (bound := self._stop_bound()) is not None:
                            return bound
                        if self.progress:
                            self._report(len(queue))
                    elif count >= limit:
                        return EndReason.MAX_STATES
            except ModelError:
                raise
            except Exception as exc:  # any failure in user code is reported, with its trace
                raise self._model_error(exc, current, "successors") from exc
        return EndReason.EXHAUSTED

    def _stop_bound(self) -> EndReason | None:
        if self.max_states is not None and len(self.parents) >= self.max_states:
            return EndReason.MAX_STATES
        if self.max_memory is not None and resident_memory() >= self.max_memory:
            return EndReason.MAX_MEMORY
        return None

    def _report(self, queue: int) -> None:
        assert self.progress is not None
        elapsed = time.perf_counter() - self.start
        self.progress(Progress(len(self.parents), self.generated, queue, self.depth, elapsed))

    def _beyond(self, frontier: Iterable[Any], expand: Expander) -> bool:
        """Whether any state past the depth bound is new (else the bound cut nothing off)."""
        return any(
            succ is not None and succ is not KNOWN and hash(succ) & FP_MASK not in self.seen
            for state in frontier
            for succ in expand(state)
        )

    def _visit(self, state: Any, index: int) -> bool:
        """Check the undecided properties on a new state; True once all are decided."""
        decided = False
        for name, predicate, invariant in self.undecided:
            try:
                if bool(predicate(state)) is not invariant:  # as `decides` says
                    self.found[name] = index
                    decided = True
            except Exception as exc:
                raise self._model_error(exc, index, name) from exc
        if decided:
            self.undecided = [u for u in self.undecided if u[0] not in self.found]
        return not self.undecided

    def _call(self, fn: Callable[[], Any], what: str) -> Any:
        """Run model code; an exception becomes a ModelError carrying the trace so far."""
        try:
            return fn()
        except ModelError:
            raise
        except Exception as exc:  # any failure in user code is reported, with its trace
            raise self._model_error(exc, self.current, what) from exc

    def _model_error(self, exc: Exception, index: int, what: str) -> ModelError:
        trace = self._trace_to(index) if index != NO_PARENT else None
        where = f" after {len(trace)} steps" if trace is not None else ""
        return ModelError(f"model raised {type(exc).__name__} in {what}{where}: {exc}", trace)

    # -- results -----------------------------------------------------------

    def _judge(self, prop: Property, end: EndReason) -> PropertyResult:
        index = self.found.get(prop.name)
        return judge(prop, None if index is None else self._trace_to(index), end)

    def _trace_to(self, index: int) -> Trace:
        """Rebuild the trace to state `index` by re-executing the model along stored moves."""
        moves = []
        while index != NO_PARENT:
            moves.append(self.moves[index])
            index = self.parents[index]
        moves.reverse()
        return rebuild_trace(self.model, self._initial, moves, self.canonical)
