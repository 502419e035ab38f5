"""Models with a misuse planted where a search first meets it deep (checker/engine/values.py).

`Planted` walks two counters up a size x size grid (a + b is the depth, 38 at most for 20),
whose two nodes may be swapped (a symmetry); the misuse appears first at depth `depth`:

- "mutate": `successors` of a state at that depth changes the state's Box in place;
- "identity": the successors at depth + 1 carry a Tag, an object compared by identity;
- "unhashable": the successors at depth + 1 carry a list.

`PlantedGraph` is the same for a random graph: the misuse sits at one chosen node.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from leadercheck.checker import Action, Model

HOWS = ("mutate", "identity", "unhashable")
MESSAGES = {
    "mutate": "mutated the state it was given in place",
    "identity": "compare by identity (the class Tag, at state.extra,",
    "unhashable": "a state is unhashable (a list, at state.extra)",
}


class Box:
    """Mutable, but compared and hashed by its value: a value until someone changes it."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Box) and other.value == self.value

    def __hash__(self) -> int:
        return hash(("Box", self.value))

    def __repr__(self) -> str:
        return f"Box({self.value})"


class Tag:
    """Compared and hashed by identity: two equal-looking tags are two."""


class Cell(NamedTuple):
    a: int
    b: int
    extra: Any


def misused(how: str, depth: int, at: int) -> Any:
    """What a state at depth `at` carries when the misuse is planted at `depth`."""
    if how == "mutate":
        return Box(0)
    if at != depth + 1:
        return None
    return Tag() if how == "identity" else [at]


class Planted(Model[Cell]):
    def __init__(self, how: str, depth: int, size: int = 20) -> None:
        self.how, self.depth, self.size = how, depth, size

    def initial_states(self) -> Sequence[Cell]:
        return [Cell(0, 0, misused(self.how, self.depth, 0))]

    def successors(self, state: Cell) -> Iterable[tuple[Action, Cell]]:
        if self.how == "mutate" and state.a + state.b == self.depth:
            state.extra.value += 1
        out = []
        for actor, a, b in (("n1", state.a + 1, state.b), ("n2", state.a, state.b + 1)):
            if a < self.size and b < self.size:
                extra = misused(self.how, self.depth, a + b)
                out.append((Action("up", actor, None, f"to {a},{b}"), Cell(a, b, extra)))
        return out

    def symmetry_groups(self) -> Sequence[Sequence[int]]:
        return [[0, 1]]

    def permute(self, state: Cell, perm: Sequence[int]) -> Cell:
        return state if list(perm) == [0, 1] else Cell(state.b, state.a, state.extra)

    def node_keys(self, state: Cell) -> Sequence[Any]:
        return (state.a, state.b)

    def order_key(self, state: Cell) -> Any:
        return (state.a, state.b)

    def summary(self, state: Cell) -> Mapping[str, str]:
        return {"n1": str(state.a), "n2": str(state.b)}


class PlantedGraph(Model[tuple[int, Any]]):
    """A random graph's nodes as states (node, extra), the misuse planted at `at`."""

    def __init__(
        self, initial: Sequence[int], edges: Mapping[int, Sequence[int]], how: str, at: int
    ) -> None:
        self.initial, self.edges, self.how, self.at = list(initial), edges, how, at

    def _state(self, node: int) -> tuple[int, Any]:
        if self.how == "mutate":
            return (node, Box(0))
        if node != self.at:
            return (node, None)
        return (node, Tag() if self.how == "identity" else [node])

    def initial_states(self) -> Sequence[tuple[int, Any]]:
        return [self._state(n) for n in self.initial]

    def successors(self, state: tuple[int, Any]) -> Iterable[tuple[Action, tuple[int, Any]]]:
        node = state[0]
        if self.how == "mutate" and node == self.at:
            state[1].value += 1
        for k, target in enumerate(self.edges.get(node, ())):
            yield Action(f"e{k}", str(node), str(target)), self._state(target)
