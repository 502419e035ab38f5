"""A model's compiled twin: its states packed in machine words, its successors in batches.

A `Model` is the reference semantics: Python, readable, slow per state. A model may also
offer a `Kernel` (`Model.kernel()`), the same transition system over states packed as rows
of 64-bit words, whose batch functions are compiled (numba) and run whole levels of a
search without a Python call per state. The engine's compiled search
(checker/engine/compiled/) drives it; it never replaces the model's meaning:

- successors come out in the model's order (`Model.next_states`), so a stored move is a
  position among the model's successors and a trace is rebuilt by the model itself;
- `decode(encode(s)) == s` for every reachable state;
- `canonicalize` maps every state of an orbit of the model's node symmetry to one row;
- every claim it `covers` is a function of `claim_keys`: states with one key agree on it,
  so such a claim is evaluated, by its own Python predicate, once per key, on a decoded
  state; any other claim (a user's own) is evaluated on every state, decoded.

Tests hold a kernel to all four on every reachable state of its model's benchmark sizes
(tests/models/test_kernels.py). A kernel is offered only for the exact class it was written
for, never for a subclass, whose overrides it would not know.

Rows are numpy arrays of dtype uint64, shape (count, words).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, Generic, TypeVar

from leadercheck.checker.properties import Property

S = TypeVar("S")


class Kernel(ABC, Generic[S]):
    """Packed states and compiled batch successors of one model instance."""

    words: int  # 64-bit words per packed state
    max_successors: int  # at most this many successors of any one state
    symmetric: bool  # whether `canonicalize` is the model's symmetry (else the identity)

    @abstractmethod
    def encode(self, state: S) -> tuple[int, ...]:
        """`state` as `words` unsigned 64-bit integers."""

    @abstractmethod
    def decode(self, row: Sequence[int]) -> S:
        """The model's state that `row` packs (exactly as the model itself builds it)."""

    @abstractmethod
    def expand(self, rows: Any, start: int, stop: int, out: Any, parents: Any, moves: Any) -> Any:
        """Successors of rows[start:stop], in order, each row's in the model's order,
        written to `out` from its first row on, with the index (in `rows`) of the row each
        came from in `parents` and its position among that row's successors in `moves`.
        Stops before a row whose successors might not fit in `out` (`max_successors` each).
        Returns (rows expanded, successors written)."""

    def canonicalize(self, rows: Any, count: int) -> None:
        """Replace each of rows[:count] by its orbit's representative (in place)."""

    @abstractmethod
    def claim_keys(self, rows: Any, count: int, out: Any) -> None:
        """Write to out[:count] a key per row that determines every claim it covers."""

    def covers(self, prop: Property) -> bool:
        """Whether `prop` is a function of the claim key (by default no claim is)."""
        return False


def defined_in(prop: Property, module: str) -> bool:
    """Whether `prop`'s predicate is a function of `module` (bound to a model or not): how a
    kernel recognises the shared claims it covers without importing them."""
    predicate = prop.predicate
    predicate = getattr(predicate, "fn", predicate)
    return getattr(predicate, "__module__", None) == module
