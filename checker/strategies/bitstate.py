"""Depth-first search over a Bloom filter, alone or as a swarm (checker/sampling/depth_first.py)."""

from __future__ import annotations

from leadercheck.checker.sampling.options import BITSTATE
from leadercheck.checker.sampling.strategy import Sampled
from leadercheck.checker.strategies import register


class Bitstate(Sampled):
    name = BITSTATE
    kind = BITSTATE
    what = "bitstate depth-first search"
    swarm_of = "bitstate"
    summary = (
        "depth first over a Bloom filter of --memory bytes, as Spin's supertrace: never "
        "shows HOLDS, says what collisions may have skipped"
    )


register(Bitstate())
