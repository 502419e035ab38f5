"""Partial-order reduction: from a state with a local action, explore that action alone.

Many interleavings of independent actions reach the same states; exploring all of them
multiplies the work without finding anything new. A model may declare some enabled
actions of a state local (`Action.local`, under the conditions of `Model.local_moves`). From
such a state the search follows only the first local action, its ample set, unless the
cycle proviso asks for all.

The conditions, for the local action `a` chosen in state `s` (the ample set {a}):

- C0: {a} is not empty whenever `s` has a successor (trivially: `a` is enabled).
- C1 (independence): along every path of the unreduced model from `s` that does not
  take `a`, each action commutes with `a` (in either order the two reach the same state)
  and neither disables the other; in particular nothing but `a` itself disables `a`.
  These are conditions (2) and (3) of `Model.local_moves`.
- C2 (invisibility): `a` changes no property's truth value, in `s` and in every state
  reachable from `s` before `a` is taken: condition (1).
- C3 (the cycle proviso): every cycle of the reduced graph has a fully expanded state.
  A state whose local successor was already discovered (its fingerprint, of the
  canonical form under symmetry, is in `seen`) is expanded fully. In a breadth-first
  search the state of a reduced cycle that is expanded last finds its successor on the
  cycle already discovered, so it is expanded fully. Without the proviso a cycle of
  local actions could postpone a non-local action forever: the states it leads to
  would never be explored.

Why verdicts are kept. Let `s` be a state the reduced search expands, and a trace of
the unreduced model take `s` in n steps to a state `t` that breaks an invariant (or meets
a `sometimes` claim). If `s` is expanded fully, its first step leads to a discovered
state, n - 1 steps from `t`. Otherwise `s` keeps only `a`. If the trace takes `a`, move
`a` to the front: by C1 each earlier step commutes with it, so from `a(s)` the rest
reaches `t` in n - 1 steps. If it never takes `a`, then `a` stays enabled all along
and commutes with each step (C1), so from `a(s)` the same steps reach `a(t)`, which by
C2 has the same verdicts as `t`, still n steps away. Following kept local moves, the
distance cannot stay at n forever: the states are finitely many, so the walk would
close a cycle of reduced states, which C3 forbids; it shrinks at the next fully
expanded state at the latest. By induction on n the reduced search discovers a state
with the same verdicts as `t`. So every invariant verdict and every `sometimes`
verdict is the same with and without the reduction, and every trace reported is a
real trace of the model. An exhaustive reduced search stores a subset of the reachable
states (one that stops at its first violation may, rarely, store more than the
unreduced search did by then, since its violations can lie deeper).

What is not kept: shortest traces. The reduced search may reach a violation only by
taking local actions first that the shortest trace does not need, so a counterexample
or witness found with --por can be longer than the one found without it. Nor does the
reduction keep which of several equivalent violating states is reported.

Symmetry. With a canonical form the reduction applies to the quotient graph of
orbit representatives; a model that declares both must declare local moves that stay
local under renaming its nodes (a node's own local move is one for every node alike).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from leadercheck.checker.engine.represent import Expander, representer
from leadercheck.checker.engine.store import store_key
from leadercheck.checker.model import Model


def por_expander(
    model: Model[Any],
    seen: set[Any],
    canonical: Callable[[Any], Any] | None,
    exact: bool = False,
) -> Expander:
    """An expander that keeps, where it may, only the first local move of each state.

    A reduced state generates one successor, its first local move's. When the state
    declares no local move, or the first local move's successor was already discovered
    (the cycle proviso), it generates every successor, exactly as the unreduced expander
    does (leaving out, under symmetry, those whose orbit is known).
    """
    successors = model.successors
    key = store_key(exact)  # what `seen` holds
    represent_all = representer(seen, canonical, exact)

    def expand(state: Any) -> tuple[int, list[tuple[int, Any]]]:
        pairs = list(successors(state))
        move = next((k for k, (action, _) in enumerate(pairs) if action.local), None)
        if move is not None:
            kept = represent_all([pairs[move][1]])  # [] when its orbit is known
            if kept and key(kept[0][1]) not in seen:  # not yet discovered: reduce
                return 1, [(move, kept[0][1])]
        return len(pairs), represent_all([succ for _, succ in pairs])

    return expand
