"""Finite instances of the proofs' sorts, and quantifiers that expand over them.

A proof is stated over unbounded sorts (any number of nodes, integer terms); its finite
instance (a few nodes, 3-bit terms) is where a small counterexample to induction is
looked for. There, a quantifier over a finite sort is expanded into a conjunction or
disjunction, so the instance's queries are quantifier-free, which z3 decides quickly and
completely; over the unbounded sorts it stays a quantifier.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from itertools import product

import z3


@cache
def enum_sort(name: str, prefix: str, size: int) -> tuple[z3.SortRef, list[z3.ExprRef]]:
    """A finite sort of `size` named elements (z3 declares a sort name once per context)."""
    sort, elements = z3.EnumSort(name, [f"{prefix}{k}" for k in range(1, size + 1)])
    return sort, list(elements)


def universe(m: z3.ModelRef, sort: z3.SortRef, elements: Sequence[z3.ExprRef]) -> list[z3.ExprRef]:
    """The nodes of a z3 model: a finite instance's elements, or the model's universe."""
    return list(elements) if elements else list(m.get_universe(sort) or [])


def node_names(m: z3.ModelRef, sort: z3.SortRef, elements: Sequence[z3.ExprRef]) -> dict[str, str]:
    """Each node of a z3 model (by its z3 name) as a trace names it: n1, n2, ..."""
    return {str(e): f"n{k}" for k, e in enumerate(universe(m, sort, elements), start=1)}


def bit_values(bits: int) -> list[z3.ExprRef]:
    return [z3.BitVecVal(k, bits) for k in range(1 << bits)]


class Quantifiers:
    """ForAll / Exists, expanded over `domains` (sort -> every value) where given."""

    def __init__(self, domains: dict[z3.SortRef, Sequence[z3.ExprRef]] | None = None) -> None:
        self.domains = domains

    def _combos(self, xs: Sequence[z3.ExprRef], body: z3.BoolRef) -> list[z3.BoolRef]:
        assert self.domains is not None
        values = []
        for x in xs:
            domain = self.domains.get(x.sort())
            if domain is None and x.sort() == z3.BoolSort():
                domain = [z3.BoolVal(True), z3.BoolVal(False)]
            if domain is None:
                raise ValueError(f"no finite domain for {x} : {x.sort()}")
            values.append(domain)
        return [z3.substitute(body, *zip(xs, combo, strict=True)) for combo in product(*values)]

    def all(self, xs: Sequence[z3.ExprRef], body: z3.BoolRef) -> z3.BoolRef:
        if self.domains is None:
            return z3.ForAll(list(xs), body)
        return z3.And(*self._combos(xs, body))

    def some(self, xs: Sequence[z3.ExprRef], body: z3.BoolRef) -> z3.BoolRef:
        if self.domains is None:
            return z3.Exists(list(xs), body)
        return z3.Or(*self._combos(xs, body))
