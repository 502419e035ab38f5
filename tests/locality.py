"""Whether a model's declared local moves are local, checked exhaustively (for tests).

`Model.local_moves` asks three things of a local action `a` in state `s`: (1) no
property can see it, (2) it commutes with every action that can happen before it,
neither disabling the other, (3) nothing but itself disables it. Here they are checked
literally on every state reachable from `s` without taking `a`, where "the same
action" means the same `Action` label. Only for small models: the work is about the
reachable states times the distinct local labels.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Hashable, Iterable
from typing import Any

from leadercheck.checker import Action, Model

Observe = Callable[[Any], Hashable]


def label(action: Action) -> Action:
    """What makes two actions the same action here: the label as shown, whether or not it
    is declared local in the state at hand."""
    return action.shown()._replace(local=False)


def successor_map(model: Model[Any], state: Any) -> dict[Action, Any]:
    """The successors of `state` by label (a label that occurs twice must lead to one state)."""
    out: dict[Action, Any] = {}
    for action, after in model.successors(state):
        key = label(action)
        assert out.get(key, after) == after, f"{key} leads to two states"
        out[key] = after
    return out


def reachable(model: Model[Any]) -> list[Any]:
    """Every reachable state, in breadth-first order."""
    found = dict.fromkeys(model.initial_states())
    queue = deque(found)
    while queue:
        for after in model.next_states(queue.popleft()):
            if after not in found:
                found[after] = None
                queue.append(after)
    return list(found)


def local_violation(
    model: Model[Any], state: Any, action: Action, observe: Observe, done: set[Any] | None = None
) -> str | None:
    """Why `action` is not local in `state` (None if it is), following every path without it.

    `done` holds states already shown to satisfy the conditions for `action` (every path
    from them was followed); they are skipped, and on success every state visited joins it.
    """
    done = set() if done is None else done
    action = label(action)
    if state in done:
        return None
    todo = [state]
    visited = {state}
    while todo:
        x = todo.pop()
        here = successor_map(model, x)
        if action not in here:
            return f"{action} is disabled in {x}"
        ax = here[action]
        if observe(ax) != observe(x):
            return f"{action} is visible in {x}"
        after_a = successor_map(model, ax)
        for b, y in here.items():
            if b == action:
                continue
            if b not in after_a:
                return f"{action} disables {b} in {x}"
            then_a = successor_map(model, y).get(action)
            if then_a is None:
                return f"{b} disables {action} in {x}"
            if then_a != after_a[b]:
                return f"{action} and {b} do not commute in {x}"
            if y not in visited and y not in done:
                visited.add(y)
                todo.append(y)
    done.update(visited)
    return None


def check_declarations(
    model: Model[Any], observe: Observe, states: Iterable[Any] | None = None
) -> tuple[Counter[str], list[str]]:
    """How often each kind of action (by name) is declared local over `states` (default:
    every reachable state), and the first problem found with a declaration, if any."""
    declared: Counter[str] = Counter()
    problems: list[str] = []
    done: dict[Action, set[Any]] = {}  # per label: states whose every path was followed
    for state in reachable(model) if states is None else states:
        moves = model.local_moves(state)
        if not moves:
            continue
        labelled = list(model.successors(state))
        for move in moves:
            action = label(labelled[move][0])
            declared[action.name] += 1
            why = local_violation(model, state, action, observe, done.setdefault(action, set()))
            if why is not None:
                problems.append(f"{action}: {why}")
                return declared, problems
    return declared, problems
