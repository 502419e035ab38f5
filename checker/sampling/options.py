"""What a sampled search is given: a seed, its budgets, the size of its bit array."""

from __future__ import annotations

from dataclasses import dataclass

SIMULATE, BITSTATE = "simulate", "bitstate"  # the sampled strategies, by their names
DEFAULT_SECONDS = 60.0  # a simulation given neither --walks nor --time runs this long
DEFAULT_DEPTH = 100  # the most steps of one walk, as TLC's -simulate depth
DEFAULT_MEMORY = 64 << 20  # bytes of a bitstate search's bit array
HASHES = 3  # bits set per state (Spin's default for bitstate hashing)
MAX_SWARM = 64  # workers of a swarm: beyond the cores they only share them
SHORTEN_STATES = 100_000  # states the neighbourhood search may store while shortening
SHORTEN_REPLAYS = 2_000  # candidate traces delta debugging may replay


@dataclass(frozen=True)
class Sampling:
    """The options of the sampled searches (checker/sampling/).

    Budgets are counts wherever they can be, so that the same command gives the same
    trace: `walks`, the walk length `depth`, the shortening's states and replays. Only
    `seconds` is a clock, and a time-bounded simulation still gives the same trace when
    it finds the violation before the time is up.
    """

    seed: int = 1
    depth: int = DEFAULT_DEPTH
    walks: int | None = None  # simulation: how many walks (None: until `seconds`)
    seconds: float | None = None  # wall-clock budget (simulation: DEFAULT_SECONDS if no walks)
    memory: int = DEFAULT_MEMORY  # bitstate: bytes of bit array per search
    hashes: int = HASHES
    shorten_states: int = SHORTEN_STATES
    shorten_replays: int = SHORTEN_REPLAYS

    def time_budget(self, walking: bool) -> float | None:
        """The seconds a search may run: a simulation without a walk count gets the default."""
        if self.seconds is None and walking and self.walks is None:
            return DEFAULT_SECONDS
        return self.seconds


DEFAULT_SAMPLING = Sampling()
