"""The options of a search (engine, workers, reductions, memory) and one search function
per command built from them.

Engines are the registered strategies of checker/strategies/; every one takes the same
model, properties, bounds and reductions and returns the same `CheckResult`; the
partitioned ones give the same verdicts, counts and traces as one process
(checker/parallel.py says when counts can differ).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from leadercheck.checker.checkpoint import Checkpoints
from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.model import Model
from leadercheck.checker.properties import Property
from leadercheck.checker.result import CheckResult, Progress
from leadercheck.checker.sampling.options import DEFAULT_SAMPLING, Sampling
from leadercheck.checker.search import Bounds
from leadercheck.checker.strategies import Request, Strategy, strategy
from leadercheck.checker.successors import NO_REDUCTIONS, Reductions

DEFAULT_MEMORY_SHARE = 0.8  # of physical memory, so a search stops before the OOM killer


def physical_memory() -> int:
    """Bytes of physical memory on this machine."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def default_max_memory() -> int:
    return int(physical_memory() * DEFAULT_MEMORY_SHARE)


@dataclass(frozen=True)
class EngineOptions:
    """How to search; the defaults are one process, no reductions, 80% of RAM.

    `engine` names a registered strategy (checker/strategies/); None picks the one-process
    search for one worker and the process-partitioned one for more.
    """

    reductions: Reductions = NO_REDUCTIONS
    workers: int = 1
    engine: str | None = None
    address: str | None = None
    max_memory: int | None = field(default_factory=default_max_memory)
    sampling: Sampling = DEFAULT_SAMPLING  # the sampled strategies' seed, budgets and bits

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise LeadercheckError(f"--workers must be at least 1, got {self.workers}")
        strategy = self.strategy
        strategy.check_options(self.workers, self.address, self.reductions)
        strategy.check_sampling(self.sampling, self.workers, self.max_memory)

    @property
    def strategy(self) -> Strategy:
        return strategy(self.engine, self.workers)

    def describe(self) -> str:
        """A short line for reports: what ran and with which reductions."""
        parts = [self.strategy.describe(self.workers)]
        if self.reductions.symmetry:
            parts.append("symmetry (states counted are orbit representatives)")
        if self.reductions.por:
            parts.append("partial-order reduction")
        if self.reductions.exact:
            parts.append("exact (full states, no fingerprints)")
        return ", ".join(p for p in parts if p)


Search = Callable[..., CheckResult]  # (model, properties, *, max_states, max_depth, progress)


@contextmanager
def searcher(options: EngineOptions) -> Iterator[Search]:
    """A search function for the whole of one command: a Ray instance starts only once."""
    engine = options.strategy
    with engine.session(options.workers, options.address) as shared:

        def search(
            model: Model[Any],
            properties: Sequence[Property],
            *,
            max_states: int | None = None,
            max_depth: int | None = None,
            progress: Callable[[Progress], None] | None = None,
            checkpoints: Checkpoints | None = None,
        ) -> CheckResult:
            bounds = Bounds(max_states, max_depth, options.max_memory, progress, checkpoints)
            request = Request(
                model, properties, bounds, options.reductions, options.workers, options.sampling
            )
            return engine.search(shared, request)

        yield search
