"""Symmetry reduction: one canonical representative per orbit of interchangeable nodes.

A model declares groups of node positions whose ids can be renamed among themselves
(`Model.symmetry_groups`) and how to rename them (`Model.permute`). Two states that differ
only by such a renaming have the same future up to renaming, and every property the
engine checks must be blind to it, so the search stores just one state of each orbit.

The representative is the smallest renamed state (in the model's `order_key`). Trying
every renaming costs |G| permutations per successor (24 for four interchangeable
nodes), so nodes are first sorted within their group by a key the renaming carries
along (`Model.node_keys`); only renamings that keep that order, that is, that permute
nodes with equal keys, are tried. Because the keys move with the nodes, every state of
an orbit yields the same candidate set and therefore the same minimum: the
representative is canonical, not just some member of the orbit.

Both rest on total orders: a model's node keys, and its `order_key` (by default
`value_key`, checker/total_order.py, which orders every value a state may hold).
Under a partial order (frozensets compared by `<`, which is subset) the least candidate
depends on where the search met the orbit, and the search would count one orbit as
several. So the order is checked where it decides: two node keys that sort next to each
other must be equal or one below the other, and so must the keys of the least candidate
and each other candidate; unequal candidates with equal keys tie. Either failure is a
ModelError of one line naming the two states' difference, never a wrong count; what the
checks cost is a comparison or two per candidate.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import permutations, product
from operator import lt
from typing import Any, NoReturn

from leadercheck.checker.engine.values import FIND_DEPTH, parts_of, short
from leadercheck.checker.errors import LeadercheckError, ModelError
from leadercheck.checker.model import Model
from leadercheck.checker.total_order import value_key

TOTALLY = "give an order_key that orders every state totally"
KEYS_TOTALLY = (
    "give node keys that order totally (value_key of each, from checker.total_order), or none"
)


def canonicalizer(model: Model[Any]) -> Callable[[Any], Any] | None:
    """The state -> representative function of `model`, or None if it declares no symmetry.

    The declared groups partition the node positions 0..n-1; a node that cannot be
    renamed is a group of its own.
    """
    found = _canonical_of(model)
    return None if found is None else found.canonical


def check_orbits(model: Model[Any], states: Iterable[Any]) -> int:
    """Raise ModelError unless each of `states` and its renamings by each group's
    generators (its first two nodes swapped; all of them rotated) get one representative.
    The order is checked on the way (`_Canonical` refuses one that does not decide), so
    this finds a partial order_key or node_keys, and also node keys that do not move with
    the nodes or a `permute` that misses an id. Returns how many states it checked: 0 for
    a model that declares no symmetry. For `verify --lint`."""
    found = _canonical_of(model)
    if found is None:
        return 0
    renamings = found.generators()
    checked = 0
    for state in states:
        rep = found.canonical(state)
        for perm in renamings:
            other = found.canonical(model.permute(state, perm))
            if other != rep:
                where, _, _ = _difference(rep, other)
                raise ModelError(
                    f"{found.name}: --symmetry gives one orbit two representatives: state "
                    f"{short(state, 60)} and its renaming {list(perm)} map to states that "
                    f"differ {where}; node_keys must move with the nodes under permute, and "
                    f"permute must rename every node id"
                )
        checked += 1
    return checked


def _canonical_of(model: Model[Any]) -> _Canonical | None:
    declared = tuple(tuple(g) for g in model.symmetry_groups())
    groups = tuple(g for g in declared if len(g) > 1)
    if not groups:
        return None
    positions = sorted(p for g in declared for p in g)
    if positions != list(range(len(positions))):
        raise LeadercheckError(
            f"{_inner(model).__name__}: symmetry groups must list each node position 0..n-1 once"
        )
    return _Canonical(model, groups, len(positions))


def _inner(model: Model[Any]) -> type[Model[Any]]:
    """The class of the user's model, through the guard that wraps it (checker/engine/guard.py)."""
    inner: Model[Any] = getattr(model, "inner", model)
    return type(inner)


class _Canonical:
    def __init__(self, model: Model[Any], groups: tuple[tuple[int, ...], ...], size: int) -> None:
        self.permute = model.permute
        self.node_keys = model.node_keys
        cls = _inner(model)
        self.name = cls.__name__
        # the default key is the engine's own code: called directly, not through the guard
        self.default_order = cls.order_key is Model.order_key
        self.order_key = value_key if self.default_order else model.order_key
        self.groups = tuple(tuple(sorted(g)) for g in groups)
        self.size = size
        self.identity = list(range(size))
        self.whole = len(self.groups) == 1 and len(self.groups[0]) == size
        self._renamings: dict[tuple[int, ...], tuple[int, ...] | None] = {}

    @staticmethod
    def _renaming(order: tuple[int, ...]) -> tuple[int, ...] | None:
        """The renaming that puts the nodes at `order` (old positions, in key order) at
        positions 0, 1, ...; None for the identity."""
        perm = [0] * len(order)
        for new, old in enumerate(order):
            perm[old] = new
        return None if order == tuple(range(len(order))) else tuple(perm)

    def canonical(self, state: Any) -> Any:
        keys = self.node_keys(state)
        if keys and self.whole:  # one group of every node: its renaming by its key order
            try:
                in_order = tuple(sorted(self.identity, key=keys.__getitem__))
                ordered = sorted(keys)
                if all(map(lt, ordered, ordered[1:])):  # no two nodes share a key
                    if in_order not in self._renamings:
                        self._renamings[in_order] = self._renaming(in_order)
                    renaming = self._renamings[in_order]
                    return state if renaming is None else self.permute(state, renaming)
            except TypeError as exc:
                self._keys_refused(state, exc)
            self._ties_only(state, ordered)
        elif keys:  # the common case first: no two nodes of a group share a key
            perm = self.identity[:]
            tied = False
            for group in self.groups:
                try:
                    order = sorted(group, key=keys.__getitem__)
                    ordered = [keys[p] for p in order]
                    if not all(map(lt, ordered, ordered[1:])):
                        self._ties_only(state, ordered)
                        tied = True
                except TypeError as exc:
                    self._keys_refused(state, exc)
                for new, old in zip(group, order, strict=True):
                    perm[old] = new
            if not tied:
                return state if perm == self.identity else self.permute(state, tuple(perm))
        return self._least(state, keys)

    def _least(self, state: Any, keys: Sequence[object]) -> Any:
        """The candidate of least key; a ModelError where the order does not decide."""
        permute, order_key = self.permute, self.order_key
        candidates = self._candidates(keys)
        first = next(candidates)
        best = state if first is None else permute(state, first)
        best_key = order_key(best)
        tie = None  # a candidate unequal to `best` with its key, while `best` is least
        for candidate in candidates:
            image = state if candidate is None else permute(state, candidate)
            key = order_key(image)
            try:
                if key < best_key:
                    best, best_key, tie = image, key, None
                    continue
                if best_key < key or image == best:
                    continue
                same = key == best_key
            except TypeError as exc:
                raise ModelError(
                    f"{self.name}: the order_key values of two renamings of one state do not "
                    f"compare ({exc}); {TOTALLY}"
                ) from None
            if not same:  # neither below, above nor equal: a partial order
                self._unordered(best, image, tied=False)
            tie = image
        if tie is not None:
            self._unordered(best, tie, tied=True)
        return best

    def _ties_only(self, state: Any, ordered: Sequence[Any]) -> None:
        """Each sorted node key equals, or is below, the next: a total order on them."""
        for a, b in zip(ordered, ordered[1:], strict=False):
            if not (a < b or a == b):
                why = _partial(a, b)
                raise ModelError(
                    f"{self.name}: node_keys does not order two nodes of state {short(state)} "
                    f"({short(a, 40)} vs {short(b, 40)}{why}); {KEYS_TOTALLY}"
                )

    def _keys_refused(self, state: Any, exc: TypeError) -> NoReturn:
        raise ModelError(
            f"{self.name}: the node_keys of state {short(state)} do not compare ({exc}); "
            f"{KEYS_TOTALLY}"
        ) from None

    def _unordered(self, least: Any, other: Any, tied: bool) -> NoReturn:
        """Refuse an order that leaves two unequal renamings of a state `least` and
        `other` unordered (`tied`: with equal keys)."""
        where, a, b = _difference(least, other)
        if self.default_order:  # a class it does not open: its values tie
            raise ModelError(
                f"{self.name}: the default order_key does not order two renamings of one "
                f"state ({where}: it keys {type(a).__name__} values by their class alone); "
                f"{TOTALLY}"
            )
        what = (
            "gives two renamings of one state the same key"
            if tied
            else "does not order two renamings of one state"
        )
        raise ModelError(f"{self.name}: order_key {what} ({where}{_partial(a, b)}); {TOTALLY}")

    def generators(self) -> list[tuple[int, ...]]:
        """Per group, the renamings that generate all of its: its first two nodes
        swapped, and (three or more) every node moved to the next position."""
        out = []
        for group in self.groups:
            swap = self.identity[:]
            swap[group[0]], swap[group[1]] = group[1], group[0]
            out.append(tuple(swap))
            if len(group) > 2:
                turn = self.identity[:]
                for k, old in enumerate(group):
                    turn[old] = group[(k + 1) % len(group)]
                out.append(tuple(turn))
        return out

    def _candidates(self, keys: Sequence[object]) -> Iterator[tuple[int, ...] | None]:
        """Renamings that put each group in key order; None stands for the identity."""
        choices: list[list[list[tuple[int, int]]]] = []  # per tie class: its possible maps
        fixed: list[tuple[int, int]] = []
        for group in self.groups:
            order = sorted(group, key=(lambda p: keys[p]) if keys else None)
            start = 0
            while start < len(order):
                end = start + 1
                while end < len(order) and (not keys or keys[order[end]] == keys[order[start]]):
                    end += 1
                olds, news = order[start:end], group[start:end]
                if len(olds) == 1:
                    fixed.append((olds[0], news[0]))
                else:
                    choices.append([list(zip(olds, p, strict=True)) for p in permutations(news)])
                start = end
        base = list(range(self.size))
        for old, new in fixed:
            base[old] = new
        for combo in product(*choices):
            perm = base[:]
            for maps in combo:
                for old, new in maps:
                    perm[old] = new
            yield None if _identity(perm) else tuple(perm)


def _identity(perm: Sequence[int]) -> bool:
    return all(i == p for i, p in enumerate(perm))


def _difference(a: Any, b: Any) -> tuple[str, Any, Any]:
    """Where two unequal states first differ, as text ('at [0].votes: ... vs ...'), with
    the two parts there."""
    path = "state"
    for _ in range(FIND_DEPTH):
        if type(a) is not type(b) or not (isinstance(a, tuple) or dataclasses.is_dataclass(a)):
            break  # only into what value_key opens too
        parts_a, parts_b = list(parts_of(a)), list(parts_of(b))
        if not parts_a or [p for p, _ in parts_a] != [p for p, _ in parts_b]:
            break
        step = next(
            ((p, x, y) for (p, x), (_, y) in zip(parts_a, parts_b, strict=True) if x != y), None
        )
        if step is None:
            break
        suffix, a, b = step
        path += suffix
    return f"at {path}: {short(a, 40)} vs {short(b, 40)}", a, b


def _partial(a: object, b: object) -> str:
    """Why `a` and `b` compare neither way, when it is a known why."""
    if isinstance(a, frozenset | set) and isinstance(b, frozenset | set):
        return ": frozensets compare only as subsets"
    return ""
