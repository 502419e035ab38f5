"""Partitioned, level-synchronous breadth-first search over K workers.

States are split among K partition workers by fingerprint: a state's owner is
`fingerprint % K`, with the fingerprint exactly as checker/engine/strategies/bfs.py takes it
(`hash(state) & FP_MASK`). Each worker keeps its partition's visited fingerprints and,
per owned state, the global id (rank) of its parent and its move (the position among the
parent's successors) in packed arrays, like search.py; full states are held only for the
level being expanded, the next level, and, during a level, the successors a worker has
routed until their owners take them. A coordinator runs one breadth-first level at a
time, in four steps (`Transport.exchange`):

1. `expand`: each worker expands its states of the level in increasing rank, with
   `make_expander` (so --symmetry and --por act as in one process: a skipped action is
   not generated, a successor known to be visited is generated but not sent), and sends
   each successor's fingerprint and key (parent rank, move) to its owner; the successors
   stay with it;
2. `select`: each owner keeps, per fingerprint new to it, the smallest key over all
   arrivals, and asks one sender holding that state for it;
3. `ship`: the senders send the states asked for; a full state crosses processes about
   once per distinct state, not once per transition;
4. `absorb`: each owner stores its new states with their parent and move, checks the
   undecided properties on them in key order (`decides`) and reports their keys, sorted.

The coordinator merges the keys of all owners: key order is the order in which the
single-process search discovers the states (it discovers a state first from the parent
with the smallest rank and, for that parent, the smallest move), so the merge gives the
next level's ranks exactly as `check()` numbers them. For each property the deciding
state is the one with the smallest rank among the level's states that decide it; its
trace is rebuilt in the coordinator with `rebuild_trace` after following (parent, move)
links through the owners. So traces are byte for byte `check()`'s, and the distinct and
generated counts and the depth are `check()`'s whenever the search explores everything.
The differences, all in counts only:

- when every property is decided the search still finishes the level, so the distinct,
  generated and transition counts may exceed `check()`'s (not the depth);
- the state bound is checked at the end of a level, so the counts may overshoot it; the
  verdicts do not: a state ranked at or past the bound decides nothing, as in `check()`,
  which stops before reaching it (likewise for states after one whose expansion raised);
- the memory bound is checked at the end of a level, on the workers' resident memory
  plus the coordinator's; `peak_memory_bytes` is the coordinator's peak plus the
  workers' peaks (a forked worker counts the pages it still shares with the coordinator,
  so the sum overstates).

Partial-order reduction needs one worker: its cycle proviso asks whether the reduced
successor was visited, which a worker knows only for the states it owns. With one worker
it gives `check()`'s counts and traces, since a worker marks the states it owns visited
as it discovers them, as search.py does.

The coordinator never hashes a state (worker 0 routes the initial states), since a
transport's workers may be separate interpreters that hash alike while the coordinator
does not (checker/engine/strategies/ray_actors/actors.py); each owner checks that the fingerprint a
sender computed is its own too, and a mismatch stops the search with an error.

This module has the multiprocessing transport: forked processes joined by pipes, so the
model and the properties are inherited, never pickled;
checker/engine/strategies/ray_actors/actors.py has Ray's.
"""

from __future__ import annotations

import gc
import multiprocessing
import pickle
import threading
import time
import traceback
from abc import ABC, abstractmethod
from array import array
from bisect import bisect_left
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from functools import partial
from itertools import chain, groupby
from multiprocessing.connection import Connection, wait
from types import TracebackType
from typing import Any, NamedTuple, Self

from leadercheck.checker.engine.checkpoint import Checkpoints
from leadercheck.checker.engine.expand import make_expander
from leadercheck.checker.engine.explore import peak_memory, resident_memory
from leadercheck.checker.engine.guard import call_model, check_initial, model_name, watch_properties
from leadercheck.checker.engine.interrupts import (
    OsExit,
    escape_text,
    exited,
    from_model,
    model_error,
    model_escapes,
    raise_if_lost,
    worker_process,
)
from leadercheck.checker.engine.settings import NO_REDUCTIONS, Reductions, SearchSettings
from leadercheck.checker.engine.store import FP_MASK, NO_PARENT, Shard, fingerprint
from leadercheck.checker.engine.strategies.bfs import with_liveness
from leadercheck.checker.engine.successors import decides, judge, purpose_of, rebuild_trace
from leadercheck.checker.engine.values import Misuse, ValueCheck, reached, unhashable_in
from leadercheck.checker.errors import LeadercheckError, ModelError
from leadercheck.checker.model import Model
from leadercheck.checker.properties import Property
from leadercheck.checker.result import CheckResult, EndReason, Progress, Stats
from leadercheck.checker.trace import Trace

# A key packs (parent rank, move) into one int that sorts as the pair does; the initial
# states have parent NO_PARENT and sort by their position in `initial_states()`.
MOVE_BITS = 32
MOVE_MASK = (1 << MOVE_BITS) - 1
STAGES = ("select", "ship", "absorb")  # what follows `seed` or `expand` in each level
POR_NEEDS_ONE_WORKER = (
    "partial-order reduction needs one worker: its cycle proviso asks whether a state was "
    "visited, which a worker knows only for the states it owns"
)
EXACT_NEEDS_ONE_PROCESS = (
    "--exact keeps full states in one process; the partitioned engines route and store "
    "states by fingerprint"
)
CHECKPOINTS_NEED_ONE_PROCESS = (
    "--checkpoint and --resume save the one-process search; the partitioned engines keep "
    "their store in their workers"
)
HASH_MISMATCH = (
    "the workers hash states differently, so states cannot be partitioned among them; "
    "states must hash alike in every worker process (on Python < 3.12 hash(None) is an "
    "address, different in each interpreter unless address randomisation is off)"
)


def check_parallel(
    model: Model[Any],
    properties: Sequence[Property],
    *,
    workers: int,
    max_states: int | None = None,
    max_depth: int | None = None,
    max_memory: int | None = None,
    reductions: Reductions = NO_REDUCTIONS,
    progress: Callable[[Progress], None] | None = None,
    transport: Transport | None = None,
    checkpoints: Checkpoints | None = None,
) -> CheckResult:
    """`check()` with the states partitioned among `workers` workers (see the module doc);
    the keywords are those of `SearchSettings`, made here once for `partitioned`."""
    settings = SearchSettings(
        workers=workers,
        max_states=max_states,
        max_depth=max_depth,
        max_memory=max_memory,
        reductions=reductions,
        progress=progress,
        checkpoints=checkpoints,
    )
    return partitioned(model, properties, settings, transport)


def refuse_for_partitions(settings: SearchSettings) -> None:
    """What the partitioned search cannot honour, in one line each."""
    if settings.workers < 1:
        raise LeadercheckError(f"--workers must be at least 1, got {settings.workers}")
    if settings.reductions.por and settings.workers > 1:
        raise LeadercheckError(POR_NEEDS_ONE_WORKER)
    if settings.reductions.exact:
        raise LeadercheckError(EXACT_NEEDS_ONE_PROCESS)
    if settings.checkpoints is not None:
        raise LeadercheckError(CHECKPOINTS_NEED_ONE_PROCESS)


def partitioned(
    model: Model[Any],
    properties: Sequence[Property],
    settings: SearchSettings,
    transport: Transport | None = None,
) -> CheckResult:
    """The search with its states partitioned among `settings.workers` workers.

    `transport` runs the workers; None forks them as processes (Linux: the "fork" start
    method) and ends them before returning. A given transport must have as many workers;
    its workers are ended before returning, the transport itself stays open. `progress`
    is called once per breadth-first level. Bounds as in `check()`, checked at the end of
    each level.
    """
    refuse_for_partitions(settings)
    properties = watch_properties(model, properties)
    workers = settings.workers
    if transport is not None and transport.workers != workers:
        raise LeadercheckError(f"the transport runs {transport.workers} workers, not {workers}")

    def safety_search(safety: Sequence[Property]) -> CheckResult:
        own = transport is None
        used = ProcessTransport(workers) if transport is None else transport
        coordinator = _Coordinator(model, safety, used, settings)
        try:
            return coordinator.run()
        finally:
            used.stop()
            if own:
                used.close()

    why = "the workers each hold a part of the graph, and fair cycles need all of it"
    return with_liveness(model, properties, settings, safety_search, why)


# -- what crosses between the coordinator and the workers ------------------------


@dataclass(frozen=True)
class WorkerSetup:
    """Everything a worker is built from."""

    model: Model[Any]
    properties: tuple[Property, ...]
    reductions: Reductions
    workers: int
    extra: Any = None  # what a worker of another kind needs (checker/engine/strategies/sampling/)
    trust_values: bool = False  # SearchSettings.trust_values


class Failure(NamedTuple):
    """An exception raised by model code in a worker, as text (exceptions may not pickle);
    SystemExit and the like too (a worker reports them, it never ends by them)."""

    kind: str  # the exception's class name
    message: str
    traceback: str
    exited: tuple[Any, str] | None = None  # OsExit: what os._exit was given, and where


class Event(NamedTuple):
    """The first of a worker's new states (by key) that decides a property or raises in it."""

    key: int
    prop: int  # index into the properties
    failure: Failure | None


class LevelReport(NamedTuple):
    """What an owner tells the coordinator at the end of a level."""

    keys: array[int]  # the keys of its new states, ascending
    events: tuple[Event, ...]
    generated: int  # successors it generated while expanding (reductions' skips excluded)
    failure: tuple[int, Failure] | None  # the rank of the state whose expansion raised
    resident: int  # resident memory now, bytes
    peak: int  # peak resident memory, bytes
    mismatch: bool  # a state's fingerprint differs between its sender and its owner
    misuse: tuple[int, Failure] | None = None  # the key of the first new state that is no value


Batch = tuple["array[int]", "array[int]"]  # fingerprints and keys of successors, in key order


class RemoteFailure(Exception):
    """The traceback of an exception raised in a worker (the cause of a ModelError)."""


def remote_model_error(
    failure: Failure, trace: Trace, what: str, model: Model[Any] | None = None
) -> ModelError:
    """What model code raised in a worker, as the ModelError that carries `trace`, the
    trace to the state it raised on; a state that is no value (engine/values.py) is named
    as such."""
    if failure.exited is not None:
        status, hook = failure.exited
        return ModelError(exited(status, f"{hook} after {len(trace)} steps"), trace)
    if failure.kind in (Misuse.__name__, ModelError.__name__):  # already says what is wrong
        return ModelError(reached(failure.message, trace), trace)
    if failure.kind == "TypeError" and model is not None:  # an unhashable state?
        found = unhashable_in(model, trace)
        if found is not None:
            return found
    error = ModelError(
        f"model raised {failure.kind} in {what} after {len(trace)} steps: {failure.message}",
        trace,
    )
    error.__cause__ = RemoteFailure(failure.traceback)
    return error


# -- the worker -------------------------------------------------------------------


class PartitionWorker:
    """One partition: the visited fingerprints, parent links and moves of the states it owns.

    Every method is a step of the level protocol run by the coordinator through a
    transport. `seed` and `expand` return one batch per worker; `select` and `ship` take
    one batch from each worker (in worker order) and return one for each; `absorb` takes
    one from each and returns the worker's LevelReport.
    """

    def __init__(self, setup: WorkerSetup, index: int) -> None:
        self.model = setup.model
        self.properties = setup.properties
        self.workers = setup.workers
        self.index = index
        canonical = setup.reductions.canonical(setup.model)
        self.store = Shard()  # the fingerprints owned; per owned state its rank, parent, move
        self.seen: set[int] = self.store.keys
        self.expander = make_expander(setup.model, self.seen, canonical, setup.reductions.por)
        self.ids, self.parents, self.moves = self.store.ids, self.store.parents, self.store.moves
        self.frontier: list[Any] = []  # the owned states of the level, in key (= rank) order
        self.pending: list[dict[int, Any]] = []  # per owner: fingerprint -> successor
        self.undecided: tuple[int, ...] = ()
        self.generated = 0
        self.failure: tuple[int, Failure] | None = None
        self.values = ValueCheck(model_name(setup.model), walk=not setup.trust_values)
        # what `select` chose, for `absorb`: the new fingerprints and their keys in key
        # order, and the fingerprints asked of each sender
        self.new_fps: list[int] = []
        self.new_keys = array("Q")
        self.wanted: list[array[int]] = []
        self.kept: list[Any] = []  # the states this worker asked of itself

    # -- producing batches ----------------------------------------------------

    def seed(self, states: Sequence[Any], undecided: tuple[int, ...]) -> list[Batch]:
        """Route the (canonical) initial states; their keys carry their positions."""
        self.undecided = undecided
        self.generated = 0
        self.failure = None
        k, me, seen = self.workers, self.index, self.seen
        keys: list[array[int]] = [array("Q") for _ in range(k)]
        pending: list[dict[int, Any]] = [{} for _ in range(k)]
        for move, state in enumerate(states):
            fp = hash(state) & FP_MASK
            owner = fp % k
            out = pending[owner]
            if fp not in out:  # a repeated initial state keeps its first position
                out[fp] = state
                keys[owner].append(NO_PARENT << MOVE_BITS | move)
                if owner == me:
                    seen.add(fp)
        return self._batches(keys, pending)

    def expand(self, ranks: array[int], undecided: tuple[int, ...]) -> list[Batch]:
        """Number the level's states, expand them in rank order and route the successors.

        `ranks` are the global ids of this worker's states of the level, ascending. Each
        successor goes to its owner keyed by (parent rank, move); one routed before in
        this level is not routed again (its first key is the smaller one). A successor
        this worker owns is marked visited at once, as the single-process search does,
        so the expander (symmetry's known orbits, partial-order reduction's proviso)
        sees this worker's discoveries of the level too.
        """
        self.undecided = undecided
        batches = self._expand(ranks, discover=True)
        self.frontier = []
        return batches

    def probe(self, ranks: array[int]) -> list[Batch]:
        """Like `expand` but marks nothing visited: only to ask whether any successor is
        new (`count_new`), at the depth bound."""
        return self._expand(ranks, discover=False)

    def _expand(self, ranks: array[int], discover: bool) -> list[Batch]:
        self.ids.extend(ranks)
        self.failure = None
        k, me, seen, expand = self.workers, self.index, self.seen, self.expander
        keys: list[array[int]] = [array("Q") for _ in range(k)]
        pending: list[dict[int, Any]] = [{} for _ in range(k)]
        generated = 0
        values = self.values
        for rank, state in zip(ranks, self.frontier, strict=True):
            try:
                before = hash(state)  # every state checked: still the value it was stored as
                if before & FP_MASK not in seen:
                    raise values.changed_in_store(state)
                count, candidates = expand(state)
                generated += count
                base = rank << MOVE_BITS
                for move, succ in candidates:
                    fp = hash(succ) & FP_MASK
                    if fp in seen:  # only ever true for a state of this partition
                        continue
                    owner = fp % k
                    out = pending[owner]
                    if fp not in out:
                        out[fp] = succ
                        keys[owner].append(base | move)
                        if owner == me and discover:
                            seen.add(fp)
                if hash(state) != before:
                    values.unchanged(state, before)
            except BaseException as exc:  # model code: reported with the trace to `state`
                if not from_model(exc):
                    raise
                self.failure = (rank, failure_of(exc))
                break
        self.generated = generated
        return self._batches(keys, pending)

    def _batches(self, keys: list[array[int]], pending: list[dict[int, Any]]) -> list[Batch]:
        self.pending = pending  # per owner: fingerprint -> state, in key order
        return [(array("q", out), ks) for out, ks in zip(pending, keys, strict=True)]

    # -- consuming batches ------------------------------------------------------

    def select(self, *batches: Batch) -> list[array[int]]:
        """Keep, per fingerprint new to this partition, the smallest key over all arrivals;
        ask for each such state once, from the first sender that has it (every sender's
        copy is the same state). This worker's own successors are all new (`expand`
        checked them, and marked them visited)."""
        me, seen = self.index, self.seen
        own_fps, own_keys = batches[me]
        best = dict(zip(own_fps, own_keys, strict=True))  # fingerprint -> smallest key
        wanted = [own_fps if j == me else array("q") for j in range(self.workers)]
        for sender, (fps, keys) in enumerate(batches):
            if sender == me or not fps:
                continue
            arrived = dict(zip(fps, keys, strict=True))
            fresh = arrived.keys() - seen  # new to the partition, maybe met from a sender before
            known = arrived.keys() & best.keys()  # met this level, from this worker or a sender
            keep = fresh | known
            if len(keep) < len(arrived):  # drop the states visited in earlier levels
                arrived = {fp: arrived[fp] for fp in keep}
            for fp in known:
                if best[fp] < arrived[fp]:
                    arrived[fp] = best[fp]
            best.update(arrived)
            wanted[sender] = array("q", fresh - known)
        order = sorted(best, key=best.__getitem__)
        seen.update(order)
        self.wanted = wanted
        self.new_fps = order
        self.new_keys = array("Q", map(best.__getitem__, order))
        return wanted

    def ship(self, *wanted: array[int]) -> list[bytes]:
        """The successors each owner asked for, in the order it asked, pickled.

        Pickled here with the plain pickler, since a transport's own serializer may be
        much slower on millions of small tuples (Ray's calls back into Python for each
        object). The states this worker owns stay here, for its own `absorb`.
        """
        pending, self.pending = self.pending, []
        out: list[bytes] = []
        for owner, (states, fps) in enumerate(zip(pending, wanted, strict=True)):
            asked = list(map(states.__getitem__, fps))
            if owner == self.index:
                self.kept = asked
                out.append(b"")
            else:
                out.append(pickle.dumps(asked, protocol=pickle.HIGHEST_PROTOCOL))
        return out

    def absorb(self, *shipments: bytes) -> LevelReport:
        """Store the new states of the level and check the undecided properties on them."""
        arrived: dict[int, Any] = {}
        for sender, (fps, blob) in enumerate(zip(self.wanted, shipments, strict=True)):
            states = self.kept if sender == self.index else pickle.loads(blob)
            arrived.update(zip(fps, states, strict=True))
        self.kept = []
        frontier = list(map(arrived.__getitem__, self.new_fps))
        del arrived
        keys = self.new_keys
        misuse = self._misuse(frontier, keys)
        mismatch = misuse is None and list(map(fingerprint, frontier)) != self.new_fps
        self.parents.extend(array("I", [key >> MOVE_BITS for key in keys]))
        self.moves.extend(array("I", [key & MOVE_MASK for key in keys]))
        self.frontier = frontier
        self.wanted = []
        events = tuple(e for e in map(self._first_event, self.undecided) if e is not None)
        return LevelReport(
            keys,
            events,
            self.generated,
            self.failure,
            resident_memory(),
            peak_memory(),
            mismatch,
            misuse,
        )

    def _misuse(self, states: list[Any], keys: array[int]) -> tuple[int, Failure] | None:
        """Every new state checked for value semantics: the key of the first that is no
        value (in key order), with what is wrong; an identity-hashed part would otherwise
        show as a fingerprint that differs between sender and owner."""
        stored = self.values.stored
        for key, state in zip(keys, states, strict=True):
            try:
                stored(state)
            except Misuse as exc:
                return key, failure_of(exc)
        return None

    def _first_event(self, index: int) -> Event | None:
        prop = self.properties[index]
        for key, state in zip(self.new_keys, self.frontier, strict=True):
            try:
                if decides(prop, state):
                    return Event(key, index, None)
            except BaseException as exc:  # model code: reported with the trace to `state`
                if not from_model(exc):
                    raise
                return Event(key, index, failure_of(exc))
        return None

    def count_new(self, *batches: Batch) -> int:
        """How many of the routed fingerprints this owner has not visited (after `probe`)."""
        return len(set().union(*(fps for fps, _ in batches)).difference(self.seen))

    # -- traces -----------------------------------------------------------------

    def link(self, rank: int) -> tuple[int, int] | None:
        """(parent rank, move) of the state with global id `rank`, if this worker owns it."""
        return self.store.link(rank)


def quiet_gc() -> None:
    """Collect cyclic garbage less often in a worker process (the transports call it).

    A worker holds a level's states and the successors it routes until their owners
    take them: millions of tuples that hold no cycles and that refcounting frees. With
    the default thresholds the collector keeps traversing them all; measured on
    raft-election, that cost a worker a third of its time.
    """
    gc.set_threshold(100_000, 50, 100)


def failure_of(exc: BaseException) -> Failure:
    """What model code raised in a worker, as text that crosses any pipe."""
    called = (exc.status, exc.hook) if isinstance(exc, OsExit) else None
    return Failure(type(exc).__name__, escape_text(exc), traceback.format_exc(), called)


# -- transports -------------------------------------------------------------------


class Transport(ABC):
    """Runs K partition workers and moves calls and batches between them.

    `start` builds `PartitionWorker(setup, i)` for i in 0..K-1 and `stop` ends them (one
    search); `close` releases whatever the transport holds beyond one search. Replies
    always come back in worker order.
    """

    workers: int

    @abstractmethod
    def start(self, setup: WorkerSetup) -> None:
        """Build the K workers of one search."""

    @abstractmethod
    def call(self, method: str, args: Sequence[tuple[Any, ...]]) -> list[Any]:
        """Worker i runs `method(*args[i])`; the replies in worker order."""

    @abstractmethod
    def exchange(
        self, first: str, args: Sequence[tuple[Any, ...]], stages: Sequence[str]
    ) -> list[Any]:
        """Worker i runs `first(*args[i])`, which returns one batch per worker; then, per
        stage, worker j runs `stage(*batches addressed to j, in worker order)`. Every stage
        but the last returns one batch per worker again; the last one's replies are
        returned in worker order."""

    @abstractmethod
    def stop(self) -> None:
        """End the workers of the current search, if any (safe to call twice)."""

    def close(self) -> None:
        """Release the transport (ends the workers first)."""
        self.stop()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class _Aborted:
    """Sent to the other workers in place of a batch by a worker whose stage failed."""


class PeerFailed(LeadercheckError):
    """A worker gave up on a step because another worker failed in it."""


class ProcessTransport(Transport):
    """K forked processes: a pipe to each from the coordinator and one between each pair.

    Forking (not spawning) lets each worker inherit the model and the properties, which
    may hold lambdas, and the interpreter's string-hash secret, so they all hash alike;
    only batches and replies cross the pipes. Workers ignore SIGINT: Ctrl-C reaches the
    coordinator, which ends them. `factory(setup, i)` builds worker i in its process: a
    PartitionWorker, or another kind of worker driven by `call` alone (the swarm's).
    """

    def __init__(
        self,
        workers: int,
        factory: Callable[[WorkerSetup, int], Any] = PartitionWorker,
        mesh: bool = True,
    ) -> None:
        self.workers = workers
        self.factory = factory
        self.mesh = mesh  # pipes between every two workers (a swarm's exchange nothing)
        self.processes: list[Any] = []
        self.conns: list[Connection] = []
        self.busy = False

    def start(self, setup: WorkerSetup) -> None:
        self.stop()
        ctx = multiprocessing.get_context("fork")
        k = self.workers
        control = [ctx.Pipe(duplex=True) for _ in range(k)]
        pairs = [(i, j) for i in range(k) for j in range(k) if i != j] if self.mesh else []
        mesh = {pair: ctx.Pipe(duplex=False) for pair in pairs}
        try:
            for i in range(k):
                process = ctx.Process(
                    target=_serve,
                    args=(setup, i, control, mesh, self.factory),
                    name=f"leadercheck-worker-{i}",
                    daemon=True,
                )
                process.start()
                self.processes.append(process)
        finally:
            for mine, theirs in control:
                theirs.close()
                self.conns.append(mine)
            for reader, writer in mesh.values():
                reader.close()
                writer.close()

    def call(self, method: str, args: Sequence[tuple[Any, ...]]) -> list[Any]:
        return self._send_all("call", method, args, ())

    def exchange(
        self, first: str, args: Sequence[tuple[Any, ...]], stages: Sequence[str]
    ) -> list[Any]:
        return self._send_all("exchange", first, args, tuple(stages))

    def _send_all(
        self, kind: str, method: str, args: Sequence[tuple[Any, ...]], stages: tuple[str, ...]
    ) -> list[Any]:
        self.post(method, args, kind, stages)
        return self.collect()

    def post(
        self,
        method: str,
        args: Sequence[tuple[Any, ...]],
        kind: str = "call",
        stages: tuple[str, ...] = (),
    ) -> None:
        """Send worker i `method(*args[i])` without waiting (`collect` gets the replies), so
        the caller may work meanwhile."""
        self.busy = True  # until every reply is in: if not, `stop` must not wait for them
        for conn, a in zip(self.conns, args, strict=True):
            conn.send((kind, method, a, stages))

    def collect(self) -> list[Any]:
        """The replies to what `post` sent, in worker order; a worker's error is raised."""
        replies = [self._receive(i) for i in range(len(self.conns))]
        self.busy = False
        failures = [value for tag, value in replies if tag == "raise"]
        if failures:
            real = [f for f in failures if not isinstance(f, PeerFailed)]
            raise (real or failures)[0]
        return [value for _, value in replies]

    def _receive(self, i: int) -> tuple[str, Any]:
        """Worker i's reply; an error if any worker process has ended meanwhile."""
        conn = self.conns[i]
        sentinels = [p.sentinel for p in self.processes]
        while not conn.poll():
            wait([conn, *sentinels])
            self._check_alive()
        try:
            reply: tuple[str, Any] = conn.recv()
        except EOFError:  # its end of the pipe closed: it has ended or is ending
            self.processes[i].join(timeout=5)
            self._check_alive()
            raise LeadercheckError(f"{self.processes[i].name} closed its pipe") from None
        return reply

    def _check_alive(self) -> None:
        raise_if_lost()  # a worker killed by the signal that stops us all is no error
        for process in self.processes:
            if process.exitcode is not None:
                raise LeadercheckError(
                    f"{process.name} ended unexpectedly (exit code {process.exitcode})"
                )

    def stop(self) -> None:
        """Ask each worker to stop and reap it; end it by signal if it does not stop in
        time, or at once if the coordinator gave up in the middle of a step."""
        if not self.busy:
            for conn in self.conns:
                try:
                    conn.send(("stop", "", (), ()))
                except OSError:
                    pass
        for process in self.processes:
            if not self.busy:
                process.join(timeout=5)
            if process.is_alive():
                process.terminate()
                process.join(timeout=5)
            if process.is_alive():
                process.kill()
                process.join()
            process.close()
        for conn in self.conns:
            conn.close()
        self.processes = []
        self.conns = []
        self.busy = False


def _serve(
    setup: WorkerSetup,
    index: int,
    control: list[tuple[Connection, Connection]],
    mesh: dict[tuple[int, int], tuple[Connection, Connection]],
    factory: Callable[[WorkerSetup, int], Any],
) -> None:
    """A worker process: run calls from the coordinator until told to stop. What escapes
    a call (SystemExit from model code included) is its reply; the worker goes on."""
    worker_process()  # SIGINT is the coordinator's: every KeyboardInterrupt here is code's
    quiet_gc()
    for i, (theirs, mine) in enumerate(control):  # keep only our own pipe ends open
        theirs.close()
        if i != index:
            mine.close()
    inbox: dict[int, Connection] = {}
    outbox: dict[int, Connection] = {}
    for (i, j), (reader, writer) in mesh.items():
        if j == index:
            inbox[i] = reader
        else:
            reader.close()
        if i == index:
            outbox[j] = writer
        else:
            writer.close()
    conn = control[index][1]
    worker: Any = None
    broken: BaseException | None = None  # what building the worker raised: every reply
    try:
        worker = factory(setup, index)
    except LeadercheckError as exc:
        broken = exc
    except BaseException as exc:  # model code, building the worker (its initial states)
        broken = model_error(exc, "initial_states")
    while True:
        try:
            kind, method, args, stages = conn.recv()
        except EOFError:
            return
        if kind == "stop":
            return
        try:
            if broken is not None:
                reply: tuple[str, Any] = ("raise", broken)
            elif kind == "call":
                reply = ("ok", getattr(worker, method)(*args))
            else:
                reply = _pipeline(worker, method, args, stages, inbox, outbox)
        except Exception as exc:
            reply = ("raise", exc)
        except BaseException as exc:  # not the user's (SIGINT is ignored here): model code
            reply = ("raise", model_error(exc, method))
        try:
            conn.send(reply)
        except Exception as exc:  # an unpicklable exception: send its text
            conn.send(("raise", LeadercheckError(f"worker {index}: {exc!r}")))


def _pipeline(
    worker: PartitionWorker,
    first: str,
    args: tuple[Any, ...],
    stages: Sequence[str],
    inbox: dict[int, Connection],
    outbox: dict[int, Connection],
) -> tuple[str, Any]:
    """Run `first` then each stage, swapping batches with the other workers in between.

    A worker whose stage fails goes on swapping (sending _Aborted) so that no other
    worker waits for it forever; the others then skip their remaining stages.
    """
    failure: Exception | None = None
    out: Any = None
    try:
        out = getattr(worker, first)(*args)
    except Exception as exc:
        failure = exc
    except BaseException as exc:  # model code (SIGINT is ignored in a worker)
        failure = model_error(exc, first)
    for stage in stages:
        inputs = _swap(worker.index, None if failure else out, inbox, outbox)
        if failure is None and any(isinstance(x, _Aborted) for x in inputs):
            failure = PeerFailed("another worker failed")
        if failure is None:
            try:
                out = getattr(worker, stage)(*inputs)
            except Exception as exc:
                failure = exc
            except BaseException as exc:
                failure = model_error(exc, stage)
    return ("raise", failure) if failure is not None else ("ok", out)


def _swap(
    me: int,
    out: Sequence[Any] | None,
    inbox: dict[int, Connection],
    outbox: dict[int, Connection],
) -> list[Any]:
    """Send out[j] to each other worker j while receiving theirs (None: send _Aborted)."""
    errors: list[Exception] = []

    def send() -> None:
        for j, conn in outbox.items():
            try:
                conn.send(_Aborted() if out is None else out[j])
            except Exception as exc:  # e.g. a state that does not pickle
                errors.append(exc)
                with suppress(OSError):  # j has ended (the coordinator stops us all)
                    conn.send(_Aborted())

    sender = threading.Thread(target=send, daemon=True)
    if outbox:
        sender.start()
    inputs: list[Any] = [None] * (len(inbox) + 1)
    inputs[me] = _Aborted() if out is None else out[me]
    for i, conn in inbox.items():
        inputs[i] = conn.recv()
    if outbox:
        sender.join()
    if errors:
        raise errors[0]
    return inputs


# -- the coordinator ------------------------------------------------------------


class _Coordinator:
    def __init__(
        self,
        model: Model[Any],
        properties: Sequence[Property],
        transport: Transport,
        settings: SearchSettings,
    ) -> None:
        self.model = model
        self.properties = tuple(properties)
        self.transport = transport
        self.k = transport.workers
        self.max_states = settings.max_states
        self.max_depth = settings.max_depth
        self.max_memory = settings.max_memory
        self.reductions = settings.reductions
        self.trust_values = settings.trust_values
        self.canonical = settings.reductions.canonical(model)
        self.progress = settings.progress
        self.initial: list[Any] = []
        self.found: dict[int, list[int]] = {}  # property index -> moves to its deciding state
        self.distinct = 0
        self.generated = 0
        self.depth = 0
        self.level_size = 0  # states of the level about to be expanded
        self.worker_peak = [0] * self.k
        self.start = time.perf_counter()

    def run(self) -> CheckResult:
        self.start = time.perf_counter()
        try:
            end = self._explore()
        except KeyboardInterrupt as exc:
            if from_model(exc):  # raised by code of the model's, here in the coordinator
                raise model_error(exc, "the search") from exc
            end = EndReason.INTERRUPTED
        stats = Stats(
            distinct_states=self.distinct,
            generated_states=self.generated,
            transitions=self.generated - len(self.initial),
            depth=self.depth,
            seconds=time.perf_counter() - self.start,
            peak_memory_bytes=peak_memory() + sum(self.worker_peak),
        )
        with model_escapes("judging the claims"):
            results = tuple(
                judge(
                    prop,
                    self._trace(self.found[i], purpose_of(prop)) if i in self.found else None,
                    end,
                    self.model,
                )
                for i, prop in enumerate(self.properties)
            )
        return CheckResult(results=results, stats=stats, end=end)

    def _explore(self) -> EndReason:
        initial = call_model(lambda: check_initial(self.model), "initial_states")
        self.initial = initial
        self.generated = len(initial)
        reps = initial
        if self.canonical is not None:
            reps = call_model(partial(list, map(self.canonical, initial)), "permute")
        setup = WorkerSetup(
            self.model, self.properties, self.reductions, self.k, trust_values=self.trust_values
        )
        self.transport.start(setup)
        undecided = self._undecided()
        seeds = [(reps if i == 0 else [], undecided) for i in range(self.k)]
        end, ranks = self._settle(self.transport.exchange("seed", seeds, STAGES), first=True)
        while end is None and self.level_size:
            raise_if_lost()
            if self.max_depth is not None and self.depth >= self.max_depth:
                news = self.transport.exchange("probe", [(r,) for r in ranks], ("count_new",))
                return EndReason.MAX_DEPTH if any(news) else EndReason.EXHAUSTED
            args = [(r, self._undecided()) for r in ranks]
            end, ranks = self._settle(self.transport.exchange("expand", args, STAGES))
        return EndReason.EXHAUSTED if end is None else end

    def _undecided(self) -> tuple[int, ...]:
        return tuple(i for i in range(len(self.properties)) if i not in self.found)

    def _settle(
        self, reports: list[LevelReport], first: bool = False
    ) -> tuple[EndReason | None, list[array[int]]]:
        """Merge the level's new states into global ranks; judge the level's events."""
        misuse = min((r.misuse for r in reports if r.misuse is not None), default=None)
        if misuse is not None:  # a new state that is no value: before anything it decides
            key, failure = misuse
            raise self._model_error(failure, self._moves_to_key(key), "successors")
        if any(r.mismatch for r in reports):
            raise LeadercheckError(HASH_MISMATCH)
        self.generated += sum(r.generated for r in reports)
        self.worker_peak = [max(p, r.peak) for p, r in zip(self.worker_peak, reports, strict=True)]
        merged = sorted(chain.from_iterable(r.keys for r in reports))
        base, count = self.distinct, len(merged)
        rank_of = dict(zip(merged, range(base, base + count), strict=True))
        failed = min((r.failure for r in reports if r.failure is not None), default=None)
        # check() visits states in rank order and would stop at the state bound, or at the
        # expansion that raised: states ranked from there on decide nothing, fail nothing.
        reached = base + count  # one past the last rank check() reaches in this level
        if failed is not None:
            reached = base + bisect_left(merged, failed[0] << MOVE_BITS)
        full = self.max_states is not None and reached >= self.max_states
        horizon = min(reached, self.max_states) if self.max_states is not None else reached
        self.distinct = base + count
        self.level_size = count
        if count and not first:
            self.depth += 1
        if self._judge_events(reports, rank_of, horizon):
            return EndReason.DECIDED, []
        if full:
            return EndReason.MAX_STATES, []
        if failed is not None:
            rank, failure = failed
            raise self._model_error(failure, self._moves_to(rank), "successors")
        if self.max_memory is not None:
            if sum(r.resident for r in reports) + resident_memory() >= self.max_memory:
                return EndReason.MAX_MEMORY, []
        if self.progress is not None and count:
            elapsed = time.perf_counter() - self.start
            self.progress(Progress(self.distinct, self.generated, count, self.depth, elapsed))
        return None, [array("I", map(rank_of.__getitem__, r.keys)) for r in reports]

    def _judge_events(
        self, reports: list[LevelReport], rank_of: dict[int, int], horizon: int
    ) -> bool:
        """Record the deciding states in rank order; True once every property is decided."""
        first: dict[int, Event] = {}  # property -> its event with the smallest key
        for event in (e for r in reports for e in r.events):
            old = first.get(event.prop)
            if old is None or event.key < old.key:
                first[event.prop] = event
        events = sorted(first.values(), key=lambda e: (e.key, e.prop))
        for key, group in groupby(events, key=lambda e: e.key):
            if rank_of[key] >= horizon:
                break
            for event in group:
                moves = self._moves_to_key(key)
                if event.failure is not None:
                    name = self.properties[event.prop].name
                    raise self._model_error(event.failure, moves, name)
                self.found[event.prop] = moves
            if len(self.found) == len(self.properties):
                return True
        return False

    # -- traces and errors ------------------------------------------------------

    def _moves_to_key(self, key: int) -> list[int]:
        parent = key >> MOVE_BITS
        return [*self._moves_to(parent), key & MOVE_MASK]

    def _moves_to(self, rank: int) -> list[int]:
        """The moves from an initial state to the state of global id `rank`."""
        moves: list[int] = []
        while rank != NO_PARENT:
            links = self.transport.call("link", [(rank,)] * self.k)
            rank, move = next(link for link in links if link is not None)
            moves.append(move)
        moves.reverse()
        return moves

    def _trace(self, moves: list[int], purpose: str = "the trace to the failing state") -> Trace:
        with model_escapes(f"successors, rebuilding {purpose}"):
            return rebuild_trace(self.model, self.initial, moves, self.canonical, purpose=purpose)

    def _model_error(self, failure: Failure, moves: list[int], what: str) -> ModelError:
        return remote_model_error(failure, self._trace(moves), what, self.model)
