"""Tiny hand-made models whose state counts and shortest traces are known by hand."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from leadercheck.checker import Action, Model, always
from leadercheck.checker.model import FAULT, STEP
from leadercheck.checker.properties import Property


class Counter(Model[int]):
    """0..limit; from x you may add 1 or add 2 (if still <= limit).

    Distinct states: limit + 1. Generated: 1 + (limit) [+1 steps] + (limit - 1) [+2 steps].
    The shortest trace to x has ceil(x / 2) steps.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit

    def initial_states(self) -> Sequence[int]:
        return [0]

    def successors(self, state: int) -> Iterable[tuple[Action, int]]:
        for step in (1, 2):
            if state + step <= self.limit:
                yield (
                    Action(f"add{step}", "counter", None, f"{state}->{state + step}"),
                    state + step,
                )

    def summary(self, state: int) -> Mapping[str, str]:
        return {"counter": str(state)}


class Graph(Model[int]):
    """An explicit directed graph: nodes are ints, edges listed per node in order."""

    def __init__(self, initial: Sequence[int], edges: Mapping[int, Sequence[int]]) -> None:
        self.initial = list(initial)
        self.edges = edges

    def initial_states(self) -> Sequence[int]:
        return self.initial

    def successors(self, state: int) -> Iterable[tuple[Action, int]]:
        for k, target in enumerate(self.edges.get(state, ())):
            yield Action(f"e{k}", str(state), str(target)), target


class Exploding(Counter):
    """Raises once the counter reaches `at`."""

    def __init__(self, limit: int, at: int) -> None:
        super().__init__(limit)
        self.at = at

    def successors(self, state: int) -> Iterable[tuple[Action, int]]:
        if state == self.at:
            raise ValueError("boom")
        return super().successors(state)


class Tokens(Model[tuple[int, ...]]):
    """`n` interchangeable nodes, each holding 0..top tokens; a node may take one more.

    Distinct states: (top + 1) ** n. Up to renaming the nodes, a state is a multiset of
    n values in 0..top, so there are C(n + top, top) orbits. `keys` says whether the
    model offers node keys (else the engine tries every renaming).
    """

    def __init__(self, n: int, top: int, keys: bool = True) -> None:
        self.n, self.top, self.keys = n, top, keys

    def initial_states(self) -> Sequence[tuple[int, ...]]:
        return [(0,) * self.n]

    def successors(self, state: tuple[int, ...]) -> Iterable[tuple[Action, tuple[int, ...]]]:
        for i, held in enumerate(state):
            if held < self.top:
                yield Action("take", f"n{i + 1}"), state[:i] + (held + 1,) + state[i + 1 :]

    def symmetry_groups(self) -> Sequence[Sequence[int]]:
        return [range(self.n)]

    def permute(self, state: tuple[int, ...], perm: Sequence[int]) -> tuple[int, ...]:
        out = [0] * self.n
        for old, new in enumerate(perm):
            out[new] = state[old]
        return tuple(out)

    def node_keys(self, state: tuple[int, ...]) -> Sequence[int]:
        return state if self.keys else ()


class Labelled(Model[int]):
    """An explicit graph whose edges name their actor; actors in `unfair` are never forced.

    edges[state] lists (target, actor) in order; an edge is a step of its actor (weak
    fairness per actor), or a fault (never forced) for an actor named in `unfair`.
    """

    def __init__(
        self,
        initial: Sequence[int],
        edges: Mapping[int, Sequence[tuple[int, str]]],
        unfair: Sequence[str] = (),
    ) -> None:
        self.initial = list(initial)
        self.edges = edges
        self.unfair = set(unfair)

    def initial_states(self) -> Sequence[int]:
        return self.initial

    def successors(self, state: int) -> Iterable[tuple[Action, int]]:
        for target, actor in self.edges.get(state, ()):
            kind = FAULT if actor in self.unfair else STEP  # declared: a fault is never forced
            yield Action(f"to{target}", actor, kind=kind), target


class DeepLock(Model[tuple[int, tuple[int, ...]]]):
    """A lock deep in a wide space: `dials` ten-position dials, and a lock that turns once
    more whenever dial 0 shows the number of turns so far (mod 10); it opens at `depth`.

    Each dial may be turned one position at any time, so there are about
    (depth + 1) * 10 ** dials states: far too many to search breadth first with six
    dials, and most steps lead nowhere. The shortest trace to the open lock alternates
    turns of the lock and of dial 0: 2 * depth - 1 steps.
    """

    def __init__(self, depth: int, dials: int) -> None:
        self.depth, self.dials = depth, dials

    def initial_states(self) -> Sequence[tuple[int, tuple[int, ...]]]:
        return [(0, (0,) * self.dials)]

    def successors(
        self, state: tuple[int, tuple[int, ...]]
    ) -> Iterable[tuple[Action, tuple[int, tuple[int, ...]]]]:
        turns, dials = state
        for i in range(self.dials):
            turned = dials[:i] + ((dials[i] + 1) % 10,) + dials[i + 1 :]
            yield Action("turn", f"dial{i + 1}", None, f"to {turned[i]}"), (turns, turned)
        if turns < self.depth and dials[0] == turns % 10:
            yield Action("turn", "lock", None, f"to {turns + 1}"), (turns + 1, dials)

    def summary(self, state: tuple[int, tuple[int, ...]]) -> Mapping[str, str]:
        return {"lock": str(state[0]), "dials": "".join(map(str, state[1]))}


def lock_closed(depth: int) -> Property:
    """The invariant a DeepLock breaks when it opens."""
    return always("lock-closed", lambda state: state[0] < depth)
