"""One search function per command, from its settings (checker/engine/settings.py).

Engines are the registered strategies of checker/engine/strategies/; every one takes the same
model, properties and settings and returns the same `CheckResult`; the partitioned ones
give the same verdicts, counts and traces as one process (checker/parallel.py says when
counts can differ).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from leadercheck.checker.engine.settings import SearchSettings
from leadercheck.checker.engine.strategies import chosen
from leadercheck.checker.model import Model
from leadercheck.checker.properties import Property
from leadercheck.checker.result import CheckResult

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
