"""What the sampled strategies share as registered strategies
(checker/engine/strategies/sampling/simulate.py and bitstate.py): the options they refuse, the
search they run, how a report names them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from leadercheck.checker.engine.settings import MAX_SWARM, SAMPLING_FLAGS, SearchSettings
from leadercheck.checker.engine.strategies import Strategy, iter_strategies
from leadercheck.checker.engine.strategies.sampling.run import check_sampled
from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.model import Model
from leadercheck.checker.properties import Property
from leadercheck.checker.result import CheckResult


class Sampled(Strategy):
    """A search that samples the state space; `--workers K` (or `--swarm K`) runs K
    diversified ones as forked processes and stops them all at the first violation."""

    kind: str
    parallel = True
    sampled = True
    what: str  # one such search, in the report's words
    swarm_of: str  # its kind, as in "a swarm of K diversified ... searches"
    options: ClassVar[frozenset[str]]  # the Sampling fields it takes (with seed and time)

    def takes(self, flag: str) -> bool:
        return any(SAMPLING_FLAGS[name] == flag for name in self.options)

    def validate(self, settings: SearchSettings) -> None:
        used = settings.reductions.flags()
        if settings.address is not None:
            used.append("--address")
        if used:
            raise LeadercheckError(
                f"{used[0]} applies to the exhaustive searches, not to --strategy {self.name}"
            )
        if settings.checkpoints is not None:
            raise LeadercheckError(
                "--checkpoint and --resume save an exhaustive search; a sampled one is run "
                "again from its --seed"
            )
        workers = settings.workers
        if workers < 1:
            raise LeadercheckError(f"--workers must be at least 1, got {workers}")
        if workers > MAX_SWARM:
            raise LeadercheckError(
                f"--strategy {self.name} runs at most {MAX_SWARM} workers, not {workers}"
            )
        wrong = [name for name in sorted(settings.sampling.given) if name not in self.options]
        if wrong:
            flag = SAMPLING_FLAGS[wrong[0]]
            owner = next(s.name for s in iter_strategies() if s.sampled and s.takes(flag))
            raise LeadercheckError(f"{flag} is an option of --strategy {owner}, not {self.name}")

    def search(
        self,
        shared: Any,
        model: Model[Any],
        properties: Sequence[Property],
        settings: SearchSettings,
    ) -> CheckResult:
        return check_sampled(model, properties, settings, self.kind)

    def describe(self, workers: int) -> str:
        if workers == 1:
            return self.what
        return f"a swarm of {workers} diversified {self.swarm_of} searches, one process each"
