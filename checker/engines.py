"""Which engine runs a search: one process, K processes on this machine, or a Ray cluster.

Every engine takes the same model, properties, bounds and reductions and returns the
same `CheckResult`; the partitioned ones give the same verdicts, counts and traces as
one process (checker/parallel.py says when counts can differ).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from checker.errors import LeadercheckError
from checker.model import Model
from checker.parallel import Transport, check_parallel
from checker.properties import Property
from checker.result import CheckResult, Progress
from checker.search import check
from checker.successors import NO_REDUCTIONS, Reductions

LOCAL, RAY = "local", "ray"
DEFAULT_MEMORY_SHARE = 0.8  # of physical memory, so a search stops before the OOM killer


def physical_memory() -> int:
    """Bytes of physical memory on this machine."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def default_max_memory() -> int:
    return int(physical_memory() * DEFAULT_MEMORY_SHARE)


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(text: str) -> int:
    """'512M', '8G', '1.5GiB' or a number of bytes."""
    found = _SIZE.match(text)
    if not found:
        raise LeadercheckError(f"memory size {text!r}: expected a number with K, M, G or T")
    value = int(float(found.group(1)) * _UNITS[found.group(2).lower()])
    if value <= 0:
        raise LeadercheckError(f"memory size {text!r} must be positive")
    return value


@dataclass(frozen=True)
class EngineOptions:
    """How to search; the defaults are one process, no reductions, 80% of RAM."""

    reductions: Reductions = NO_REDUCTIONS
    workers: int = 1
    engine: str = LOCAL
    address: str | None = None
    max_memory: int | None = field(default_factory=default_max_memory)

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise LeadercheckError(f"--workers must be at least 1, got {self.workers}")
        if self.engine not in (LOCAL, RAY):
            raise LeadercheckError(f"unknown engine {self.engine!r}: choose local or ray")
        if self.address is not None and self.engine != RAY:
            raise LeadercheckError("--address needs --engine ray")

    def describe(self) -> str:
        """A short line for reports: what ran and with which reductions."""
        parts = []
        if self.engine == RAY:
            parts.append(f"ray, {self.workers} worker(s)")
        elif self.workers > 1:
            parts.append(f"{self.workers} worker processes")
        if self.reductions.symmetry:
            parts.append("symmetry (states counted are orbit representatives)")
        if self.reductions.por:
            parts.append("partial-order reduction")
        return ", ".join(parts)


Search = Callable[..., CheckResult]  # (model, properties, *, max_states, max_depth, progress)


@contextmanager
def searcher(options: EngineOptions) -> Iterator[Search]:
    """A search function for the whole of one command: a Ray instance starts only once."""
    transport: Transport | None = None
    if options.engine == RAY:
        from checker.ray_engine import ray_transport  # noqa: PLC0415 (ray is heavy to import)

        transport = ray_transport(options.workers, options.address)
    try:
        yield partial(run_search, options=options, transport=transport)
    finally:
        if transport is not None:
            transport.close()


def run_search(
    model: Model[Any],
    properties: Sequence[Property],
    options: EngineOptions,
    *,
    max_states: int | None = None,
    max_depth: int | None = None,
    progress: Callable[[Progress], None] | None = None,
    transport: Transport | None = None,
) -> CheckResult:
    """Search with the engine `options` name (on `transport`, for the Ray engine)."""
    bounds: dict[str, Any] = {
        "max_states": max_states,
        "max_depth": max_depth,
        "max_memory": options.max_memory,
        "reductions": options.reductions,
        "progress": progress,
    }
    if options.engine == LOCAL and options.workers == 1:
        return check(model, properties, **bounds)
    if options.engine == LOCAL:
        return check_parallel(model, properties, workers=options.workers, **bounds)
    if transport is None:  # a single Ray search: start and stop the transport around it
        with searcher(options) as search:
            result: CheckResult = search(
                model, properties, max_states=max_states, max_depth=max_depth, progress=progress
            )
            return result
    return check_parallel(model, properties, workers=options.workers, transport=transport, **bounds)
