"""The explored state graph for small models, and its drawing with the trace highlighted."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from leadercheck.checker import LeadercheckError, always, check
from leadercheck.checker.cli import main
from leadercheck.checker.graph import state_graph
from leadercheck.checker.render.context import TraceContext
from leadercheck.checker.render.state_graph import state_graph_dot
from tests.toys import Counter


def test_graph_has_every_state_and_transition_in_discovery_order() -> None:
    graph = state_graph(Counter(4))
    assert graph.states == (0, 1, 2, 3, 4)
    assert len(graph.edges) == 4 + 3
    assert graph.labels[3] == "counter: 3"


def test_a_large_model_is_refused() -> None:
    with pytest.raises(LeadercheckError, match="more than 10 states"):
        state_graph(Counter(50), max_states=10)


def test_the_trace_is_drawn_in_red() -> None:
    model = Counter(6)
    result = check(model, [always("below-5", lambda x: x < 5)])
    ctx = TraceContext("counter", {}, result.result("below-5"))
    dot = state_graph_dot(state_graph(model), ctx)
    assert 's0 -> s1 [label="counter: add1 (0->1)" color="#c0392b"' in dot  # 0 1 3 5
    assert 's1 -> s3 [label="counter: add2 (1->3)" color="#c0392b"' in dot
    assert "s0 -> s2 [label=add2]" in dot


def test_cli_writes_the_state_graph_and_refuses_big_models(tmp_path: Path) -> None:
    small = ["--nodes", "2", "-p", "crashes=0", "-p", "partitions=0", "-p", "losses=0"]
    args = ["--protocol", "lease-no-fencing", *small, "-p", "tokens=2", "--out", str(tmp_path)]
    result = CliRunner().invoke(main, [*args, "--diagram", "state-graph"])
    assert result.exit_code == 1
    assert (tmp_path / "lease-no-fencing.state-graph.dot").exists()
    big = CliRunner().invoke(main, ["--protocol", "lease-fencing", "--diagram", "state-graph"])
    assert big.exit_code == 2 and "more than 400 states" in big.stderr
