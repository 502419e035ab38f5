"""Properties the engine checks: invariants (`always`), reachability (`sometimes`) and
liveness under fairness (`leads_to`, `eventually`, `eventually_always`)."""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


class Kind(enum.Enum):
    """ALWAYS must hold in every reachable state; SOMETIMES must hold in at least one;
    LEADS_TO: on every fair behaviour, a state where `trigger` holds is followed by one
    where `predicate` holds; PERSISTS: on every fair behaviour, `predicate` eventually
    holds for good (checker/liveness.py judges both)."""

    ALWAYS = "always"
    SOMETIMES = "sometimes"
    LEADS_TO = "leads-to"
    PERSISTS = "eventually-always"


LIVENESS = frozenset({Kind.LEADS_TO, Kind.PERSISTS})  # judged on fair behaviours, not states


@dataclass(frozen=True)
class Property:
    """A named claim about the states of a model.

    `explain`, when given, says in words why a state breaks (ALWAYS) or meets
    (SOMETIMES) the predicate; it feeds the red step of a diagram.
    """

    name: str
    kind: Kind
    predicate: Callable[[Any], bool]
    description: str = ""
    explain: Callable[[Any], str] | None = None
    trigger: Callable[[Any], bool] | None = None  # LEADS_TO: None means "initially"
    # SOMETIMES only: reaching it is bad news (a false failover), so its witness is drawn
    # and written like a counterexample, though the claim's verdict is still HOLDS
    finding: bool = False
    # the view fields (keys of a participant's `describe()`) the claim is about: the chart
    # marks where they change, so the data that carries the bug is drawn
    reads: tuple[str, ...] = ()

    def why(self, state: Any) -> str:
        """The explanation for `state`, or the description when there is no explainer."""
        return self.explain(state) if self.explain else self.description


def always(
    name: str,
    predicate: Callable[[Any], bool],
    description: str = "",
    explain: Callable[[Any], str] | None = None,
    reads: tuple[str, ...] = (),
) -> Property:
    """An invariant: violated by the shortest trace to a state where `predicate` is false.
    `reads` names the view fields it is about, for the chart."""
    return Property(name, Kind.ALWAYS, predicate, description, explain, reads=reads)


def sometimes(
    name: str,
    predicate: Callable[[Any], bool],
    description: str = "",
    explain: Callable[[Any], str] | None = None,
    finding: bool = False,
) -> Property:
    """A reachability claim: holds with the shortest witness trace to a state where it is
    true. A `finding` is one whose witness is a problem found, written out and drawn."""
    return Property(name, Kind.SOMETIMES, predicate, description, explain, finding=finding)


def leads_to(
    name: str,
    trigger: Callable[[Any], bool],
    predicate: Callable[[Any], bool],
    description: str = "",
    explain: Callable[[Any], str] | None = None,
) -> Property:
    """trigger ~> predicate under the model's fairness: violated by a lasso (a trace to a
    trigger state, then a fair cycle on which the predicate never holds)."""
    return Property(name, Kind.LEADS_TO, predicate, description, explain, trigger)


def eventually(
    name: str,
    predicate: Callable[[Any], bool],
    description: str = "",
    explain: Callable[[Any], str] | None = None,
) -> Property:
    """Every fair behaviour from an initial state reaches a state where `predicate` holds."""
    return Property(name, Kind.LEADS_TO, predicate, description, explain, None)


def eventually_always(
    name: str,
    predicate: Callable[[Any], bool],
    description: str = "",
    explain: Callable[[Any], str] | None = None,
) -> Property:
    """<>[] predicate under the model's fairness: every fair behaviour ends where it holds
    for good. Violated by a lasso whose fair cycle passes a state where it is false (a
    livelock: the behaviour keeps coming back to it), or that stops in one."""
    return Property(name, Kind.PERSISTS, predicate, description, explain, None)
