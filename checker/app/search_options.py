"""The search options the check and the gate share, and the one SearchSettings they make.

The strategy validates the settings it is handed (engine/strategies), so a combination it
cannot honour is refused here, before any work.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import click

from leadercheck.checker.app.args import Count, Once
from leadercheck.checker.engine.settings import (
    SIMULATE,
    Reductions,
    Sampling,
    SearchSettings,
    default_max_memory,
)
from leadercheck.checker.engine.strategies import chosen, help_lines, iter_strategies, names
from leadercheck.checker.engine.strategies import strategy as strategy_named
from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.io.sizes import parse_size

OPTIONS = (
    click.Option(
        ["--symmetry"],
        is_flag=True,
        help="Store one state per orbit of the nodes the protocol declares interchangeable.",
    ),
    click.Option(
        ["--exact"],
        is_flag=True,
        help="Keep full states instead of 60-bit fingerprints: no collision can hide a state, "
        "at several times the memory (one process only).",
    ),
    click.Option(
        ["--interpreted"],
        is_flag=True,
        help="Search with the protocol's Python code even where it has a compiled kernel "
        "(the reference semantics; slower).",
    ),
    click.Option(
        ["--por"],
        is_flag=True,
        help="Partial-order reduction over the protocol's local actions (traces may be longer).",
    ),
    Once(
        ["--workers"],
        type=Count(1),
        default=1,
        show_default=True,
        help="Search with this many processes (states partitioned by fingerprint).",
    ),
    Once(
        ["--strategy", "--engine", "engine"],
        type=click.Choice(names()),
        help=f"How to search ({help_lines()}). Default: bfs, or processes with --workers K.",
    ),
    Once(
        ["--address"],
        metavar="HOST:PORT",
        help="With an engine that joins a cluster: its address.",
    ),
    Once(
        ["--max-memory"],
        metavar="SIZE",
        help="Stop with INCOMPLETE when the search's resident memory reaches SIZE "
        "(e.g. 4G; default 80% of RAM).",
    ),
)
NAMES = frozenset(o.name for o in OPTIONS if o.name)


def is_sampled(engine: str | None) -> bool:
    return engine is not None and engine in names() and strategy_named(engine).sampled


def settings_of(
    values: Mapping[str, Any],
    given: frozenset[str],
    *,
    trusted: bool,
    bounds: tuple[int | None, int | None] = (None, None),
    sampling: Sampling | None = None,
    swarm: int | None = None,
) -> SearchSettings:
    """One SearchSettings from the command line, checked by the strategy it names."""
    engine, workers = _swarm(values["engine"], values["workers"], "workers" in given, swarm)
    memory = values["max_memory"]
    settings = SearchSettings(
        strategy=engine,
        workers=workers,
        address=values["address"],
        max_states=bounds[0],
        max_depth=bounds[1],
        max_memory=parse_size(memory) if memory is not None else default_max_memory(),
        reductions=Reductions(
            symmetry=values["symmetry"], por=values["por"], exact=values["exact"]
        ),
        sampling=sampling or Sampling(),
        # the built-in catalogue's value semantics are its tests' to prove (see
        # SearchSettings); a user's model (--model) is walked on every state
        trust_values=trusted,
        compiled=not values["interpreted"],
    )
    chosen(settings)  # the strategy refuses what it cannot honour, before any work
    return settings


def _swarm(
    engine: str | None, workers: int, workers_given: bool, swarm: int | None
) -> tuple[str | None, int]:
    """The strategy and worker count that --swarm K asks for: K sampled searches."""
    if swarm is None:
        return engine, workers
    if workers_given and workers != swarm:
        raise LeadercheckError(f"--swarm {swarm} and --workers {workers}: give one")
    if engine is None:
        engine = SIMULATE
    if not is_sampled(engine):
        sampled = " or ".join(s.name for s in iter_strategies() if s.sampled)
        raise LeadercheckError(
            f"--swarm runs sampled searches (--strategy {sampled}), not {engine}"
        )
    return engine, swarm
