"""Counterexamples as the chart gets them: live traces from checking one property, cached."""

from __future__ import annotations

from functools import cache

from leadercheck.checker import check
from leadercheck.checker.render.context import TraceContext
from leadercheck.checker.result import Verdict
from leadercheck.models.catalogue import PROTOCOLS, lookup
from leadercheck.specs import load_expectations


@cache
def context(protocol: str, prop: str) -> TraceContext:
    """The trace of `prop` on `protocol` at its defaults, checked on that property alone
    (the search then stops as soon as it is decided)."""
    entry = lookup(protocol)
    params = entry.resolve({})
    claims = [p for p in load_expectations().properties(protocol) if p.name == prop]
    assert claims, f"{protocol} is not judged on {prop}"
    outcome = check(entry.build(params), claims).result(prop)
    assert outcome.trace is not None, f"{protocol}: {prop} {outcome.verdict.value}"
    return TraceContext(protocol, params, outcome)


def violated(prop: str) -> list[str]:
    """The built-in protocols whose `prop` specs/expected.toml expects VIOLATED at their
    defaults (a protocol's own section, not a case at other parameters)."""
    table = load_expectations().table
    return [
        name
        for name, expected in table.items()
        if name in PROTOCOLS
        and any(e.prop == prop and e.verdict is Verdict.VIOLATED for e in expected)
    ]
