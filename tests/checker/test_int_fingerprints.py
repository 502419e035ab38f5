"""Ints that Python hashes alike (checker/engine/values.py `_ints`): a state's fingerprint
is its hash, Python hashes ints modulo 2^61 - 1 and -1 as -2, so two states that differ only
by such ints would share a fingerprint wherever the ints sit, and one would go unexplored
with no collision estimate to warn of it. A stored state holding such an int is an error
unless states are kept whole (--exact), where the same model gives its true count; so is a
successor that hashes like its own parent. (Only a stored state is walked: a state hidden
behind another earlier state's hash before any state holding such an int is stored goes
unseen.)"""

from __future__ import annotations

import re
from typing import Any

import pytest

from leadercheck.checker import Action, Model, always
from leadercheck.checker.engine.settings import Reductions
from leadercheck.checker.engine.strategies.bfs import check
from leadercheck.checker.engine.values import ValueCheck
from leadercheck.checker.errors import ModelError

FINE = always("fine", lambda s: True)
BIG = 1 << 61


class Pairs(Model[tuple[int, Any]]):
    """A step from (0, None) to each of `values` as (k, value): as many states as values
    plus one, whatever the values hash to."""

    def __init__(self, values: list[Any]) -> None:
        self.values = values

    def initial_states(self) -> list[tuple[int, Any]]:
        return [(0, None)]

    def successors(self, state: tuple[int, Any]) -> list[tuple[Action, tuple[int, Any]]]:
        if state[0]:
            return []
        return [(Action("set", "n1", note=str(k)), (1, v)) for k, v in enumerate(self.values)]


def test_python_hashes_these_ints_alike() -> None:
    # the premise: each pair is two different states with one hash
    assert hash((1, -1)) == hash((1, -2)) and (1, -1) != (1, -2)
    assert hash((1, (BIG + 5,))) == hash((1, (6,)))


@pytest.mark.parametrize(
    ("values", "what"),
    [
        ([-2, -1], "-2 (Python hashes -1 as -2)"),
        ([3, BIG + 3], "an int of 61 bits or more"),
        ([(0, 4), (0, BIG + 4)], "an int of 61 bits or more, at state[1][1]"),
        ([frozenset({7}), frozenset({-BIG - 7})], "an int of 61 bits or more"),
    ],
    ids=["minus-two", "big", "nested", "in-a-set"],
)
def test_such_an_int_is_an_error_with_fingerprints_and_counts_true_with_exact(
    values: list[Any], what: str
) -> None:
    with pytest.raises(ModelError, match=re.escape(f"a state holds {what}")) as caught:
        check(Pairs(values), [FINE])
    assert "--exact" in str(caught.value)
    exact = check(Pairs(values), [FINE], reductions=Reductions(exact=True))
    assert exact.stats.distinct_states == len(values) + 1  # none lost


def test_ints_that_hash_as_themselves_pass() -> None:
    values = [-1, 0, (1 << 61) - 2, -(1 << 61) + 2, (5, -3), frozenset({BIG - 2})]
    assert check(Pairs(values), [FINE]).stats.distinct_states == len(values) + 1


def test_the_walk_finds_it_beside_shared_parts_and_not_with_exact() -> None:
    parent = ((1, 2), frozenset({(3, 4)}))
    values = ValueCheck("M")
    values.stored(parent)
    with pytest.raises(ModelError, match="61 bits or more"):
        values.stored(((1, BIG), parent[1]), parent)
    with pytest.raises(ModelError, match="-2"):
        values.stored((parent[0], parent[1] | {(5, -2)}), parent)
    ValueCheck("M", fingerprints=False).stored(((1, BIG), frozenset({-2})), parent)


class Flip(Model[tuple[int, int]]):
    """(0, 0) -> (0, -1) -> (0, -2): the last hashes like its parent, so without a check
    it would be taken for it and never stored, where the walk of stored states could see
    its -2 (three states, not two)."""

    def initial_states(self) -> list[tuple[int, int]]:
        return [(0, 0)]

    def successors(self, state: tuple[int, int]) -> list[tuple[Action, tuple[int, int]]]:
        return [(Action("down", "n1"), (0, state[1] - 1))] if state[1] > -2 else []


def test_a_successor_hashing_like_its_parent_is_an_error_and_counts_true_with_exact() -> None:
    assert hash((0, -1)) == hash((0, -2))
    with pytest.raises(ModelError, match="hashes like it") as caught:
        check(Flip(), [FINE])
    assert caught.value.trace is not None and len(caught.value.trace) == 2
    assert check(Flip(), [FINE], reductions=Reductions(exact=True)).stats.distinct_states == 3
