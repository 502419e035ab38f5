"""Is a history a behaviour the model permits? A search of the states that agree with it.

Trace validation, in the direction etcd-io/raft checks its logs with TLA+: the set of model
states consistent with every event so far is carried from event to event (as
`conform/random_walks.py` narrows its `states`). Between two events the model may take
any number of unobserved steps (ticks, checks, pauses, crashes, heals, a lease running out
in the store: every step that shows no event, unobserved.py); an event is taken by a step
that shows exactly it (observe.py), or, for a `lose`, by a state where the node runs and
does not lead.

Time: an event `at` seconds in is taken after floor(at / tick) or ceil(at / tick) ticks
in all: the model's ticks are instants, a real event lies between two of them, and either
one may be the instant the model puts it at. Times never decrease, so neither do ticks.

Each state keeps the step that reached it and its parent, so the path to the last event
taken is rebuilt, and where the set runs empty the search says which event the model
cannot take and what it could have shown at that time instead. Successors are computed
once per state (the same states come back event after event while time stands still).
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, NamedTuple

from leadercheck.checker.conform.bindings.lease_facts import TokenNumbers
from leadercheck.checker.engine.interrupts import real_interrupt
from leadercheck.checker.history.events import Event, History
from leadercheck.checker.history.fit import Fitted, token_numbers
from leadercheck.checker.history.observe import Observer, Seen
from leadercheck.checker.history.unobserved import Step, Unobserved
from leadercheck.checker.model import Action
from leadercheck.checker.render.lanes import is_tick
from leadercheck.models.cluster import ClusterModel

CACHE_LIMIT = 50_000  # states whose moves are kept; beyond, the cache starts again
BEAM = 16  # states carried between events by the first pass (README: the figures)
BEAM_FROM = 200  # events: a shorter history is searched whole in one pass
SHOWN = 12  # alternatives listed where the model refuses an event


class Want(NamedTuple):
    """One event as the model must show it, and the ticks it may be taken at."""

    seen: Seen | None  # None: a lose, a fact of a state rather than a step
    node: str  # the model's name
    lo: int
    hi: int


class _Found(NamedTuple):
    """A state consistent with the history so far, the ticks so far, and how it was reached
    (the parent's steps to it; `event` is the index of the event it took, or -1)."""

    state: Any
    ticks: int
    parent: _Found | None
    steps: tuple[Step, ...]
    event: int = -1


class _Move(NamedTuple):
    steps: tuple[Step, ...]
    after: Any
    ticks: int  # 1 for a tick of the clock
    seen: tuple[Seen, ...]


@dataclass(frozen=True)
class Refusal:
    """The first event the model cannot take, and what it could show at that time."""

    event: Event
    want: Want
    reached: int  # the latest tick any consistent state reached
    could: tuple[str, ...]  # the observable steps at the event's ticks, in the model's words
    more: int  # further ones not listed
    leads_always: bool  # for a lose: the node leads in every state at that time


@dataclass(frozen=True)
class Permission:
    """What the search found: the path to the last event taken, and why it stopped there."""

    events: int
    taken: int  # events the model took, in order
    steps: tuple[Step, ...]  # the model's steps to the last event taken
    taken_after: tuple[int, ...]  # for each event taken, how many steps it needed up to it
    refusal: Refusal | None
    interrupted: bool
    narrowed: bool  # states were left behind (a beam): a refusal is not final
    states: int  # (state, ticks) pairs visited, over every event
    transitions: int  # moves followed
    seconds: float
    passes: int = 1

    @property
    def permitted(self) -> bool:
        return self.taken == self.events


def permits(model: ClusterModel, history: History, fitted: Fitted) -> Permission:
    """Whether the model permits `history`, in at most two passes. For a history of more
    than BEAM_FROM events the first carries at most BEAM states from event to event (the
    fewest nodes stopped first): a history it takes whole is permitted, its path found.
    Only if it refuses an event after leaving states behind does a second pass search
    every consistent state, whose refusal is final. A shorter history gets that one."""
    want = wants(history, token_numbers(history), fitted.tick)
    beam = BEAM if len(want) > BEAM_FROM else None
    found = Search(Unobserved(model, fitted.unbounded), Observer(model)).run(
        history.events, want, beam
    )
    if found.permitted or found.interrupted or not found.narrowed:
        return found
    again = Search(Unobserved(model, fitted.unbounded), Observer(model)).run(history.events, want)
    return replace(
        again,
        states=found.states + again.states,
        transitions=found.transitions + again.transitions,
        seconds=found.seconds + again.seconds,
        passes=2,
    )


def wants(history: History, tokens: TokenNumbers, tick: Fraction) -> list[Want]:
    """Each event as the model must show it: its model node and token, its ticks."""
    found = []
    for event in history.events:
        ticks = event.at / tick
        node = history.model_node(event.node)
        seen = None
        if event.kind != "lose":
            token = tokens.of(event.token) if event.token is not None else None
            seen = Seen(event.kind, node, token, event.accepted)
        found.append(Want(seen, node, math.floor(ticks), math.ceil(ticks)))
    return found


class Search:
    """The states consistent with a history, carried event to event."""

    def __init__(self, moves: Unobserved, observer: Observer) -> None:
        self.unobserved = moves
        self.observer = observer
        self._moves: dict[Any, list[_Move]] = {}
        self.states = self.transitions = 0

    def run(
        self, events: Sequence[Event], want: Sequence[Want], beam: int | None = None
    ) -> Permission:
        """Take the events in order until the end, an event the model refuses, or Ctrl-C.

        With `beam`, at most that many states are carried from one event to the next,
        those with the fewest nodes stopped first (a node paused with a write it has not
        sent multiplies the states by two per node): a path found that way is a path, but
        a refusal is final only if nothing was left behind (`Permission.narrowed`)."""
        began = time.monotonic()
        narrowed = False
        frontier = [_Found(s, 0, None, ()) for s in self.unobserved.model.initial_states()]
        refusal, interrupted, taken = None, False, 0
        try:
            for index, wanted in enumerate(want):
                closure, found = self._take(frontier, wanted, index)
                if not found:
                    refusal = self._refusal(events[index], wanted, closure)
                    break
                if beam is not None and len(found) > beam:
                    found, narrowed = sorted(found, key=self._stopped)[:beam], True
                frontier, taken = found, index + 1
        except KeyboardInterrupt:
            if not real_interrupt():
                raise
            interrupted = True
        steps, after = _path(frontier[0])
        return Permission(
            events=len(want),
            taken=taken,
            steps=steps,
            taken_after=after,
            refusal=refusal,
            interrupted=interrupted,
            narrowed=narrowed,
            states=self.states,
            transitions=self.transitions,
            seconds=time.monotonic() - began,
        )

    def _take(
        self, frontier: list[_Found], want: Want, index: int
    ) -> tuple[dict[tuple[Any, int], _Found], list[_Found]]:
        """Every state reachable by unobserved steps up to the event's last tick, and those
        that take the event (in the order found, so the first is the same every run)."""
        closure = {(f.state, f.ticks): f for f in frontier}
        queue = deque(closure.values())
        taken: dict[tuple[Any, int], _Found] = {}
        lo, hi, target = want.lo, want.hi, (want.seen,)
        lose = want.seen is None
        while queue:
            found = queue.popleft()
            state, ticks = found.state, found.ticks
            if lose and lo <= ticks:
                lost = self._lose(found, want.node, index)
                if lost is not None:
                    taken.setdefault((lost.state, ticks), lost)
            for move in self._moves_of(state):
                self.transitions += 1
                after = ticks + move.ticks
                if after > hi:
                    continue
                key = (move.after, after)
                if move.seen:
                    if not lose and lo <= after and move.seen == target and key not in taken:
                        taken[key] = _Found(move.after, after, found, move.steps, index)
                elif key not in closure:
                    closure[key] = next_found = _Found(move.after, after, found, move.steps)
                    queue.append(next_found)
        self.states += len(closure)
        return closure, list(taken.values())

    def _stopped(self, found: _Found) -> int:
        """How many nodes are paused or down: the beam keeps the fewest first."""
        return sum(not f.running for f in self.observer.facts(found.state).values())

    def _lose(self, found: _Found, node: str, index: int) -> _Found | None:
        """`found` taking a lose of `node`: it must run and not lead; a paused node is
        resumed for it (a resume is made only where it matters: unobserved.py)."""
        facts = self.observer.facts(found.state).get(node)
        if facts is None or facts.leads:
            return None
        if facts.running:
            return _Found(found.state, found.ticks, found, (), index)
        if facts.paused and self.unobserved.model.stop_only_delays:
            step = self.unobserved.resume(found.state, node)
            if step is not None:
                return _Found(step[1], found.ticks, found, (step,), index)
        return None

    def _moves_of(self, state: Any) -> list[_Move]:
        known = self._moves.get(state)
        if known is None:
            if len(self._moves) >= CACHE_LIMIT:
                self._moves.clear()
                self.observer.forget()
            known = self._moves[state] = [
                self._move(state, steps, after) for steps, after in self.unobserved.moves(state)
            ]
        return known

    def _move(self, state: Any, steps: tuple[Step, ...], after: Any) -> _Move:
        """A move and what it shows: its last step is the one that may show an event (a
        crash that comes with its restart shows nothing before the restart)."""
        before = state if len(steps) == 1 else steps[-2][1]
        seen = self.observer.seen(before, steps[-1][0], after)
        return _Move(steps, after, int(is_tick(steps[0][0])), seen)

    def _refusal(self, event: Event, want: Want, closure: dict[tuple[Any, int], _Found]) -> Refusal:
        """What the consistent states could show at the event's ticks (or at the latest
        tick they reach, when time cannot get that far)."""
        reached = max(ticks for _, ticks in closure)
        when = range(want.lo, want.hi + 1) if reached >= want.lo else range(reached, reached + 1)
        could: dict[str, int] = {}
        leads_always = want.seen is None
        for state, ticks in closure:
            if ticks not in when:
                continue
            facts = self.observer.facts(state).get(want.node)
            if want.seen is None and facts is not None and not facts.leads:
                leads_always = False
            for move in self._moves_of(state):
                if move.seen and ticks + move.ticks in when:
                    action: Action = move.steps[-1][0].shown()
                    could.setdefault(f"t={ticks + move.ticks}: {action}", ticks)
        shown = sorted(could, key=lambda text: (could[text], text))
        return Refusal(
            event, want, reached, tuple(shown[:SHOWN]), max(0, len(shown) - SHOWN), leads_always
        )


def _path(last: _Found) -> tuple[tuple[Step, ...], tuple[int, ...]]:
    """The steps from the initial state to `last`, and after how many steps each event
    was taken."""
    chain: list[_Found] = []
    found: _Found | None = last
    while found is not None:
        chain.append(found)
        found = found.parent
    steps: list[Step] = []
    after: list[int] = []
    for found in reversed(chain):
        steps.extend(found.steps)
        if found.event >= 0:
            after.append(len(steps))
    return tuple(steps), tuple(after)
