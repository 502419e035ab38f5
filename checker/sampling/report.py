"""What a sampled search's worker is built from and what it tells the coordinator."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from leadercheck.checker.parallel import Failure
from leadercheck.checker.sampling.options import Sampling

# Where a claim was decided, as an order every run agrees on: (walk index,) for a
# simulation, (round, worker) for a bitstate search. The smallest wins.
OrderKey = tuple[int, ...]
Moves = tuple[int, ...]  # the initial state's position, then each step's successor position
NO_VIOLATION = (1 << 63) - 1  # the first violating walk's number, while there is none


@dataclass(frozen=True)
class SampledSetup:
    """The `extra` of a sampled search's WorkerSetup."""

    sampling: Sampling
    max_depth: int | None = None  # bitstate: expand no state this many steps deep
    # simulation: the number of the first walk known to break an invariant, shared by a
    # swarm's processes (a multiprocessing Value), so that none runs walks past it
    first_violation: Any = None


class WorkerReport(NamedTuple):
    """A worker's figures so far (cumulative, never deltas), after a round."""

    findings: dict[str, tuple[OrderKey, Moves]]  # claim -> where it was decided, and how
    walks: int  # walks finished (simulation)
    steps: int  # transitions taken (simulation) or states expanded (bitstate)
    generated: int  # initial states and successors computed, repeats included
    distinct: int  # distinct states this worker met
    deepest: int  # the most steps from an initial state it reached
    finished: bool  # it has nothing more to do (its walks or its search are done)
    cut: bool  # a depth bound kept a state unexpanded (bitstate)
    bits_set: int  # bits set in its bit array (bitstate)
    failure: tuple[str, Failure, Moves] | None  # what raised, how, and where
    resident: int  # bytes, now
    peak: int  # bytes, at most so far
