"""A protocol module's entries built and checked by name, for its tests."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from leadercheck.checker import CheckResult
from leadercheck.models.params import ProtocolEntry


def build(protocols: Iterable[ProtocolEntry], name: str, **params: str) -> Any:
    """The model of the entry called `name` among `protocols`, at `params` (the rest at
    their defaults)."""
    entry = next(p for p in protocols if p.name == name)
    return entry.build(entry.resolve(params))


def steps(result: CheckResult, claim: str) -> list[tuple[str, str]]:
    """(actor, action) of each step of the claim's trace."""
    trace = result.result(claim).trace
    assert trace is not None
    return [(a.actor, a.name) for a in trace.actions]
