"""What a search returns: a verdict per property, statistics, and why the search ended."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from leadercheck.checker.properties import Kind, Property
from leadercheck.checker.trace import Trace


class Verdict(enum.Enum):
    HOLDS = "HOLDS"
    VIOLATED = "VIOLATED"
    INCOMPLETE = "INCOMPLETE"


class EndReason(enum.Enum):
    """Why the search stopped."""

    EXHAUSTED = "every reachable state explored"
    DECIDED = "every property decided"
    MAX_STATES = "state bound reached"
    MAX_DEPTH = "depth bound reached"
    MAX_MEMORY = "memory bound reached"
    INTERRUPTED = "interrupted"


@dataclass(frozen=True)
class Phase:
    """One phase of a check: what it explored or judged, and what it cost.

    A check has one phase per exploration (the search; with reductions or workers, a
    second, unreduced one for liveness) and one for judging fair cycles.
    """

    name: str
    distinct_states: int
    transitions: int
    seconds: float
    peak_memory_bytes: int
    end: EndReason = EndReason.EXHAUSTED


FINGERPRINT_SPACE = float(1 << 60)  # checker/successors.py keeps 60 bits of each state's hash


@dataclass(frozen=True)
class Stats:
    distinct_states: int
    generated_states: int  # initial states + successors computed, repeats included
    transitions: int  # successors computed
    depth: int  # the largest breadth-first level reached, in steps
    seconds: float
    peak_memory_bytes: int
    phases: tuple[Phase, ...] = ()  # every phase, when there is more than the search
    exact: bool = False  # states kept in full (--exact): no fingerprint can collide

    @property
    def states_per_second(self) -> float:
        return self.distinct_states / self.seconds if self.seconds > 0 else 0.0

    @property
    def collision_probability(self) -> float:
        """The estimated chance that a fingerprint collision hid a state (60-bit fingerprints).

        As TLC estimates it from the distinct (n) and generated (g) states: each of the
        g - n lookups that found a state might have found another one's fingerprint,
        n (g - n) / 2^60; and the n new states might share one among themselves, n^2 / 2^61.
        The larger of the two, and never more than 1.
        """
        if self.exact:
            return 0.0
        n, g = self.distinct_states, self.generated_states
        return min(1.0, max(n * max(g - n, 0), n * n / 2) / FINGERPRINT_SPACE)


@dataclass(frozen=True)
class PropertyResult:
    """The verdict on one property; `trace` is a counterexample (ALWAYS) or witness (SOMETIMES)."""

    prop: Property
    verdict: Verdict
    trace: Trace | None = None
    reason: str = ""

    @property
    def trace_kind(self) -> str:
        """'witness' for a `sometimes` claim's trace, 'counterexample' (or lasso) otherwise."""
        return "witness" if self.prop.kind is Kind.SOMETIMES else "counterexample"


@dataclass(frozen=True)
class CheckResult:
    results: tuple[PropertyResult, ...]
    stats: Stats
    end: EndReason
    notes: tuple[str, ...] = ()  # what the search could not apply, and why

    @property
    def verdict(self) -> Verdict:
        """VIOLATED if any property is, else INCOMPLETE if any is, else HOLDS."""
        verdicts = {r.verdict for r in self.results}
        for v in (Verdict.VIOLATED, Verdict.INCOMPLETE):
            if v in verdicts:
                return v
        return Verdict.HOLDS

    def result(self, name: str) -> PropertyResult:
        for r in self.results:
            if r.prop.name == name:
                return r
        raise KeyError(name)


@dataclass(frozen=True)
class Measurement:
    """A quantity over the reachable states where it applies, with a trace to its worst case."""

    worst: int
    best: int
    mean: float
    count: int  # reachable states the value was taken over
    worst_trace: Trace | None  # the shortest trace to a worst state, when asked for
    stats: Stats
    end: EndReason = EndReason.EXHAUSTED  # anything else: over the states explored only

    @property
    def complete(self) -> bool:
        return self.end in (EndReason.EXHAUSTED, EndReason.DECIDED)


@dataclass(frozen=True)
class Progress:
    """A snapshot of a running search."""

    distinct_states: int
    generated_states: int
    queue: int  # discovered states not yet expanded
    depth: int
    seconds: float
