"""Depth-first search over a Bloom filter, alone or as a swarm
(checker/engine/strategies/sampling/depth_first.py)."""

from __future__ import annotations

from leadercheck.checker.engine.bits import usable_bytes
from leadercheck.checker.engine.settings import BITSTATE, SearchSettings
from leadercheck.checker.engine.strategies import register
from leadercheck.checker.engine.strategies.sampling.strategy import Sampled
from leadercheck.checker.errors import LeadercheckError


class Bitstate(Sampled):
    name = BITSTATE
    kind = BITSTATE
    what = "bitstate depth-first search"
    swarm_of = "bitstate"
    summary = (
        "depth first over a Bloom filter of --memory bytes, as Spin's supertrace: never "
        "shows HOLDS, says what collisions may have skipped"
    )

    options = frozenset({"seed", "seconds", "memory"})

    def validate(self, settings: SearchSettings) -> None:
        """Every worker holds a bit array: together they must fit under the memory bound."""
        super().validate(settings)
        sampling, workers, max_memory = settings.sampling, settings.workers, settings.max_memory
        arrays = usable_bytes(sampling.memory) * workers
        if max_memory is not None and arrays >= max_memory:
            each = f"{workers} x " if workers > 1 else ""
            raise LeadercheckError(
                f"--memory: {each}{usable_bytes(sampling.memory):,} bytes of bit array do not "
                f"fit under --max-memory ({max_memory:,} bytes)"
            )


register(Bitstate())
