"""Every declared node symmetry is a real one: renaming commutes with the successor function.

`--symmetry` is sound only if, for every reachable state s and every renaming p of the
declared groups, the successors of p(s) are exactly the renamed successors of s, and
every claim has the same truth value on s and p(s). This checks both, for every
renaming, on reachable states of every protocol that declares a symmetry (a sample in
the default suite, every reachable state under `-m slow`), and shows that the check
catches a protocol declared symmetric that is not (heartbeat: the lower id leads).
"""

from __future__ import annotations

from itertools import permutations, product
from typing import Any

import pytest

from leadercheck.checker.engine.strategies.bfs import check
from leadercheck.checker.model import Model
from leadercheck.checker.properties import Property, always
from leadercheck.models.catalogue import PROTOCOLS
from leadercheck.models.cluster import InterchangeableNodes
from leadercheck.models.heartbeat import HeartbeatModel
from leadercheck.specs.expectations import load_expectations

EXPECTATIONS = load_expectations()


def _declared(name: str) -> bool:
    entry = PROTOCOLS[name]
    groups = entry.build(entry.resolve({})).symmetry_groups()
    return any(len(g) > 1 for g in groups)


SYMMETRIC = [name for name in PROTOCOLS if _declared(name)]


def _renamings(model: Model[Any]) -> list[tuple[int, ...]]:
    groups = [tuple(g) for g in model.symmetry_groups()]
    size = sum(len(g) for g in groups)
    found = []
    for images in product(*(permutations(g) for g in groups)):
        perm = [0] * size
        for group, image in zip(groups, images, strict=True):
            for old, new in zip(group, image, strict=True):
                perm[old] = new
        if perm != list(range(size)):
            found.append(tuple(perm))
    return found


def asymmetries(
    model: Model[Any], props: list[Property], limit: int | None, every: int
) -> list[str]:
    """Where renaming does not commute with the successors or changes a claim."""
    states: list[Any] = []
    check(model, [always("record", lambda s: states.append(s) is None)], max_states=limit)
    found = []
    for s in states[::every]:
        after = model.next_states(s)
        for perm in _renamings(model):
            renamed = model.permute(s, perm)
            if set(model.next_states(renamed)) != {model.permute(t, perm) for t in after}:
                found.append(f"successors of {perm} applied to {s}")
            found += [
                f"{p.name} on {perm} applied to {s}"
                for p in props
                if bool(p.predicate(s)) != bool(p.predicate(renamed))
            ]
    return found


def test_the_symmetric_protocols() -> None:
    assert set(SYMMETRIC) >= {"lease-fencing", "raft", "zookeeper", "patroni", "raft-election"}
    assert not {"bully", "gossip", "heartbeat-no-quorum"} & set(SYMMETRIC)


HEAVY = {
    "raft",
    "raft-volatile-vote",
    "raft-no-quorum",
    "patroni",  # 2 to 3 s each
    "lease-fencing",
    "lease-no-fencing",
    "zookeeper",
    "zookeeper-fencing",
    "zookeeper-multi",
    "patroni-sync",  # 1.1 to 1.5 s each
    "even-quorum",
    "lease-renewal",
    "k8s-lease-fencing",
    "redis-lock",
    "redis-lock-fencing",  # 1.6 to 2.2 s each
    "advisory-lock",
    "advisory-lock-fencing",
}  # over a second each: lease-cas, k8s-lease and the rest stay


@pytest.mark.parametrize(
    "name",  # the heavy ones take 2-3 s here: it runs with the slow tests (CI runs them)
    [pytest.param(n, marks=pytest.mark.slow) if n in HEAVY else n for n in SYMMETRIC],
)
def test_renaming_commutes_on_a_sample(name: str) -> None:
    entry = PROTOCOLS[name]
    model = entry.build(entry.resolve({}))
    assert asymmetries(model, EXPECTATIONS.properties(name), limit=12_000, every=8) == []


@pytest.mark.slow
@pytest.mark.parametrize("name", SYMMETRIC)
def test_renaming_commutes_on_every_reachable_state(name: str) -> None:
    entry = PROTOCOLS[name]
    model = entry.build(entry.resolve({}))
    assert asymmetries(model, EXPECTATIONS.properties(name), limit=None, every=1) == []


class _WronglySymmetricHeartbeat(InterchangeableNodes, HeartbeatModel):
    """Heartbeat declared symmetric, although a leader ignores heartbeats from higher ids."""


def test_a_wrong_declaration_is_caught() -> None:
    model = PROTOCOLS["heartbeat-no-quorum"].build(PROTOCOLS["heartbeat-no-quorum"].resolve({}))
    wrong = _WronglySymmetricHeartbeat(model.n, model.timeout, model.bounds)
    props = EXPECTATIONS.properties("heartbeat-no-quorum")
    found = asymmetries(wrong, props, limit=12_000, every=8)
    assert found and found[0].startswith("successors of")


@pytest.mark.parametrize("name", SYMMETRIC)
def test_an_orbit_has_one_representative_whatever_a_state_holds(name: str) -> None:
    """The catalogue orders states by `value_key`, not by their text: two equal states
    print differently when a set's iteration order follows insertion (8 and 16 share a
    slot), and an order by repr then kept two representatives of one orbit."""
    entry = PROTOCOLS[name]
    model = entry.build(entry.resolve({}))
    first, second = frozenset([8, 16]), frozenset([16, 8])
    assert first == second and repr(first) != repr(second)
    assert model.order_key(first) == model.order_key(second)
