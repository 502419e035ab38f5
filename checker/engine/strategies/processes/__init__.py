"""K forked processes on this machine, states partitioned by fingerprint
(checker/engine/strategies/processes/partitioned.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from leadercheck.checker.engine.settings import SearchSettings
from leadercheck.checker.engine.strategies import PARTITIONED, Strategy, register
from leadercheck.checker.engine.strategies.processes.partitioned import (
    partitioned,
    refuse_for_partitions,
)
from leadercheck.checker.model import Model
from leadercheck.checker.properties import Property
from leadercheck.checker.result import CheckResult


class Processes(Strategy):
    name = PARTITIONED
    summary = "--workers K forked processes, states partitioned by fingerprint"
    parallel = True
    bench_workers = 2

    def validate(self, settings: SearchSettings) -> None:
        super().validate(settings)
        refuse_for_partitions(settings)

    def search(
        self,
        shared: Any,
        model: Model[Any],
        properties: Sequence[Property],
        settings: SearchSettings,
    ) -> CheckResult:
        """`shared` is the transport that runs the workers; None forks them per search."""
        return partitioned(model, properties, settings, shared)

    def describe(self, workers: int) -> str:
        return f"{workers} worker processes"


register(Processes())
