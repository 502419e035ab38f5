"""Partial-order reduction on toy models: fewer states, the same verdicts, and the proviso.

The toys declare local moves that truly are local; `tests.locality` checks each
declaration against the three conditions of `Model.local_moves` on every state.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from leadercheck.checker import (
    Action,
    CheckResult,
    Model,
    Property,
    Trace,
    Verdict,
    always,
    check,
    sometimes,
)
from leadercheck.checker.engine.reductions.por import por_expander
from leadercheck.checker.engine.settings import Reductions
from leadercheck.checker.engine.store import fingerprint
from tests.locality import check_declarations, local_violation, reachable

POR = Reductions(por=True)

Lattice = tuple[tuple[int, ...], int]


class Diamonds(Model[Lattice]):
    """`k` actors each count privately from 0 to `top`; a shared flag goes 0 -> 1 -> 2.

    Counting is local (no property reads the counters, and actors never touch each
    other's), so every interleaving of the counts is a diamond lattice: (top + 1) ** k
    counter vectors times 3 flag values. The reduction counts one actor at a time along
    a single chain of k * top + 1 vectors and raises the flag only at the end: k * top + 3
    states.
    """

    def __init__(self, k: int, top: int) -> None:
        self.k, self.top = k, top

    def initial_states(self) -> Sequence[Lattice]:
        return [((0,) * self.k, 0)]

    def successors(self, state: Lattice) -> Iterable[tuple[Action, Lattice]]:
        counts, flag = state
        for i, c in enumerate(counts):
            if c < self.top:
                after = (counts[:i] + (c + 1,) + counts[i + 1 :], flag)
                yield Action("count", f"a{i}", local=True), after
        if flag < 2:
            yield Action("raise", "flag"), (counts, flag + 1)


def flag_claims() -> list[Property]:
    return [
        always("flag-below-2", lambda s: s[1] < 2),
        sometimes("flag-raised", lambda s: s[1] == 1),
    ]


def verdicts(result: CheckResult) -> dict[str, Verdict]:
    return {r.prop.name: r.verdict for r in result.results}


def assert_replays(model: Model[Any], trace: Trace) -> None:
    """Each step of `trace` is one of the model's successors of the state before it."""
    states = [step.state for step in trace.steps]
    assert states[0] in model.initial_states()
    for before, step in zip(states, trace.steps[1:], strict=False):
        assert (step.action, step.state) in list(model.successors(before))


def test_diamond_declarations_are_local() -> None:
    declared, problems = check_declarations(Diamonds(3, 2), observe=lambda s: s[1])
    assert set(declared) == {"count"} and problems == []


def test_por_walks_one_chain_through_a_diamond_lattice() -> None:
    model = Diamonds(3, 3)
    claims = [always("flag-at-most-2", lambda s: s[1] <= 2), *flag_claims()[1:]]
    claims.append(always("anything", lambda s: True))  # keep both searches exhaustive
    full, reduced = check(model, claims), check(model, claims, reductions=POR)
    assert full.stats.distinct_states == 4**3 * 3
    assert reduced.stats.distinct_states == 3 * 3 + 3
    assert reduced.stats.generated_states < full.stats.generated_states
    assert verdicts(reduced) == verdicts(full)


def test_por_keeps_the_diamond_verdicts() -> None:
    model = Diamonds(3, 2)
    full, reduced = check(model, flag_claims()), check(model, flag_claims(), reductions=POR)
    assert (
        verdicts(reduced)
        == verdicts(full)
        == {
            "flag-below-2": Verdict.VIOLATED,
            "flag-raised": Verdict.HOLDS,
        }
    )
    for r in reduced.results:
        assert r.trace is not None
        assert_replays(model, r.trace)
    # Shortest traces are not kept: the reduced search counts everything first.
    assert len(full.result("flag-below-2").trace or ()) == 2
    assert len(reduced.result("flag-below-2").trace or ()) == 3 * 2 + 2


Dial = tuple[int, int]


class Spinner(Model[Dial]):
    """A dial turns 0 -> 1 -> 2 -> 0 by a local move; an alarm may go off at any time.

    Turning is local: no property reads the dial, it commutes with the alarm, and only
    turning changes the dial. But the turns form a cycle: a reduction that always turns
    comes back to the start without ever raising the alarm.
    """

    def initial_states(self) -> Sequence[Dial]:
        return [(0, 0)]

    def successors(self, state: Dial) -> Iterable[tuple[Action, Dial]]:
        dial, alarm = state
        yield Action("turn", "dial", local=True), ((dial + 1) % 3, alarm)
        if not alarm:
            yield Action("alarm", "bell"), (dial, 1)


def quiet() -> Property:
    return always("quiet", lambda s: s[1] == 0)


def explore_without_proviso(model: Model[Any]) -> set[Any]:
    """What a reduction without the cycle proviso reaches: always just the first local move."""
    found = set(model.initial_states())
    queue = deque(found)
    while queue:
        state = queue.popleft()
        succs = list(model.next_states(state))
        moves = model.local_moves(state)
        for after in [succs[moves[0]]] if moves else succs:
            if after not in found:
                found.add(after)
                queue.append(after)
    return found


def test_spinner_turns_are_local() -> None:
    model = Spinner()
    assert local_violation(model, (0, 0), Action("turn", "dial"), observe=lambda s: s[1]) is None
    assert check_declarations(model, observe=lambda s: s[1])[1] == []


def test_without_the_proviso_a_cycle_of_local_moves_hides_the_alarm() -> None:
    model = Spinner()
    assert explore_without_proviso(model) == {(0, 0), (1, 0), (2, 0)}  # the alarm never goes off
    assert check(model, [quiet()]).verdict is Verdict.VIOLATED


def test_the_proviso_expands_the_state_that_closes_the_cycle() -> None:
    model = Spinner()
    seen = {fingerprint((0, 0))}
    expand = por_expander(model, seen, None)
    assert expand((0, 0)) == (1, [(0, (1, 0))])  # its turn leads somewhere new: reduced
    seen.add(fingerprint((1, 0)))
    assert expand((1, 0)) == (1, [(0, (2, 0))])
    seen.add(fingerprint((2, 0)))
    assert expand((2, 0)) == (2, [(0, (0, 0)), (1, (2, 1))])  # closes the cycle: expanded fully


def test_por_finds_the_alarm_with_a_longer_trace() -> None:
    model = Spinner()
    full = check(model, [quiet()]).result("quiet")
    reduced = check(model, [quiet()], reductions=POR).result("quiet")
    assert full.verdict is reduced.verdict is Verdict.VIOLATED
    assert full.trace is not None and reduced.trace is not None
    assert len(full.trace) == 1
    assert [str(a) for a in reduced.trace.actions] == ["dial: turn", "dial: turn", "bell: alarm"]
    assert_replays(model, reduced.trace)


# -- symmetry and partial-order reduction together -------------------------------------


Pair = tuple[tuple[int, int], tuple[int, int]]  # per node: (private count, shared flag)


class Twins(Model[Pair]):
    """Two interchangeable nodes; each counts privately to 2 (local) and may raise its flag."""

    def initial_states(self) -> Sequence[Pair]:
        return [((0, 0), (0, 0))]

    def successors(self, state: Pair) -> Iterable[tuple[Action, Pair]]:
        for i, (count, _) in enumerate(state):
            if count < 2:
                yield Action("count", f"n{i + 1}", local=True), self._set(state, i, 0, count + 1)
        for i, (_, flag) in enumerate(state):
            if not flag:
                yield Action("raise", f"n{i + 1}"), self._set(state, i, 1, 1)

    @staticmethod
    def _set(state: Pair, i: int, field: int, value: int) -> Pair:
        node = list(state[i])
        node[field] = value
        nodes = list(state)
        nodes[i] = (node[0], node[1])
        return (nodes[0], nodes[1])

    def symmetry_groups(self) -> Sequence[Sequence[int]]:
        return [(0, 1)]

    def permute(self, state: Pair, perm: Sequence[int]) -> Pair:
        out = list(state)
        for old, new in enumerate(perm):
            out[new] = state[old]
        return (out[0], out[1])


def test_por_with_symmetry_keeps_verdicts_and_replays() -> None:
    model = Twins()
    flags = lambda s: (s[0][1], s[1][1])  # noqa: E731
    assert check_declarations(model, observe=flags)[1] == []
    claims = [
        always("not-both", lambda s: not (s[0][1] and s[1][1])),
        sometimes("one", lambda s: s[0][1] + s[1][1] == 1),
    ]
    full = check(model, claims)
    both = check(model, claims, reductions=Reductions(symmetry=True, por=True))
    assert verdicts(both) == verdicts(full)
    for r in both.results:
        assert r.trace is not None
        assert_replays(model, r.trace)
    exhaustive = [always("anything", lambda s: True)]
    sym = check(model, exhaustive, reductions=Reductions(symmetry=True))
    sym_por = check(model, exhaustive, reductions=Reductions(symmetry=True, por=True))
    assert sym_por.stats.distinct_states < sym.stats.distinct_states


def test_por_marks_known_orbits_under_symmetry() -> None:
    model = Twins()
    canonical = Reductions(symmetry=True).canonical(model)
    assert canonical is not None
    start = ((0, 0), (0, 0))
    seen = {fingerprint(start)}
    expand = por_expander(model, seen, canonical)
    counted = canonical(((1, 0), (0, 0)))
    assert counted == ((0, 0), (1, 0))  # the representative of n1's count
    assert expand(start) == (1, [(0, counted)])
    seen.add(fingerprint(counted))
    # Now n1's count leads to an orbit already discovered: the proviso expands the state
    # fully, leaving out the successors whose orbit is known as make_expander does.
    generated, out = expand(start)
    assert generated == 4
    assert out == [(2, canonical(((0, 1), (0, 0)))), (3, canonical(((0, 0), (0, 1))))]


# -- random models with truly local moves ------------------------------------------------

Vector = tuple[int, ...]
Rule = tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]  # (guard, effect)


class Rules(Model[Vector]):
    """Components 0..size-1 with values 0..top; each rule: if guard holds, apply effect.

    Local moves: every enabled rule that `tests.locality` finds local for `observe`,
    computed once over the reachable states, kept where `keep` says so (any subset of
    truly local moves is a sound declaration).
    """

    def __init__(self, size: int, rules: Sequence[Rule], observe: Any, keep: Sequence[bool]):
        self.size, self.rules = size, list(rules)
        self._local: dict[Vector, tuple[int, ...]] = {}
        done: dict[Action, set[Any]] = {}
        for state in reachable(self):
            labelled = list(self.successors(state))
            self._local[state] = tuple(
                k
                for k, (action, _) in enumerate(labelled)
                if keep[int(action.name[1:]) % len(keep)]
                and local_violation(self, state, action, observe, done.setdefault(action, set()))
                is None
            )

    def initial_states(self) -> Sequence[Vector]:
        return [(0,) * self.size]

    def successors(self, state: Vector) -> Iterable[tuple[Action, Vector]]:
        local = self._local.get(state, ())
        position = 0
        for k, (guard, effect) in enumerate(self.rules):
            if all(state[c] == v for c, v in guard):
                after = list(state)
                for c, v in effect:
                    after[c] = v
                yield Action(f"r{k}", "rules", local=position in local), tuple(after)
                position += 1


def _differs(c: int, v: int) -> Callable[[Vector], bool]:
    return lambda s: s[c] != v


@st.composite
def rule_models(draw: st.DrawFn) -> tuple[Rules, list[Property]]:
    size = draw(st.integers(min_value=2, max_value=5))
    top = draw(st.integers(min_value=1, max_value=2))
    # Component 0 is what the claims read, mostly written by general rules (guards on any
    # component); the others mostly move on by one, each by its own rules.
    cell = st.tuples(st.integers(0, size - 1), st.integers(0, top))
    shared = st.tuples(st.just(0), st.integers(0, top))
    general = st.tuples(
        st.lists(cell, max_size=2).map(tuple),
        st.lists(st.one_of(shared, shared, shared, cell), min_size=1, max_size=2).map(tuple),
    )
    own = st.builds(
        lambda c, a: (((c, a),), ((c, (a + 1) % (top + 1)),)),
        st.integers(1, size - 1),
        st.integers(0, top),
    )
    count = draw(st.integers(min_value=1, max_value=10))
    rules = list(
        dict.fromkeys(draw(own if draw(st.integers(0, 2)) else general) for _ in range(count))
    )
    seen_cells = [(0, draw(st.integers(0, top)))]
    if draw(st.booleans()):
        seen_cells.append((1, draw(st.integers(0, top))))  # a claim that reads a private one
    props: list[Property] = []
    for k, (c, v) in enumerate(seen_cells):
        make = always if draw(st.booleans()) else sometimes
        props.append(make(f"p{k}", _differs(c, v)))
    keep = draw(st.lists(st.booleans(), min_size=1, max_size=8))
    model = Rules(size, rules, lambda s: tuple(s[c] for c, _ in seen_cells), keep)
    return model, props


@settings(max_examples=300, deadline=None)
@given(rule_models())
def test_random_models_with_local_moves_keep_their_verdicts(
    case: tuple[Rules, list[Property]],
) -> None:
    model, props = case
    full, reduced = check(model, props), check(model, props, reductions=POR)
    assert verdicts(reduced) == verdicts(full)
    for r in reduced.results:
        if r.trace is not None:
            assert_replays(model, r.trace)
    exhaustive = [always("anything", lambda s: True)]
    assert (
        check(model, exhaustive, reductions=POR).stats.distinct_states
        <= check(model, exhaustive).stats.distinct_states
    )
