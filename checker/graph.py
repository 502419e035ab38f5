"""The explored state graph of a small model, for drawing: every state and every transition.

Only for small models: the whole graph is kept in memory with a label per state, so a
bound refuses anything larger rather than drawing an unreadable picture.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.model import Action, Model

MAX_GRAPH_STATES = 400


@dataclass(frozen=True)
class StateGraph:
    states: tuple[Any, ...]  # in breadth-first discovery order: the index is the state's id
    labels: tuple[str, ...]
    edges: tuple[tuple[int, int, Action], ...]

    def index(self) -> dict[Any, int]:
        return {s: k for k, s in enumerate(self.states)}


def state_graph(model: Model[Any], max_states: int = MAX_GRAPH_STATES) -> StateGraph:
    order: dict[Any, int] = {}
    queue: deque[Any] = deque()
    for s in model.initial_states():
        if s not in order:
            order[s] = len(order)
            queue.append(s)
    edges = []
    while queue:
        s = queue.popleft()
        for action, t in model.successors(s):
            if t not in order:
                if len(order) >= max_states:
                    raise LeadercheckError(
                        f"the state graph has more than {max_states} states; draw it only for "
                        "small models (lower the parameters) or use the sequence diagram"
                    )
                order[t] = len(order)
                queue.append(t)
            edges.append((order[s], order[t], action.shown()))
    states = tuple(order)
    labels = tuple("\n".join(f"{k}: {v}" for k, v in model.summary(s).items()) for s in states)
    return StateGraph(states, labels, tuple(edges))
