"""Property-based tests: on random small graphs, BFS finds exactly the reachable set,
every trace it returns is a real path, and no path to the target is shorter."""

from __future__ import annotations

import networkx as nx
from hypothesis import given, settings

from leadercheck.checker import Verdict, always, check
from tests.strategies import graphs
from tests.toys import Graph


def _nx(edges: dict[int, list[int]]) -> nx.DiGraph:
    g = nx.DiGraph()
    g.add_nodes_from(edges)
    g.add_edges_from((a, b) for a, targets in edges.items() for b in targets)
    return g


@settings(max_examples=300, deadline=None)
@given(graphs())
def test_bfs_reaches_exactly_the_reachable_set(
    case: tuple[list[int], dict[int, list[int]], int],
) -> None:
    initial, edges, _ = case
    g = _nx(edges)
    reachable = set(initial).union(*(nx.descendants(g, i) for i in initial))
    seen: set[int] = set()

    def record(x: int) -> bool:
        seen.add(x)
        return True

    result = check(Graph(initial, edges), [always("ok", record)])
    assert result.verdict is Verdict.HOLDS
    assert seen == reachable
    assert result.stats.distinct_states == len(reachable)
    assert result.stats.generated_states == len(initial) + sum(len(edges[n]) for n in reachable)


@settings(max_examples=300, deadline=None)
@given(graphs())
def test_counterexample_is_a_real_shortest_path(
    case: tuple[list[int], dict[int, list[int]], int],
) -> None:
    initial, edges, target = case
    g = _nx(edges)
    dist = [nx.single_source_shortest_path_length(g, i).get(target) for i in set(initial)]
    best = min((d for d in dist if d is not None), default=None)
    r = check(Graph(initial, edges), [always("avoid", lambda x: x != target)]).result("avoid")
    if best is None:
        assert r.verdict is Verdict.HOLDS
        return
    assert r.verdict is Verdict.VIOLATED and r.trace is not None
    assert len(r.trace) == best
    states = [s.state for s in r.trace.steps]
    assert states[0] in initial and states[-1] == target
    model = Graph(initial, edges)
    for step, before in zip(r.trace.steps[1:], states, strict=False):
        assert (step.action, step.state) in list(model.successors(before))
