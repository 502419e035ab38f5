"""A user's module whose code leaves the way no model may: sys.exit(0), sys.exit(1), a
KeyboardInterrupt of its own, GeneratorExit, os._exit(0), at import or in one hook.

`Escaping(how, where)` is a counter 0..LIMIT (add 1 or 2) that escapes `how` in `where`:
"initial_states", "successors" or "next_states" (of the state DEPTH), "claim" (a claim's
predicate on it), "fairness" (of an action leaving it) or "liveness" (a leads-to claim's
predicate on it). `claims(how, where)` are the claims to check it with. Loaded with
`--model`, the module reads LEADERCHECK_ESCAPE ("how@where", e.g. "exit0@successors";
"how@import" escapes while the module is imported), so the command line's tests use it too.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence

from leadercheck.checker import Action, Model, always, sometimes
from leadercheck.checker.model import STEP
from leadercheck.checker.properties import Property, leads_to
from leadercheck.models.params import Param, ProtocolEntry

HOWS = ("exit0", "exit1", "interrupt", "generator-exit", "os-exit")
WHERES = ("initial_states", "successors", "next_states", "claim", "fairness", "liveness")
LIMIT = 12
DEPTH = 7  # the state that escapes (reached in 4 steps: 2, 4, 6, 7)


def escape(how: str) -> None:
    """Leave as `how` says."""
    if how == "exit0":
        sys.exit(0)
    if how == "exit1":
        sys.exit(1)
    if how == "interrupt":
        raise KeyboardInterrupt
    if how == "generator-exit":
        raise GeneratorExit
    if how == "os-exit":
        os._exit(0)
    raise ValueError(f"no escape {how!r}")


class Escaping(Model[int]):
    def __init__(self, how: str, where: str) -> None:
        self.how, self.where = how, where

    def _at(self, where: str, state: int | None = None) -> None:
        if self.where == where and (state is None or state == DEPTH):
            escape(self.how)

    def initial_states(self) -> Sequence[int]:
        self._at("initial_states")
        return [0]

    def successors(self, state: int) -> Iterable[tuple[Action, int]]:
        self._at("successors", state)
        for step in (1, 2):
            if state + step <= LIMIT:
                yield (
                    Action(f"add{step}", "counter", None, f"from {state}", kind=STEP),
                    state + step,
                )
        if state == LIMIT:
            yield Action("reset", "counter", kind=STEP), 0

    def next_states(self, state: int) -> Iterable[int]:
        self._at("next_states", state)
        return [succ for _, succ in self.successors(state)]

    def fairness(self, action: Action) -> str | None:
        if action.note == f"from {DEPTH}":
            self._at("fairness")
        return super().fairness(action)


def claims(how: str, where: str) -> list[Property]:
    """A claim that holds, a witness, and the claim that escapes when `where` says so."""

    def below_limit(state: int) -> bool:
        if where == "claim" and state == DEPTH:
            escape(how)
        return state <= LIMIT

    def back_to_zero(state: int) -> bool:
        if where == "liveness" and state == DEPTH:
            escape(how)
        return state == 0

    found = [always("within-limit", below_limit), sometimes("reaches-9", lambda s: s == 9)]
    if where in ("liveness", "fairness"):  # a liveness claim: edges and fairness are seen
        found.append(leads_to("returns", lambda s: s == LIMIT, back_to_zero))
    return found


_HOW, _, _WHERE = os.environ.get("LEADERCHECK_ESCAPE", "none@nowhere").partition("@")
if _WHERE == "import":
    escape(_HOW)

PROTOCOLS = (
    ProtocolEntry(
        "escaping",
        "a counter whose code escapes as LEADERCHECK_ESCAPE says",
        (Param("limit", LIMIT, LIMIT, LIMIT, "the counter's top"),),
        lambda limit: Escaping(_HOW, _WHERE),
    ),
)
PROPERTIES = tuple(claims(_HOW, _WHERE))
EXPECTED = {"escaping": {p.name: "HOLDS" for p in PROPERTIES}}
