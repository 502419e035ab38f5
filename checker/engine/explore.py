"""THE exploration loop: pop a state, expand it, store what is new, tell the observers.

Every breadth-first walk of a model goes through `Explorer`: the search for a verdict
(checker/search.py), the fairness graph that liveness is judged on, the drawn state graph
(checker/graph.py), the guard's preflight and `--lint`'s order digest (checker/guard.py).
They differ only in their store (fingerprints or states, a set or an index), their expander
(reductions or none), their observers and their settings (bounds, progress).

Observers (checker/engine/observers.py) see each new state (`visit`, in index order), and,
if they ask for edges, every expanded state's edges (`expanded`): the edges mode expands
without reductions and keeps an index from key to state, since an edge may lead back to
any state. At a level's start the observers that save progress are asked to (checkpoints).

Every state is checked on the way (checker/engine/values.py): each new state is walked for a
part compared by identity, and each expanded state is hashed before and after its expansion
and found in the store when it leaves the frontier. What model code raises, and what is no
value, is a ModelError carrying the trace that led there.

Bounds (the settings', checker/engine/settings.py): a state bound (after the state that
reaches it is visited), the process's resident memory and the progress callback (every
PROGRESS_EVERY states), a depth bound (at a level's start: the search is then EXHAUSTED if
no state beyond it is new), and Ctrl-C.
"""

from __future__ import annotations

import resource
import time
from collections.abc import Callable, Sequence
from typing import Any

from leadercheck.checker.engine.expand import Expander
from leadercheck.checker.engine.frontier import Frontier
from leadercheck.checker.engine.observers import Observer, ObserverRaised
from leadercheck.checker.engine.settings import SearchSettings
from leadercheck.checker.engine.store import FP_MASK, NO_PARENT, IndexedStore, Store
from leadercheck.checker.engine.values import Misuse, ValueCheck, reached, unhashable_in
from leadercheck.checker.errors import LeadercheckError, ModelError
from leadercheck.checker.model import Model
from leadercheck.checker.result import EndReason, Progress
from leadercheck.checker.successors import extend_trace, rebuild_trace
from leadercheck.checker.trace import Trace

PROGRESS_EVERY = 2048
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
        self.values = values if values is not None else ValueCheck(_model_name(model))
        self.frontier = Frontier()
        self.generated = 0
        self.current = NO_PARENT  # the index of the state being expanded, for error traces
        self.start = time.perf_counter()

    # -- running -------------------------------------------------------------------

    def run(self, saved: dict[str, Any] | None = None) -> EndReason:
        """Explore until the observers are done, the states run out, a limit or Ctrl-C;
        from `saved` (a snapshot) if given."""
        self.start = time.perf_counter()
        try:
            if saved is not None:
                self._restore(saved)
            else:
                end = self._seed()
                if end is not None:
                    return end
            if self.edge_observers:
                return self._loop(self._expand_edges)
            return self._loop(self._expand_plain)
        except KeyboardInterrupt:
            return EndReason.INTERRUPTED

    @property
    def seconds(self) -> float:
        return time.perf_counter() - self.start

    def _seed(self) -> EndReason | None:
        store, frontier, key = self.store, self.frontier, self.store.key
        self.generated = len(self.initial)
        for move, state in enumerate(self.initial):
            if self.canonical is not None:
                state = self._call(lambda s=state: self.canonical(s), "permute")  # type: ignore[misc]
            fp = key(state)
            if fp in store:
                continue
            index = store.add(fp, NO_PARENT, move)
            frontier.queue.append(state)
            if self._visit(state, index, True):
                return EndReason.DECIDED
            if (bound := self._bound()) is not None:
                return bound
        return None

    def _loop(self, expand_one: Callable[[Any, int], EndReason | None]) -> EndReason:
        frontier, store, settings = self.frontier, self.store, self.settings
        queue = frontier.queue
        while queue:
            if frontier.next == frontier.level_end:  # a level starts: the queue holds it
                for observer in self.observers:
                    observer.level(self)
                if settings.max_depth is not None and frontier.depth >= settings.max_depth:
                    return EndReason.MAX_DEPTH if self._beyond() else EndReason.EXHAUSTED
                frontier.begin_level(len(store))
            state = queue.popleft()
            self.current = index = frontier.next
            frontier.next += 1
            try:
                end = expand_one(state, index)
            except Misuse as exc:  # the expanded state itself, changed
                raise self._misuse(exc, index) from None
            except (ModelError, KeyboardInterrupt):
                raise
            except Exception as exc:  # any failure in user code is reported, with its trace
                raise self._model_error(exc, index, "successors") from exc
            if end is not None:
                return end
        return EndReason.EXHAUSTED

    # -- expanding one state -----------------------------------------------------------

    def _expand_plain(self, state: Any, current: int) -> EndReason | None:
        """Expand `state` with the reductions; store, queue and visit what is new."""
        seen, exact = self.store.keys, self.store.exact
        before = self._leaving(state)
        generated, candidates = self.expand(state)  # type: ignore[misc]
        self.generated += generated
        arrive = self._arrive
        for move, succ in candidates:
            fp = succ if exact else hash(succ) & FP_MASK
            if fp in seen:
                continue
            seen.add(fp)
            if (end := arrive(succ, state, current, move)) is not None:
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
                target = index[fp] = len(parents)
                if (end := arrive(succ, state, current, move)) is not None:
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

    def _arrive(self, succ: Any, state: Any, current: int, move: int) -> EndReason | None:
        """A new state, `succ`, move `move` of state `current` (`state`), whose key the
        store has just taken: checked, given its parent and move, queued and visited; the
        end of the exploration if that ends it."""
        try:  # every new state checked: a value, nothing compared by identity
            self.values.stored(succ, state)
        except Misuse as exc:
            raise self._misuse(exc, current, move) from None
        parents, frontier = self.store.parents, self.frontier
        parents.append(current)
        self.store.moves.append(move)
        frontier.queue.append(succ)
        count = len(parents)
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
        if self.settings.progress is not None:
            f = self.frontier
            self.settings.progress(
                Progress(len(self.store), self.generated, len(f), f.depth, self.seconds)
            )

    def _beyond(self) -> bool:
        """Whether any state past the depth bound is new (else the bound cut nothing off)."""
        key, store = self.store.key, self.store
        if self.edge_observers:
            successors = self.model.successors
            return any(
                key(succ) not in store
                for state in self.frontier.queue
                for _, succ in successors(state)
            )
        expand = self.expand
        assert expand is not None
        return any(
            key(succ) not in store for state in self.frontier.queue for _, succ in expand(state)[1]
        )

    # -- checkpoints -------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """Everything a resumed exploration needs, at a level's start."""
        return {
            "store": self.store.save(),
            "frontier": self.frontier.save(),
            "generated": self.generated,
            "seconds": self.seconds,
            "observers": [observer.save() for observer in self.observers],
        }

    def _restore(self, saved: dict[str, Any]) -> None:
        self.store.load(saved["store"])
        self.frontier = Frontier.load(saved["frontier"])
        self.generated = saved["generated"]
        self.start -= saved["seconds"]  # the seconds reported are those of the whole search
        for observer, part in zip(self.observers, saved["observers"], strict=True):
            observer.load(part)
        key, store = self.store.key, self.store
        if any(key(state) not in store for state in list(self.frontier.queue)[:64]):
            raise LeadercheckError(HASH_DIFFERS)

    # -- errors and traces -------------------------------------------------------------

    def _call(self, fn: Callable[[], Any], what: str) -> Any:
        """Run model code; an exception becomes a ModelError carrying the trace so far."""
        try:
            return fn()
        except ModelError:
            raise
        except Exception as exc:  # any failure in user code is reported, with its trace
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
        return ModelError(f"model raised {type(exc).__name__} in {what}{where}: {exc}", trace)

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
        return rebuild_trace(
            self.model,
            self.initial,
            moves,
            self.canonical,
            stored=lambda state: key(state) in store,
            purpose=purpose,
        )


def _model_name(model: Model[Any]) -> str:
    from leadercheck.checker.guard import model_name  # noqa: PLC0415 (guard imports the engine)

    return model_name(model)
