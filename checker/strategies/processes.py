"""K forked processes on this machine, states partitioned by fingerprint (checker/parallel.py)."""

from __future__ import annotations

from typing import Any

from leadercheck.checker.parallel import check_parallel
from leadercheck.checker.result import CheckResult
from leadercheck.checker.strategies import PARTITIONED, Request, Strategy, register


class Processes(Strategy):
    name = PARTITIONED
    summary = "--workers K forked processes, states partitioned by fingerprint"
    parallel = True
    bench_workers = 2

    def search(self, shared: Any, request: Request) -> CheckResult:
        """`shared` is the transport that runs the workers; None forks them per search."""
        r = request
        return check_parallel(
            r.model,
            r.properties,
            workers=r.workers,
            reductions=r.reductions,
            transport=shared,
            **r.bounds.as_kwargs(),
        )

    def describe(self, workers: int) -> str:
        return f"{workers} worker processes"


register(Processes())
