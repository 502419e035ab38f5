"""Expansion: the (move, successor) candidates a search considers from a state.

The one-process search (checker/engine/explore.py) and the partitioned one
(checker/engine/strategies/processes/partitioned.py) both store, per state, only the position of
the action that discovered it among its parent's successors, and both apply the same reductions when
expanding a state: symmetry (one canonical representative per orbit,
checker/engine/reductions/symmetry.py) and partial-order reduction
(checker/engine/reductions/por.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from leadercheck.checker.engine.reductions.por import por_expander
from leadercheck.checker.engine.represent import Expander, representer
from leadercheck.checker.model import Model


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
