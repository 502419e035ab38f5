"""The engine registry: every strategy module registers itself, and the CLI and the
benchmark list exactly what is registered."""

from __future__ import annotations

import pkgutil
import re
from collections.abc import Sequence
from typing import Any

import pytest
from click.testing import CliRunner

import leadercheck.checker.engine.strategies as strategies
from leadercheck.checker.app.benchmarks.timed import searches
from leadercheck.checker.app.main import main
from leadercheck.checker.engine.settings import Reductions, Sampling, SearchSettings
from leadercheck.checker.engine.strategies import chosen, describe, searcher
from leadercheck.checker.engine.strategies.bfs import breadth_first
from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.model import Model
from leadercheck.checker.properties import Property, always
from leadercheck.checker.result import CheckResult
from tests.toys import Counter


def test_every_module_of_the_package_registers_a_strategy() -> None:
    """Each module or package of strategies/ holds its strategies' algorithms and registers
    them (sampling/ registers two), so nothing there is dead and no strategy lives elsewhere."""
    modules = {m.name for m in pkgutil.iter_modules(strategies.__path__)}
    prefix = strategies.__name__ + "."
    homes = {}
    for name in strategies.names():
        module = type(strategies.strategy(name)).__module__
        assert module.startswith(prefix), (name, module)
        homes[name] = module.removeprefix(prefix).split(".")[0]
    assert set(homes.values()) == modules, homes
    assert homes["simulate"] == homes["bitstate"] == "sampling"
    assert strategies.names()[:2] == ["bfs", "processes"]  # the defaults come first


def test_help_and_bench_list_the_registry() -> None:
    engine_help = CliRunner().invoke(main, ["--help"]).stdout
    bench_help = CliRunner().invoke(main, ["bench", "--help"]).stdout
    for name in strategies.names():
        assert name in engine_help
        if strategies.strategy(name).sampled:  # no state count to compare: bench --sampled
            assert name not in searches()
            continue
        assert name in bench_help
        assert name in searches()
    assert "--sampled" in bench_help


def test_workers_pick_the_partitioned_engine_and_bfs_refuses_them() -> None:
    assert chosen(SearchSettings(workers=1)).name == "bfs"
    assert chosen(SearchSettings(workers=2)).name == "processes"
    with pytest.raises(LeadercheckError, match="--engine bfs runs in one process"):
        chosen(SearchSettings(workers=2, strategy="bfs"))
    with pytest.raises(LeadercheckError, match="unknown engine 'dfs'"):
        chosen(SearchSettings(strategy="dfs"))
    with pytest.raises(LeadercheckError, match="partial-order reduction needs one worker"):
        chosen(SearchSettings(reductions=Reductions(por=True), workers=2))


def test_each_strategy_refuses_what_it_cannot_honour() -> None:
    """The strategies validate their own settings: no table elsewhere says which option
    goes with which strategy."""
    refusals = {
        "--walks is an option of --strategy simulate, not bitstate": SearchSettings(
            strategy="bitstate", sampling=Sampling.of(walks=5)
        ),
        "--memory is an option of --strategy bitstate, not simulate": SearchSettings(
            strategy="simulate", sampling=Sampling.of(memory=1 << 20)
        ),
        "--seed is an option of --strategy bitstate or simulate": SearchSettings(
            sampling=Sampling.of(seed=3)
        ),
        "--symmetry applies to the exhaustive searches": SearchSettings(
            strategy="simulate", reductions=Reductions(symmetry=True)
        ),
        "a walk's length is --depth D, not --max-depth": SearchSettings(
            strategy="simulate", max_depth=3
        ),
        "--exact keeps full states in one process": SearchSettings(
            workers=2, reductions=Reductions(exact=True)
        ),
    }
    for message, settings in refusals.items():
        with pytest.raises(LeadercheckError, match=re.escape(message)):
            chosen(settings)


class _Counting(strategies.Strategy):
    """A strategy added by a test: the one-process search, counting its runs."""

    name = "counting"
    summary = "a test's engine"
    runs = 0

    def search(
        self,
        shared: Any,
        model: Model[Any],
        properties: Sequence[Property],
        settings: SearchSettings,
    ) -> CheckResult:
        _Counting.runs += 1
        return breadth_first(model, properties, settings)


def test_a_registered_strategy_runs_searches_with_the_bounds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(strategies._registry(), "counting", _Counting())
    settings = SearchSettings(strategy="counting", max_memory=None)
    with searcher(settings) as search:
        result = search(Counter(50), [always("ok", lambda x: True)], max_states=10)
    assert _Counting.runs == 1
    assert result.stats.distinct_states == 10
    assert describe(settings) == "counting, 1 worker(s)"
