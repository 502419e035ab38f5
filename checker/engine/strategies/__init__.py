"""The registry of search strategies: the ways `verify` can run one search.

A strategy is a module of this package (or a package of its own, registering in its
`__init__`) that subclasses `Strategy` and registers an instance with `register`. Every
module and package here is imported when the registry is first read, so adding an engine
is adding a module: `verify --engine`, `verify --help` and `verify bench` list what is
registered. All strategies take the same model, properties, settings
(checker/engine/settings.py) and return the same `CheckResult`; each refuses what it cannot
honour itself (`validate`), so adding a strategy touches one module. `searcher` gives a
command one search function from its settings.
"""

from __future__ import annotations

import importlib
import pkgutil
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar

from leadercheck.checker.engine.settings import SearchSettings
from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.model import Model
from leadercheck.checker.properties import Property
from leadercheck.checker.result import CheckResult

ONE_PROCESS, PARTITIONED = "bfs", "processes"  # the defaults for --workers 1 and K > 1


class Strategy(ABC):
    """How to run searches; `session` holds what the searches of one command share (a
    cluster that starts once and stops at the end), `search` runs one of them, with its
    settings whole (checker/engine/settings.py)."""

    name: ClassVar[str]
    summary: ClassVar[str]  # one line for --help
    parallel: ClassVar[bool] = False  # takes --workers K
    remote: ClassVar[bool] = False  # takes --address
    bench_workers: ClassVar[int] = 1  # the --workers `verify bench` gives it
    # A sampled strategy does not see every state: it finds violations and witnesses but
    # never shows HOLDS, and takes the sampling options (seed, budgets, bit array).
    sampled: ClassVar[bool] = False

    def validate(self, settings: SearchSettings) -> None:
        """Refuse, in one line, what this strategy cannot honour, before any work. By
        default: one process, no --address, none of the sampled searches' options."""
        workers = settings.workers
        if workers < 1:
            raise LeadercheckError(f"--workers must be at least 1, got {workers}")
        if workers > 1 and not self.parallel:
            able = " or ".join(s.name for s in iter_strategies() if s.parallel)
            raise LeadercheckError(
                f"--engine {self.name} runs in one process; --workers {workers} needs "
                f"--engine {able}"
            )
        if settings.address is not None and not self.remote:
            able = " or ".join(s.name for s in iter_strategies() if s.remote)
            raise LeadercheckError(f"--address needs --engine {able}")
        given = settings.sampling.flags()
        if given and not self.sampled:
            owners = " or ".join(s.name for s in iter_strategies() if s.takes(given[0]))
            raise LeadercheckError(f"{given[0]} is an option of --strategy {owners}")

    def takes(self, flag: str) -> bool:
        """Whether this strategy takes the sampled searches' option `flag`."""
        return False

    @contextmanager
    def session(self, settings: SearchSettings) -> Iterator[Any]:
        """What every search of one command shares (by default nothing)."""
        yield None

    @abstractmethod
    def search(
        self,
        shared: Any,
        model: Model[Any],
        properties: Sequence[Property],
        settings: SearchSettings,
    ) -> CheckResult:
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


def chosen(settings: SearchSettings) -> Strategy:
    """The strategy `settings` name (or the default for its workers), which has checked
    that it can honour them."""
    found = strategy(settings.strategy, settings.workers)
    found.validate(settings)
    return found


# -- one search function per command, from its settings --------------------------

Search = Callable[..., CheckResult]  # (model, properties, **changes to the settings)


def describe(settings: SearchSettings) -> str:
    """A short line for reports: what ran and with which reductions."""
    reductions = settings.reductions
    parts = [chosen(settings).describe(settings.workers)]
    if reductions.symmetry:
        parts.append("symmetry (states counted are orbit representatives)")
    if reductions.por:
        parts.append("partial-order reduction")
    if reductions.exact:
        parts.append("exact (full states, no fingerprints)")
    return ", ".join(p for p in parts if p)


@contextmanager
def searcher(settings: SearchSettings) -> Iterator[Search]:
    """A search function for the whole of one command: a Ray instance starts only once.

    The strategy is chosen and checks the settings before anything starts; each search
    may change them (`search(model, properties, progress=..., max_states=...)`), the
    strategy and its workers excepted."""
    engine = chosen(settings)
    with engine.session(settings) as shared:

        def search(
            model: Model[Any], properties: Sequence[Property], **changes: Any
        ) -> CheckResult:
            own = settings.but(**changes) if changes else settings
            return engine.search(shared, model, properties, own)

        yield search
