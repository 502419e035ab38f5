"""The registry of search strategies: the ways `verify` can run one search.

A strategy is one module of this package that subclasses `Strategy` and registers an
instance with `register`. Every module here is imported when the registry is first read,
so adding an engine is adding a module: `verify --engine`, `verify --help` and
`verify bench` list what is registered. All strategies take the same model, properties,
bounds and reductions and return the same `CheckResult`.
"""

from __future__ import annotations

import importlib
import pkgutil
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar

from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.model import Model
from leadercheck.checker.parallel import EXACT_NEEDS_ONE_PROCESS, POR_NEEDS_ONE_WORKER
from leadercheck.checker.properties import Property
from leadercheck.checker.result import CheckResult
from leadercheck.checker.sampling.options import DEFAULT_SAMPLING, Sampling
from leadercheck.checker.search import Bounds
from leadercheck.checker.successors import Reductions

ONE_PROCESS, PARTITIONED = "bfs", "processes"  # the defaults for --workers 1 and K > 1


@dataclass(frozen=True)
class Request:
    """One search: what to search, for what, within which bounds, and how."""

    model: Model[Any]
    properties: Sequence[Property]
    bounds: Bounds
    reductions: Reductions
    workers: int = 1
    sampling: Sampling = DEFAULT_SAMPLING  # what a sampled strategy is given


class Strategy(ABC):
    """How to run searches; `session` holds what the searches of one command share (a
    cluster that starts once and stops at the end), `search` runs one of them."""

    name: ClassVar[str]
    summary: ClassVar[str]  # one line for --help
    parallel: ClassVar[bool] = False  # takes --workers K
    remote: ClassVar[bool] = False  # takes --address
    bench_workers: ClassVar[int] = 1  # the --workers `verify bench` gives it
    # A sampled strategy does not see every state: it finds violations and witnesses but
    # never shows HOLDS, and takes the sampling options (seed, budgets, bit array).
    sampled: ClassVar[bool] = False

    def check_options(self, workers: int, address: str | None, reductions: Reductions) -> None:
        """Refuse options this strategy cannot honour, before any work."""
        if workers > 1 and not self.parallel:
            able = " or ".join(s.name for s in iter_strategies() if s.parallel)
            raise LeadercheckError(
                f"--engine {self.name} runs in one process; --workers {workers} needs "
                f"--engine {able}"
            )
        if address is not None and not self.remote:
            able = " or ".join(s.name for s in iter_strategies() if s.remote)
            raise LeadercheckError(f"--address needs --engine {able}")
        if reductions.por and workers > 1:
            raise LeadercheckError(POR_NEEDS_ONE_WORKER)
        if reductions.exact and self.parallel:
            raise LeadercheckError(EXACT_NEEDS_ONE_PROCESS)

    def check_sampling(self, sampling: Sampling, workers: int, max_memory: int | None) -> None:
        """Refuse sampling options this strategy cannot honour (the sampled ones' budgets;
        the exhaustive ones ignore them: the command line refuses them there)."""
        return None

    @contextmanager
    def session(self, workers: int, address: str | None) -> Iterator[Any]:
        """What every search of one command shares (by default nothing)."""
        yield None

    @abstractmethod
    def search(self, shared: Any, request: Request) -> CheckResult:
        """One search, given what `session` yielded."""

    def describe(self, workers: int) -> str:
        """What ran, for the report; empty for the plain one-process search."""
        return f"{self.name}, {workers} worker(s)"


_STRATEGIES: dict[str, Strategy] = {}
_loaded = False


def register(strategy: Strategy) -> Strategy:
    """Add `strategy` under its name (a module of this package calls it on import)."""
    if strategy.name in _STRATEGIES:
        raise ValueError(f"two strategies named {strategy.name!r}")
    _STRATEGIES[strategy.name] = strategy
    return strategy


def _registry() -> dict[str, Strategy]:
    global _loaded  # noqa: PLW0603 (import the package's modules once)
    if not _loaded:
        _loaded = True
        for module in pkgutil.iter_modules(__path__):
            importlib.import_module(f"{__name__}.{module.name}")
    return _STRATEGIES


def names() -> list[str]:
    """Registered strategy names, in a fixed order: the defaults first, then by name."""
    known = _registry()
    first = [n for n in (ONE_PROCESS, PARTITIONED) if n in known]
    return first + sorted(n for n in known if n not in first)


def strategy(name: str | None, workers: int = 1) -> Strategy:
    """The strategy `name`, or the default for `workers` when None."""
    known = _registry()
    if name is None:
        name = ONE_PROCESS if workers == 1 else PARTITIONED
    if name not in known:
        raise LeadercheckError(f"unknown engine {name!r}: choose one of {', '.join(names())}")
    return known[name]


def help_lines() -> str:
    """The engines for `verify --help`: 'name: summary', one per engine."""
    return "; ".join(f"{n}: {_registry()[n].summary}" for n in names())


def iter_strategies() -> Iterator[Strategy]:
    return (_registry()[n] for n in names())
