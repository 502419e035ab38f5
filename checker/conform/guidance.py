"""Random schedules that find bugs: drawn toward the steps where safety rests on the client.

A uniform draw among the enabled moves almost never strings together what a stale write
needs (a checked write, a pause, the lease running out, another node taking over and
writing, the resume). So the draw is weighted by the model's own state graph: a step is
*dangerous* where the real system's safety depends on what the client does (the storage
refusing a stale write, which an unfenced client would have written; or a step that
breaks a safety claim of the model itself), and each state's distance to the nearest
dangerous step is found once, backwards over every edge, before the first schedule. A
move that brings the schedule closer weighs more; the dangerous step itself most.
Every move keeps some weight, so every schedule stays possible and hypothesis still
shrinks toward short ones. A model too large to hold (MAX_STATES) is drawn from uniformly,
and the report says so.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from leadercheck.checker.engine.graph import state_edges
from leadercheck.checker.model import Action, Model
from leadercheck.checker.properties import Kind, Property

MAX_STATES = 200_000
# The weights of a move: dangerous, nearer to a dangerous step, any other. With about ten
# moves enabled, a nearer one is taken about six times in seven: a path of nine steps to
# danger is walked whole in about one schedule in four.
DANGER, CLOSER, OTHER = 400, 60, 1


@dataclass(frozen=True)
class Guide:
    """Each state's distance (in steps) to the nearest dangerous step; states with none
    are absent. `dangerous` says which actions are."""

    distance: dict[Any, int]
    dangerous: Callable[[Action, Any, Any], bool]

    def weight(self, options: Sequence[tuple[Any, Action, Any]], now: int | None) -> int:
        """The weight of one move (its options: from a state the schedule may be in, the
        action, the state it leads to), the schedule being `now` steps from danger."""
        if any(self.dangerous(action, before, after) for before, action, after in options):
            return DANGER
        nearest = min((self.distance.get(after, -1) for _, _, after in options), default=-1)
        if nearest >= 0 and (now is None or nearest < now):
            return CLOSER
        return OTHER

    def now(self, states: Sequence[Any]) -> int | None:
        """How far the nearest of `states` is from danger (None: no danger ahead)."""
        found = [self.distance[s] for s in states if s in self.distance]
        return min(found) if found else None


def build_guide(
    model: Model[Any],
    risky: Callable[[Action], bool],
    claims: Sequence[Property],
    max_states: int = MAX_STATES,
) -> Guide | None:
    """The guide for `model`: dangerous steps are those `risky` names (the binding's: a
    write the storage refuses as stale) and those that break one of `claims` (invariants
    only); None if the model has more than `max_states` states, or no dangerous step."""
    found = state_edges(model, max_states)
    if found is None:
        return None
    states, edges = found
    invariants = [c for c in claims if c.kind is Kind.ALWAYS]

    def holding(state: Any) -> tuple[bool, ...]:
        return tuple(_holds(c, state) for c in invariants)

    def dangerous(action: Action, before: Any, after: Any) -> bool:
        return risky(action) or _breaks(holding(before), holding(after))

    held = [holding(s) for s in states]  # each state's claims judged once, not per edge
    back: list[list[int]] = [[] for _ in states]
    distance: dict[int, int] = {}
    for a, b, action in edges:
        back[b].append(a)
        if a not in distance and (risky(action) or _breaks(held[a], held[b])):
            distance[a] = 0
    if not distance:
        return None
    queue = deque(distance)
    while queue:
        k = queue.popleft()
        for a in back[k]:
            if a not in distance:
                distance[a] = distance[k] + 1
                queue.append(a)
    return Guide({states[k]: d for k, d in distance.items()}, dangerous)


def _breaks(before: tuple[bool, ...], after: tuple[bool, ...]) -> bool:
    """Whether a step breaks a claim that held before it."""
    return any(was and not now for was, now in zip(before, after, strict=True))


def _holds(claim: Property, state: Any) -> bool:
    """The claim on the state; a claim that cannot be judged there (a model without the
    fields it reads) is taken to hold."""
    try:
        return bool(claim.predicate(state))
    except Exception:
        return True
