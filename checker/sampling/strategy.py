"""What the sampled strategies share as registered strategies (checker/strategies/simulate.py
and bitstate.py): the options they refuse, the search they run, how a report names them."""

from __future__ import annotations

from typing import Any

from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.result import CheckResult
from leadercheck.checker.sampling.options import MAX_SWARM
from leadercheck.checker.sampling.run import check_sampled
from leadercheck.checker.strategies import Request, Strategy
from leadercheck.checker.successors import Reductions


class Sampled(Strategy):
    """A search that samples the state space; `--workers K` (or `--swarm K`) runs K
    diversified ones as forked processes and stops them all at the first violation."""

    kind: str
    parallel = True
    sampled = True
    what: str  # one such search, in the report's words
    swarm_of: str  # its kind, as in "a swarm of K diversified ... searches"

    def check_options(self, workers: int, address: str | None, reductions: Reductions) -> None:
        used = [
            flag
            for flag, on in (
                ("--symmetry", reductions.symmetry),
                ("--por", reductions.por),
                ("--exact", reductions.exact),
                ("--address", address is not None),
            )
            if on
        ]
        if used:
            raise LeadercheckError(
                f"{used[0]} applies to the exhaustive searches, not to --strategy {self.name}"
            )
        if workers > MAX_SWARM:
            raise LeadercheckError(
                f"--strategy {self.name} runs at most {MAX_SWARM} workers, not {workers}"
            )

    def search(self, shared: Any, request: Request) -> CheckResult:
        r = request
        return check_sampled(r.model, r.properties, r.bounds, r.sampling, self.kind, r.workers)

    def describe(self, workers: int) -> str:
        if workers == 1:
            return self.what
        return f"a swarm of {workers} diversified {self.swarm_of} searches, one process each"
