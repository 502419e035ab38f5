"""The explored state graph of a small model, for drawing: every state and every transition.

Only for small models: the whole graph is kept in memory with a label per state, so a
bound refuses anything larger rather than drawing an unreadable picture. The refusal
says how many states the model has (counted exactly up to COUNT_LIMIT), and
`fitting_parameters` finds lower parameter values under which it would fit.

Labels are the participants' summaries; where two states summarise alike, the fields
of their full states that tell them apart are added, so no two labels read the same.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from leadercheck.checker.engine.expand import make_expander
from leadercheck.checker.engine.explore import Explorer
from leadercheck.checker.engine.guard import check_initial
from leadercheck.checker.engine.observers import EdgeLog
from leadercheck.checker.engine.settings import unbounded
from leadercheck.checker.engine.store import IndexedStore, Store
from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.model import Action, Model
from leadercheck.checker.properties import Kind, Property
from leadercheck.checker.result import EndReason

MAX_GRAPH_STATES = 400
COUNT_LIMIT = 20_000  # a refused model's states are counted exactly up to this many
MAX_DISTINGUISHING = 4  # full-state fields added to a label that its summary shares


class GraphTooLarge(LeadercheckError):
    """A model with more states than a state graph draws; `states` is None when it has
    more than `counted` (the count stopped there)."""

    def __init__(self, states: int | None, limit: int, counted: int = COUNT_LIMIT) -> None:
        self.states, self.limit, self.counted = states, limit, counted
        super().__init__(
            f"too many states for a state graph ({self.size}; it draws at most {limit}): "
            "lower the parameters or use the sequence diagram"
        )

    @property
    def size(self) -> str:
        """'2,345' or 'more than 20,000, counting stopped there'."""
        if self.states is None:
            return f"more than {self.counted:,}, counting stopped there"
        return f"{self.states:,}"


@dataclass(frozen=True)
class StateGraph:
    states: tuple[Any, ...]  # in breadth-first discovery order: the index is the state's id
    labels: tuple[str, ...]  # unique: a summary shared by several states gets their differences
    edges: tuple[tuple[int, int, Action], ...]

    def index(self) -> dict[Any, int]:
        return {s: k for k, s in enumerate(self.states)}

    def breaking(self, prop: Property) -> frozenset[int]:
        """The states that break `prop` (ALWAYS) or meet it (SOMETIMES); none for a
        liveness claim, which a behaviour breaks, not a state."""
        if prop.kind is Kind.ALWAYS:
            return frozenset(k for k, s in enumerate(self.states) if not prop.predicate(s))
        if prop.kind is Kind.SOMETIMES:
            return frozenset(k for k, s in enumerate(self.states) if prop.predicate(s))
        return frozenset()


def count_states(model: Model[Any], limit: int) -> int | None:
    """How many states are reachable, or None if more than `limit`."""
    run = _explore(model, limit + 1)
    return None if run.store_full else len(run.store)


def fitting_parameters(
    build: Callable[[dict[str, int]], Model[Any]],
    values: Mapping[str, int],
    lows: Sequence[tuple[str, int]],
    limit: int = MAX_GRAPH_STATES,
) -> tuple[dict[str, int], int] | None:
    """Parameters lowered to their minimum, in the order of `lows`, until the model has at
    most `limit` states; then each one put back where that still fits. Returns the values
    changed and the state count, or None if even all of them lowered is too large (or a
    setting cannot be built)."""

    def size(candidate: dict[str, int]) -> int | None:
        try:
            return count_states(build({**values, **candidate}), limit)
        except Exception:  # a setting the model rejects (or a user model that raises)
            return None

    lowered: dict[str, int] = {}
    for name, low in lows:
        if values.get(name, low) <= low:
            continue
        lowered[name] = low
        if size(lowered) is not None:
            break
    else:
        return None
    for name in reversed(list(lowered)):
        rest = {k: v for k, v in lowered.items() if k != name}
        if rest and size(rest) is not None:
            lowered = rest
    found = size(lowered)
    return (lowered, found) if found is not None else None


def state_graph(model: Model[Any], max_states: int = MAX_GRAPH_STATES) -> StateGraph:
    """Every state (full, in discovery order) and every edge of `model`; GraphTooLarge if
    it has more than `max_states` states."""
    found = state_edges(model, max_states)
    if found is None:
        raise GraphTooLarge(count_states(model, COUNT_LIMIT), max_states)
    states, raw = found
    edges = tuple((a, b, action.shown()) for a, b, action in raw)
    return StateGraph(states, unique_labels(model, states), edges)


def state_edges(
    model: Model[Any], max_states: int
) -> tuple[tuple[Any, ...], list[tuple[int, int, Action]]] | None:
    """Every state (in discovery order: the index is its id) and every edge, the actions'
    notes not yet written out; None if the model has more than `max_states` states."""
    log = EdgeLog()
    run = _explore(model, max_states + 1, log)
    if run.store_full:
        return None
    assert isinstance(run.store, IndexedStore)  # a log of edges has one, in index order
    return run.store.states(), list(log.edges_seen)


def _explore(model: Model[Any], max_states: int, log: EdgeLog | None = None) -> _Run:
    """The engine's exploration of `model` with full states as keys, stopped once it meets
    `max_states` states (then `store_full`); with `log`, recording every edge."""
    store = IndexedStore(exact=True) if log is not None else Store(exact=True)
    expand = make_expander(model, store.keys, None)
    explorer = Explorer(
        model,
        check_initial(model),
        store,
        expand,
        [log] if log else [],
        unbounded(max_states=max_states),
    )
    end = explorer.run()
    if end is EndReason.INTERRUPTED:
        raise KeyboardInterrupt
    return _Run(explorer.store, end is EndReason.MAX_STATES)


@dataclass(frozen=True)
class _Run:
    store: Store
    store_full: bool  # the exploration stopped at its state bound


def _flat(model: Model[Any], state: Any) -> dict[str, str]:
    """The full state as 'participant.field' -> value."""
    return {
        f"{p}.{key}": str(value)
        for p, view in model.describe(state).items()
        for key, value in view.items()
    }


def _distinguishing(flats: Sequence[Mapping[str, str]]) -> list[str]:
    """A few fields that tell the states apart: greedily, the one that splits them most."""
    keys = sorted({key for f in flats for key in f})
    keys = [key for key in keys if len({f.get(key) for f in flats}) > 1]
    chosen: list[str] = []
    split = 1
    while keys and len(chosen) < MAX_DISTINGUISHING and split < len(flats):

        def parts(fields: list[str]) -> int:
            return len({tuple(f.get(key) for key in fields) for f in flats})

        best = max(keys, key=lambda key: parts([*chosen, key]))  # the first of equals
        if parts([*chosen, best]) == split:
            break  # no field tells these apart any further
        chosen.append(best)
        keys.remove(best)
        split = parts(chosen)
    return chosen


def unique_labels(model: Model[Any], states: Sequence[Any]) -> tuple[str, ...]:
    """Each state's summary, one line per participant; states that share a summary also get
    the full-state fields in which they differ (the first few), and if those do not tell
    them apart either, their index."""
    summaries = ["\n".join(f"{k}: {v}" for k, v in model.summary(s).items()) for s in states]
    groups: dict[str, list[int]] = {}
    for k, text in enumerate(summaries):
        groups.setdefault(text, []).append(k)
    labels = list(summaries)
    for text, members in groups.items():
        if len(members) == 1:
            continue
        flats = [_flat(model, states[k]) for k in members]
        shown = _distinguishing(flats)
        for k, flat in zip(members, flats, strict=True):
            extra = [f"{key}={flat.get(key, '-')}" for key in shown]
            labels[k] = "\n".join(part for part in [text, *extra] if part)
    counts: dict[str, int] = {}
    for label in labels:
        counts[label] = counts.get(label, 0) + 1
    return tuple(
        label if counts[label] == 1 else f"{label}\n(state {k})" for k, label in enumerate(labels)
    )
