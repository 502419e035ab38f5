"""The frontier of a breadth-first search: the states met and not yet expanded, level by level.

The states wait in discovery order, so the first in the queue has the index `next`; it
leaves the queue once its expansion is whole. A level starts when the state to expand is
the first of the states discovered while the previous level was expanded; there the queue
holds exactly the level, which is where a depth bound is checked and a checkpoint taken
when one is due (one is also taken where a search stops, in a level: `level_end` is saved
too). `levels` holds the first index of each level (the depth of a state is where its
index falls), `depth` the deepest level discovered (`len(levels) - 1`).
"""

from __future__ import annotations

from array import array
from collections import deque
from collections.abc import Iterable
from typing import Any

from leadercheck.checker.engine.snapshot import (
    Unreadable,
    Values,
    array_of,
    count_of,
    record_of,
    values_of,
)


class Frontier:
    """The queue, the index of the next state to expand, and where each level starts."""

    def __init__(
        self,
        states: Iterable[Any] = (),
        next_index: int = 0,
        depth: int = 0,
        levels: Iterable[int] = (0,),
        level_end: int | None = None,
    ) -> None:
        self.queue: deque[Any] = deque(states)
        self.next = next_index  # the index of the state expanded next (first in the queue)
        # one past the last index of the level being expanded (at a level's start: `next`)
        self.level_end = next_index if level_end is None else level_end
        self.depth = depth
        self.levels = array("I", levels)

    def __len__(self) -> int:
        return len(self.queue)

    def at_level_start(self) -> bool:
        return self.next == self.level_end

    def begin_level(self, stored: int) -> None:
        """The level now being expanded ends where the states stored so far end."""
        self.level_end = stored

    def discovered(self, index: int) -> None:
        """A new state of index `index` joins the queue's next level (the hot loops inline
        this with the append)."""
        if index == self.level_end:
            self.depth += 1
            self.levels.append(index)

    def save(self) -> dict[str, Any]:
        """The frontier as data (checker/engine/snapshot.py): the queue's states as values."""
        return {
            "queue": Values(self.queue),
            "next": self.next,
            "level_end": self.level_end,
            "depth": self.depth,
            "levels": self.levels,
        }

    @classmethod
    def load(cls, saved: Any, stored: int) -> Frontier:
        """The frontier `save()` gave, of a store of `stored` states; one that no frontier
        of such a store is (its queue not the states from `next` on, levels out of order)
        is Unreadable."""
        saved = record_of(saved, "queue", "next", "level_end", "depth", "levels")
        queue = values_of(saved, "queue")
        next_index = count_of(saved, "next", stored)
        level_end = count_of(saved, "level_end", stored)
        levels = array_of(saved, "levels", "I")
        if len(queue) != stored - next_index or level_end < next_index:
            raise Unreadable("a queue that is not the states not yet expanded")
        starts = list(levels)
        if (
            not starts
            or starts[0] != 0
            or any(a >= b for a, b in zip(starts, starts[1:], strict=False))
            or (len(starts) > 1 and starts[-1] >= stored)
            or count_of(saved, "depth") != len(starts) - 1
        ):
            raise Unreadable("levels that are not a breadth-first search's")
        return cls(queue, next_index, len(starts) - 1, levels, level_end)
