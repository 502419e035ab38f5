"""What a sampled search's worker is built from, what it tells the coordinator, and what
both kinds of worker (walks.py, depth_first.py) keep alike."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from leadercheck.checker.engine.explore import peak_memory, resident_memory
from leadercheck.checker.engine.guard import call_model, model_name
from leadercheck.checker.engine.observers import StateClaims
from leadercheck.checker.engine.settings import Sampling
from leadercheck.checker.engine.strategies.processes.partitioned import (
    Failure,
    WorkerSetup,
    failure_of,
    quiet_gc,
)
from leadercheck.checker.engine.values import ValueCheck

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


class SampledWorker:
    """The part of a worker both kinds share: the model, the claims still to check, what
    it decided and where, the failure that stopped it, and how it reports."""

    def __init__(self, setup: WorkerSetup, index: int) -> None:
        quiet_gc()
        self.options: SampledSetup = setup.extra
        self.model = setup.model
        self.index = index
        self.initial = call_model(lambda: list(setup.model.initial_states()), "initial_states")
        self.claims = StateClaims(setup.properties)
        self.findings: dict[str, tuple[OrderKey, Moves]] = {}
        self.failure: tuple[str, Failure, Moves] | None = None
        # fingerprints=False: a sampled search never shows a claim holds, so ints Python
        # hashes alike can only cost it coverage, never give a wrong HOLDS
        self.values = ValueCheck(
            model_name(setup.model), walk=not setup.trust_values, fingerprints=False
        )

    def decide(self, state: Any, key: OrderKey, moves: Sequence[int]) -> bool:
        """Check a new state: a value (engine/values.py: a Misuse otherwise), then the
        pending claims, recording each one it decides at `key` with `moves`; True when it
        breaks an invariant (the search stops there)."""
        self.values.stored(state)
        if not self.claims.pending:
            return False
        decided = self.claims.visit(state, key)
        for name in decided:
            self.findings[name] = (key, tuple(moves))
        return self.claims.broken(decided)

    def failed(self, what: str, exc: BaseException, moves: Sequence[int]) -> None:
        """Model code raised in `what` at the state `moves` lead to: the coordinator
        reports it with that trace."""
        self.failure = (what, failure_of(exc), tuple(moves))

    def figures(self, **counts: Any) -> WorkerReport:
        """This worker's report: its own `counts`, and what every worker tells."""
        return WorkerReport(
            findings=dict(self.findings),
            failure=self.failure,
            resident=resident_memory(),
            peak=peak_memory(),
            **counts,
        )
