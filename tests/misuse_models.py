"""Tiny models that each break one promise a model makes to the engine (checker/engine/guard.py).

Each is a counter over 0..limit (or a record holding one) with a single misuse, so a test
can say exactly what the guard must report. None of them depends on models/.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from leadercheck.checker import Action, Model


def _steps(n: int, limit: int) -> list[tuple[Action, int]]:
    return [
        (Action(f"add{step}", "counter", None, f"{n}->{n + step}"), n + step)
        for step in (1, 2)
        if n + step <= limit
    ]


class Flipping(Model[int]):
    """Successors in the reverse order on every other call: a nondeterministic order."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.calls = 0

    def initial_states(self) -> Sequence[int]:
        return [0]

    def successors(self, state: int) -> Iterable[tuple[Action, int]]:
        self.calls += 1
        pairs = _steps(state, self.limit)
        return pairs[::-1] if self.calls % 2 == 0 else pairs


class Changing(Model[int]):
    """A counter whose successors change once `changed` is set, between the search and the
    rebuilding of its trace: reversed (`how="reverse"`), moved to unexplored states
    ("elsewhere") or gone ("none")."""

    def __init__(self, limit: int, how: str) -> None:
        self.limit, self.how = limit, how
        self.changed = False

    def initial_states(self) -> Sequence[int]:
        return [0]

    def successors(self, state: int) -> Iterable[tuple[Action, int]]:
        pairs = _steps(state, self.limit)
        if not self.changed:
            return pairs
        if self.how == "reverse":
            return pairs[::-1]
        if self.how == "elsewhere":
            return [(action, succ + 100) for action, succ in pairs]
        return []


class Drifting(Model[int]):
    """0 <-> 1 forever (a cycle that never reaches 2), whose successors move to unexplored
    states after `after` calls: the liveness judgement rebuilds its lasso on the moved ones."""

    def __init__(self, after: int) -> None:
        self.after = after
        self.calls = 0

    def initial_states(self) -> Sequence[int]:
        return [0]

    def successors(self, state: int) -> Iterable[tuple[Action, int]]:
        self.calls += 1
        succ = 1 - state
        if self.calls > self.after:
            succ += 100
        return [(Action("flip", "p"), succ)]


class Cell:
    """A plain class: compares and hashes by identity."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __repr__(self) -> str:
        return f"Cell({self.n})"


class ByIdentity(Model[Cell]):
    """States are Cells: every successor is a new object, so two equal states count as two
    (and a fingerprint set of them is as good as none)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit

    def initial_states(self) -> Sequence[Cell]:
        return [Cell(0)]

    def successors(self, state: Cell) -> Iterable[tuple[Action, Cell]]:
        return [(action, Cell(n)) for action, n in _steps(state.n, self.limit)]


class Holder(NamedTuple):
    n: int
    cell: Cell


class HoldsIdentity(Model[Holder]):
    """A NamedTuple state with a Cell inside: a value outside, identity within."""

    def initial_states(self) -> Sequence[Holder]:
        return [Holder(0, Cell(0))]

    def successors(self, state: Holder) -> Iterable[tuple[Action, Holder]]:
        return [(a, Holder(n, Cell(n))) for a, n in _steps(state.n, 4)]


@dataclass(unsafe_hash=True)
class Box:
    """Hashable by its field, yet mutable."""

    n: int


class MutatesBox(Model[Box]):
    """Bumps the state it is given, then yields a copy of it."""

    def initial_states(self) -> Sequence[Box]:
        return [Box(0)]

    def successors(self, state: Box) -> Iterable[tuple[Action, Box]]:
        if state.n < 6:
            state.n += 1
            yield Action("inc", "box"), Box(state.n)


class Bag:
    """Equal and hashed by a list it holds, which anyone can change."""

    def __init__(self, items: Sequence[int]) -> None:
        self.items = list(items)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Bag) and self.items == other.items

    def __hash__(self) -> int:
        return hash(tuple(self.items))

    def __repr__(self) -> str:
        return f"Bag({self.items})"


class MutatesBag(Model[Bag]):
    """Appends to the list inside the state it is given."""

    def initial_states(self) -> Sequence[Bag]:
        return [Bag([])]

    def successors(self, state: Bag) -> Iterable[tuple[Action, Bag]]:
        if len(state.items) < 3:
            state.items.append(len(state.items))
            yield Action("put", "bag"), Bag(state.items)


class ListState(Model[Any]):
    """Its initial state is a list."""

    def initial_states(self) -> Sequence[Any]:
        return [[0, 0]]

    def successors(self, state: Any) -> Iterable[tuple[Action, Any]]:
        return []


class Point(NamedTuple):
    x: int
    y: int


class BareInitial(Model[Point]):
    """Returns its one initial state instead of a sequence of them."""

    def initial_states(self) -> Sequence[Point]:
        return Point(0, 0)  # type: ignore[return-value]

    def successors(self, state: Point) -> Iterable[tuple[Action, Point]]:
        return []


class Doubled(Model[int]):
    """Yields every add1 twice, with the same next state."""

    def __init__(self, limit: int) -> None:
        self.limit = limit

    def initial_states(self) -> Sequence[int]:
        return [0]

    def successors(self, state: int) -> Iterable[tuple[Action, int]]:
        pairs = _steps(state, self.limit)
        return pairs[:1] + pairs


class Tenured:
    """A mixin of role properties, as a protocol's node records use (the claims read them)."""

    __slots__ = ()

    @property
    def lead_token(self) -> int:
        raise NotImplementedError

    @property
    def tenure(self) -> int:
        return self.lead_token


class _NodeFields(NamedTuple):
    token: int = 0
    tenure: int = 0  # meant as a counter of its own: hides Tenured.tenure


class Node(_NodeFields, Tenured):
    __slots__ = ()

    @property
    def lead_token(self) -> int:
        return self.token


class Shadowed(Model[tuple[Node, ...]]):
    """Two nodes whose record's field `tenure` hides the mixin's property."""

    def initial_states(self) -> Sequence[tuple[Node, ...]]:
        return [(Node(), Node())]

    def successors(self, state: tuple[Node, ...]) -> Iterable[tuple[Action, tuple[Node, ...]]]:
        for i, node in enumerate(state):
            if node.token < 2:
                bumped = node._replace(token=node.token + 1)
                yield Action("acquire", f"n{i + 1}"), state[:i] + (bumped,) + state[i + 1 :]


@dataclass(frozen=True, slots=True)
class DataNode(Tenured):
    tenure: int = 0


class ShadowedLater(Model[tuple[int, DataNode | None]]):
    """A frozen dataclass node that appears only after the first step, with the same fault."""

    def initial_states(self) -> Sequence[tuple[int, DataNode | None]]:
        return [(0, None)]

    def successors(
        self, state: tuple[int, DataNode | None]
    ) -> Iterable[tuple[Action, tuple[int, DataNode | None]]]:
        if state[0] < 3:
            yield Action("grow", "g"), (state[0] + 1, DataNode(state[0]))


class FastButWrong(Model[int]):
    """Overrides next_states for speed, in another order than successors."""

    def __init__(self, limit: int) -> None:
        self.limit = limit

    def initial_states(self) -> Sequence[int]:
        return [0]

    def successors(self, state: int) -> Iterable[tuple[Action, int]]:
        return _steps(state, self.limit)

    def next_states(self, state: int) -> Iterable[int]:
        return [succ for _, succ in _steps(state, self.limit)][::-1]


class SetOfStrings(Model[int]):
    """Its actions come from iterating a set of strings: the order depends on the hash seed."""

    NAMES = frozenset(f"step-{c}" for c in "abcdefgh")

    def initial_states(self) -> Sequence[int]:
        return [0]

    def successors(self, state: int) -> Iterable[tuple[Action, int]]:
        if state < 3:
            for name in self.NAMES:
                yield Action(name, "p"), state + 1
