"""One process, breadth first: the reference search, with shortest counterexamples and witnesses.

States are checked once, when first discovered; because discovery happens level by
level, the first state found that breaks an invariant (or meets a `sometimes`
claim) lies at the smallest possible depth, so its trace is a shortest one.

The loop is the engine's one exploration (checker/engine/explore.py). Memory: the search
keeps only a 60-bit fingerprint of each visited state (a set of ints, see
checker/engine/store.py), plus, per state, the index of the state it was
discovered from and the position of the action among that state's successors (two
packed arrays). Full states are held only in the queue: the rest of the level being
expanded and the part of the next level discovered so far. A trace is rebuilt by
re-executing the model from an initial state along the stored action positions, as TLC
and Stateright do. Two different states with the same fingerprint would be taken for
one (the chance is about n^2 / 2^61 for n states: about 1e-6 for two million).

With symmetry, the stored states are canonical representatives
(checker/engine/reductions/symmetry.py); the rebuilt trace is mapped back to concrete states that
replay on the unreduced model.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from leadercheck.checker.engine.checkpoint import Checkpoints
from leadercheck.checker.engine.compiled import compiled_kernel
from leadercheck.checker.engine.expand import make_expander
from leadercheck.checker.engine.explore import Explorer, peak_memory, resident_memory
from leadercheck.checker.engine.guard import call_model, check_initial, model_name, watch_properties
from leadercheck.checker.engine.interrupts import from_model, model_error, model_escapes
from leadercheck.checker.engine.liveness import FairnessGraph, level_of
from leadercheck.checker.engine.observers import (
    Checkpointing,
    Claims,
    FairnessObserver,
    Observer,
)
from leadercheck.checker.engine.settings import NO_REDUCTIONS, Reductions, SearchSettings
from leadercheck.checker.engine.snapshot import Unreadable
from leadercheck.checker.engine.store import IndexedStore, Store
from leadercheck.checker.engine.strategies import ONE_PROCESS, Strategy, register
from leadercheck.checker.engine.successors import judge, purpose_of
from leadercheck.checker.engine.values import ValueCheck
from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.model import Model
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

    The keywords are those of `SearchSettings` (checker/engine/settings.py), made here
    once for `breadth_first`, which the strategies call with their settings whole.
    """
    settings = SearchSettings(
        max_states=max_states,
        max_depth=max_depth,
        max_memory=max_memory,
        reductions=reductions,
        progress=progress,
        checkpoints=checkpoints,
    )
    return breadth_first(model, properties, settings)


def breadth_first(
    model: Model[S], properties: Sequence[Property], settings: SearchSettings
) -> CheckResult:
    """`check()` with its settings whole.

    Liveness properties are judged on the fairness graph that the same exploration
    records (checker/engine/liveness.py). Under a reduction the graph would be the reduced
    one, which does not keep fair cycles, so the reduced search judges the other
    properties and a second, unreduced exploration the liveness ones (with a note).
    """
    properties = watch_properties(model, properties)  # a user's claims: os._exit refused
    reductions = settings.reductions
    if not reductions.symmetry and not reductions.por:
        return _one_search(model, properties, settings)
    if settings.checkpoints is not None and any(p.kind in LIVENESS for p in properties):
        raise LeadercheckError(
            "--checkpoint with --symmetry or --por needs a protocol without liveness claims "
            "(its check is then two searches)"
        )

    def reduced_search(safety: Sequence[Property]) -> CheckResult:
        return _one_search(model, safety, settings)

    why = "symmetry and partial-order reduction do not keep fair cycles"
    return with_liveness(model, properties, settings, reduced_search, why)


def _one_search(
    model: Model[S], properties: Sequence[Property], settings: SearchSettings
) -> CheckResult:
    """The compiled search where the model has a kernel for it (checker/engine/compiled/),
    else the one-process search of the model's Python code."""
    kernel = compiled_kernel(model, properties, settings)
    if kernel is not None:  # numba is there: the model's kernel module imported it
        from leadercheck.checker.engine.compiled.search import CompiledSearch  # noqa: PLC0415

        return CompiledSearch(model, kernel, properties, settings).run()
    return _Search(model, properties, settings).run()


def with_liveness(
    model: Model[S],
    properties: Sequence[Property],
    settings: SearchSettings,
    first_search: Callable[[Sequence[Property]], CheckResult],
    why: str,
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
    unreduced = settings.but(reductions=Reductions(exact=settings.reductions.exact))
    second = _Search(model, live, unreduced).run()
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
        # each search's estimate on its own fingerprints (the compiled one keeps more bits)
        collision_elsewhere=sum(
            run.stats.collision_probability for run in runs if run.stats is not main
        ),
    )
    notes = tuple(n for run in runs for n in run.notes) + (note,)
    return CheckResult(tuple(by_name[p.name] for p in properties), stats, end, notes)


def _as_phases(run: CheckResult) -> tuple[Phase, ...]:
    s = run.stats
    return (
        Phase("search", s.distinct_states, s.transitions, s.seconds, s.peak_memory_bytes, run.end),
    )


class _Search:
    """One breadth-first search for verdicts: the exploration (checker/engine/explore.py)
    with the claims as its observer, plus the fairness graph when liveness claims are
    judged (the exploration then records every edge) and checkpoints when asked for; with
    the reductions its settings name."""

    def __init__(
        self, model: Model[Any], properties: Sequence[Property], settings: SearchSettings
    ) -> None:
        self.model = model
        self.properties = tuple(properties)
        self.settings = settings
        self.exact = settings.reductions.exact
        self.canonical = settings.reductions.canonical(model)
        self.por = settings.reductions.por
        self.checkpoints = settings.checkpoints
        live = [p for p in self.properties if p.kind in LIVENESS]
        self.graph = FairnessGraph(live) if live else None
        self.claims = Claims(self.properties)

    def run(self) -> CheckResult:
        model, graph = self.model, self.graph
        # checked, cheaply: a list, a bare state or an identity-hashed one is a ModelError
        initial = call_model(lambda: check_initial(model), "initial_states")
        store = IndexedStore(self.exact) if graph is not None else Store(self.exact)
        observers: list[Observer] = [self.claims]
        if graph is not None:
            observers.append(FairnessObserver(graph, model.fairness))
        cp = self.checkpoints
        if cp is not None:
            observers.append(Checkpointing(cp))
        expand = make_expander(model, store.keys, self.canonical, self.por, self.exact)
        values = ValueCheck(
            model_name(model), walk=not self.settings.trust_values, fingerprints=not self.exact
        )
        explorer = Explorer(
            model, initial, store, expand, observers, self.settings, self.canonical, values
        )
        saved = cp.load() if cp is not None and cp.resume_from is not None else None
        try:
            end = explorer.run(saved)
        except Unreadable as exc:  # a part that no snapshot of this search holds
            assert cp is not None
            raise cp.unreadable(exc) from None
        self.explorer = explorer
        seconds = explorer.seconds  # the whole search's, a resumed one's included
        peak = peak_memory()
        stats = Stats(
            distinct_states=len(store),
            generated_states=explorer.generated,
            transitions=explorer.generated - len(initial),
            depth=explorer.frontier.depth,
            seconds=seconds,
            peak_memory_bytes=peak,
            exact=self.exact,
        )
        with model_escapes("successors, judging the claims"):
            results = [self._judge(p, end) for p in self.properties if p.kind not in LIVENESS]
        notes = self._checkpoint_notes()
        if graph is None:
            return CheckResult(results=tuple(results), stats=stats, end=end, notes=notes)
        search = Phase("search", stats.distinct_states, stats.transitions, seconds, peak, end)
        live, phase, end = self._judge_liveness(end)
        by_name = {r.prop.name: r for r in (*results, *live)}
        stats = replace(
            stats,
            seconds=stats.seconds + phase.seconds,
            peak_memory_bytes=peak_memory(),
            phases=(search, phase),
        )
        return CheckResult(tuple(by_name[p.name] for p in self.properties), stats, end, notes)

    def _checkpoint_notes(self) -> tuple[str, ...]:
        cp = self.checkpoints
        if cp is None:
            return ()
        done = f"checkpoints: {cp.written} written to {cp.directory}"
        return (done,) if cp.failure is None else (done, cp.failure)

    def _judge_liveness(self, end: EndReason) -> tuple[list[PropertyResult], Phase, EndReason]:
        """Judge the liveness properties on the recorded graph (a phase of its own).

        After Ctrl-C nothing is judged; the memory bound and Ctrl-C apply to this phase too.
        """
        graph, explorer = self.graph, self.explorer
        assert graph is not None
        start = time.perf_counter()
        live = graph.properties
        cut: EndReason | None = EndReason.INTERRUPTED if end is EndReason.INTERRUPTED else None
        results: list[PropertyResult] = []
        max_memory = self.settings.max_memory
        if cut is None:
            try:
                if max_memory is not None and resident_memory() >= max_memory:
                    raise MemoryBound
                from leadercheck.checker.engine.fair_cycles import Judge  # noqa: PLC0415 (numpy, scipy: slow import)

                judge = Judge(
                    graph,
                    explorer.store.moves_to,
                    explorer.rebuild,
                    level_of(explorer.frontier.levels),
                    EndReason.EXHAUSTED if end is EndReason.DECIDED else end,
                    model_name(self.model),
                )
                with model_escapes("successors, judging a liveness claim"):
                    results = [judge.judge(p, k) for k, p in enumerate(live)]
            except KeyboardInterrupt as exc:
                if from_model(exc):  # escaped where model_escapes does not reach
                    raise model_error(exc, "a liveness judgement") from exc
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

    # -- results -----------------------------------------------------------

    def _judge(self, prop: Property, end: EndReason) -> PropertyResult:
        index = self.claims.found.get(prop.name)
        trace = None if index is None else self.explorer.trace_to(index, purpose_of(prop))
        return judge(prop, trace, end, self.model)


class MemoryBound(Exception):
    """The memory bound was reached between two phases."""


class BreadthFirst(Strategy):
    name = ONE_PROCESS
    summary = "one process, breadth first (the default)"

    def search(
        self,
        shared: Any,
        model: Model[Any],
        properties: Sequence[Property],
        settings: SearchSettings,
    ) -> CheckResult:
        return breadth_first(model, properties, settings)

    def describe(self, workers: int) -> str:
        return ""


register(BreadthFirst())
