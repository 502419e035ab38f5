"""Fair-cycle detection against a brute-force oracle on random graphs with fairness classes.

The oracle knows nothing of components: a fair lasso exists iff some set S of states
(reachable as the property requires) can be looped through forever, fairly: either one
state where no fair class is enabled (stuttering), or a strongly connected S with an edge
inside (a closed walk can then take every edge inside S) in which every class enabled in
all of S is taken by an edge inside S. Small graphs let it try every S.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import combinations

from hypothesis import given, settings
from hypothesis import strategies as st

from leadercheck.checker.engine.strategies.bfs import check
from leadercheck.checker.properties import eventually, eventually_always
from leadercheck.checker.result import Verdict
from tests.toys import Labelled

ACTORS = ("a", "b", "c", "fault")  # "fault" is never forced

Edges = Mapping[int, Sequence[tuple[int, str]]]


@st.composite
def fair_graphs(draw: st.DrawFn) -> tuple[list[int], dict[int, list[tuple[int, str]]], set[int]]:
    """A random graph whose edges carry an actor (its fairness class), and a goal set."""
    size = draw(st.integers(min_value=1, max_value=6))
    nodes = st.integers(min_value=0, max_value=size - 1)
    edge = st.tuples(nodes, st.sampled_from(ACTORS))
    edges = {n: draw(st.lists(edge, max_size=3, unique=True)) for n in range(size)}
    initial = draw(st.lists(nodes, min_size=1, max_size=2))
    goal = set(draw(st.lists(nodes, max_size=size)))
    return initial, edges, goal


def _reach(starts: set[int], edges: Edges, allowed: Callable[[int], bool]) -> set[int]:
    seen = {s for s in starts if allowed(s)}
    todo = list(seen)
    while todo:
        for t, _ in edges.get(todo.pop(), ()):
            if allowed(t) and t not in seen:
                seen.add(t)
                todo.append(t)
    return seen


def _enabled(edges: Edges, s: int) -> set[str]:
    return {a for _, a in edges.get(s, ()) if a != "fault"}


def _loopable(members: set[int], edges: Edges) -> bool:
    """Whether a fair behaviour can stay in exactly `members` forever."""
    if len(members) == 1:
        (only,) = members
        if not _enabled(edges, only):
            return True  # stuttering: nothing fair is enabled
    inner = [(s, t, a) for s in members for t, a in edges.get(s, ()) if t in members]
    if not inner:
        return False
    for s in members:  # strongly connected inside `members`
        if _reach({s}, edges, members.__contains__) != members:
            return False
        back = {x for x in members if s in _reach({x}, edges, members.__contains__)}
        if back != members:
            return False
    always_on = set.intersection(*(_enabled(edges, s) for s in members))
    taken = {a for _, _, a in inner}
    return always_on <= taken


def _subsets(states: set[int]) -> list[set[int]]:
    ordered = sorted(states)
    return [set(c) for k in range(1, len(ordered) + 1) for c in combinations(ordered, k)]


def _fair_loops(inside: set[int], edges: Edges) -> list[set[int]]:
    return [s for s in _subsets(inside) if _loopable(s, edges)]


def _check_lasso(trace: object, edges: Edges, inside: Callable[[int], bool]) -> None:
    """The lasso is a real path whose loop closes, stays inside, and is fair."""
    states = [step.state for step in trace.steps]  # type: ignore[attr-defined]
    loop_from = trace.loop_from  # type: ignore[attr-defined]
    assert loop_from is not None
    for a, b in zip(states, states[1:], strict=False):
        assert b in {t for t, _ in edges.get(a, ())}
    loop = states[loop_from:]
    assert all(inside(s) for s in loop)
    if len(loop) == 1:
        assert not _enabled(edges, loop[0])  # it stutters there
        return
    assert loop[-1] == loop[0]
    members = set(loop)
    always_on = set.intersection(*(_enabled(edges, s) for s in members))
    actions = trace.actions[loop_from:]  # type: ignore[attr-defined]
    assert always_on <= {a.actor for a in actions}


@settings(max_examples=300, deadline=None)
@given(fair_graphs())
def test_eventually_agrees_with_brute_force(case: tuple[list[int], Edges, set[int]]) -> None:
    initial, edges, goal = case
    model = Labelled(initial, edges, unfair=["fault"])
    result = check(model, [eventually("reach", goal.__contains__)]).result("reach")
    # a violation: from an initial non-goal state, a non-goal path into a fair loop
    reachable = _reach(set(initial), edges, lambda s: s not in goal)
    expected = bool(_fair_loops(reachable, edges))
    assert result.verdict is (Verdict.VIOLATED if expected else Verdict.HOLDS)
    if expected:
        assert result.trace is not None
        assert all(step.state not in goal for step in result.trace.steps)
        _check_lasso(result.trace, edges, lambda s: s not in goal)


@settings(max_examples=300, deadline=None)
@given(fair_graphs())
def test_eventually_always_agrees_with_brute_force(
    case: tuple[list[int], Edges, set[int]],
) -> None:
    initial, edges, good = case
    model = Labelled(initial, edges, unfair=["fault"])
    result = check(model, [eventually_always("settles", good.__contains__)]).result("settles")
    reachable = _reach(set(initial), edges, lambda s: True)
    expected = any(s - good for s in _fair_loops(reachable, edges))
    assert result.verdict is (Verdict.VIOLATED if expected else Verdict.HOLDS)
    if expected:
        assert result.trace is not None
        loop = [step.state for step in result.trace.steps[result.trace.loop_from :]]
        assert set(loop) - good  # the loop keeps coming back to where it fails
        _check_lasso(result.trace, edges, lambda s: True)
