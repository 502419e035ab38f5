"""One process, breadth first: the reference search (checker/search.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from leadercheck.checker.engine.settings import SearchSettings
from leadercheck.checker.engine.strategies import ONE_PROCESS, Strategy, register
from leadercheck.checker.model import Model
from leadercheck.checker.properties import Property
from leadercheck.checker.result import CheckResult
from leadercheck.checker.search import breadth_first


class BreadthFirst(Strategy):
    name = ONE_PROCESS
    summary = "one process, breadth first (the default)"

    def search(
        self,
        shared: Any,
        model: Model[Any],
        properties: Sequence[Property],
        settings: SearchSettings,
    ) -> CheckResult:
        return breadth_first(model, properties, settings)

    def describe(self, workers: int) -> str:
        return ""


register(BreadthFirst())
