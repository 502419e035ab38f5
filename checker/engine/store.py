"""The store: the states a search has met, and for each how it was reached.

A state is remembered under a key: its 60-bit fingerprint (`hash(state) & FP_MASK`, a
32-byte int, so the visited set stays small) or, with `exact`, the state itself (no
collision possible, at the cost of keeping every state). Each stored state has an index
(the order it was met in) and two packed 32-bit entries: the index of the state it was
discovered from and its move (the position of the action among that state's successors).
A trace is rebuilt by re-executing the model along the moves (checker/engine/successors.py), as
TLC and Stateright do, so no state but the frontier's is held in full.

`Store` keeps the keys in a set; `IndexedStore` maps each key to its index, for searches
that record edges (the fairness graph, the drawn state graph), where an edge may lead back
to any state; a `Shard` is one worker's part of a partitioned search's store. Two states of
n share a fingerprint with probability about n^2 / 2^61 (1e-6 for two million).

A store saves itself and loads into a new one (`save`, `load`) for checkpoints, and forgets
its last entries (`truncate`) when Ctrl-C takes an expansion back. The bitstate
search's store is a bit array (checker/engine/bits.py): it remembers no parents, since a
depth-first search keeps its path on its stack.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Callable
from operator import lt
from typing import Any

from leadercheck.checker.engine.snapshot import Unreadable, Values, array_of, record_of, values_of

FP_MASK = (1 << 60) - 1
NO_PARENT = 0xFFFFFFFF  # the parent of an initial state


def fingerprint(state: Any) -> int:
    """The key under which a visited state is remembered (hot loops inline it)."""
    return hash(state) & FP_MASK


def _itself(state: Any) -> Any:
    return state


def store_key(exact: bool) -> Callable[[Any], Any]:
    """What a store remembers a state by: its fingerprint, or the state itself with
    `exact` (hot loops inline `state if exact else hash(state) & FP_MASK`)."""
    return _itself if exact else fingerprint


def moves_along(parents: Any, moves: Any, index: int) -> list[int]:
    """The moves from an initial state (its position first) to the state `index`, each
    state's parent index in `parents` and move in `moves` (NO_PARENT: an initial state)."""
    path = []
    while index != NO_PARENT:
        path.append(moves[index])
        index = parents[index]
    path.reverse()
    return path


class Store:
    """The keys met (a set), and per index the parent index and the move."""

    def __init__(self, exact: bool = False) -> None:
        self.exact = exact
        self.key = store_key(exact)
        self.keys: Any = set()
        self.parents = array("I")
        self.moves = array("I")

    def __len__(self) -> int:
        return len(self.parents)

    def __contains__(self, key: Any) -> bool:
        return key in self.keys

    def add(self, key: Any, parent: int, move: int) -> int:
        """Remember a new key (not yet stored); its index."""
        index = len(self.parents)
        self.keys.add(key)
        self.parents.append(parent)
        self.moves.append(move)
        return index

    def moves_to(self, index: int) -> list[int]:
        """The moves from an initial state (its position first) to the state `index`."""
        return moves_along(self.parents, self.moves, index)

    def truncate(self, length: int, keys: list[Any]) -> None:
        """Forget the entries from index `length` on, whose keys are `keys` (a key not
        stored is no error: Ctrl-C may have come before it was)."""
        for key in keys:
            self.keys.discard(key)
        del self.parents[length:]
        del self.moves[length:]

    def save(self) -> dict[str, Any]:
        """The store as data (checker/engine/snapshot.py): the keys in index order (an
        IndexedStore's) or in the set's (a Store's), fingerprints as an array, states as
        values; the parents and moves as they are."""
        keys = array("Q", self.keys) if not self.exact else Values(self.keys)
        return {"keys": keys, "parents": self.parents, "moves": self.moves}

    def load(self, saved: Any) -> None:
        """Fill this (empty) store from `save()`'s output, in place: a loop may hold its
        arrays already. What no store saved is Unreadable: keys of the other kind, lengths
        that differ, a key twice, a parent that is not an earlier state."""
        saved = record_of(saved, "keys", "parents", "moves")
        keys = values_of(saved, "keys") if self.exact else array_of(saved, "keys", "Q")
        parents, moves = array_of(saved, "parents", "I"), array_of(saved, "moves", "I")
        count = len(parents)
        if len(keys) != count or len(moves) != count:
            raise Unreadable("a store whose keys, parents and moves differ in number")
        initial = next((i for i, p in enumerate(parents) if p != NO_PARENT), count)
        if not all(map(lt, parents[initial:], range(initial, count))):
            raise Unreadable("a store in which a state comes before its parent")
        self._fill(keys)
        if len(self.keys) != count:
            raise Unreadable("a store that holds a key twice")
        self.parents.extend(parents)
        self.moves.extend(moves)

    def _fill(self, keys: Any) -> None:
        self.keys.update(keys)


class Shard(Store):
    """A partition's part of a store (checker/engine/strategies/processes/partitioned.py): the
    fingerprints its worker owns, and per owned state its global id (its rank in the breadth-first
    order all workers agree on), its parent's global id and its move. The ids arrive in rank order
    as each level is numbered; a trace is followed back one `link` at a time, asking the
    worker that owns each state."""

    def __init__(self) -> None:
        super().__init__(exact=False)
        self.ids = array("I")  # per owned state: its global id (rank), ascending

    def link(self, rank: int) -> tuple[int, int] | None:
        """(parent's global id, move) of the state `rank`, if this shard owns it."""
        at = bisect_left(self.ids, rank)
        if at < len(self.ids) and self.ids[at] == rank:
            return self.parents[at], self.moves[at]
        return None


class IndexedStore(Store):
    """A store whose keys map to their indices: where an edge leads to a known state."""

    def __init__(self, exact: bool = False) -> None:
        super().__init__(exact)
        self.keys = {}

    def add(self, key: Any, parent: int, move: int) -> int:
        index = self.keys[key] = len(self.parents)
        self.parents.append(parent)
        self.moves.append(move)
        return index

    def truncate(self, length: int, keys: list[Any]) -> None:
        for key in keys:
            self.keys.pop(key, None)
        del self.parents[length:]
        del self.moves[length:]

    def _fill(self, keys: Any) -> None:
        self.keys.update(zip(keys, range(len(keys)), strict=True))  # saved in index order

    def index_of(self, key: Any) -> int | None:
        return self.keys.get(key)

    def states(self) -> tuple[Any, ...]:
        """The states in index order (exact stores only: their keys are the states)."""
        assert self.exact
        return tuple(self.keys)
