"""The state claims a search still has to decide, checked on each state it meets.

An invariant (`always`) is decided by the first state that breaks it, a `sometimes`
claim by the first state that meets it; liveness claims are judged on whole behaviours
(checker/liveness.py), never here. Every search strategy (breadth first, random walks,
bitstate) asks this one observer, so a claim means the same whichever search runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from leadercheck.checker.properties import LIVENESS, Kind, Property


class ClaimRaised(Exception):
    """A claim's predicate raised on a state (the search turns it into a ModelError)."""

    def __init__(self, name: str, error: Exception) -> None:
        super().__init__(f"{name}: {type(error).__name__}: {error}")
        self.name = name
        self.error = error


class StateClaims:
    """The state properties not yet decided and, for each decided one, where it was.

    `where` is whatever the search remembers a state by (an index in breadth-first order,
    a walk and its moves); `found` maps each decided claim's name to it.
    """

    def __init__(self, properties: Iterable[Property]) -> None:
        # (name, predicate, whether it is an invariant) of each claim not yet decided
        self.pending: list[tuple[str, Any, bool]] = [
            (p.name, p.predicate, p.kind is Kind.ALWAYS)
            for p in properties
            if p.kind not in LIVENESS
        ]
        self.invariants = frozenset(name for name, _, inv in self.pending if inv)
        self.found: dict[str, Any] = {}

    def visit(self, state: Any, where: Any) -> tuple[str, ...]:
        """Check every pending claim on `state`; the names it decides (recorded at `where`).

        A claim is decided when its predicate is false for an invariant, true for a
        `sometimes` claim; what a predicate raises comes out as ClaimRaised.
        """
        decided: list[str] | None = None
        for name, predicate, invariant in self.pending:
            try:
                if bool(predicate(state)) is not invariant:
                    self.found[name] = where
                    decided = [name] if decided is None else [*decided, name]
            except Exception as exc:
                raise ClaimRaised(name, exc) from exc
        if decided is None:
            return ()
        self.pending = [u for u in self.pending if u[0] not in self.found]
        return tuple(decided)

    def drop(self, names: Sequence[str]) -> None:
        """Stop checking `names` (decided elsewhere: by another worker, or before a resume)."""
        gone = set(names)
        self.pending = [u for u in self.pending if u[0] not in gone]

    @property
    def done(self) -> bool:
        """Whether every claim is decided (never, while one is pending)."""
        return not self.pending

    def broken(self, names: Iterable[str]) -> bool:
        """Whether any of `names` is an invariant (its decision is a violation)."""
        return any(name in self.invariants for name in names)
