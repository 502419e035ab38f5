"""The local moves the protocols declare are local: checked on every reachable state.

For each protocol that declares local moves, on a small instance, every declared move
is followed along every path that does not take it (`tests.locality`): it stays
enabled, no claim sees it, and it commutes with every move, neither disabling the
other. The promises behind the declarations (`ClusterModel.stop_only_delays`,
`cut_only_blocks`) are shown to matter: made where they are false, the check fails.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

import pytest

from leadercheck.checker.model import Model
from leadercheck.models.catalogue import PROTOCOLS
from leadercheck.specs.claims import PROPERTIES
from tests.locality import check_declarations


def build(name: str, **params: int) -> Model[Any]:
    entry = PROTOCOLS[name]
    return entry.build(entry.resolve({k: str(v) for k, v in params.items()}))


def claims_view(model: Model[Any]) -> Callable[[Any], Hashable]:
    """The truth value of every claim that can read this model's states."""
    first = model.initial_states()[0]
    readable = []
    for prop in PROPERTIES.values():
        try:
            prop.predicate(first)
        except AttributeError:  # a claim about a part the model does not have
            continue
        readable.append(prop.predicate)
    return lambda state: tuple(bool(p(state)) for p in readable)


DECLARING = [  # (protocol, parameters, the kinds of move it declares local there)
    ("lease-fencing", {"nodes": 2}, {"restart", "resume", "heal"}),
    ("lease-no-fencing", {"nodes": 2, "crashes": 0, "partitions": 2}, {"resume", "heal"}),
    ("lease-cas", {"nodes": 2, "crashes": 1}, {"restart", "resume"}),
    ("lease-blind-write", {"nodes": 2, "crashes": 1, "partitions": 1}, {"restart", "resume"}),
    ("lease-no-confirmation", {"nodes": 2, "pauses": 1, "tokens": 2}, {"resume"}),
    ("lease-bench", {"N": 2, "MaxTime": 3}, {"resume"}),
    ("redis-lock", {"nodes": 2}, {"resume", "heal"}),
    ("redis-lock-fencing", {"nodes": 2, "crashes": 1}, {"restart", "resume", "heal"}),
]


# 4 to 45 s each: -m slow
HEAVY = {
    "lease-fencing", "lease-cas", "lease-blind-write", "lease-no-fencing", "lease-no-confirmation",
    "redis-lock", "redis-lock-fencing",
}  # fmt: skip


@pytest.mark.parametrize(
    ("name", "params", "kinds"),
    [pytest.param(*d, marks=pytest.mark.slow) if d[0] in HEAVY else d for d in DECLARING],
)
def test_declared_local_moves_are_local(name: str, params: dict[str, int], kinds: set[str]) -> None:
    model = build(name, **params)
    declared, problems = check_declarations(model, claims_view(model))
    assert problems == []
    assert set(declared) == kinds


@pytest.mark.parametrize("name", [n for n in PROTOCOLS if n not in {d[0] for d in DECLARING}])
def test_the_other_protocols_declare_nothing(name: str) -> None:
    model = build(name)
    assert all(not model.local_moves(s) for s in model.initial_states())
    assert not getattr(model, "stop_only_delays", False)
    assert not getattr(model, "cut_only_blocks", False)


@pytest.mark.parametrize(
    ("name", "promise", "params", "why"),
    [
        # a paused leader's renewal falls due with a tick: resuming it would stop time
        ("k8s-lease", "stop_only_delays", {"nodes": 2}, "disables clock: tick"),
        # a paused node's session expires with a tick; resuming it heartbeats at once and
        # takes that expiry away
        ("zookeeper", "stop_only_delays", {"nodes": 2}, "disables clock: tick"),
        # an update sent to an unreachable store fails: a heal takes that step away
        ("lease-cas", "cut_only_blocks", {"nodes": 2}, "disables"),
        # a heartbeat in flight to a paused node blocks time once it resumes
        ("heartbeat-no-quorum", "stop_only_delays", {"nodes": 2, "pauses": 1}, "disables"),
    ],
)
def test_a_false_promise_is_caught(
    name: str, promise: str, params: dict[str, int], why: str
) -> None:
    model = build(name, **params)
    setattr(model, promise, True)
    _, problems = check_declarations(model, claims_view(model))
    assert problems and why in problems[0]
