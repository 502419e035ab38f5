"""The model a history is checked against: the protocol's parameters, fitted to the history.

Parameters come from the protocol's defaults, then the history's `params`, then `-p
NAME=VALUE` (the later wins); the last two are validated by the protocol's own entry
(`ProtocolEntry.resolve`: names and ranges), as every command validates them. What
neither sets is fitted to the history:

- `nodes`: as many as the history names (at least the parameter's lowest);
- the token bound (`tokens`, `seqs`, `terms`, `epochs`; `transitions` counts changes, one
  fewer): one more token than the history shows (so where the model refuses an event it
  can say that it would grant a new one), past the parameter's range if need be (the
  range bounds an exhaustive search, not one that follows a single history);
- the lease's length (`ttl`, `lease_duration`, `timeout`): `ttl_seconds / tick_seconds`
  when the history gives `ttl_seconds` (a whole number of ticks, or the history is
  refused);
- every fault budget: unbounded (unobserved.py). A budget given is kept exactly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from leadercheck.checker.conform.bindings.lease_facts import TokenNumbers
from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.history.events import History, seconds
from leadercheck.models.params import ProtocolEntry

MAX_TICKS = 1_000_000  # a history's span in ticks: the search takes them one by one
TOKEN_BOUNDS = {"tokens": 0, "seqs": 0, "terms": 0, "epochs": 0, "transitions": 1}
LEASE_LENGTHS = ("ttl", "lease_duration", "timeout")
UNBOUNDED = "any"  # how a budget without a bound is shown


@dataclass(frozen=True)
class Fitted:
    """The parameters a history's model is built with, and where each came from."""

    protocol: ProtocolEntry
    values: Mapping[str, int]  # what the builder gets (an unbounded budget as 1)
    unbounded: tuple[str, ...]  # budgets filled up after every step
    given: tuple[str, ...]  # set by the history's params or -p
    fitted: tuple[str, ...]  # chosen from the history
    tick: Fraction  # seconds per tick
    ttl_seconds: Fraction  # how long a lease lasts, for judging the events themselves

    def shown(self) -> dict[str, int | str]:
        """The parameters as reports write them: an unbounded budget is `any`."""
        return {k: UNBOUNDED if k in self.unbounded else v for k, v in self.values.items()}

    def words(self) -> str:
        """`nodes=3 ttl=2 tokens=4 crashes=any ...`, in the protocol's order."""
        return " ".join(f"{k}={v}" for k, v in self.shown().items())


def token_numbers(history: History) -> TokenNumbers:
    """The history's tokens numbered 1, 2, 3 in the order first seen, as the model numbers
    its grants (the conformance bindings number real tokens the same way)."""
    numbers = TokenNumbers()
    for event in history.events:
        if event.token is not None:
            numbers.of(event.token)
    return numbers


def fit(
    protocol: ProtocolEntry,
    history: History,
    given: Mapping[str, str],
    tick: Fraction | None,
    budgets: Sequence[str],
) -> Fitted:
    """The parameters for `history` on `protocol`: `given` are -p's (over the file's),
    `tick` is --tick's (over the file's), `budgets` the protocol's fault budgets."""
    asked = {**history.params, **given}
    values = protocol.resolve(asked)  # unknown names and ranges: one line, exit 2
    tick = tick if tick is not None else history.tick_seconds
    if tick is None:
        raise LeadercheckError(
            f"{history.source}: no tick_seconds: say how long a model tick is, in the history "
            "or with --tick SECONDS"
        )
    span = history.events[-1].at / tick
    if span > MAX_TICKS:
        raise LeadercheckError(
            f"{history.source}: the history spans {int(span):,} ticks of {seconds(tick)}, more "
            f"than {MAX_TICKS:,}: give a longer tick (--tick SECONDS)"
        )
    params = {p.name: p for p in protocol.params}
    fitted: list[str] = []
    need = history.node_count()
    if "nodes" in params:
        low, high = params["nodes"].low, params["nodes"].high
        if "nodes" in asked and values["nodes"] < need:
            raise LeadercheckError(
                f"{history.source}: the history names {need} nodes, more than nodes="
                f"{values['nodes']}"
            )
        if "nodes" not in asked:
            if need > high:
                raise LeadercheckError(
                    f"{history.source}: the history names {need} nodes; {protocol.name} "
                    f"models {low} to {high}"
                )
            values["nodes"] = max(need, low)
            fitted.append("nodes")
    tokens = len(token_numbers(history).numbers) + 1  # one more: a refusal can offer it
    for name, uncounted in TOKEN_BOUNDS.items():
        if name in params and name not in asked:
            values[name] = max(tokens - uncounted, params[name].low)
            fitted.append(name)
    ttl_seconds = _lease_length(protocol, history, values, asked, tick, fitted)
    unbounded = tuple(b for b in budgets if b in params and b not in asked)
    for budget in unbounded:
        values[budget] = 1
    return Fitted(
        protocol=protocol,
        values=values,
        unbounded=unbounded,
        given=tuple(name for name in params if name in asked),
        fitted=tuple(fitted),
        tick=tick,
        ttl_seconds=ttl_seconds,
    )


def _lease_length(
    protocol: ProtocolEntry,
    history: History,
    values: dict[str, int],
    asked: Mapping[str, str],
    tick: Fraction,
    fitted: list[str],
) -> Fraction:
    """The lease's length in seconds; the model's in ticks fitted to it where not given."""
    name = next((p.name for p in protocol.params if p.name in LEASE_LENGTHS), None)
    if history.ttl_seconds is None:
        if name is None:
            raise LeadercheckError(
                f"{history.source}: give ttl_seconds: {protocol.name} has no lease length "
                f"({', '.join(LEASE_LENGTHS)}) to take it from"
            )
        return values[name] * tick
    if name is not None and name not in asked:
        ticks = history.ttl_seconds / tick
        if ticks.denominator != 1 or ticks < 1:
            raise LeadercheckError(
                f"{history.source}: ttl_seconds {seconds(history.ttl_seconds)} is not a whole "
                f"number of ticks of {seconds(tick)}: give a tick that divides it, or -p "
                f"{name}=N"
            )
        values[name] = int(ticks)
        fitted.append(name)
    return history.ttl_seconds
