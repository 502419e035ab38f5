"""value_key: a total order over every value a state may hold, equal keys for equal values."""

from __future__ import annotations

import dataclasses
import enum
import json
import subprocess
import sys
from fractions import Fraction
from typing import Any, NamedTuple

from hypothesis import given, settings
from hypothesis import strategies as st

from leadercheck.checker import total_order
from leadercheck.checker.total_order import value_key


class Phase(enum.Enum):
    IDLE = "idle"
    BUSY = (None, 1)  # a value that does not compare: the key does not need it to


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Pair(NamedTuple):
    a: Any
    b: Any


@dataclasses.dataclass(frozen=True)
class Record:
    a: Any
    note: str = dataclasses.field(default="", compare=False)  # not part of equality


atoms = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([0.0, -0.0, 1.0, 2.5, float("inf")]),
    st.text(alphabet="ab,'\"({", max_size=3),
    st.binary(max_size=2),
    st.sampled_from([*Phase, *Level]),
)
values = st.recursive(
    atoms,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(tuple),
        st.frozensets(inner, max_size=3),
        st.builds(Pair, inner, inner),
        st.builds(Record, inner, st.text(max_size=1)),
    ),
    max_leaves=10,
)


@settings(max_examples=400, deadline=None)
@given(values, values)
def test_two_values_get_one_key_exactly_when_they_are_equal(a: Any, b: Any) -> None:
    assert (value_key(a) == value_key(b)) == (a == b)


@settings(max_examples=200, deadline=None)
@given(st.lists(values, max_size=6), st.randoms())
def test_sorting_by_key_does_not_depend_on_the_order_met(items: list[Any], rnd: Any) -> None:
    shuffled = items[:]
    rnd.shuffle(shuffled)
    assert [value_key(v) for v in sorted(items, key=value_key)] == [
        value_key(v) for v in sorted(shuffled, key=value_key)
    ]


def test_what_python_leaves_unordered_is_ordered() -> None:
    one, two = frozenset({1}), frozenset({2})
    assert not one < two and not two < one  # subsets: Python's order is partial
    assert value_key(one) < value_key(two)
    assert value_key((None, 1)) != value_key((1, None))  # None beside an int
    assert value_key(Phase.IDLE) != value_key(Phase.BUSY)  # enums do not compare at all


def test_equal_values_of_different_classes_share_a_key() -> None:
    assert value_key(True) == value_key(1) == value_key(1.0) == value_key(Level.LOW) == "1"
    assert value_key(Pair(1, frozenset({3, 2}))) == value_key((1, frozenset({2, 3})))
    assert value_key(Record(1, "x")) == value_key(Record(1, "y")) != value_key(Record(2))
    assert value_key(Fraction(1, 2)) == value_key(0.5)


def test_a_class_with_its_own_equality_is_keyed_by_its_class_alone() -> None:
    class Box:
        def __init__(self, n: int) -> None:
            self.n = n

        def __eq__(self, other: object) -> bool:
            return isinstance(other, Box) and other.n == self.n

        def __hash__(self) -> int:
            return self.n

    assert value_key((Box(1),)) == value_key((Box(2),))  # a tie: --symmetry refuses it
    assert value_key(Fraction(1, 3)) == value_key(Fraction(2, 3))
    assert all(key.startswith(total_order.OPAQUE) for key in map(value_key, [Box(1), len, int]))


PROBE = """
import json
from leadercheck.checker.total_order import value_key
names = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta"]
values = [frozenset(names), frozenset(map(frozenset, [names[:3], names[3:], names[::2]])),
          (frozenset({("a", 1), ("b", None)}), frozenset({b"x", b"y"}))]
print(json.dumps([value_key(v) for v in values]))
"""


def test_keys_are_the_same_under_every_hash_seed() -> None:
    """A frozenset of strings iterates in an order of its process; its key is sorted."""
    outputs = []
    for seed in ("1", "2"):
        done = subprocess.run(
            [sys.executable, "-c", PROBE],
            capture_output=True,
            text=True,
            env={"PYTHONHASHSEED": seed},
            check=True,
        )
        outputs.append(json.loads(done.stdout))
    assert outputs[0] == outputs[1]
    assert outputs[0][0] == "{'alpha', 'beta', 'delta', 'eps', 'eta', 'gamma', 'theta', 'zeta'}"


def test_parts_kept_do_not_change_a_key() -> None:
    """Keys of parts are kept (and forgotten when many): the same key either way."""
    state = (Pair(1, frozenset({(2, None)})), Record(frozenset({Phase.IDLE})))
    first = value_key(state)
    total_order._MEMO.clear()
    assert value_key(state) == first
    assert value_key(state) == first  # now from what was kept
