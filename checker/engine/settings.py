"""How to search, whole: one frozen `SearchSettings`, made once and handed to a strategy.

Everything a search is told travels here and nowhere else: which strategy with how many
workers (and where, for Ray), the bounds (states, depth, resident memory), the reductions
(symmetry, partial-order, exact states), the sampled strategies' options (`Sampling`), whom
to tell how it goes, and where to save progress. The command line builds it from its
options; a gate case, a measure or a test builds its own. A strategy refuses, in one line,
what it cannot honour (checker/engine/strategies/: each validates its own), so nothing
else keeps a table of which option goes with which strategy.

So `--max-memory 4G` takes three steps to where it acts: parsed into `max_memory` here, the
strategy hands the settings to its search, whose exploration compares the resident memory
with it (checker/engine/explore.py) or forks workers that do.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from leadercheck.checker.engine.reductions.symmetry import canonicalizer

if TYPE_CHECKING:
    from leadercheck.checker.engine.checkpoint import Checkpoints
    from leadercheck.checker.model import Model
    from leadercheck.checker.result import Progress

SIMULATE, BITSTATE = "simulate", "bitstate"  # the sampled strategies, by their names
MAX_SWARM = 64  # workers of a swarm: beyond the cores they only share them
DEFAULT_MEMORY_SHARE = 0.8  # of physical memory, so a search stops before the OOM killer
DEFAULT_SECONDS = 60.0  # a simulation given neither --walks nor --time runs this long
DEFAULT_DEPTH = 100  # the most steps of one walk, as TLC's -simulate depth
DEFAULT_MEMORY = 64 << 20  # bytes of a bitstate search's bit array
HASHES = 3  # bits set per state (Spin's default for bitstate hashing)
SHORTEN_STATES = 100_000  # states the neighbourhood search may store while shortening
SHORTEN_REPLAYS = 2_000  # candidate traces delta debugging may replay
# The sampled searches' options as the command line spells them (for refusals).
SAMPLING_FLAGS = {
    "seed": "--seed",
    "depth": "--depth",
    "walks": "--walks",
    "seconds": "--time",
    "memory": "--memory",
}


def physical_memory() -> int:
    """Bytes of physical memory on this machine."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def default_max_memory() -> int:
    return int(physical_memory() * DEFAULT_MEMORY_SHARE)


@dataclass(frozen=True)
class Reductions:
    """Which state-space reductions a search applies."""

    symmetry: bool = False  # one representative per orbit of the model's node symmetry
    por: bool = False  # partial-order reduction over the model's local actions
    exact: bool = False  # keep full states, not 60-bit fingerprints (no collision possible)

    def canonical(self, model: Model[Any]) -> Callable[[Any], Any] | None:
        """The representative function, or None when symmetry is off or not declared."""
        return canonicalizer(model) if self.symmetry else None

    def flags(self) -> list[str]:
        """The options that asked for these reductions, as the command line spells them."""
        return [f"--{name}" for name in ("symmetry", "por", "exact") if getattr(self, name)]


NO_REDUCTIONS = Reductions()


@dataclass(frozen=True)
class Sampling:
    """The options of the sampled searches (checker/engine/strategies/sampling/), and which of them
    were given (`given`: field names), so a strategy can refuse one that means nothing to it.

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
    given: frozenset[str] = frozenset()

    @classmethod
    def of(cls, **given: Any) -> Sampling:
        """The options given (None: not given, the default applies), remembered as given."""
        chosen = {name: value for name, value in given.items() if value is not None}
        return cls(**chosen, given=frozenset(chosen))

    def time_budget(self, walking: bool) -> float | None:
        """The seconds a search may run: a simulation without a walk count gets the default."""
        if self.seconds is None and walking and self.walks is None:
            return DEFAULT_SECONDS
        return self.seconds

    def flags(self) -> list[str]:
        """The options given, as the command line spells them."""
        return [flag for name, flag in SAMPLING_FLAGS.items() if name in self.given]


DEFAULT_SAMPLING = Sampling()


@dataclass(frozen=True)
class SearchSettings:
    """How to search, handed to a strategy whole (see the module's doc)."""

    strategy: str | None = None  # a registered name; None: bfs for 1 worker, processes for more
    workers: int = 1
    address: str | None = None  # a Ray cluster's address
    max_states: int | None = None
    max_depth: int | None = None
    max_memory: int | None = field(default_factory=default_max_memory)  # resident bytes
    reductions: Reductions = NO_REDUCTIONS
    sampling: Sampling = DEFAULT_SAMPLING
    progress: Callable[[Progress], None] | None = None
    checkpoints: Checkpoints | None = None
    # The model's value semantics are proven by its own tests (the built-in catalogue: its
    # state counts pinned against TLC and Spin, every protocol walked in the slow tests):
    # skip the walk for parts compared by identity, which costs 2-5 us a state. Mutation
    # is checked all the same. Never for a user's model.
    trust_values: bool = False
    # Search through the model's compiled kernel where it has one (checker/engine/compiled/);
    # False: always its Python code (--interpreted)
    compiled: bool = True

    def but(self, **changes: Any) -> SearchSettings:
        """These settings with `changes` (a gate case's bounds, a measure's progress)."""
        return replace(self, **changes)


def unbounded(**fields: Any) -> SearchSettings:
    """Settings with no memory bound unless one is given: what the engine's own callers
    (a state graph, a test) use, where the command line would apply 80% of RAM."""
    return SearchSettings(**{"max_memory": None, **fields})
