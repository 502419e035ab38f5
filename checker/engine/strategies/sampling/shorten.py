"""Making a sampled search's trace short enough to read.

A random walk or a depth-first stack reaches a violation by a long way round. Four
passes shorten it, each keeping a real trace that ends in a state deciding the claim:

1. loops: the trace is cut between two visits of the same state;
2. shortcuts: where a state of the trace has a successor that is a later state of the
   trace (or decides the claim), the steps in between go;
3. delta debugging: chunks of steps are left out, ever smaller, and each candidate is
   replayed by matching the actions that remain (name, actor, target) against the
   enabled ones, skipping those that are not enabled; a candidate that still reaches a
   deciding state is kept, as the steps it actually took;
4. the neighbourhood: a breadth-first search from the initial states that takes only the
   actions the trace takes (by name, actor and target) finds the shortest trace among
   their reorderings and repetitions.

Each pass is bounded by a count (replays, states), never by the clock, so the same trace
is shortened the same way in every run. Ctrl-C keeps the best trace so far.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from leadercheck.checker.engine.interrupts import from_model, model_error
from leadercheck.checker.engine.replay import action_key
from leadercheck.checker.engine.strategies.bfs import check
from leadercheck.checker.model import Action, Model
from leadercheck.checker.properties import sometimes
from leadercheck.checker.result import EndReason

Label = tuple[str, str, str | None]
Decides = Callable[[Any], bool]


@dataclass
class Shortening:
    """The shortest trace found so far, as moves (initial position, successor positions)."""

    moves: list[int]
    found: int  # the length of the trace as found, in steps
    replays: int = 0  # candidates replayed by delta debugging
    explored: int = 0  # states the neighbourhood search stored
    transitions: int = 0  # successors it computed
    interrupted: bool = False
    passes: list[str] = field(default_factory=list)  # the passes that made it shorter

    @property
    def length(self) -> int:
        return len(self.moves) - 1


def shorten(
    model: Model[Any],
    initial: Sequence[Any],
    moves: Sequence[int],
    decides: Decides,
    max_replays: int,
    max_states: int,
) -> Shortening:
    """A trace no longer than `moves` (and usually much shorter) to a state that `decides`."""
    result = Shortening(list(moves), len(moves) - 1)
    try:
        states = _states(model, initial, result.moves)
        _keep(result, "loops", _without_loops(states, result.moves))
        _keep(result, "shortcuts", _shortcuts(model, initial, result.moves, decides))
        _keep(result, "delta debugging", _delta_debug(model, initial, result, decides, max_replays))
        _keep(
            result,
            "neighbourhood search",
            _neighbourhood(model, initial, result, decides, max_states),
        )
    except KeyboardInterrupt as exc:
        if from_model(exc):  # raised by the model's code, not the user's Ctrl-C
            raise model_error(exc, "successors, shortening a trace") from exc
        result.interrupted = True
    return result


def _keep(result: Shortening, name: str, better: list[int] | None) -> None:
    """Take `better` if it is shorter, naming the pass that found it."""
    if better is not None and len(better) < len(result.moves):
        result.moves = better
        result.passes.append(name)


def _states(model: Model[Any], initial: Sequence[Any], moves: Sequence[int]) -> list[Any]:
    state = initial[moves[0]]
    states = [state]
    for move in moves[1:]:
        state = _next_states(model, state)[move]
        states.append(state)
    return states


def _next_states(model: Model[Any], state: Any) -> list[Any]:
    succs = model.next_states(state)
    return succs if type(succs) is list else list(succs)


def _without_loops(states: Sequence[Any], moves: Sequence[int]) -> list[int]:
    """The moves with every stretch between two visits of one state left out."""
    kept: list[int] = []  # positions in `states` of the trace kept
    where: dict[Any, int] = {}  # state -> its index in `kept`
    for k, state in enumerate(states):
        at = where.get(state)
        if at is not None:
            for gone in kept[at + 1 :]:
                where.pop(states[gone], None)
            del kept[at + 1 :]
            continue
        where[state] = len(kept)
        kept.append(k)
    # a step's move is its position among its predecessor's successors: after a cut, the
    # step into kept[i] starts from the last visit of kept[i - 1]'s state, the same state
    return [moves[0]] + [moves[k] for k in kept[1:]]


def _shortcuts(
    model: Model[Any], initial: Sequence[Any], moves: Sequence[int], decides: Decides
) -> list[int]:
    """The shortest trace over the trace's states and their direct successors."""
    states = _states(model, initial, moves)
    last = len(states) - 1
    index = {state: k for k, state in enumerate(states)}  # states are distinct after loops
    best = [0] + [last + 1] * last  # steps to reach each state of the trace
    via: list[tuple[int, int]] = [(-1, -1)] * (last + 1)  # (from, move) into each
    finish: tuple[int, int, int] | None = None  # (steps, from, move) into a deciding state
    for k in range(last):
        if best[k] > last or (finish is not None and best[k] + 1 >= finish[0]):
            continue
        for move, succ in enumerate(_next_states(model, states[k])):
            target = index.get(succ)
            if target is not None and target > k and best[k] + 1 < best[target]:
                best[target], via[target] = best[k] + 1, (k, move)
            elif target is None and decides(succ):
                if finish is None or best[k] + 1 < finish[0]:
                    finish = (best[k] + 1, k, move)
    if finish is None or best[last] <= finish[0]:
        end, tail = last, []
    else:
        end, tail = finish[1], [finish[2]]
    path: list[int] = []
    while end > 0:
        k, move = via[end]
        path.append(move)
        end = k
    return [moves[0], *reversed(path), *tail]


def _actions(model: Model[Any], initial: Sequence[Any], moves: Sequence[int]) -> list[Action]:
    state = initial[moves[0]]
    actions = []
    for move in moves[1:]:
        action, state = list(model.successors(state))[move]
        actions.append(action)
    return actions


def replay_labels(
    model: Model[Any],
    initial: Sequence[Any],
    start: int,
    actions: Iterable[Action],
    decides: Decides,
) -> list[int] | None:
    """Take `actions` in order from initial[start], each the enabled action of the same
    name, actor and target (the one with the same note if several), skipping those not
    enabled; the moves up to the first state that decides, or None if none does."""
    state = initial[start]
    moves = [start]
    if decides(state):
        return moves
    for wanted in actions:
        label = action_key(wanted)
        pairs = list(model.successors(state))
        matching = [k for k, (action, _) in enumerate(pairs) if action_key(action) == label]
        if not matching:
            continue
        move = matching[0]
        if len(matching) > 1:
            note = wanted.shown().note
            move = next((k for k in matching if pairs[k][0].shown().note == note), move)
        state = pairs[move][1]
        moves.append(move)
        if decides(state):
            return moves
    return None


def _delta_debug(
    model: Model[Any],
    initial: Sequence[Any],
    result: Shortening,
    decides: Decides,
    max_replays: int,
) -> list[int] | None:
    """ddmin (Zeller) over the trace's steps: leave out one of n chunks while that still
    reaches a deciding state, else split finer; each candidate replayed by its actions."""
    start = result.moves[0]
    actions = _actions(model, initial, result.moves)
    best: list[int] | None = None
    chunks = 2
    while len(actions) >= 2 and result.replays < max_replays:
        size = -(-len(actions) // chunks)
        for first in range(0, len(actions), size):
            if result.replays >= max_replays:
                break
            candidate = actions[:first] + actions[first + size :]
            result.replays += 1
            moves = replay_labels(model, initial, start, candidate, decides)
            if moves is not None and len(moves) - 1 < len(actions):
                best = moves
                actions = _actions(model, initial, moves)
                chunks = max(chunks - 1, 2)
                break
        else:
            if chunks >= len(actions):
                break
            chunks = min(chunks * 2, len(actions))
    return best


class _Neighbourhood(Model[Any]):
    """The model with only the actions whose (name, actor, target) are in `labels`."""

    def __init__(self, model: Model[Any], initial: Sequence[Any], labels: set[Label]) -> None:
        self.model, self.initial, self.labels = model, list(initial), labels
        self.transitions = 0

    def initial_states(self) -> Sequence[Any]:
        return self.initial

    def successors(self, state: Any) -> Iterable[tuple[Action, Any]]:
        pairs = list(self.model.successors(state))
        self.transitions += len(pairs)
        return [(a, s) for a, s in pairs if action_key(a) in self.labels]


def _neighbourhood(
    model: Model[Any],
    initial: Sequence[Any],
    result: Shortening,
    decides: Decides,
    max_states: int,
) -> list[int] | None:
    """The shortest trace, from any initial state, that takes only the trace's actions."""
    if len(result.moves) <= 2:
        return None
    labels = {action_key(a) for a in _actions(model, initial, result.moves)}
    near = _Neighbourhood(model, initial, labels)
    goal = sometimes("the claim decided", decides)
    found = check(near, [goal], max_states=max_states, max_depth=len(result.moves) - 2)
    result.explored += found.stats.distinct_states
    result.transitions += near.transitions
    if found.end is EndReason.INTERRUPTED:
        result.interrupted = True
    trace = found.results[0].trace
    if trace is None:
        return None
    moves = [next(k for k, s in enumerate(initial) if s == trace.steps[0].state)]
    for before, after in zip(trace.steps, trace.steps[1:], strict=False):
        moves.append(_next_states(model, before.state).index(after.state))
    return moves
