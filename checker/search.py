"""Exhaustive breadth-first search: shortest counterexamples and witnesses.

States are checked once, when first discovered; because discovery happens level by
level, the first state found that breaks an invariant (or meets a `sometimes`
claim) lies at the smallest possible depth, so its trace is a shortest one. Each
state keeps only a link to the state it was discovered from; the actions along a
trace are recovered by re-running the model's successor function.
"""

from __future__ import annotations

import resource
import time
from collections.abc import Callable, Sequence
from itertools import pairwise
from typing import Any, TypeVar

from checker.errors import ModelError
from checker.model import Model
from checker.properties import Kind, Property
from checker.result import CheckResult, EndReason, Progress, PropertyResult, Stats, Verdict
from checker.trace import Step, Trace

S = TypeVar("S")


def check(
    model: Model[S],
    properties: Sequence[Property],
    *,
    max_states: int | None = None,
    max_depth: int | None = None,
    progress: Callable[[Progress], None] | None = None,
) -> CheckResult:
    """Search every state reachable from the model's initial states and judge each property.

    The search stops early once every property is decided (each invariant violated,
    each `sometimes` claim witnessed); otherwise it runs until the reachable set is
    exhausted, a bound is hit or the user interrupts it (Ctrl-C), in which case
    undecided properties are INCOMPLETE. `progress`, if given, is called every
    PROGRESS_EVERY new states; it decides itself whether to show anything.
    """
    return _Search(model, properties, max_states, max_depth, progress).run()


PROGRESS_EVERY = 2048


class _Search:
    def __init__(
        self,
        model: Model[Any],
        properties: Sequence[Property],
        max_states: int | None,
        max_depth: int | None,
        progress: Callable[[Progress], None] | None = None,
    ) -> None:
        self.model = model
        self.progress = progress
        self.start = time.perf_counter()
        self._initial_count = 0
        self.properties = tuple(properties)
        self.max_states = max_states
        self.max_depth = max_depth
        self.parent: dict[Any, Any] = {}
        self.found: dict[str, Any] = {}  # property name -> the state that decided it
        self.generated = 0
        self.depth = 0

    def run(self) -> CheckResult:
        self.start = time.perf_counter()
        try:
            end = self._explore()
        except KeyboardInterrupt:
            end = EndReason.INTERRUPTED
        seconds = time.perf_counter() - self.start
        stats = Stats(
            distinct_states=len(self.parent),
            generated_states=self.generated,
            transitions=self.generated - self._initial_count,
            depth=self.depth,
            seconds=seconds,
            peak_memory_bytes=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        )
        results = tuple(self._judge(p, end) for p in self.properties)
        return CheckResult(results=results, stats=stats, end=end)

    # -- exploration -------------------------------------------------------

    def _explore(self) -> EndReason:
        initial = self._call(lambda: list(self.model.initial_states()), None, "initial_states")
        self._initial_count = len(initial)
        self.generated = len(initial)
        frontier: list[Any] = []
        for state in initial:
            if state in self.parent:
                continue
            self.parent[state] = None
            frontier.append(state)
            if self._visit(state):
                return EndReason.DECIDED
            if self._full():
                return EndReason.MAX_STATES
        while frontier:
            if self.max_depth is not None and self.depth >= self.max_depth:
                return EndReason.MAX_DEPTH if self._beyond(frontier) else EndReason.EXHAUSTED
            next_frontier: list[Any] = []
            for done, state in enumerate(frontier):
                for _, succ in self._successors(state):
                    self.generated += 1
                    if succ in self.parent:
                        continue
                    self.parent[succ] = state
                    next_frontier.append(succ)
                    if len(next_frontier) == 1:
                        self.depth += 1
                    if self._visit(succ):
                        return EndReason.DECIDED
                    if self._full():
                        return EndReason.MAX_STATES
                    if self.progress and len(self.parent) % PROGRESS_EVERY == 0:
                        queue = len(frontier) - done - 1 + len(next_frontier)
                        self._report(queue)
            frontier = next_frontier
        return EndReason.EXHAUSTED

    def _report(self, queue: int) -> None:
        assert self.progress is not None
        elapsed = time.perf_counter() - self.start
        self.progress(Progress(len(self.parent), self.generated, queue, self.depth, elapsed))

    def _beyond(self, frontier: list[Any]) -> bool:
        """Whether any state past the depth bound is new (else the bound cut nothing off)."""
        return any(
            succ not in self.parent for state in frontier for _, succ in self._successors(state)
        )

    def _full(self) -> bool:
        return self.max_states is not None and len(self.parent) >= self.max_states

    def _visit(self, state: Any) -> bool:
        """Check the undecided properties on a new state; True once all are decided."""
        for prop in self.properties:
            if prop.name in self.found:
                continue
            try:
                holds = bool(prop.predicate(state))
            except Exception as exc:
                raise self._model_error(exc, state, prop.name) from exc
            if holds != (prop.kind is Kind.ALWAYS):
                self.found[prop.name] = state
        return len(self.found) == len(self.properties)

    def _successors(self, state: Any) -> list[tuple[Any, Any]]:
        return self._call(lambda: list(self.model.successors(state)), state, "successors")

    def _call(self, fn: Callable[[], Any], state: Any, what: str) -> Any:
        """Run model code; an exception becomes a ModelError carrying the trace to `state`."""
        try:
            return fn()
        except ModelError:
            raise
        except Exception as exc:  # any failure in user code is reported, with its trace
            raise self._model_error(exc, state, what) from exc

    def _model_error(self, exc: Exception, state: Any, what: str) -> ModelError:
        trace = self._trace_to(state) if state is not None else None
        where = f" after {len(trace)} steps" if trace is not None else ""
        return ModelError(f"model raised {type(exc).__name__} in {what}{where}: {exc}", trace)

    # -- results -----------------------------------------------------------

    def _judge(self, prop: Property, end: EndReason) -> PropertyResult:
        state = self.found.get(prop.name)
        complete = end in (EndReason.EXHAUSTED, EndReason.DECIDED)
        if prop.kind is Kind.ALWAYS:
            if state is not None:
                return PropertyResult(
                    prop, Verdict.VIOLATED, self._trace_to(state), prop.why(state)
                )
            if complete:
                return PropertyResult(prop, Verdict.HOLDS, None, "holds in every reachable state")
        else:
            if state is not None:
                return PropertyResult(prop, Verdict.HOLDS, self._trace_to(state), prop.why(state))
            if complete:
                return PropertyResult(
                    prop, Verdict.VIOLATED, None, "no reachable state satisfies it"
                )
        return PropertyResult(prop, Verdict.INCOMPLETE, None, end.value)

    def _trace_to(self, state: Any) -> Trace:
        """Rebuild the trace to `state` from parent links, recovering each action by replay."""
        path = [state]
        while (prev := self.parent.get(path[-1])) is not None:
            path.append(prev)
        path.reverse()
        steps = [self._step(0, None, path[0])]
        for index, (before, after) in enumerate(pairwise(path), start=1):
            action = next(a for a, s in self.model.successors(before) if s == after)
            steps.append(self._step(index, action, after))
        return Trace(tuple(steps))

    def _step(self, index: int, action: Any, state: Any) -> Step:
        return Step(index, action, self.model.describe(state), self.model.summary(state), state)
