"""Fault budgets: how many more crashes, partitions, message losses and pauses may happen.

Every fault spends one unit of its budget; recovering (restart, heal, resume) is
free. Bounded budgets keep the state space finite and say exactly what was assumed.
"""

from __future__ import annotations

from typing import NamedTuple

from models.cluster.records import quick_replace


@quick_replace
class Faults(NamedTuple):
    crashes: int = 0
    partitions: int = 0
    losses: int = 0
    pauses: int = 0

    def spend(self, kind: str) -> Faults:
        left = getattr(self, kind)
        assert left > 0, f"no {kind} left to spend"
        return self._replace(**{kind: left - 1})

    def describe(self) -> dict[str, object]:
        return {f"{k}_left": v for k, v in self._asdict().items()}
