"""A state's successors as a search keeps them: positions, and the symmetry's representatives.

The pieces every expander is built of (expand.py chooses one; the partial-order reduction,
checker/engine/reductions/por.py, builds its own from them), apart so that neither imports the
other.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from leadercheck.checker.engine.store import FP_MASK

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
