"""Properties the engine checks: invariants (`always`), reachability (`sometimes`) and
liveness under fairness (`leads_to`, `eventually`, `eventually_always`).

A claim may read the model it is checked on (`with_model=True`: its functions take the
state and the model), so one claim serves every configuration of a protocol (a quorum
size, a node count) instead of one claim per configuration. Such a claim is bound to its
model (`Property.on`) wherever the two meet, before any state is judged.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from leadercheck.checker.errors import ModelError


class Kind(enum.Enum):
    """ALWAYS must hold in every reachable state; SOMETIMES must hold in at least one;
    LEADS_TO: on every fair behaviour, a state where `trigger` holds is followed by one
    where `predicate` holds; PERSISTS: on every fair behaviour, `predicate` eventually
    holds for good (checker/engine/liveness.py judges both)."""

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
    # its functions take (state, model): judged only once bound to a model (`on`)
    with_model: bool = False

    def why(self, state: Any) -> str:
        """The explanation for `state`, or the description when there is no explainer."""
        return self.explain(state) if self.explain else self.description

    def on(self, model: Any) -> Property:
        """This claim as judged on `model`: a claim that reads its model gets it bound
        (each function then takes the state alone); any other is itself."""
        if not self.with_model:
            return self
        return replace(
            self,
            predicate=_Bound(self.predicate, model),
            explain=None if self.explain is None else _Bound(self.explain, model),
            trigger=None if self.trigger is None else _Bound(self.trigger, model),
            with_model=False,
        )

    def __post_init__(self) -> None:
        if self.with_model and not isinstance(self.predicate, _Unbound):
            for field in ("predicate", "explain", "trigger"):
                fn = getattr(self, field)
                if fn is not None:
                    object.__setattr__(self, field, _Unbound(fn, self.name))


class _Bound:
    """A claim's function with its model bound (a class, not a closure: it pickles)."""

    def __init__(self, fn: Callable[..., Any], model: Any) -> None:
        self.fn = fn.fn if isinstance(fn, _Unbound) else fn
        self.model = model

    def __call__(self, state: Any) -> Any:
        return self.fn(state, self.model)


class _Unbound:
    """A function of (state, model) not yet given its model: called with a state alone it
    says so in one line instead of a TypeError from deep inside a search."""

    def __init__(self, fn: Callable[..., Any], name: str) -> None:
        self.fn, self.name = fn, name

    def __call__(self, state: Any) -> Any:
        raise ModelError(
            f"claim {self.name!r} reads its model (with_model=True) but was judged without"
            " one here; this command cannot judge it"
        )


def bind(properties: Sequence[Property], model: Any) -> tuple[Property, ...]:
    """The claims as judged on `model` (see `Property.on`)."""
    return tuple(p.on(model) for p in properties)


def always(
    name: str,
    predicate: Callable[..., bool],
    description: str = "",
    explain: Callable[..., str] | None = None,
    reads: tuple[str, ...] = (),
    *,
    with_model: bool = False,
) -> Property:
    """An invariant: violated by the shortest trace to a state where `predicate` is false.
    `reads` names the view fields it is about, for the chart; `with_model`: the functions
    take (state, model)."""
    return Property(
        name, Kind.ALWAYS, predicate, description, explain, reads=reads, with_model=with_model
    )


def sometimes(
    name: str,
    predicate: Callable[..., bool],
    description: str = "",
    explain: Callable[..., str] | None = None,
    finding: bool = False,
    *,
    with_model: bool = False,
) -> Property:
    """A reachability claim: holds with the shortest witness trace to a state where it is
    true. A `finding` is one whose witness is a problem found, written out and drawn."""
    return Property(
        name, Kind.SOMETIMES, predicate, description, explain, finding=finding,
        with_model=with_model,
    )  # fmt: skip


def leads_to(
    name: str,
    trigger: Callable[..., bool],
    predicate: Callable[..., bool],
    description: str = "",
    explain: Callable[..., str] | None = None,
    *,
    with_model: bool = False,
) -> Property:
    """trigger ~> predicate under the model's fairness: violated by a lasso (a trace to a
    trigger state, then a fair cycle on which the predicate never holds)."""
    return Property(
        name, Kind.LEADS_TO, predicate, description, explain, trigger, with_model=with_model
    )


def eventually(
    name: str,
    predicate: Callable[..., bool],
    description: str = "",
    explain: Callable[..., str] | None = None,
    *,
    with_model: bool = False,
) -> Property:
    """Every fair behaviour from an initial state reaches a state where `predicate` holds."""
    return Property(
        name, Kind.LEADS_TO, predicate, description, explain, None, with_model=with_model
    )


def eventually_always(
    name: str,
    predicate: Callable[..., bool],
    description: str = "",
    explain: Callable[..., str] | None = None,
    *,
    with_model: bool = False,
) -> Property:
    """<>[] predicate under the model's fairness: every fair behaviour ends where it holds
    for good. Violated by a lasso whose fair cycle passes a state where it is false (a
    livelock: the behaviour keeps coming back to it), or that stops in one."""
    return Property(
        name, Kind.PERSISTS, predicate, description, explain, None, with_model=with_model
    )
