"""Random walks from the initial states, alone or as a swarm
(checker/engine/strategies/sampling/walks.py)."""

from __future__ import annotations

from leadercheck.checker.engine.settings import SIMULATE, SearchSettings
from leadercheck.checker.engine.strategies import register
from leadercheck.checker.engine.strategies.sampling.strategy import Sampled
from leadercheck.checker.errors import LeadercheckError


class Simulate(Sampled):
    name = SIMULATE
    kind = SIMULATE
    what = "random walks"
    swarm_of = "random-walk"
    summary = (
        "random walks from the initial states (--seed, --depth, --walks or --time): finds "
        "violations, never shows HOLDS"
    )
    options = frozenset({"seed", "depth", "walks", "seconds"})

    def validate(self, settings: SearchSettings) -> None:
        super().validate(settings)
        if settings.max_depth is not None:
            raise LeadercheckError(
                "--strategy simulate: a walk's length is --depth D, not --max-depth"
            )


register(Simulate())
