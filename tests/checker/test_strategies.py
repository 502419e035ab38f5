"""The engine registry: every strategy module registers itself, and the CLI and the
benchmark list exactly what is registered."""

from __future__ import annotations

import pkgutil
from typing import Any

import pytest
from click.testing import CliRunner

import leadercheck.checker.strategies as strategies
from leadercheck.checker.bench import searches
from leadercheck.checker.cli import main
from leadercheck.checker.engines import EngineOptions, searcher
from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.properties import always
from leadercheck.checker.result import CheckResult
from leadercheck.checker.search import check
from leadercheck.checker.strategies import Request
from leadercheck.checker.successors import Reductions
from tests.toys import Counter


def test_every_module_of_the_package_registers_a_strategy() -> None:
    modules = {m.name for m in pkgutil.iter_modules(strategies.__path__)}
    assert len(strategies.names()) == len(modules)
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
    assert EngineOptions(workers=1).strategy.name == "bfs"
    assert EngineOptions(workers=2).strategy.name == "processes"
    with pytest.raises(LeadercheckError, match="--engine bfs runs in one process"):
        EngineOptions(workers=2, engine="bfs")
    with pytest.raises(LeadercheckError, match="unknown engine 'dfs'"):
        EngineOptions(engine="dfs")
    with pytest.raises(LeadercheckError, match="partial-order reduction needs one worker"):
        EngineOptions(Reductions(por=True), workers=2)


class _Counting(strategies.Strategy):
    """A strategy added by a test: the one-process search, counting its runs."""

    name = "counting"
    summary = "a test's engine"
    runs = 0

    def search(self, shared: Any, request: Request) -> CheckResult:
        _Counting.runs += 1
        r = request
        return check(r.model, r.properties, reductions=r.reductions, **r.bounds.as_kwargs())


def test_a_registered_strategy_runs_searches_with_the_bounds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(strategies._registry(), "counting", _Counting())
    options = EngineOptions(engine="counting", max_memory=None)
    with searcher(options) as search:
        result = search(Counter(50), [always("ok", lambda x: True)], max_states=10)
    assert _Counting.runs == 1
    assert result.stats.distinct_states == 10
    assert options.describe() == "counting, 1 worker(s)"
