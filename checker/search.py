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
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from leadercheck.checker.checkpoint import Checkpoints
from leadercheck.checker.engine.values import Misuse, ValueCheck, reached, unhashable_in
from leadercheck.checker.errors import LeadercheckError, ModelError
from leadercheck.checker.guard import check_initial, model_name
from leadercheck.checker.liveness import FairnessGraph, level_of
from leadercheck.checker.model import Model
from leadercheck.checker.observers import ClaimRaised, StateClaims
from leadercheck.checker.properties import LIVENESS, Property
from leadercheck.checker.result import (
    CheckResult,
    EndReason,
    Phase,
    Progress,
    PropertyResult,
    Stats,
    Verdict,
)
from leadercheck.checker.successors import (
    FP_MASK,
    NO_REDUCTIONS,
    Expander,
    Reductions,
    extend_trace,
    judge,
    make_expander,
    purpose_of,
    rebuild_trace,
    store_key,
)
from leadercheck.checker.trace import Trace

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
    checkpoints: Checkpoints | None = None,
) -> CheckResult:
    """Search every state reachable from the model's initial states and judge each property.

    The search stops early once every property is decided (each invariant violated,
    each `sometimes` claim witnessed); otherwise it runs until the reachable set is
    exhausted, a bound is hit (states, depth, or the process's resident memory in
    bytes) or the user interrupts it (Ctrl-C), in which case undecided properties are
    INCOMPLETE. `reductions` may store one state per orbit of the model's declared
    node symmetry (no effect on a model that declares none). `progress`, if given, is
    called every PROGRESS_EVERY new states; it decides itself whether to show anything.

    Liveness properties are judged on the fairness graph that the same exploration
    records (checker/liveness.py). Under a reduction the graph would be the reduced
    one, which does not keep fair cycles, so the reduced search judges the other
    properties and a second, unreduced exploration the liveness ones (with a note).
    """
    bounds = Bounds(max_states, max_depth, max_memory, progress, checkpoints)
    exact = reductions.exact
    if not reductions.symmetry and not reductions.por:
        return _Search(model, properties, bounds, exact).run()
    if checkpoints is not None and any(p.kind in LIVENESS for p in properties):
        raise LeadercheckError(
            "--checkpoint with --symmetry or --por needs a protocol without liveness claims "
            "(its check is then two searches)"
        )

    def reduced_search(safety: Sequence[Property]) -> CheckResult:
        search = _Search(model, safety, bounds, exact)
        search.canonical = reductions.canonical(model)
        search.por = reductions.por
        return search.run()

    why = "symmetry and partial-order reduction do not keep fair cycles"
    return with_liveness(model, properties, bounds, reduced_search, why, exact)


@dataclass(frozen=True)
class Bounds:
    """What may stop a search early, whom to tell how it goes, and where it saves its
    progress so that it can go on later (checker/checkpoint.py)."""

    max_states: int | None = None
    max_depth: int | None = None
    max_memory: int | None = None
    progress: Callable[[Progress], None] | None = None
    checkpoints: Checkpoints | None = None

    def as_kwargs(self) -> dict[str, Any]:
        """The bounds as the keyword arguments of `check()`."""
        return {
            "max_states": self.max_states,
            "max_depth": self.max_depth,
            "max_memory": self.max_memory,
            "progress": self.progress,
            "checkpoints": self.checkpoints,
        }


NO_BOUNDS = Bounds()


def with_liveness(
    model: Model[S],
    properties: Sequence[Property],
    bounds: Bounds,
    first_search: Callable[[Sequence[Property]], CheckResult],
    why: str,
    exact: bool = False,
) -> CheckResult:
    """Judge the safety properties with `first_search` (reduced, or over workers), then
    the liveness ones on an unreduced one-process exploration; results in the order given.

    `why` says why the first search cannot judge liveness; the result carries it as a
    note. Ctrl-C in the first search ends the check (the liveness phase does not start).
    """
    live = [p for p in properties if p.kind in LIVENESS]
    safety = [p for p in properties if p.kind not in LIVENESS]
    if not live:
        return first_search(safety)
    first = first_search(safety) if safety else None
    note = f"liveness judged by a second search, unreduced and in one process: {why}"
    if first is not None and first.end is EndReason.INTERRUPTED:
        skipped = [PropertyResult(p, Verdict.INCOMPLETE, None, "interrupted") for p in live]
        return _merge(properties, [first], skipped, first.end, note)
    second = _Search(model, live, bounds, exact).run()
    end = second.end
    if first is not None and first.end not in (EndReason.EXHAUSTED, EndReason.DECIDED):
        end = first.end
    runs = [first, second] if first is not None else [second]
    return _merge(properties, runs, [], end, note)


def _merge(
    properties: Sequence[Property],
    runs: Sequence[CheckResult],
    extra: Sequence[PropertyResult],
    end: EndReason,
    note: str,
) -> CheckResult:
    by_name = {r.prop.name: r for run in runs for r in run.results}
    by_name.update({r.prop.name: r for r in extra})
    # the headline counts are the largest exploration's: with liveness that is the whole
    # graph, which the one-process search explores too (every phase is listed beside it)
    main = max((run.stats for run in runs), key=lambda st: st.distinct_states)
    phases = tuple(ph for run in runs for ph in (run.stats.phases or _as_phases(run)))
    stats = replace(
        main,
        seconds=sum(run.stats.seconds for run in runs),
        peak_memory_bytes=max(run.stats.peak_memory_bytes for run in runs),
        phases=phases,
    )
    notes = tuple(n for run in runs for n in run.notes) + (note,)
    return CheckResult(tuple(by_name[p.name] for p in properties), stats, end, notes)


def _as_phases(run: CheckResult) -> tuple[Phase, ...]:
    s = run.stats
    return (
        Phase("search", s.distinct_states, s.transitions, s.seconds, s.peak_memory_bytes, run.end),
    )


PROGRESS_EVERY = 2048
HASH_DIFFERS = (
    "--resume: this process hashes states differently from the one that wrote the "
    "checkpoint, so its fingerprints cannot be trusted; `verify` pins hashing itself "
    "(PYTHONHASHSEED=0, and setarch -R before Python 3.12): resume with the same command"
)
NO_PARENT = 0xFFFFFFFF


def resident_memory() -> int:
    """The process's resident memory now, in bytes (its peak where /proc is missing)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * resource.getpagesize()
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class _Search:
    """One breadth-first exploration: the store (fingerprints, parent index and move per
    state), the frontier, and the observers (the properties still undecided, and the
    fairness graph when liveness properties are judged)."""

    def __init__(
        self,
        model: Model[Any],
        properties: Sequence[Property],
        bounds: Bounds,
        exact: bool = False,
    ) -> None:
        self.model = model
        self.exact = exact  # the store keeps full states instead of fingerprints
        self.key = store_key(exact)  # (the hot loops inline it)
        self.checkpoints = bounds.checkpoints
        self.bounds = bounds
        self.progress = bounds.progress
        self.start = time.perf_counter()
        self._initial: list[Any] = []
        self.properties = tuple(properties)
        self.max_states = bounds.max_states
        self.max_depth = bounds.max_depth
        self.max_memory = bounds.max_memory
        self.canonical: Callable[[Any], Any] | None = None
        self.por = False
        self.seen: set[Any] = set()  # fingerprints, or the states themselves when exact
        self.index: dict[Any, int] = {}  # the liveness search's store: key -> state index
        self.parents = array("I")  # per state index: the index it was discovered from
        self.moves = array("I")  # per state index: its position among the parent's successors
        self.levels = array("I", [0])  # the first index of each breadth-first level
        # the state properties still undecided; `found` maps each decided one's name to
        # the index of the state that decided it
        self.claims = StateClaims(self.properties)
        self.found: dict[str, int] = self.claims.found
        live = [p for p in self.properties if p.kind in LIVENESS]
        self.graph = FairnessGraph(live) if live else None
        self.generated = 0
        self.depth = 0
        self.current = NO_PARENT  # index of the state being expanded, for error traces
        self.values = ValueCheck(model_name(model))

    def run(self) -> CheckResult:
        self.start = time.perf_counter()
        try:
            end = self._explore()
        except KeyboardInterrupt:
            end = EndReason.INTERRUPTED
        seconds = time.perf_counter() - self.start
        peak = peak_memory()
        stats = Stats(
            distinct_states=len(self.parents),
            generated_states=self.generated,
            transitions=self.generated - len(self._initial),
            depth=self.depth,
            seconds=seconds,
            peak_memory_bytes=peak,
            exact=self.exact,
        )
        results = [self._judge(p, end) for p in self.properties if p.kind not in LIVENESS]
        notes = self._checkpoint_notes()
        if self.graph is None:
            return CheckResult(results=tuple(results), stats=stats, end=end, notes=notes)
        search = Phase("search", stats.distinct_states, stats.transitions, seconds, peak, end)
        live, phase, end = self._judge_liveness(end)
        by_name = {r.prop.name: r for r in (*results, *live)}
        stats = replace(
            stats,
            seconds=seconds + phase.seconds,
            peak_memory_bytes=peak_memory(),
            phases=(search, phase),
        )
        return CheckResult(tuple(by_name[p.name] for p in self.properties), stats, end, notes)

    # -- exploration -------------------------------------------------------

    def _add(self, state: Any, parent: int, move: int) -> bool:
        """Record `state` if new; False if it was seen before."""
        fp = self.key(state)
        if fp in self.seen:
            return False
        self.seen.add(fp)
        self.parents.append(parent)
        self.moves.append(move)
        return True

    def _explore(self) -> EndReason:
        # checked, cheaply: a list, a bare state or an identity-hashed one is a ModelError
        initial = self._call(lambda: check_initial(self.model), "initial_states")
        self._initial = initial
        self.generated = len(initial)
        cp = self.checkpoints
        saved = cp.load() if cp is not None and cp.resume_from is not None else None
        if self.graph is not None:
            return self._explore_graph(initial, self.graph, saved)
        if saved is not None:
            queue, expanded = self._restore(saved, self.seen)
            return self._search(queue, expanded)
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
        return self._search(deque(frontier), 0)

    def _search(self, queue: deque[Any], expanded: int) -> EndReason:
        """Breadth-first from `queue` (discovered, not yet expanded: the rest of a level,
        then the next), whose first state has index `expanded`, at a level's start."""
        expand = make_expander(self.model, self.seen, self.canonical, self.por, self.exact)
        values, stored = self.values, self.values.stored
        level_end = expanded  # one past the index of the last state of the level being expanded
        seen, parents, moves, exact = self.seen, self.parents, self.moves, self.exact
        limit = self.max_states if self.max_states is not None else 1 << 62
        while queue:
            if expanded == level_end:  # a new level starts: the queue holds exactly it
                if self.checkpoints is not None and self.checkpoints.due():
                    self._save(queue, expanded, self.seen)
                if self.max_depth is not None and self.depth >= self.max_depth:
                    beyond = self._beyond(queue, expand)
                    return EndReason.MAX_DEPTH if beyond else EndReason.EXHAUSTED
                level_end = len(parents)
            state = queue.popleft()
            self.current = current = expanded
            expanded += 1
            try:
                before = hash(state)  # every state checked: still the value it was stored as
                if (state if exact else before & FP_MASK) not in seen:
                    raise values.changed_in_store(state)
                generated, candidates = expand(state)
                self.generated += generated
                for move, succ in candidates:
                    fp = succ if exact else hash(succ) & FP_MASK
                    if fp in seen:
                        continue
                    try:  # every new state checked: a value, nothing compared by identity
                        stored(succ, state)
                    except Misuse as exc:
                        raise self._misuse(exc, current, move) from None
                    seen.add(fp)
                    parents.append(current)
                    moves.append(move)
                    queue.append(succ)
                    count = len(parents)
                    if count - 1 == level_end:
                        self.depth += 1
                        self.levels.append(level_end)
                    if self._visit(succ, count - 1):
                        return EndReason.DECIDED
                    if count % PROGRESS_EVERY == 0:
                        if (bound := self._stop_bound()) is not None:
                            return bound
                        if self.progress:
                            self._report(len(queue))
                    elif count >= limit:
                        return EndReason.MAX_STATES
                if hash(state) != before:
                    values.unchanged(state, before)
            except Misuse as exc:
                raise self._misuse(exc, current) from None
            except ModelError:
                raise
            except Exception as exc:  # any failure in user code is reported, with its trace
                raise self._model_error(exc, current, "successors") from exc
        return EndReason.EXHAUSTED

    def _explore_graph(
        self, initial: list[Any], graph: FairnessGraph, saved: dict[str, Any] | None
    ) -> EndReason:
        """The same search, recording every edge with its fairness class for liveness.

        Deciding every state property does not stop it (liveness needs the whole graph),
        and the store maps each fingerprint to its index, since an edge may lead back to
        any state. A state counts as expanded once all its edges are recorded.
        """
        index = self.index  # fingerprint (or state, when exact) -> index
        parents, moves, exact = self.parents, self.moves, self.exact
        queue: deque[Any] = deque()
        expanded = 0
        if saved is not None:
            queue, expanded = self._restore(saved, index)
            initial = []  # already in the store
        for move, state in enumerate(initial):
            fp = self.key(state)
            if fp in index:
                continue
            index[fp] = len(parents)
            parents.append(NO_PARENT)
            moves.append(move)
            queue.append(state)
            self._observe(state, len(parents) - 1, graph, True)
            if (bound := self._stop_bound()) is not None:
                return bound
        successors, fairness, class_id = self.model.successors, self.model.fairness, graph.class_id
        values, stored = self.values, self.values.stored
        level_end = expanded
        limit = self.max_states if self.max_states is not None else 1 << 62
        while queue:
            if expanded == level_end:
                if self.checkpoints is not None and self.checkpoints.due():
                    self._save(queue, expanded, index)
                if self.max_depth is not None and self.depth >= self.max_depth:
                    beyond = any(
                        self.key(succ) not in index
                        for state in queue
                        for _, succ in successors(state)
                    )
                    return EndReason.MAX_DEPTH if beyond else EndReason.EXHAUSTED
                level_end = len(parents)
            state = queue.popleft()
            self.current = current = expanded
            targets: list[int] = []
            classes: list[int] = []
            try:
                before = hash(state)  # every state checked: still the value it was stored as
                if (state if exact else before & FP_MASK) not in index:
                    raise values.changed_in_store(state)
                for move, (action, succ) in enumerate(successors(state)):
                    self.generated += 1
                    fp = succ if exact else hash(succ) & FP_MASK
                    target = index.get(fp)
                    if target is None:
                        target = count = len(parents)
                        if count >= limit:
                            return EndReason.MAX_STATES
                        try:  # every new state checked: a value, nothing compared by identity
                            stored(succ, state)
                        except Misuse as exc:
                            raise self._misuse(exc, current, move) from None
                        index[fp] = count
                        parents.append(current)
                        moves.append(move)
                        queue.append(succ)
                        if count == level_end:
                            self.depth += 1
                            self.levels.append(level_end)
                        self._observe(succ, count, graph, False)
                        if (count + 1) % PROGRESS_EVERY == 0:
                            if (bound := self._stop_bound()) is not None:
                                return bound
                            if self.progress:
                                self._report(len(queue))
                    targets.append(target)
                    classes.append(class_id(fairness(action)))
                if hash(state) != before:
                    values.unchanged(state, before)
            except Misuse as exc:
                raise self._misuse(exc, current) from None
            except ModelError:
                raise
            except Exception as exc:  # any failure in user code is reported, with its trace
                raise self._model_error(exc, current, "successors") from exc
            graph.expanded(targets, classes)
            expanded += 1
        return EndReason.EXHAUSTED

    # -- checkpoints -------------------------------------------------------

    GRAPH_FIELDS = ("goal", "trigger", "offsets", "targets", "classes", "class_ids", "class_names")

    def _save(self, queue: deque[Any], expanded: int, store: Any) -> None:
        """A checkpoint at a level's start: `store` is the fingerprint set (or the index)."""
        assert self.checkpoints is not None
        graph = self.graph
        self.checkpoints.save(
            {
                "store": store,
                "parents": self.parents,
                "moves": self.moves,
                "levels": self.levels,
                "depth": self.depth,
                "generated": self.generated,
                "found": self.found,
                "queue": list(queue),
                "expanded": expanded,
                "seconds": time.perf_counter() - self.start,
                "graph": None
                if graph is None
                else {
                    "initial_count": graph.initial_count,
                    **{name: getattr(graph, name) for name in self.GRAPH_FIELDS},
                },
            }
        )

    def _restore(self, saved: dict[str, Any], store: Any) -> tuple[deque[Any], int]:
        """Fill the store from a checkpoint; the queue and the index it resumes at."""
        store.update(saved["store"])
        for mine, theirs in zip(
            (self.parents, self.moves, self.levels),
            (saved["parents"], saved["moves"], saved["levels"]),
            strict=True,
        ):
            del mine[:]  # in place: the exploration loops hold these arrays
            mine.extend(theirs)
        self.depth, self.generated = saved["depth"], saved["generated"]
        self.start -= saved["seconds"]  # the seconds reported are those of the whole search
        self.found.update(saved["found"])
        self.claims.drop(list(self.found))
        if any(self.key(state) not in store for state in saved["queue"][:64]):
            raise LeadercheckError(HASH_DIFFERS)
        if self.graph is not None:
            graph = saved["graph"]
            self.graph.initial_count = graph["initial_count"]
            for name in self.GRAPH_FIELDS:
                setattr(self.graph, name, graph[name])
        return deque(saved["queue"]), saved["expanded"]

    def _checkpoint_notes(self) -> tuple[str, ...]:
        cp = self.checkpoints
        if cp is None:
            return ()
        done = f"checkpoints: {cp.written} written to {cp.directory}"
        return (done,) if cp.failure is None else (done, cp.failure)

    def _observe(self, state: Any, index: int, graph: FairnessGraph, initial: bool) -> None:
        """The state properties and the fairness graph's bits, on a new state."""
        self._visit(state, index)
        try:
            graph.visit(state, initial)
        except Exception as exc:
            raise self._model_error(exc, index, "a liveness property") from exc

    def _judge_liveness(self, end: EndReason) -> tuple[list[PropertyResult], Phase, EndReason]:
        """Judge the liveness properties on the recorded graph (a phase of its own).

        After Ctrl-C nothing is judged; the memory bound and Ctrl-C apply to this phase too.
        """
        graph = self.graph
        assert graph is not None
        start = time.perf_counter()
        live = graph.properties
        cut: EndReason | None = EndReason.INTERRUPTED if end is EndReason.INTERRUPTED else None
        results: list[PropertyResult] = []
        if cut is None:
            try:
                if self.max_memory is not None and resident_memory() >= self.max_memory:
                    raise MemoryBound
                from leadercheck.checker.fair_cycles import Judge  # noqa: PLC0415 (numpy, scipy: slow import)

                judge = Judge(
                    graph,
                    self._moves_to,
                    self._rebuild,
                    level_of(self.levels),
                    EndReason.EXHAUSTED if end is EndReason.DECIDED else end,
                    model_name(self.model),
                )
                results = [judge.judge(p, k) for k, p in enumerate(live)]
            except KeyboardInterrupt:
                cut = EndReason.INTERRUPTED
            except (MemoryBound, MemoryError):
                cut = EndReason.MAX_MEMORY
        if cut is not None:
            end = cut
            results = [PropertyResult(p, Verdict.INCOMPLETE, None, cut.value) for p in live]
        seconds = time.perf_counter() - start
        phase = Phase(
            "fair cycles",
            graph.states,
            graph.edges,
            seconds,
            peak_memory(),
            cut or EndReason.EXHAUSTED,
        )
        return results, phase, end

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
            self.key(succ) not in self.seen for state in frontier for _, succ in expand(state)[1]
        )

    def _visit(self, state: Any, index: int) -> bool:
        """Check the undecided properties on a new state; True once all are decided (never
        when there were none to decide: then the search explores everything)."""
        claims = self.claims
        try:
            return bool(claims.visit(state, index)) and claims.done
        except ClaimRaised as exc:
            raise self._model_error(exc.error, index, exc.name) from exc.error

    def _call(self, fn: Callable[[], Any], what: str) -> Any:
        """Run model code; an exception becomes a ModelError carrying the trace so far."""
        try:
            return fn()
        except ModelError:
            raise
        except Exception as exc:  # any failure in user code is reported, with its trace
            raise self._model_error(exc, self.current, what) from exc

    def _model_error(self, exc: Exception, index: int, what: str) -> ModelError:
        failing = "the trace to the failing state"
        trace = self._trace_to(index, failing) if index != NO_PARENT else None
        if isinstance(exc, TypeError) and trace is not None:  # an unhashable successor?
            found = unhashable_in(self.model, trace)
            if found is not None:
                return found
        where = f" after {len(trace)} steps" if trace is not None else ""
        return ModelError(f"model raised {type(exc).__name__} in {what}{where}: {exc}", trace)

    def _misuse(
        self,
        exc: Misuse,
        index: int,
        move: int | None = None,
    ) -> ModelError:
        """A state that is no value, found expanding state `index` (in its successor
        `move`, if given: a position among the representative's successors), as the
        ModelError carrying the trace that led there. The trace is
        re-executed without checking it against the store (a mutated state no longer
        hashes as stored) and takes the offending step itself; if even that fails, the
        error is given without a trace."""
        trace: Trace | None
        try:
            moves = self._moves_to(index)
            trace = rebuild_trace(self.model, self._initial, moves, self.canonical)
            if move is not None:
                trace = extend_trace(self.model, trace, move, self.canonical)
        except ModelError:
            trace = None
        return ModelError(str(exc) if trace is None else reached(exc, trace), trace)

    # -- results -----------------------------------------------------------

    def _judge(self, prop: Property, end: EndReason) -> PropertyResult:
        index = self.found.get(prop.name)
        trace = None if index is None else self._trace_to(index, purpose_of(prop))
        return judge(prop, trace, end, self.model)

    def _moves_to(self, index: int) -> list[int]:
        moves = []
        while index != NO_PARENT:
            moves.append(self.moves[index])
            index = self.parents[index]
        moves.reverse()
        return moves

    def _trace_to(self, index: int, purpose: str) -> Trace:
        """Rebuild the trace to state `index` by re-executing the model along stored moves."""
        return self._rebuild(self._moves_to(index), purpose)

    def _rebuild(self, moves: list[int], purpose: str) -> Trace:
        """The trace along `moves`, each of its states verified to be in the store (its
        representative's key with symmetry): a model whose order changed since the search
        is a ModelError, not a wrong trace."""
        store: Any = self.index if self.graph is not None else self.seen
        key = self.key
        return rebuild_trace(
            self.model,
            self._initial,
            moves,
            self.canonical,
            stored=lambda state: key(state) in store,
            purpose=purpose,
        )


class MemoryBound(Exception):
    """The memory bound was reached between two phases."""


def peak_memory() -> int:
    """The process's peak resident memory so far, in bytes."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
