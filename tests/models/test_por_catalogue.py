"""Every protocol of the catalogue, at its defaults, with and without partial-order reduction.

The verdicts must be the same, the reduction must store no more states, and every trace
found with it must replay on the model (it may be longer than the shortest one).
"""

from __future__ import annotations

from typing import Any

import pytest

from leadercheck.checker.engine.settings import Reductions
from leadercheck.checker.engine.strategies.bfs import check
from leadercheck.checker.model import Model
from leadercheck.checker.trace import Trace
from leadercheck.models.catalogue import PROTOCOLS
from leadercheck.specs.expectations import load_expectations


def assert_replays(model: Model[Any], trace: Trace) -> None:
    """Each step's action is among the successors of the state before it and leads to its state."""
    assert trace.steps[0].state in model.initial_states()
    for before, step in zip(trace.steps, trace.steps[1:], strict=False):
        assert step.action is not None
        options = list(model.successors(before.state))
        assert (step.action, step.state) in options, f"step {step.index} ({step.action})"


# 16, 7 and 3 to 5 s each: run with -m slow (the other protocols stay in the default run)
HEAVY = {
    "raft", "bully", "lease-no-fencing", "lease-fencing", "lease-cas", "k8s-lease",
    "k8s-lease-fencing", "patroni-sync", "raft-election", "lease-blind-write", "lease-renewal",
    "lease-no-confirmation", "zookeeper", "zookeeper-fencing", "zookeeper-multi", "gossip",
    "patroni", "redis-lock-fencing", "advisory-lock-fencing",
}  # fmt: skip


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n in HEAVY else n for n in PROTOCOLS]
)
def test_por_keeps_every_verdict_at_the_defaults(name: str) -> None:
    entry = PROTOCOLS[name]
    model = entry.build(entry.resolve({}))
    props = load_expectations().properties(name)
    full = check(model, props)
    reduced = check(model, props, reductions=Reductions(por=True))
    assert {r.prop.name: r.verdict for r in reduced.results} == {
        r.prop.name: r.verdict for r in full.results
    }
    assert reduced.stats.distinct_states <= full.stats.distinct_states
    assert reduced.stats.generated_states <= full.stats.generated_states
    for r in reduced.results:
        if r.trace is not None:
            assert_replays(model, r.trace)
