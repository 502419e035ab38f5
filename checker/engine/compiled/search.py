"""The compiled breadth-first search: a model's kernel (checker/kernel.py) runs whole levels.

The same search as the one-process one (checker/engine/strategies/bfs.py), for the models
that offer a kernel: level by level, states stored in discovery order with their parent's
index and their move (the position among the parent's successors, the model's order), so a
trace is rebuilt by the model's own Python code (checker/engine/successors.py) and is the
trace the one-process search finds. What differs is the cost per state: the kernel
expands
a batch of packed rows and canonicalises them (symmetry) in compiled code, the visited set
is a table of fingerprints (checker/engine/compiled/table.py), and a level waits in memory
or, past a share of the memory bound, on disk (checker/engine/compiled/levels.py). Where the
table cannot grow under the memory bound, its fingerprints go to a sorted file
(checker/engine/compiled/disk.py) and it starts empty: a state new to the table is stored
at once, and when its level is whole the level's such states are looked up in the file
together, in one pass, and those found there are dropped (delayed duplicate detection: a
level is what a breadth-first search needs exact, so counts, depths and traces are those of
a search in memory). Under --max-states the file is asked at once, so the bound counts new
states only.

Claims stay Python: each is evaluated by its own predicate on a decoded state, once per
claim key for the claims the kernel covers (its contract: one key, one verdict on each),
on every state for any other, so a claim is never written twice. Per stored state: a
fingerprint slot (about 12 bytes), its parent (4) and move (2), and its row while its
level waits.

Bounds as the one-process search has them: states (after the state that reaches the bound),
depth (at a level's start; EXHAUSTED if nothing beyond it is new), resident memory (after
each batch; before the table grows, where the fingerprints then go to disk, but with
--exact, whose rows stay in memory), Ctrl-C (between two batches: a batch is a few
milliseconds of compiled code).
"""

from __future__ import annotations

import shutil
import tempfile
import time
from array import array
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from leadercheck.checker.engine.compiled import NOTE
from leadercheck.checker.engine.compiled.disk import DiskSet
from leadercheck.checker.engine.compiled.levels import Level, SpillFailed
from leadercheck.checker.engine.compiled.table import BITS, Table, fingerprints
from leadercheck.checker.engine.explore import peak_memory, resident_memory
from leadercheck.checker.engine.guard import call_model, check_initial
from leadercheck.checker.engine.interrupts import model_escapes
from leadercheck.checker.engine.settings import SearchSettings
from leadercheck.checker.engine.store import NO_PARENT, moves_along
from leadercheck.checker.engine.successors import decides, judge, purpose_of, rebuild_trace
from leadercheck.checker.errors import ModelError
from leadercheck.checker.kernel import Kernel
from leadercheck.checker.model import Model, model_name
from leadercheck.checker.properties import Property
from leadercheck.checker.result import CheckResult, EndReason, Progress, Stats
from leadercheck.checker.trace import Trace

SLICE = 1 << 16  # frontier rows handed to the kernel at a time
BATCH_BYTES = 4 << 20  # the successor buffer, at most
SPILL_SHARE = 4  # a level goes to disk past 1/SPILL_SHARE of the memory bound
_DTYPES = {"H": np.uint16, "I": np.uint32}  # the parents' and moves' arrays, as numpy sees them


class CompiledSearch:
    """One breadth-first search of `model` through `kernel`, judging `properties`
    (invariants and `sometimes` claims)."""

    def __init__(
        self,
        model: Model[Any],
        kernel: Kernel[Any],
        properties: Sequence[Property],
        settings: SearchSettings,
    ) -> None:
        self.model = model
        self.kernel = kernel
        self.properties = tuple(properties)
        self.settings = settings
        self.exact = settings.reductions.exact
        self.words = kernel.words
        self.table = Table(self.words, self.exact)
        self.parents = array("I")
        self.moves = array("H" if kernel.max_successors < 1 << 16 else "I")
        self.found: dict[str, int] = {}
        self.flags: dict[int, int] = {}  # claim key -> the claims its states decide (bits)
        self.covered = [kernel.covers(p) for p in self.properties]
        self.count = 0  # states stored, their parents and moves whole
        self.generated = 0
        self.depth = 0
        self.notes: list[str] = [NOTE]
        self.start = time.perf_counter()
        self.initial: list[Any] = []
        # past the memory bound, the visited fingerprints the table cannot hold (disk.py);
        # the states stored from `unconfirmed` on are new to the table, and are checked
        # against the disk, with these fingerprints, when their level is whole
        self.disk: DiskSet | None = None
        self.unconfirmed = 0
        self.pending: list[tuple[Any, Any]] = []
        self.flushes = 0

    # -- the search --------------------------------------------------------------------

    def run(self) -> CheckResult:
        model = self.model
        self.initial = call_model(lambda: check_initial(model), "initial_states")
        spill_dir: Path | None = None
        max_memory = self.settings.max_memory
        if max_memory is not None:
            spill_dir = Path(tempfile.mkdtemp(prefix="leadercheck-frontier-"))
            if not self.exact:  # with --exact the table keeps rows, which stay in memory
                self.disk = DiskSet(spill_dir)
        spill = max_memory // SPILL_SHARE if max_memory is not None else None
        levels: list[Level] = []

        def pressed() -> bool:  # three quarters of the bound used: levels to disk
            return max_memory is not None and 4 * resident_memory() > 3 * max_memory

        def new_level() -> Level:
            level = Level(self.words, spill, spill_dir, pressed)
            levels.append(level)
            return level

        try:
            try:
                end = self._explore(new_level)
                self._confirm(levels[-1])  # a search that stopped early: its last states
            except KeyboardInterrupt:
                end = EndReason.INTERRUPTED
            except SpillFailed as exc:
                self.notes.append(f"the search could not go on on disk: {exc}")
                end = EndReason.MAX_MEMORY
            if self.flushes and self.disk is not None:
                self.notes.append(
                    f"past the memory bound the visited fingerprints went to disk "
                    f"({self.flushes} times; {self.disk.count:,} there at the end)"
                )
        finally:
            for level in levels:
                level.close()
            if spill_dir is not None:
                shutil.rmtree(spill_dir, ignore_errors=True)
        # Ctrl-C may have cut a level's compaction (_confirm) short: what is whole stays
        self.count = min(self.count, len(self.parents), len(self.moves))
        del self.parents[self.count :]
        del self.moves[self.count :]
        return self._result(end)

    def _explore(self, new_level: Callable[[], Level]) -> EndReason:
        kernel, settings = self.kernel, self.settings
        rows = np.array([kernel.encode(s) for s in self.initial], dtype=np.uint64)
        rows = rows.reshape(len(self.initial), self.words)
        if kernel.symmetric:
            kernel.canonicalize(rows, len(rows))
        self.generated = len(rows)
        level = new_level()
        positions = np.arange(len(rows), dtype=np.int64)
        end = self._store(rows, len(rows), None, positions, level, 0)
        if end is not None:
            return end
        most = max(kernel.max_successors, BATCH_BYTES // (8 * self.words))
        # the successor buffer, each successor's parent and move (sized per level below)
        out: Any = np.empty((0, self.words), dtype=np.uint64)
        parents: Any = np.empty(0, dtype=np.int64)
        moves: Any = np.empty(0, dtype=np.int64)
        base = 0  # the index of the level's first state
        depth_now = 0
        while len(level):
            # the successor buffer: what the level may need at twice the successors a state
            # has had so far, up to BATCH_BYTES (a small search allocates little)
            branching = 2 * max(1, self.generated // max(1, self.count))
            wanted = min(most, len(level) * branching + kernel.max_successors)
            if len(out) < wanted:
                out = np.empty((wanted, self.words), dtype=np.uint64)
                parents = np.empty(wanted, dtype=np.int64)
                moves = np.empty(wanted, dtype=np.int64)
            if settings.max_depth is not None and depth_now >= settings.max_depth:
                return EndReason.MAX_DEPTH if self._beyond(level, out) else EndReason.EXHAUSTED
            following = new_level()
            offset = base
            for rows in level.slices(SLICE):
                at = 0
                while at < len(rows):
                    done, count = kernel.expand(rows, at, len(rows), out, parents, moves)
                    done, count = int(done), int(count)
                    if kernel.symmetric:
                        kernel.canonicalize(out, count)
                    self.generated += count
                    parents[:count] += offset
                    end = self._store(out, count, parents, moves, following, depth_now + 1)
                    if end is not None:
                        return end
                    at = done
                    if (bound := self._bound()) is not None:
                        return bound
                    self._report(len(level) - (offset - base + at) + len(following))
                offset += len(rows)
            self._confirm(following)
            if not len(following):  # every state it found was on disk already
                self.depth = depth_now
            level.close()
            base += len(level)
            level = following
            depth_now += 1
        return EndReason.EXHAUSTED

    def _store(
        self,
        rows: Any,
        count: int,
        parents: Any,
        moves: Any,
        level: Level,
        level_depth: int,
    ) -> EndReason | None:
        """Add the new ones of rows[:count] (parents None: initial states, their moves
        their positions), queue them in `level` (the states `level_depth` steps from an
        initial one), judge them; the end of the search if they end it."""
        fresh = np.empty(count, dtype=np.int64)
        i = 0
        while i < count:
            if self.table.full:
                bound = self.settings.max_memory
                # room kept for a level in memory (it goes to disk past that share)
                room = bound // SPILL_SHARE if bound is not None and self.disk is not None else 0
                if bound is not None and resident_memory() + self.table.growth() + room > bound:
                    if not self.table.fill_up():
                        if self.disk is None:
                            return EndReason.MAX_MEMORY
                        self._confirm(level)
                        self._flush()
                else:
                    self.table.grow()
            i, new = self.table.add(rows, i, count, fresh)
            if not new:
                continue
            picked = fresh[:new]
            first = self.count
            cap = self.settings.max_states
            keys = checks = None
            if self.disk is not None and self.disk.count:  # new to the table, maybe on disk
                keys, checks = fingerprints(rows, picked)
                if cap is not None:  # a bound on new states: ask the disk now, not later
                    picked, keys, checks = picked[~self.disk.holds(keys, checks)], None, None
                    if not len(picked):
                        continue
            if cap is not None and first + len(picked) >= cap:
                picked = picked[: cap - first]
            news = rows[picked]
            decided = self._judge(news, first)
            if decided is not None:
                picked = picked[: decided - first + 1]
                news = news[: len(picked)]
            if keys is not None and checks is not None:  # checked when the level is whole
                self.pending.append((keys[: len(picked)], checks[: len(picked)]))
            if parents is None:
                self.parents.extend([NO_PARENT] * len(picked))
            else:
                self.parents.frombytes(parents[picked].astype(np.uint32).tobytes())
            self.moves.frombytes(moves[picked].astype(self.moves.typecode).tobytes())
            level.append(news)
            self.depth = max(self.depth, level_depth)
            self.count = first + len(picked)
            stop = (
                EndReason.DECIDED
                if decided is not None
                else EndReason.MAX_STATES
                if cap is not None and self.count >= cap
                else None
            )
            if stop is not None:
                if parents is not None:  # generated as far as the last state's parent's
                    last = parents[int(picked[-1])]
                    unseen = count - int(np.searchsorted(parents[:count], last, side="right"))
                    self.generated -= unseen
                return stop
        return None

    def _beyond(self, level: Level, out: Any) -> bool:
        """Whether any successor of the level's states is new (a depth bound cut it off)."""
        parents = np.empty(len(out), dtype=np.int64)
        moves = np.empty(len(out), dtype=np.int64)
        for rows in level.slices(SLICE):
            at = 0
            while at < len(rows):
                done, count = self.kernel.expand(rows, at, len(rows), out, parents, moves)
                if self.kernel.symmetric:
                    self.kernel.canonicalize(out, int(count))
                if self._any_new(out, int(count)):
                    return True
                at = int(done)
        return False

    def _any_new(self, rows: Any, count: int) -> bool:
        """Whether any of rows[:count] is in neither the table nor the disk."""
        missing = self.table.missing(rows, count)
        if not len(missing) or self.disk is None or not self.disk.count:
            return bool(len(missing))
        return not bool(self.disk.holds(*fingerprints(rows, missing)).all())

    # -- the visited set past the memory bound -------------------------------------------

    def _flush(self) -> None:
        """Move the table's fingerprints to the disk set; the table starts empty."""
        assert self.disk is not None
        keys, checks = self.table.drain()
        self.disk.merge(keys, checks)
        self.table.clear()
        self.flushes += 1

    def _confirm(self, level: Level) -> None:
        """Drop the states stored since the last confirmation (the last ones of `level`)
        that the disk set holds: they were stored before the table was last emptied, so
        they are no new states; the rest are confirmed new."""
        start, pending = self.unconfirmed, self.pending
        self.unconfirmed, self.pending = self.count, []
        n = self.count - start
        if not n or self.disk is None or not self.disk.count or not pending:
            return
        keys = np.concatenate([k for k, _ in pending])
        checks = np.concatenate([c for _, c in pending])
        assert len(keys) == n, (len(keys), n)
        dup = self.disk.holds(keys, checks)
        if not dup.any():
            return
        keep = ~dup
        level.compact_tail(n, keep)
        for store in (self.parents, self.moves):
            tail = np.frombuffer(store, dtype=_DTYPES[store.typecode])[start : start + n]
            kept = tail[keep].tobytes()
            del tail
            del store[start:]
            store.frombytes(kept)
        renumber = start - 1 + np.cumsum(keep)  # old index - start -> new index
        for name, index in self.found.items():
            if index >= start:
                self.found[name] = int(renumber[index - start])
        self.count = self.unconfirmed = start + int(keep.sum())

    def _bound(self) -> EndReason | None:
        bound = self.settings.max_memory
        if bound is not None and resident_memory() >= bound:
            return EndReason.MAX_MEMORY
        return None

    def _report(self, queue: int) -> None:
        if self.settings.progress is not None:
            seconds = time.perf_counter() - self.start
            self.settings.progress(Progress(self.count, self.generated, queue, self.depth, seconds))

    # -- claims ------------------------------------------------------------------------

    def _judge(self, rows: Any, first: int) -> int | None:
        """Record the first state among `rows` (indices from `first`) to decide each
        undecided claim; the index at which every claim is decided, if one is."""
        open_claims = [k for k, p in enumerate(self.properties) if p.name not in self.found]
        if not open_claims or not len(rows):
            return None
        bits = np.zeros(len(rows), dtype=np.int64)
        keyed = [k for k in open_claims if self.covered[k]]
        if keyed:  # once per claim key
            keys = np.empty(len(rows), dtype=np.uint64)
            self.kernel.claim_keys(rows, len(rows), keys)
            unique, where, inverse = np.unique(keys, return_index=True, return_inverse=True)
            per_key = [
                self._flags(int(k), rows[int(w)], first + int(w))
                for k, w in zip(unique, where, strict=True)
            ]
            bits |= np.array(per_key, dtype=np.int64)[inverse]
        others = [k for k in open_claims if not self.covered[k]]
        if others:  # on every state
            for at, row in enumerate(rows):
                bits[at] |= self._decided(others, row, first + at)
        last = None
        for k in open_claims:
            hits = np.flatnonzero(bits & (1 << k))
            if hits.size:
                index = first + int(hits[0])
                self.found[self.properties[k].name] = index
                last = index if last is None else max(last, index)
        if len(self.found) == len(self.properties):
            return last
        return None

    def _flags(self, key: int, row: Any, index: int) -> int:
        """The covered claims decided by the states of claim key `key` (`row` one of them,
        stored as `index`): each claim's own predicate, once per key."""
        known = self.flags.get(key)
        if known is None:
            covered = [k for k, c in enumerate(self.covered) if c]
            known = self.flags[key] = self._decided(covered, row, index)
        return known

    def _decided(self, claims: list[int], row: Any, index: int) -> int:
        """The claims (positions) that the state of `row` decides, as bits."""
        state = self.kernel.decode([int(w) for w in row])
        bits = 0
        for k in claims:
            prop = self.properties[k]
            try:
                if decides(prop, state):
                    bits |= 1 << k
            except Exception as exc:
                raise self._claim_error(prop, exc, index) from exc
        return bits

    def _claim_error(self, prop: Property, exc: Exception, index: int) -> ModelError:
        """A claim that raised: a ModelError with the trace to the state it judged (the
        state is stored once its batch is, so the trace is rebuilt from its parent)."""
        what = f"{model_name(self.model)}: {prop.name} raised {type(exc).__name__}: {exc}"
        return ModelError(what)

    # -- results -----------------------------------------------------------------------

    def moves_to(self, index: int) -> list[int]:
        return moves_along(self.parents, self.moves, index)

    def canonical_state(self, state: Any) -> Any:
        """The model's state of the representative of `state`'s orbit (the kernel's)."""
        row = np.array([self.kernel.encode(state)], dtype=np.uint64)
        self.kernel.canonicalize(row, 1)
        return self.kernel.decode([int(w) for w in row[0]])

    def trace_to(self, index: int, purpose: str) -> Trace:
        canonical = self.canonical_state if self.kernel.symmetric else None
        with model_escapes(f"successors, rebuilding {purpose}"):
            return rebuild_trace(
                self.model, self.initial, self.moves_to(index), canonical, purpose=purpose
            )

    def _result(self, end: EndReason) -> CheckResult:
        seconds = time.perf_counter() - self.start
        stats = Stats(
            distinct_states=self.count,
            generated_states=self.generated,
            transitions=self.generated - len(self.initial),
            depth=self.depth,
            seconds=seconds,
            peak_memory_bytes=peak_memory(),
            exact=self.exact,
            fingerprint_bits=BITS,
        )
        results = []
        with model_escapes("successors, judging the claims"):
            for prop in self.properties:
                index = self.found.get(prop.name)
                if index is not None and index >= self.count:
                    index = None  # found in a batch that Ctrl-C cut short
                trace = None if index is None else self.trace_to(index, purpose_of(prop))
                results.append(judge(prop, trace, end, self.model))
        return CheckResult(tuple(results), stats, end, tuple(self.notes))
