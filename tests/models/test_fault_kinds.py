"""Fault kinds a protocol declares, with budgets, and the store that crashes and restarts.

A toy protocol (lights that go out) declares its own kind; a lease with fencing opts
into STORE_CRASH, once with a durable store (both claims hold) and once with a
volatile one that forgets its token counter (two leaders share token 1).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

import pytest

from leadercheck.checker import LeadercheckError, Verdict, check, sometimes
from leadercheck.checker.model import FAULT, RECOVERY, Action
from leadercheck.models.cluster import (
    STORE,
    STORE_CRASH,
    ClusterModel,
    ClusterState,
    FaultBounds,
    FaultKind,
    Store,
    Successor,
)
from leadercheck.models.lease import LeaseModel, lease_params
from leadercheck.models.params import NODES, ProtocolEntry
from leadercheck.specs.claims import no_stale_write, single_leader, write_accepted
from tests.locality import check_declarations

BLACKOUT = FaultKind("blackouts", "a lit node's light goes out", default=1, high=2)


class Light(NamedTuple):
    up: bool = True
    paused: bool = False
    lit: bool = False

    @property
    def is_leader(self) -> bool:
        return self.lit

    @property
    def role(self) -> str:
        return "follower"

    @property
    def epoch(self) -> None:
        return None

    @property
    def tenure(self) -> int:
        return 0

    def describe(self) -> dict[str, object]:
        return {"lit": self.lit}

    def summary(self) -> str:
        return "lit" if self.lit else "dark"


class Lights(ClusterModel):
    """Each node lights its lamp once it is dark; a blackout puts one lamp out."""

    uses_store = False
    fault_kinds: tuple[FaultKind, ...] = (BLACKOUT,)

    def initial_node(self, i: int) -> Light:
        return Light()

    def node_steps(self, s: ClusterState, i: int) -> Iterator[Successor]:
        if not s.node(i).lit:
            yield Action("light", f"n{i}"), s.with_node(i, Light(lit=True))

    def fault_steps(self, s: ClusterState, kind: FaultKind) -> Iterator[Successor]:
        assert kind is BLACKOUT
        for i in self.ids:
            if s.node(i).lit:
                yield (
                    Action("blackout", f"n{i}", None, "the light goes out"),
                    s.with_node(i, Light()),
                )


def _lights(nodes: int, **faults: int) -> Lights:
    return Lights(nodes, FaultBounds.of(**faults))


LIGHTS = ProtocolEntry("lights", "lamps that go out", (NODES, BLACKOUT.param()), _lights)


def lights(**given: str) -> Lights:
    model = LIGHTS.build(LIGHTS.resolve({"nodes": "2", **given}))
    assert isinstance(model, Lights)
    return model


def reachable(model: ClusterModel) -> list[tuple[Any, ClusterState]]:
    """Every (action, next state) pair out of every reachable state."""
    seen = set(model.initial_states())
    queue = list(seen)
    moves = []
    while queue:
        for action, after in model.successors(queue.pop()):
            moves.append((action, after))
            if after not in seen:
                seen.add(after)
                queue.append(after)
    return moves


def test_a_declared_kind_is_a_parameter_with_its_budget() -> None:
    param = BLACKOUT.param()
    assert (param.name, param.default, param.low, param.high) == ("blackouts", 1, 0, 2)
    assert LIGHTS.resolve({}) == {"nodes": 3, "blackouts": 1}
    with pytest.raises(LeadercheckError, match="out of range 0..2"):
        LIGHTS.resolve({"blackouts": "3"})
    assert lights(blackouts="2").initial_states()[0].faults.extra == (2,)


def test_each_declared_fault_spends_one_unit_and_is_an_unforced_fault() -> None:
    faults = [(a, after) for a, after in reachable(lights(blackouts="2")) if a.name == "blackout"]
    assert faults
    assert {(a.kind, a.fairness, a.local) for a, _ in faults} == {(FAULT, None, False)}
    assert {after.faults.extra for _, after in faults} == {(1,), (0,)}
    model = lights(blackouts="1")
    assert model.fairness(faults[0][0]) is None
    assert check(model, [sometimes("dark-again", lambda s: s.faults.extra == (0,))]).verdict is (
        Verdict.HOLDS
    )


def test_a_zero_budget_disables_the_kind() -> None:
    assert not [a for a, _ in reachable(lights(blackouts="0")) if a.name == "blackout"]


def test_declared_budgets_show_after_the_built_in_ones() -> None:
    model = lights()
    view = model.describe(model.initial_states()[0])["faults"]
    assert list(view) == [
        "crashes_left",
        "partitions_left",
        "losses_left",
        "pauses_left",
        "blackouts_left",
    ]
    lease = LeaseModel(2, 1, 2, True, FaultBounds(pauses=1))
    assert list(lease.describe(lease.initial_states()[0])["faults"]) == list(view)[:4]


class Twice(Lights):
    fault_kinds = (BLACKOUT, BLACKOUT)


class Clash(Lights):
    fault_kinds = (FaultKind("pauses", "a second pause budget"),)


class BadName(Lights):
    fault_kinds = (FaultKind("Clock Jumps", "spaces and capitals"),)


class StoreLess(Lights):
    fault_kinds = (STORE_CRASH,)


@pytest.mark.parametrize(
    ("cls", "bounds", "message"),
    [
        (Twice, FaultBounds(), "'blackouts' is declared twice"),
        (Clash, FaultBounds(), "'pauses' is a built-in budget"),
        (BadName, FaultBounds(), "must be written like a parameter name"),
        (StoreLess, FaultBounds(), "store-crashes needs a protocol with a store"),
        (Lights, FaultBounds.of(floods=1), "no fault kind 'floods' is declared"),
        (Lights, FaultBounds.of(blackouts=-1), "blackouts=-1 is negative"),
    ],
)
def test_an_invalid_declaration_is_a_one_line_error(
    cls: type[Lights], bounds: FaultBounds, message: str
) -> None:
    with pytest.raises(LeadercheckError, match=message) as caught:
        cls(2, bounds)
    assert "\n" not in str(caught.value)


# -- the store crashes and restarts ------------------------------------------------


class DurableStore(LeaseModel):
    """lease-fencing whose store may crash; like etcd with its WAL it keeps everything."""

    fault_kinds = (STORE_CRASH,)


class VolatileStore(DurableStore):
    """An in-memory store: a restart forgets the lease and the token counter."""

    def restart_store(self, store: Store) -> Store:
        return Store()


def fencing(cls: type[LeaseModel], **faults: int) -> LeaseModel:
    """A small lease-fencing instance (2 nodes, ttl 1, 2 tokens) with these fault budgets."""
    entry = ProtocolEntry(
        "lease-store-crash",
        "lease-fencing whose store may crash",
        (*lease_params(crashes=0, partitions=0, losses=0, pauses=0), STORE_CRASH.param()),
        lambda nodes, ttl, tokens, **f: cls(nodes, ttl, tokens, True, FaultBounds.of(**f)),
    )
    given = {"nodes": "2", "ttl": "1", "tokens": "2", **{k: str(v) for k, v in faults.items()}}
    model = entry.build(entry.resolve(given))
    assert isinstance(model, LeaseModel)
    return model


CLAIMS = (single_leader, no_stale_write, write_accepted)


def test_while_the_store_is_down_no_node_reaches_it_and_time_goes_on() -> None:
    model = fencing(DurableStore)
    start = model.initial_states()[0]
    (crash,) = [(a, after) for a, after in model.successors(start) if a.actor == STORE]
    action, down = crash
    assert (action.name, action.kind, action.fairness) == ("crash", FAULT, None)
    assert not any(down.net.reaches_store(i) for i in model.ids)
    moves = {a.name: (a, after) for a, after in model.successors(down)}
    assert "acquire" not in moves and "tick" in moves
    restart, up = moves["restart"]  # free: no store crash is left in the budget, yet it is there
    assert restart.kind == RECOVERY and up.net.reaches_store(1) and up.faults.extra == (0,)
    assert model.summary(down)[STORE] == "DOWN (lease free)"
    assert model.describe(down)[STORE]["down"] is True
    assert model.summary(start)[STORE] == "lease free"
    assert "down" not in model.describe(start)[STORE]
    assert model.permute(down, (1, 0)).net.store_down  # renaming the nodes keeps it down


def test_a_durable_store_keeps_the_lease_safe_across_its_crash() -> None:
    model = fencing(DurableStore, **{"store-crashes": 1, "pauses": 1})
    result = check(model, CLAIMS)
    assert [r.verdict for r in result.results] == [Verdict.HOLDS] * 3
    assert result.stats.distinct_states == 552
    unopened = fencing(DurableStore, **{"store-crashes": 0, "pauses": 1})
    plain = LeaseModel(2, 1, 2, True, FaultBounds(pauses=1))
    assert (
        check(unopened, CLAIMS).stats.distinct_states == check(plain, CLAIMS).stats.distinct_states
    )


def test_a_volatile_store_that_forgets_its_tokens_makes_two_leaders_of_one_epoch() -> None:
    """Tokens start again at 1, so n2 leads under the token n1 still holds. The storage
    rejects only lower tokens: both leaders' writes carry token 1 and are accepted. One
    leader per epoch breaks, and so does no-stale-write: it is judged by which leadership
    made each write, and n1's late token-1 write comes from the older one."""
    model = fencing(VolatileStore, **{"store-crashes": 1, "pauses": 1})
    result = check(model, CLAIMS)
    broken = result.result("single-leader")
    assert broken.verdict is Verdict.VIOLATED and broken.trace is not None
    assert [(a.actor, a.name) for a in broken.trace.actions] == [
        ("n1", "acquire"),
        (STORE, "crash"),
        (STORE, "restart"),
        ("n2", "acquire"),
    ]
    assert broken.trace.actions[2].kind == RECOVERY
    assert str(broken.trace.actions[2]) == "store: restart (state not kept, now: lease free)"
    stale = result.result("no-stale-write")
    assert stale.verdict is Verdict.VIOLATED and stale.trace is not None
    assert [(a.actor, a.name) for a in stale.trace.actions] == [
        ("n1", "acquire"),
        ("n1", "check"),
        (STORE, "crash"),
        (STORE, "restart"),
        ("n2", "acquire"),
        ("n2", "check"),
        ("n2", "write"),
        ("n1", "write"),  # token 1, accepted: the storage cannot tell the two leaderships apart
    ]
    assert str(stale.trace.actions[-1]) == "n1 -> storage: write (token 1 accepted)"
    assert "#2, under token 1 handed out twice" in stale.reason
    view = stale.trace.last.view
    assert view["storage"]["latest_leadership_written"] == 2 and view["storage"]["hi_epoch"] == 1


def test_the_store_crash_keeps_the_leases_local_moves_local() -> None:
    model = fencing(DurableStore, **{"store-crashes": 1, "crashes": 1, "partitions": 1})
    view = lambda s: tuple(p.predicate(s) for p in CLAIMS)  # noqa: E731
    declared, problems = check_declarations(model, view)
    assert problems == []
    assert set(declared) >= {"restart", "heal"}
