"""The coordinator of a sampled search: rounds of work, one verdict per claim, coverage.

One worker runs in this process; a swarm of K forks K workers (ProcessTransport, as the
partitioned search does) and drives them in rounds: after each round it merges what they
found, checks the bounds and tells them which claims are decided from where on. A
search stops at its first violation (the smallest in the workers' common order: walk
number, or round and worker), when every state claim is decided, or when its budget, a
bound or Ctrl-C ends it. Then each decision is replayed on the model from its moves,
shortened (checker/engine/strategies/sampling/shorten.py), verified and judged: a violation is
VIOLATED, a witness proves its `sometimes` claim, and everything else is INCOMPLETE, never HOLDS.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from leadercheck.checker.engine.bits import implied_states, union_bits, usable_bytes
from leadercheck.checker.engine.explore import peak_memory, resident_memory
from leadercheck.checker.engine.guard import call_model, check_initial, model_name, watch_properties
from leadercheck.checker.engine.interrupts import (
    from_model,
    model_error,
    model_escapes,
    raise_if_lost,
)
from leadercheck.checker.engine.settings import BITSTATE, NO_REDUCTIONS, SIMULATE, SearchSettings
from leadercheck.checker.engine.strategies.processes.partitioned import (
    ProcessTransport,
    Transport,
    WorkerSetup,
    remote_model_error,
)
from leadercheck.checker.engine.strategies.sampling.depth_first import BitstateWorker
from leadercheck.checker.engine.strategies.sampling.report import (
    NO_VIOLATION,
    OrderKey,
    SampledSetup,
    WorkerReport,
)
from leadercheck.checker.engine.strategies.sampling.shorten import Shortening, shorten
from leadercheck.checker.engine.strategies.sampling.walks import WalkWorker
from leadercheck.checker.engine.successors import decides, judge, purpose_of, rebuild_trace
from leadercheck.checker.errors import ModelError
from leadercheck.checker.model import Model
from leadercheck.checker.properties import LIVENESS, Kind, Property
from leadercheck.checker.result import (
    CheckResult,
    Coverage,
    EndReason,
    Phase,
    Progress,
    PropertyResult,
    Stats,
    Verdict,
)
from leadercheck.checker.trace import Trace

ROUND_SECONDS = 0.3  # a simulation sizes its rounds to about this long
EXPANSIONS_PER_ROUND = 4096  # a bitstate round, per worker: a count, so runs agree
LIVENESS_NOT_SAMPLED = (
    "not judged: a liveness claim needs every state and edge (an exhaustive search)"
)
NOT_BEFORE_FIRST = "not decided before the first violation, where the search stops"


class SwarmTransport(Transport):
    """Worker 0 in this process, workers 1..K-1 forked (ProcessTransport): a round is sent
    to the others, run here meanwhile, then their replies are collected. So a lone search
    forks nothing, and a swarm is searching before its processes are up."""

    def __init__(self, workers: int, factory: Any) -> None:
        self.workers = workers
        self.factory = factory
        self.worker: Any = None
        self.others = ProcessTransport(
            workers - 1, lambda setup, i: factory(setup, i + 1), mesh=False
        )

    def start(self, setup: WorkerSetup) -> None:
        if self.workers > 1:
            self.others.start(setup)  # fork first: worker 0's bit array is not copied
        self.worker = self.factory(setup, 0)

    def call(self, method: str, args: Sequence[tuple[Any, ...]]) -> list[Any]:
        if self.workers > 1:
            self.others.post(method, args[1:])
        mine = getattr(self.worker, method)(*args[0])
        return [mine, *(self.others.collect() if self.workers > 1 else [])]

    def exchange(
        self, first: str, args: Sequence[tuple[Any, ...]], stages: Sequence[str]
    ) -> list[Any]:
        raise NotImplementedError("a sampled search's workers exchange nothing")

    def stop(self) -> None:
        self.others.stop()


@dataclass
class _Merged:
    """What the workers found so far, as the coordinator keeps it."""

    reports: list[WorkerReport | None]
    best: dict[str, tuple[OrderKey, tuple[int, ...]]]

    def merge(self, reports: Sequence[WorkerReport | None]) -> None:
        self.reports = list(reports)
        for report in reports:
            if report is None:
                continue
            for name, (key, moves) in report.findings.items():
                if name not in self.best or key < self.best[name][0]:
                    self.best[name] = (key, moves)

    def total(self, field: str) -> int:
        return sum(getattr(r, field) for r in self.reports if r is not None)

    def forked(self, field: str) -> int:
        """The sum over the forked workers (1..K-1): worker 0 is this process."""
        return sum(getattr(r, field) for r in self.reports[1:] if r is not None)

    def most(self, field: str) -> int:
        return max((getattr(r, field) for r in self.reports if r is not None), default=0)


def check_sampled(
    model: Model[Any],
    properties: Sequence[Property],
    settings: SearchSettings,
    kind: str,
) -> CheckResult:
    """Search `model` by random walks (`kind` SIMULATE) or bitstate depth-first search
    (BITSTATE), with `settings.workers` diversified workers (more than one: a swarm)."""
    return _Run(model, properties, settings, kind).run()


class _Run:
    def __init__(
        self,
        model: Model[Any],
        properties: Sequence[Property],
        settings: SearchSettings,
        kind: str,
    ) -> None:
        self.model, self.settings = model, settings
        self.properties = watch_properties(model, properties)
        self.sampling, self.kind, self.k = settings.sampling, kind, settings.workers
        workers = settings.workers
        self.claims = tuple(p for p in self.properties if p.kind not in LIVENESS)
        self.invariant_names = {p.name for p in self.claims if p.kind is Kind.ALWAYS}
        self.walking = kind == SIMULATE
        self.start = time.perf_counter()
        self.initial: list[Any] = []
        self.merged = _Merged([None] * workers, {})
        self.distinct: int | None = None  # of the union, once known
        self.bits_set = 0  # bitstate: bits set in the (union of the) bit arrays

    def run(self) -> CheckResult:
        self.initial = call_model(lambda: check_initial(self.model), "initial_states")
        factory = WalkWorker if self.walking else BitstateWorker
        first = multiprocessing.get_context("fork").Value("q", NO_VIOLATION)
        setup = WorkerSetup(
            self.model,
            self.claims,
            NO_REDUCTIONS,
            self.k,
            SampledSetup(self.sampling, self.settings.max_depth, first),
            self.settings.trust_values,
        )
        transport = SwarmTransport(self.k, factory)
        try:
            with transport:
                transport.start(setup)
                end = self._rounds(transport)
                self._count(transport, end)
        except KeyboardInterrupt as exc:  # while starting or stopping the workers
            if from_model(exc):
                raise model_error(exc, "the search") from exc
            end = EndReason.INTERRUPTED
        search_seconds = time.perf_counter() - self.start
        with model_escapes("successors, rebuilding a trace"):
            self._raise_failure()
            return self._results(end, search_seconds)

    # -- the rounds -------------------------------------------------------------

    def _rounds(self, transport: SwarmTransport) -> EndReason:
        budget = self.sampling.time_budget(self.walking)
        deadline = None if budget is None else time.monotonic() + budget
        walks_per_round = 4
        while True:
            began = time.monotonic()
            try:
                raise_if_lost()
                if self.walking:
                    cutoffs = {name: key[0] for name, (key, _) in self.merged.best.items()}
                    args = (walks_per_round, self.sampling.walks, deadline, cutoffs)
                    reports = transport.call("round", [args] * self.k)
                else:
                    reports = transport.call("round", [(EXPANSIONS_PER_ROUND,)] * self.k)
            except KeyboardInterrupt:  # worker 0's figures up to now, the others' last ones
                if transport.worker is not None:
                    self.merged.merge([transport.worker.report(), *self.merged.reports[1:]])
                return EndReason.INTERRUPTED
            self.merged.merge(reports)
            if any(r.failure is not None for r in reports):
                return EndReason.INTERRUPTED  # _raise_failure reports it
            self._progress()
            end = self._stop(reports, deadline)
            if end is not None:
                return end
            elapsed = max(time.monotonic() - began, 1e-3)
            walks_per_round = max(1, min(100_000, round(walks_per_round * ROUND_SECONDS / elapsed)))

    def _stop(self, reports: Sequence[WorkerReport], deadline: float | None) -> EndReason | None:
        found = self.merged.best
        if any(name in self.invariant_names for name in found):
            return (
                EndReason.DECIDED if len(found) == len(self.claims) else EndReason.FIRST_VIOLATION
            )
        if self.claims and len(found) == len(self.claims):
            return EndReason.DECIDED
        max_states, max_memory = self.settings.max_states, self.settings.max_memory
        if max_states is not None and self.merged.total("distinct") >= max_states:
            return EndReason.MAX_STATES
        resident = self.merged.forked("resident") + resident_memory()
        if max_memory is not None and resident >= max_memory:
            return EndReason.MAX_MEMORY
        if all(r.finished for r in reports):
            if self.walking:
                return EndReason.BUDGET
            return EndReason.MAX_DEPTH if any(r.cut for r in reports) else EndReason.HASHED
        if deadline is not None and time.monotonic() >= deadline:
            return EndReason.BUDGET
        return None

    def _progress(self) -> None:
        if self.settings.progress is None:
            return
        m = self.merged
        queue, label = (
            (m.total("walks"), "walks") if self.walking else (m.total("steps"), "expanded")
        )
        self.settings.progress(
            Progress(
                m.total("distinct"),
                m.total("generated"),
                queue,
                m.most("deepest"),
                time.perf_counter() - self.start,
                label,
            )
        )

    def _count(self, transport: SwarmTransport, end: EndReason) -> None:
        """The distinct states (simulation) or bits set (bitstate) of the union of the
        workers' (a swarm's workers meet some of the same states). After Ctrl-C a swarm's
        workers are gone: then the sums of their last reports stand in (a note says so)."""
        self.bits_set = self.merged.total("bits_set")
        if self.k == 1:
            self.distinct = self.merged.total("distinct")
            return
        if end is EndReason.INTERRUPTED:
            return
        if self.walking:
            union: set[int] = set()
            for fingerprints in transport.call("fingerprints", [()] * self.k):
                union.update(fingerprints)
            self.distinct = len(union)
        else:
            self.bits_set = union_bits(transport.call("bit_array", [()] * self.k))
            bits = usable_bytes(self.sampling.memory) * 8
            self.distinct = implied_states(bits, self.bits_set, self.sampling.hashes)

    def _raise_failure(self) -> None:
        for report in self.merged.reports:
            if report is not None and report.failure is not None:
                what, failure, moves = report.failure
                trace = rebuild_trace(self.model, self.initial, list(moves))
                raise remote_model_error(failure, trace, what, self.model)

    # -- verdicts -------------------------------------------------------------

    def _results(self, searched: EndReason, search_seconds: float) -> CheckResult:
        """Each claim's verdict: a decision replayed, shortened (unless Ctrl-C came first)
        and verified; the rest INCOMPLETE, with why. `searched` is why the search ended."""
        m = self.merged
        kept = self._kept()
        interrupted = searched is EndReason.INTERRUPTED
        shorten_start = time.perf_counter()
        results: list[PropertyResult] = []
        shortenings: list[Shortening] = []
        for prop in self.properties:
            if prop.kind in LIVENESS:
                results.append(PropertyResult(prop, Verdict.INCOMPLETE, None, LIVENESS_NOT_SAMPLED))
                continue
            if prop.name not in kept:
                why = NOT_BEFORE_FIRST if searched is EndReason.FIRST_VIOLATION else searched.value
                results.append(PropertyResult(prop, Verdict.INCOMPLETE, None, why))
                continue
            moves = list(kept[prop.name])
            found = len(moves) - 1
            if not interrupted:  # after Ctrl-C, the trace as found
                short = shorten(
                    self.model,
                    self.initial,
                    moves,
                    self._decides(prop),
                    self.sampling.shorten_replays,
                    self.sampling.shorten_states,
                )
                shortenings.append(short)
                moves, interrupted = short.moves, short.interrupted
            trace = self._trace(moves, prop)
            judged = judge(prop, trace, searched, self.model)
            results.append(PropertyResult(prop, judged.verdict, trace, judged.reason, found))
        shorten_seconds = time.perf_counter() - shorten_start
        peak = peak_memory() + m.forked("peak")
        distinct = self.distinct if self.distinct is not None else m.total("distinct")
        generated = m.total("generated")
        starts = m.total("walks") if self.walking else len(self.initial)
        phases: tuple[Phase, ...] = ()
        if shortenings:
            shortened = EndReason.INTERRUPTED if interrupted else EndReason.EXHAUSTED
            phases = (
                Phase(self.kind, distinct, generated - starts, search_seconds, peak, searched),
                Phase(
                    "shorten",
                    sum(s.explored for s in shortenings),
                    sum(s.transitions for s in shortenings),
                    shorten_seconds,
                    peak_memory(),
                    shortened,
                ),
            )
        stats = Stats(
            distinct_states=distinct,
            generated_states=generated,
            transitions=generated - starts,
            depth=m.most("deepest"),
            seconds=search_seconds + shorten_seconds,
            peak_memory_bytes=peak,
            phases=phases,
        )
        end = EndReason.INTERRUPTED if interrupted else searched
        return CheckResult(tuple(results), stats, end, self._notes(end), self._coverage())

    def _kept(self) -> dict[str, tuple[int, ...]]:
        """The decisions that count: those no later, in the workers' common order, than the
        first violation (a worker may run past it before the round ends)."""
        best = self.merged.best
        first = min(
            (key for name, (key, _) in best.items() if name in self.invariant_names), default=None
        )
        return {name: moves for name, (key, moves) in best.items() if first is None or key <= first}

    def _decides(self, prop: Property) -> Any:
        who = model_name(self.model)

        def decided(state: Any) -> bool:
            try:
                return decides(prop, state)
            except Exception as exc:
                raise ModelError(
                    f"{who}: {prop.name} raised {type(exc).__name__} while its trace was "
                    f"shortened: {exc}"
                ) from exc

        return decided

    def _trace(self, moves: Sequence[int], prop: Property) -> Trace:
        return rebuild_trace(self.model, self.initial, list(moves), purpose=purpose_of(prop))

    def _notes(self, end: EndReason) -> tuple[str, ...]:
        notes = []
        if self.k > 1 and self.distinct is None:
            notes.append(
                "distinct states and bits set summed over the workers, some met by several "
                "(Ctrl-C ended them mid-round)"
            )
        if self.k > 1 and not self.walking and self.distinct is not None:
            notes.append(
                "distinct states: those the union of the workers' bit arrays implies (each "
                "worker counts its own)"
            )
        if end is EndReason.INTERRUPTED and self.merged.best:
            notes.append("Ctrl-C: traces as found, or shortened only in part")
        return tuple(notes)

    def _coverage(self) -> Coverage:
        m, s = self.merged, self.sampling
        figures = Coverage(
            SIMULATE if self.walking else BITSTATE,
            s.seed,
            self.k,
            steps=m.total("steps"),
            deepest=m.most("deepest"),
        )
        if self.walking:
            return replace(figures, walks=m.total("walks"), walk_depth=s.depth)
        bits = usable_bytes(s.memory) * 8
        return replace(
            figures,
            bits=bits,
            hashes=s.hashes,
            bits_set=self.bits_set,
            omitted=(self.bits_set / bits) ** s.hashes,
            implied=implied_states(bits, self.bits_set, s.hashes),
        )
