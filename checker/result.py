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
    # the sampled searches (checker/engine/strategies/sampling/): they end without having seen
    # every state
    BUDGET = "walks or time budget spent"
    HASHED = "every state the bit array let through explored"
    FIRST_VIOLATION = "stopped at the first violation"


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


FINGERPRINT_BITS = 60  # the Python searches keep 60 bits of each state's hash (engine/store.py)
FINGERPRINT_SPACE = float(1 << FINGERPRINT_BITS)


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
    fingerprint_bits: int = FINGERPRINT_BITS  # the compiled search keeps 96
    # the other phases' collision estimates, added to this one's (a check of two searches)
    collision_elsewhere: float = 0.0

    @property
    def states_per_second(self) -> float:
        return self.distinct_states / self.seconds if self.seconds > 0 else 0.0

    @property
    def collision_probability(self) -> float:
        """The estimated chance that a fingerprint collision hid a state.

        As TLC estimates it from the distinct (n) and generated (g) states, on b-bit
        fingerprints: each of the g - n lookups that found a state might have found another
        one's fingerprint, n (g - n) / 2^b; and the n new states might share one among
        themselves, n^2 / 2^(b+1). The larger of the two, plus the other phases' own, and
        never more than 1.
        """
        own = 0.0
        if not self.exact:
            n, g = self.distinct_states, self.generated_states
            own = max(n * max(g - n, 0), n * n / 2) / float(1 << self.fingerprint_bits)
        return min(1.0, own + self.collision_elsewhere)


@dataclass(frozen=True)
class PropertyResult:
    """The verdict on one property; `trace` is a counterexample (ALWAYS) or witness (SOMETIMES)."""

    prop: Property
    verdict: Verdict
    trace: Trace | None = None
    reason: str = ""
    found_length: int | None = None  # a sampled search's trace as found, before shortening

    @property
    def trace_kind(self) -> str:
        """'witness' for a `sometimes` claim's trace, 'counterexample' (or lasso) otherwise."""
        return "witness" if self.prop.kind is Kind.SOMETIMES else "counterexample"


@dataclass(frozen=True)
class Coverage:
    """What a sampled search (simulation, bitstate, swarm) covered.

    Such a search never shows that a claim holds: it may find a violation, which is a
    real, replayed trace, or a witness, which proves its `sometimes` claim; whatever it
    did not find stays INCOMPLETE, and these figures say how much it looked.
    """

    strategy: str  # "simulate" or "bitstate"
    seed: int
    workers: int = 1  # a swarm's diversified searches
    walks: int = 0  # simulation: random walks finished
    steps: int = 0  # transitions taken (simulation) or explored (bitstate)
    deepest: int = 0  # the most steps from an initial state any walk or stack reached
    walk_depth: int | None = None  # simulation: the most steps of one walk
    bits: int = 0  # bitstate: the bit array's size in bits
    hashes: int = 0  # bitstate: bits set per state
    bits_set: int = 0  # bitstate: bits set at the end (in the union of a swarm's arrays)
    # bitstate: the estimated chance, at the end, that a new state looked visited (an
    # upper estimate of the fraction of states the collisions skipped)
    omitted: float = 0.0
    implied: int = 0  # bitstate: the distinct states the bits set imply (a check on the count)


@dataclass(frozen=True)
class CheckResult:
    results: tuple[PropertyResult, ...]
    stats: Stats
    end: EndReason
    notes: tuple[str, ...] = ()  # what the search could not apply, and why
    coverage: Coverage | None = None  # a sampled search's figures; None: exhaustive

    @property
    def verdict(self) -> Verdict:
        """VIOLATED if any property is, else INCOMPLETE if any is, else HOLDS; a sampled
        search (with `coverage`) is never HOLDS: at best INCOMPLETE."""
        verdicts = {r.verdict for r in self.results}
        for v in (Verdict.VIOLATED, Verdict.INCOMPLETE):
            if v in verdicts:
                return v
        return Verdict.INCOMPLETE if self.coverage is not None else Verdict.HOLDS

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
    queue: int  # discovered states not yet expanded (a simulation: walks finished)
    depth: int
    seconds: float
    queue_label: str = "queue"  # what `queue` counts, as the progress line names it
