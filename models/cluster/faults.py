"""Fault budgets: how many more crashes, partitions, message losses and pauses may happen.

Every fault spends one unit of its budget; recovering (restart, heal, resume) is
free. Bounded budgets keep the state space finite and say exactly what was assumed.

A protocol may declare fault kinds of its own (`FaultKind`: a master's clock jumps, a
client's clock drifts), each with a budget like the built-in ones; `Faults.extra` holds
what is left of them, in declaration order, so a protocol that declares none has the
states it always had. `STORE_CRASH` is one the cluster provides for any protocol with a
store to opt into.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from leadercheck.models.cluster.records import quick_replace
from leadercheck.models.params import Param


@dataclass(frozen=True)
class FaultKind:
    """A kind of fault a protocol declares (`ClusterModel.fault_kinds`), with a budget.

    `name` is also the budget's parameter name (`-p clock-jumps=2`), so it is written
    like one; `default` and `high` are that parameter's default and largest value.
    """

    name: str
    help: str
    default: int = 1
    high: int = 3

    def param(self, default: int | None = None) -> Param:
        """The budget as a protocol parameter, 0..high; `default` overrides the kind's own
        (one kind, two protocols: the faulty one on, the other off)."""
        value = self.default if default is None else default
        return Param(self.name, value, 0, self.high, self.help)


STORE_CRASH = FaultKind("store-crashes", "the coordination store crashes (it restarts later)")


@quick_replace
class Faults(NamedTuple):
    crashes: int = 0
    partitions: int = 0
    losses: int = 0
    pauses: int = 0
    extra: tuple[int, ...] = ()  # what is left of each declared kind, in declaration order

    def spend(self, kind: str) -> Faults:
        left = getattr(self, kind)
        assert left > 0, f"no {kind} left to spend"
        return self._replace(**{kind: left - 1})

    def spend_extra(self, index: int) -> Faults:
        """Spend one unit of the declared kind at `index` (its place in `fault_kinds`)."""
        left = self.extra
        assert left[index] > 0, f"no declared fault {index} left to spend"
        return self._replace(extra=left[:index] + (left[index] - 1,) + left[index + 1 :])

    def describe(self, kinds: Sequence[FaultKind] = ()) -> dict[str, object]:
        """Each budget left; the declared kinds' after the built-in ones, when there are any."""
        view: dict[str, object] = {
            f"{k}_left": v for k, v in self._asdict().items() if k != "extra"
        }
        for kind, left in zip(kinds, self.extra, strict=True):
            view[f"{kind.name.replace('-', '_')}_left"] = left
        return view
