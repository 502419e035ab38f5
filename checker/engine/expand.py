"""Expansion: the (move, successor) candidates a search considers from a state.

The one-process search (checker/engine/explore.py) and the partitioned one
(checker/parallel.py) both store, per state, only the position of the action that
discovered it among its parent's successors, and both apply the same reductions when
expanding a state: symmetry (one canonical representative per orbit, checker/symmetry.py)
and partial-order reduction (checker/por.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from leadercheck.checker.engine.store import FP_MASK
from leadercheck.checker.model import Model

# Given a state: how many successors it generated, and the (move, next state) pairs that
# may be new, moves being positions among the model's successors. A reduction leaves out
# the actions it skips (not generated) and the successors it knows were visited (generated);
# the unreduced expander pairs every next state with its position.
Expander = Callable[[Any], tuple[int, Iterable[tuple[int, Any]]]]
MAX_ALIASES = 1 << 20  # a cache: forgetting it costs time, never correctness


def representer(
    seen: set[Any], canonical: Callable[[Any], Any] | None, exact: bool = False
) -> Callable[[list[Any]], list[tuple[int, Any]]]:
    """Successors -> the (position, state the store keeps) of each whose orbit is not
    known: its canonical form; left out when its key, or that of a state already mapped
    to it, is in `seen`. Batched: this is the symmetric search's hot loop."""
    if canonical is None:
        return lambda succs: list(enumerate(succs))
    aliases: set[Any] = set()  # keys of non-canonical states already mapped

    def represent_all(succs: list[Any]) -> list[tuple[int, Any]]:
        out = []
        for move, succ in enumerate(succs):
            fp = succ if exact else hash(succ) & FP_MASK  # store_key(exact), inlined: hot
            if fp in seen or fp in aliases:  # its orbit is known: skip the canonical form
                continue
            rep = canonical(succ)
            if rep is not succ:
                if len(aliases) >= MAX_ALIASES:
                    aliases.clear()
                aliases.add(fp)
            out.append((move, rep))
        return out

    return represent_all


def make_expander(
    model: Model[Any],
    seen: set[Any],
    canonical: Callable[[Any], Any] | None,
    por: bool = False,
    exact: bool = False,
) -> Expander:
    """The expander for `model`; `seen` holds the fingerprints of visited states (the
    states themselves when `exact`)."""
    if por:
        from leadercheck.checker.por import por_expander  # noqa: PLC0415 (written by the POR work)

        return por_expander(model, seen, canonical, exact)
    next_states = model.next_states
    if canonical is None:

        def plain(state: Any) -> tuple[int, Iterable[tuple[int, Any]]]:
            succs = next_states(state)
            if type(succs) is not list:
                succs = list(succs)
            return len(succs), enumerate(succs)

        return plain
    represent_all = representer(seen, canonical, exact)

    def symmetric(state: Any) -> tuple[int, Iterable[tuple[int, Any]]]:
        succs = next_states(state)
        if type(succs) is not list:
            succs = list(succs)
        return len(succs), represent_all(succs)

    return symmetric
