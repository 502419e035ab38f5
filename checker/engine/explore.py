"""THE exploration loop: pop a state, expand it, store what is new, tell the observers.

Every breadth-first walk of a model goes through `Explorer`: the search for a verdict
(checker/engine/strategies/bfs.py), the fairness graph that liveness is judged on, the drawn state
graph (checker/engine/graph.py), the guard's preflight and `--lint`'s order digest
(checker/engine/guard.py). They differ only in their store (fingerprints or states, a set or an
index), their expander (reductions or none), their observers and their settings (bounds, progress).

Observers (checker/engine/observers.py) see each new state (`visit`, in index order), and,
if they ask for edges, every expanded state's edges (`expanded`): the edges mode expands
without reductions and keeps an index from key to state, since an edge may lead back to
any state. At a level's start the observers that save progress are asked to (checkpoints),
and again where a bound or Ctrl-C stops the exploration (`stopped`).

A snapshot (`snapshot`) holds the store, the frontier, the counters and the observers'
parts, as data (checker/engine/snapshot.py: nothing in it names code to run, and restoring
checks every part before any state is expanded), taken between two expansions:
a state stays first in the queue until its expansion is whole, so a search stopped in the
middle of one (a bound met by one of its successors, Ctrl-C anywhere) is saved as before
it, the successors it had stored kept (a bound: they are whole, and the resumed search,
expanding the state again, meets them as known) or, after Ctrl-C, which may come between
any two steps, taken back (`_rewind`). A resumed search so ends with the same counts,
verdicts and traces as one never stopped.

Every state is checked on the way (checker/engine/values.py): each new state is walked for a
part compared by identity, and each expanded state is hashed before and after its expansion
and found in the store when it leaves the frontier. What model code raises, and what is no
value, is a ModelError carrying the trace that led there: SystemExit, GeneratorExit and a
KeyboardInterrupt that is not the user's Ctrl-C included (checker/engine/interrupts.py).

Bounds (the settings', checker/engine/settings.py): a state bound (after the state that
reaches it is visited), the process's resident memory and the progress callback (every
PROGRESS_EVERY states), a depth bound (at a level's start: the search is then EXHAUSTED if
no state beyond it is new), and Ctrl-C.
"""

from __future__ import annotations

import resource
import time
from collections.abc import Callable, Sequence
from functools import partial
from math import inf
from typing import Any

from leadercheck.checker.engine.frontier import Frontier
from leadercheck.checker.engine.interrupts import (
    OsExit,
    escape_text,
    exited,
    from_model,
    model_escapes,
    raise_if_lost,
)
from leadercheck.checker.engine.observers import Observer, ObserverRaised
from leadercheck.checker.engine.represent import Expander
from leadercheck.checker.engine.settings import SearchSettings
from leadercheck.checker.engine.snapshot import Unreadable, count_of, record_of
from leadercheck.checker.engine.store import FP_MASK, NO_PARENT, IndexedStore, Store
from leadercheck.checker.engine.successors import extend_trace, rebuild_trace
from leadercheck.checker.engine.values import Misuse, ValueCheck, reached, unhashable_in
from leadercheck.checker.errors import LeadercheckError, ModelError
from leadercheck.checker.model import Model, model_name
from leadercheck.checker.result import EndReason, Progress
from leadercheck.checker.trace import Trace

PROGRESS_EVERY = 2048
# Where an exploration stops early and saves where it stands (observers' `stopped`).
STOPPED = frozenset(
    {EndReason.MAX_STATES, EndReason.MAX_DEPTH, EndReason.MAX_MEMORY, EndReason.INTERRUPTED}
)
HASH_DIFFERS = (
    "--resume: this process hashes states differently from the one that wrote the "
    "checkpoint, so its fingerprints cannot be trusted; `verify` pins hashing itself "
    "(PYTHONHASHSEED=0, and setarch -R before Python 3.12): resume with the same command"
)


def resident_memory() -> int:
    """The process's resident memory now, in bytes (its peak where /proc is missing)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * resource.getpagesize()
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def peak_memory() -> int:
    """The process's peak resident memory so far, in bytes."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class Explorer:
    """One breadth-first exploration of `model` from `initial` (a checked list of states).

    `expand` gives a state's (move, successor) candidates with reductions applied (the
    plain mode); when an observer asks for edges, `model.successors` is used instead (and
    `expand` may be None) and `store` must be an IndexedStore. `canonical` maps a state to
    its representative (symmetry), for the initial states and for rebuilding traces.
    """

    def __init__(
        self,
        model: Model[Any],
        initial: Sequence[Any],
        store: Store,
        expand: Expander | None,
        observers: Sequence[Observer],
        settings: SearchSettings,
        canonical: Callable[[Any], Any] | None = None,
        values: ValueCheck | None = None,
    ) -> None:
        self.model = model
        self.initial = list(initial)
        self.store = store
        self.expand = expand
        self.observers = tuple(observers)
        self.edge_observers = tuple(o for o in self.observers if o.edges)
        self._visits = tuple(o.visit for o in self.observers)
        if self.edge_observers and not isinstance(store, IndexedStore):
            raise TypeError("an observer of edges needs an IndexedStore")
        if not self.edge_observers and expand is None:
            raise TypeError("an exploration without edges needs an expander")
        self.settings = settings  # its bounds and progress callback are read here
        self.max_states = settings.max_states if settings.max_states is not None else 1 << 62
        self.canonical = canonical
        if values is None:  # a store of full states compares them whole: any int is fine
            values = ValueCheck(_model_name(model), fingerprints=not store.exact)
        self.values = values
        self.frontier = Frontier()
        self.generated = 0
        self.current = NO_PARENT  # the index of the state being expanded, for error traces
        self.start = time.perf_counter()
        self.seeded = False  # the initial states are all stored (a snapshot may be taken)
        self.whole = True  # the store, frontier and observers agree (not while restoring)
        # the generated count before the expansion a bound stopped in (its snapshot redoes it)
        self.unfinished: int | None = None

    # -- running -------------------------------------------------------------------

    def run(self, saved: dict[str, Any] | None = None) -> EndReason:
        """Explore until the observers are done, the states run out, a limit or Ctrl-C;
        from `saved` (a snapshot) if given. Where a bound or Ctrl-C stops it, the observers
        are told (`stopped`: a checkpoint is saved there)."""
        self.start = time.perf_counter()
        try:
            end = self._explore(saved)
        except KeyboardInterrupt:  # the user's: the model's became a ModelError on the way
            end = EndReason.INTERRUPTED
        if end in STOPPED and self.whole:
            try:
                for observer in self.observers:
                    observer.stopped(self)
            except KeyboardInterrupt:  # Ctrl-C again, with no handler to ignore it
                pass
        return end

    def _explore(self, saved: dict[str, Any] | None) -> EndReason:
        if saved is not None:
            self.whole = False
            self._restore(saved)
            self.whole = True
        if not self.seeded:
            try:
                end = self._seed()
            except KeyboardInterrupt:
                self._rewind((0, None, 0, 0))  # seeding starts over on resume
                raise
            if end is not None:
                return end
            self.seeded = True
        if self.edge_observers:
            return self._loop(self._expand_edges)
        return self._loop(self._expand_plain)

    @property
    def seconds(self) -> float:
        return time.perf_counter() - self.start

    def _seed(self) -> EndReason | None:
        """Store, queue and visit the initial states (those stored already are skipped:
        a snapshot taken while seeding goes on from there)."""
        store, frontier, key = self.store, self.frontier, self.store.key
        self.generated = len(self.initial)
        for move, state in enumerate(self.initial):
            if self.canonical is not None:
                state = self._call(lambda s=state: self.canonical(s), "permute")  # type: ignore[misc]
            fp = key(state)
            if fp in store:
                continue
            frontier.queue.append(state)  # queued first: Ctrl-C's rewind forgets it by it
            index = store.add(fp, NO_PARENT, move)
            if self._visit(state, index, True):
                return EndReason.DECIDED
            if (bound := self._bound()) is not None:
                return bound
        return None

    def _loop(self, expand_one: Callable[[Any, int], EndReason | None]) -> EndReason:
        frontier, store, settings = self.frontier, self.store, self.settings
        queue, parents = frontier.queue, store.parents
        # (index, state, stored, generated) as the expansion under way began; None between
        # expansions. Set and cleared in one step each, so Ctrl-C finds it right.
        began: tuple[int, Any, int, int] | None = None
        try:
            while queue:
                if frontier.next == frontier.level_end:  # a level starts: the queue holds it
                    raise_if_lost()
                    for observer in self.observers:
                        observer.level(self)
                    if settings.max_depth is not None and frontier.depth >= settings.max_depth:
                        return EndReason.MAX_DEPTH if self._beyond() else EndReason.EXHAUSTED
                    frontier.begin_level(len(store))
                index, state, stored = frontier.next, queue[0], len(parents)
                began = (index, state, stored, self.generated)
                self.current = index
                try:  # `state` stays first in the queue until its expansion is whole
                    end = expand_one(state, index)
                except Misuse as exc:  # the expanded state itself, changed
                    raise self._misuse(exc, index) from None
                except OsExit as exc:  # a guarded model called os._exit: with its trace
                    raise self._model_error(exc, index, exc.hook) from None
                except ModelError:
                    raise
                except BaseException as exc:  # what user code raises is reported, with its trace
                    if not from_model(exc):
                        raise  # the user's Ctrl-C
                    raise self._model_error(exc, index, "successors") from exc
                if end is not None:  # a bound, met by a successor: the snapshot redoes `state`
                    self.unfinished = began[3]
                    return end
                frontier.next = index + 1
                began = None
                queue.popleft()
            return EndReason.EXHAUSTED
        except KeyboardInterrupt:
            self._rewind(began)
            raise

    def _rewind(self, began: tuple[int, Any, int, int] | None) -> None:
        """After Ctrl-C, which may come between any two steps: back to where a snapshot can
        be taken. Within an expansion (`began`), to before it: what it stored is forgotten
        (each new state is queued before it is stored, so the queue names every key it
        added), and so is what the observers made of it. Between expansions, the last one's
        end is finished (its state leaves the queue)."""
        frontier, store = self.frontier, self.store
        queue = frontier.queue
        if began is None:  # the state expanded last may still wait to leave the queue
            if len(queue) > len(store) - frontier.next:
                queue.popleft()
            return
        index, _, stored, generated = began
        keep = stored - index  # the queue held the states index .. stored - 1
        key = store.key
        gone = [key(queue.pop()) for _ in range(len(queue) - keep)]
        store.truncate(stored, gone)
        frontier.next = index
        levels = frontier.levels
        while len(levels) > 1 and levels[-1] >= stored:
            levels.pop()
        frontier.depth = len(levels) - 1
        self.generated = generated
        self.unfinished = None
        for observer in self.observers:
            observer.rewind(stored, index)

    # -- expanding one state -----------------------------------------------------------

    def _expand_plain(self, state: Any, current: int) -> EndReason | None:
        """Expand `state` with the reductions; store, queue and visit what is new."""
        seen, exact = self.store.keys, self.store.exact
        before = self._leaving(state)
        generated, candidates = self.expand(state)  # type: ignore[misc]
        self.generated += generated
        arrive = self._arrive
        own = None if exact else before & FP_MASK
        for move, succ in candidates:
            fp = succ if exact else hash(succ) & FP_MASK
            if fp in seen:
                if fp == own and succ != state:  # hashes like its parent, yet differs
                    raise self._misuse(self.values.hashes_alike(succ, state), current, move)
                continue
            if (end := arrive(succ, fp, state, current, move)) is not None:
                return end
        if hash(state) != before:
            self.values.unchanged(state, before)
        return None

    def _expand_edges(self, state: Any, current: int) -> EndReason | None:
        """Expand `state` fully, recording every edge for the observers of edges."""
        index, parents, exact = self.store.keys, self.store.parents, self.store.exact
        before = self._leaving(state)
        targets: list[int] = []
        actions: list[Any] = []
        arrive, get = self._arrive, index.get
        move = -1
        for move, (action, succ) in enumerate(self.model.successors(state)):  # noqa: B007
            fp = succ if exact else hash(succ) & FP_MASK
            target = get(fp)
            if target is None:
                target = len(parents)
                if (end := arrive(succ, fp, state, current, move)) is not None:
                    self.generated += move + 1
                    return end
            targets.append(target)
            actions.append(action)
        self.generated += move + 1
        if hash(state) != before:
            self.values.unchanged(state, before)
        for observer in self.edge_observers:
            observer.expanded(current, targets, actions)
        return None

    def _leaving(self, state: Any) -> int:
        """`state`'s hash as it leaves the frontier, checked against the store: a state
        changed since it was stored is a Misuse."""
        before = hash(state)
        if (state if self.store.exact else before & FP_MASK) not in self.store.keys:
            raise self.values.changed_in_store(state)
        return before

    def _arrive(self, succ: Any, fp: Any, state: Any, current: int, move: int) -> EndReason | None:
        """A new state, `succ` (its key `fp`), move `move` of state `current` (`state`):
        checked, queued, stored with its parent and move, and visited; the end of the
        exploration if that ends it. Queued before it is stored, so that Ctrl-C's rewind
        knows every key stored by the queue."""
        try:  # every new state checked: a value, nothing compared by identity
            self.values.stored(succ, state)
        except Misuse as exc:
            raise self._misuse(exc, current, move) from None
        frontier = self.frontier
        frontier.queue.append(succ)
        count = self.store.add(fp, current, move) + 1
        if count - 1 == frontier.level_end:
            frontier.depth += 1
            frontier.levels.append(frontier.level_end)
        if self._visit(succ, count - 1, False):
            return EndReason.DECIDED
        if count % PROGRESS_EVERY == 0:
            if (bound := self._bound()) is not None:
                return bound
            self._report()
        elif count >= self.max_states:
            return EndReason.MAX_STATES
        return None

    # -- observers and bounds ----------------------------------------------------------

    def _visit(self, state: Any, index: int, initial: bool) -> bool:
        """Tell the observers of a new state; True once all are done (never while one
        has something left to decide, nor when none had anything to decide)."""
        decided = False
        try:
            for visit in self._visits:
                if visit(state, index, initial):
                    decided = True
        except ObserverRaised as exc:  # a claim's predicate: the trace to the state it judged
            raise self._model_error(exc.error, exc.index, exc.name) from exc.error
        return decided and all(observer.done for observer in self.observers)

    def _bound(self) -> EndReason | None:
        settings = self.settings
        if settings.max_states is not None and len(self.store) >= settings.max_states:
            return EndReason.MAX_STATES
        if settings.max_memory is not None and resident_memory() >= settings.max_memory:
            return EndReason.MAX_MEMORY
        return None

    def _report(self) -> None:
        """Tell the progress callback (in an expansion: its state, first in the queue, is
        not counted as waiting)."""
        if self.settings.progress is not None:
            f = self.frontier
            self.settings.progress(
                Progress(len(self.store), self.generated, len(f) - 1, f.depth, self.seconds)
            )

    def _beyond(self) -> bool:
        """Whether any state past the depth bound is new (else the bound cut nothing off)."""
        key, store, expand, successors = self.store.key, self.store, self.expand, None
        if self.edge_observers:
            successors = self.model.successors

        def new_after(state: Any) -> bool:
            if successors is not None:
                return any(key(succ) not in store for _, succ in successors(state))
            assert expand is not None
            return any(key(succ) not in store for _, succ in expand(state)[1])

        for offset, state in enumerate(self.frontier.queue):
            self.current = self.frontier.next + offset  # for the trace of what it raises
            if self._call(partial(new_after, state), "successors"):
                return True
        return False

    # -- checkpoints -------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """Everything a resumed exploration needs, between two expansions: at a level's
        start, or where a bound or Ctrl-C stopped it (the state whose expansion was cut
        short is first in the queue, and is expanded again)."""
        generated = self.generated if self.unfinished is None else self.unfinished
        return {
            "store": self.store.save(),
            "frontier": self.frontier.save(),
            "generated": generated,
            "seconds": self.seconds,
            "observers": [observer.save() for observer in self.observers],
            "seeded": self.seeded,
        }

    def _restore(self, saved: dict[str, Any]) -> None:
        """Go on from `snapshot()`'s data; what no snapshot of this exploration holds (parts
        missing or of the wrong shape, counts that disagree) is Unreadable, found before
        any state is expanded."""
        saved = record_of(saved, "store", "frontier", "generated", "seconds", "observers")
        self.store.load(saved["store"])
        self.frontier = Frontier.load(saved["frontier"], len(self.store))
        self.generated = count_of(saved, "generated")
        seeded, seconds, parts = saved.get("seeded", True), saved["seconds"], saved["observers"]
        if type(seeded) is not bool or type(seconds) not in (int, float) or not 0 <= seconds < inf:
            raise Unreadable("a snapshot whose counters are not counts")
        if type(parts) is not list or len(parts) != len(self.observers):
            raise Unreadable("a snapshot of an exploration with other observers")
        self.seeded = seeded
        self.start -= seconds  # the seconds reported are those of the whole search
        for observer, part in zip(self.observers, parts, strict=True):
            observer.load(part, self)
        self._same_hashes()

    def _same_hashes(self) -> None:
        """Refuse to go on when this process hashes states otherwise than the one that
        saved the store: a queued state (it is stored) whose key the store lacks, or a
        stored state, rebuilt along its moves, that the store does not know. The queue
        is checked first; the traces to a few stored states spread over the store cover
        what the queue's states lack (a string, None) and earlier states hold."""
        key, store, queue = self.store.key, self.store, self.frontier.queue
        if any(key(queue[k]) not in store for k in range(min(64, len(queue)))):
            raise LeadercheckError(HASH_DIFFERS)
        count = len(store)
        for index in sorted({count * k // 8 for k in range(8)} | {count - 1}):
            if 0 <= index < count:
                try:
                    self.rebuild(store.moves_to(index), "a stored state")
                except ModelError:
                    raise LeadercheckError(HASH_DIFFERS) from None

    # -- errors and traces -------------------------------------------------------------

    def _call(self, fn: Callable[[], Any], what: str) -> Any:
        """Run model code; what it raises becomes a ModelError carrying the trace so far
        (the user's Ctrl-C passes)."""
        try:
            return fn()
        except OsExit as exc:
            raise self._model_error(exc, self.current, exc.hook) from None
        except ModelError:
            raise
        except BaseException as exc:  # any failure in user code is reported, with its trace
            if not from_model(exc):
                raise
            raise self._model_error(exc, self.current, what) from exc

    def _model_error(self, exc: BaseException, index: int, what: str) -> ModelError:
        trace = (
            self.trace_to(index, "the trace to the failing state") if index != NO_PARENT else None
        )
        if isinstance(exc, TypeError) and trace is not None:  # an unhashable successor?
            found = unhashable_in(self.model, trace)
            if found is not None:
                return found
        where = f" after {len(trace)} steps" if trace is not None else ""
        if isinstance(exc, OsExit):
            return ModelError(exited(exc.status, f"{what}{where}"), trace)
        text = escape_text(exc)
        return ModelError(f"model raised {type(exc).__name__} in {what}{where}: {text}", trace)

    def _misuse(self, exc: Misuse, index: int, move: int | None = None) -> ModelError:
        """A state that is no value, found expanding state `index` (in its successor
        `move`, if given: a position among the representative's successors), as the
        ModelError carrying the trace that led there. The trace is re-executed without
        checking it against the store (a mutated state no longer hashes as stored) and
        takes the offending step itself; if even that fails, no trace is given."""
        trace: Trace | None
        try:
            trace = rebuild_trace(
                self.model, self.initial, self.store.moves_to(index), self.canonical
            )
            if move is not None:
                trace = extend_trace(self.model, trace, move, self.canonical)
        except ModelError:
            trace = None
        return ModelError(str(exc) if trace is None else reached(exc, trace), trace)

    def trace_to(self, index: int, purpose: str) -> Trace:
        """The trace to state `index`, rebuilt by re-executing the model along stored moves."""
        return self.rebuild(self.store.moves_to(index), purpose)

    def rebuild(self, moves: list[int], purpose: str) -> Trace:
        """The trace along `moves`, each of its states verified to be in the store (its
        representative's key with symmetry): a model whose order changed since the search
        is a ModelError, not a wrong trace."""
        key, store = self.store.key, self.store
        with model_escapes(f"successors, rebuilding {purpose}"):
            return rebuild_trace(
                self.model,
                self.initial,
                moves,
                self.canonical,
                stored=lambda state: key(state) in store,
                purpose=purpose,
            )


def _model_name(model: Model[Any]) -> str:

    return model_name(model)
