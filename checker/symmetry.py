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
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from itertools import permutations, product
from operator import eq
from typing import Any

from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.model import Model


def canonicalizer(model: Model[Any]) -> Callable[[Any], Any] | None:
    """The state -> representative function of `model`, or None if it declares no symmetry.

    The declared groups partition the node positions 0..n-1; a node that cannot be
    renamed is a group of its own.
    """
    declared = tuple(tuple(g) for g in model.symmetry_groups())
    groups = tuple(g for g in declared if len(g) > 1)
    if not groups:
        return None
    positions = sorted(p for g in declared for p in g)
    if positions != list(range(len(positions))):
        raise LeadercheckError(
            f"{type(model).__name__}: symmetry groups must list each node position 0..n-1 once"
        )
    return _Canonical(model, groups, len(positions)).canonical


class _Canonical:
    def __init__(self, model: Model[Any], groups: tuple[tuple[int, ...], ...], size: int) -> None:
        self.permute = model.permute
        self.node_keys = model.node_keys
        self.order_key = model.order_key
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
            in_order = tuple(sorted(self.identity, key=keys.__getitem__))
            ordered = sorted(keys)
            if not any(map(eq, ordered, ordered[1:])):
                if in_order not in self._renamings:
                    self._renamings[in_order] = self._renaming(in_order)
                renaming = self._renamings[in_order]
                return state if renaming is None else self.permute(state, renaming)
        elif keys:  # the common case first: no two nodes of a group share a key
            perm = self.identity[:]
            tied = False
            for group in self.groups:
                order = sorted(group, key=keys.__getitem__)
                for new, old in zip(group, order, strict=True):
                    perm[old] = new
                ordered = [keys[p] for p in order]
                tied = tied or any(map(eq, ordered, ordered[1:]))
            if not tied:
                return state if perm == self.identity else self.permute(state, tuple(perm))
        best, best_key = None, None
        for candidate in self._candidates(keys):
            image = state if candidate is None else self.permute(state, candidate)
            key = self.order_key(image)
            if best is None or key < best_key:
                best, best_key = image, key
        return best

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
