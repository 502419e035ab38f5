"""One process, breadth first: the reference search (checker/search.py)."""

from __future__ import annotations

from typing import Any

from leadercheck.checker.result import CheckResult
from leadercheck.checker.search import check
from leadercheck.checker.strategies import ONE_PROCESS, Request, Strategy, register


class BreadthFirst(Strategy):
    name = ONE_PROCESS
    summary = "one process, breadth first (the default)"

    def search(self, shared: Any, request: Request) -> CheckResult:
        r = request
        return check(r.model, r.properties, reductions=r.reductions, **r.bounds.as_kwargs())

    def describe(self, workers: int) -> str:
        return ""


register(BreadthFirst())
