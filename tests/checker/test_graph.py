"""The explored state graph for small models, and its drawing with the trace highlighted."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner

from leadercheck.checker import Action, LeadercheckError, Model, always, check
from leadercheck.checker.app.main import main
from leadercheck.checker.engine.graph import (
    GraphTooLarge,
    count_states,
    fitting_parameters,
    state_graph,
)
from leadercheck.checker.render.context import TraceContext
from leadercheck.checker.render.state_graph import state_graph_dot
from tests.toys import Counter

ROOT = Path(__file__).resolve().parents[2]


class Hidden(Model[tuple[int, int]]):
    """(shown, hidden): the summary shows only the first, so states summarise alike."""

    def initial_states(self) -> Sequence[tuple[int, int]]:
        return [(0, 0)]

    def successors(self, s: tuple[int, int]) -> Iterable[tuple[Action, tuple[int, int]]]:
        shown, hidden = s
        if hidden < 2:
            yield Action("hide", "x"), (shown, hidden + 1)
        if shown < 1:
            yield Action("show", "x"), (shown + 1, hidden)

    def describe(self, s: tuple[int, int]) -> Mapping[str, Mapping[str, object]]:
        return {"x": {"shown": s[0], "hidden": s[1]}}

    def summary(self, s: tuple[int, int]) -> Mapping[str, str]:
        return {"x": str(s[0])}


def test_graph_has_every_state_and_transition_in_discovery_order() -> None:
    graph = state_graph(Counter(4))
    assert graph.states == (0, 1, 2, 3, 4)
    assert len(graph.edges) == 4 + 3
    assert graph.labels[3] == "counter: 3"


def test_a_large_model_is_refused_with_its_exact_size() -> None:
    with pytest.raises(GraphTooLarge, match=r"too many states for a state graph \(51; it draws"):
        state_graph(Counter(50), max_states=10)


def test_a_huge_model_is_refused_with_where_counting_stopped() -> None:
    with pytest.raises(LeadercheckError, match="more than 20,000, counting stopped there"):
        state_graph(Counter(30_000), max_states=10)
    assert count_states(Counter(30_000), 100) is None
    assert count_states(Counter(99), 100) == 100


def test_the_fitting_parameters_lower_as_few_as_needed() -> None:
    def build(v: dict[str, int]) -> Model[int]:
        return Counter(v["a"] * v["b"])

    # 10 * 10 + 1 states; a=1 fits 11 <= 20 without lowering b too
    assert fitting_parameters(build, {"a": 10, "b": 10}, [("a", 1), ("b", 1)], 20) == ({"a": 1}, 11)
    assert fitting_parameters(build, {"a": 10, "b": 10}, [("a", 5), ("b", 2)], 5) is None


def test_states_that_summarise_alike_are_told_apart() -> None:
    graph = state_graph(Hidden())
    assert len(set(graph.labels)) == len(graph.labels) == 6
    assert graph.labels[0] == "x: 0\nx.hidden=0"
    assert "x: 1\nx.hidden=2" in graph.labels


def test_the_trace_is_drawn_in_red_with_its_steps() -> None:
    model = Counter(6)
    result = check(model, [always("below-5", lambda x: x < 5)])
    ctx = TraceContext("counter", {}, result.result("below-5"))
    dot = state_graph_dot(state_graph(model), ctx)
    assert 's0 -> s1 [label="counter: add1 (0->1)" color="#c0392b"' in dot  # 0 1 3 5
    assert 's1 -> s3 [label="counter: add2 (1->3)" color="#c0392b"' in dot
    assert "s0 -> s2 [label=add2]" in dot
    assert 's3 [label="#3  step 2\ncounter: 3"' in dot
    # 6 also breaks below-5: outlined, and the legend says so
    assert 's6 [label="#6\ncounter: 6" color="#c0392b" penwidth=2 style="rounded,dashed"]' in dot
    assert "7 states, 11 transitions" in dot
    assert "dashed red outline: 1 other state that also breaks below-5" in dot


def _labels(dot: str) -> list[str]:
    return re.findall(r'^\ts\d+ \[label="#\d+[^\n]*\n(.*?)"', dot, flags=re.M | re.S)


def test_a_user_model_state_graph_has_unique_labels_and_marks_every_breaking_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    args = ["--model", "tests/user_models/tiny_lock.py", "--protocol", "tiny-lock-racy"]
    result = CliRunner().invoke(main, [*args, "--diagram", "state-graph", "--out", str(tmp_path)])
    assert result.exit_code == 1, result.output
    dot = (tmp_path / "tiny-lock-racy.state-graph.dot").read_text()
    labels = _labels(dot)
    assert len(labels) == 14 and len(set(labels)) == 14
    # the trace ends where p2 set last; p1 setting last breaks mutual exclusion too
    assert "#8  step 4\np1: inside\np2: inside\nlock: held by p2" in dot
    assert (
        's9 [label="#9\np1: inside\np2: inside\nlock: held by p1" color="#c0392b" penwidth=2'
        ' style="rounded,dashed"]'
    ) in dot
    assert "dashed red outline: 1 other state that also breaks mutual-exclusion" in dot


def test_cli_writes_the_state_graph_with_unique_labels(tmp_path: Path) -> None:
    small = ["--nodes", "2", "-p", "crashes=0", "-p", "partitions=0", "-p", "losses=0"]
    args = ["--protocol", "lease-no-fencing", *small, "-p", "tokens=2", "--out", str(tmp_path)]
    result = CliRunner().invoke(main, [*args, "--diagram", "state-graph"])
    assert result.exit_code == 1
    dot = (tmp_path / "lease-no-fencing.state-graph.dot").read_text()
    labels = _labels(dot)
    assert len(labels) == 298 and len(set(labels)) == 298
    assert "dashed red outline: 9 other states that also break no-stale-write" in dot


def test_cli_refuses_a_big_model_saying_how_big_and_what_to_lower() -> None:
    big = CliRunner().invoke(main, ["--protocol", "lease-fencing", "--diagram", "state-graph"])
    assert big.exit_code == 2 and big.stdout == ""
    assert big.stderr == (
        "error: lease-fencing: too many states for --diagram state-graph (more than 20,000,"
        " counting stopped there; it draws at most 400): try -p nodes=2 -p pauses=0"
        " -p losses=0 -p partitions=0 (364 states), or leave it out for the sequence"
        " diagram alone\n"
    )
    smaller = ["--nodes", "2", "-p", "pauses=0", "--diagram", "state-graph"]
    some = CliRunner().invoke(main, ["--protocol", "lease-fencing", *smaller])
    assert some.exit_code == 2
    assert "(3,568; it draws at most 400): try adding -p losses=0 -p partitions=0" in some.stderr
