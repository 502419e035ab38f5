"""Redlock: a lock held by a majority of five independent Redis masters.

The algorithm (antirez): to take the lock, a client sends SET key NX PX ttl to each of
five masters in turn; a master says OK only if its key is free or has expired. With OKs
from a majority (3 of 5) the client holds the lock for what is left of the TTL, less a
margin for clock drift: validity = ttl - ticks spent acquiring - drift. A client that
fails unlocks every master. A holder checks that its lock is still valid, then writes to
the storage; it releases the lock or lets it expire. There are no fencing tokens: each
lock draws a ghost epoch, carried on its writes only so that no-stale-write can be
judged, and single-leader means one holder at any instant.

Safety rests on timing (Kleppmann, "How to do distributed locking", 2016). A master's
clock jumps ahead and its key expires early: n1 holds A, B and C; C's clock jumps; n2
takes C, D and E; both hold the lock. Or a client pauses (GC) between its check and its
write: its lock expires, the other client takes it and writes, and the late write lands
after that one. Faults: client pauses and master clock jumps (a kind declared here). An
attempt's SETs take no time unless the client pauses: network delays are well under a tick.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import NamedTuple

from leadercheck.checker import Action, sometimes
from leadercheck.models.cluster import ClusterModel, ClusterState, FaultBounds, FaultKind, Successor
from leadercheck.models.cluster.nodes import STORAGE, node_name
from leadercheck.models.cluster.storage import leadership_note
from leadercheck.models.params import Param, ProtocolEntry

MASTERS = "ABCDE"
MAJORITY = 3
CLOCK_JUMP = FaultKind("clock-jumps", "a master's clock jumps ahead: its key expires at once")


class Key(NamedTuple):
    """The lock's key on one master."""

    owner: int = 0  # the client whose SET made it; 0: free
    left: int = 0  # ticks before it expires (the PX of that SET)


Keys = tuple[Key, ...]


class Client(NamedTuple):
    up: bool = True
    paused: bool = False
    asked: int = 0  # masters asked so far in the attempt under way; 0: not acquiring
    oks: int = 0  # how many of them said OK
    elapsed: int = 0  # ticks since the attempt began
    validity: int = 0  # ticks left of the lock it believes it holds; 0: none
    ghost: int = 0  # ghost epoch of that lock, carried on its write
    checked: bool = False  # it saw its lock valid and is sending its write

    @property
    def is_leader(self) -> bool:
        return self.validity > 0

    @property
    def role(self) -> str:
        return "leader" if self.is_leader else "follower"

    @property
    def epoch(self) -> None:
        return None  # no fencing tokens, so no epochs

    @property
    def tenure(self) -> int:
        return self.ghost if self.is_leader else 0

    def describe(self) -> dict[str, object]:
        # the role in Redlock's own words (the chart's bars follow `is_leader`)
        role = "holds the lock" if self.is_leader else "acquiring" if self.asked else "no lock"
        pending = self.ghost if self.checked else 0  # a write decided, under this leadership
        return {**self._asdict(), "role": role, "pending_write_leadership": pending}

    def summary(self) -> str:
        if self.asked:
            text = f"acquiring, {self.oks} of {self.asked} OK"
        else:
            text = f"holds the lock, validity {self.validity}" if self.validity else "no lock"
        text += ", writing" if self.checked else ""
        return f"paused, {text}" if self.paused else text


def unlocked(keys: Keys, i: int) -> Keys:
    """Every key client i set, deleted (DEL when the key still holds its value)."""
    return tuple(Key() if k.owner == i else k for k in keys)


class Redlock(ClusterModel):
    """Two clients take the lock from a majority of five masters, then write to the storage."""

    uses_store = False  # no etcd: the masters' keys are `extra`, a tuple of five Keys
    uses_ghost = True
    fault_kinds = (CLOCK_JUMP,)

    def __init__(self, ttl: int, drift: int, locks: int, faults: FaultBounds) -> None:
        super().__init__(2, faults)
        self.ttl, self.drift, self.locks = ttl, drift, locks

    def initial_node(self, i: int) -> Client:
        return Client()

    def initial_extra(self) -> dict[str, object]:
        return {"extra": (Key(),) * len(MASTERS)}

    def node_steps(self, s: ClusterState, i: int) -> Iterator[Successor]:
        """Ask the next master (a new attempt only while fewer than `locks` were granted);
        as holder, check then write, or release."""
        c: Client = s.node(i)
        name = node_name(i)
        if c.asked or (not c.validity and not c.checked and s.ghost < self.locks):
            yield self.set_nx(s, i, c)
        if c.validity and not c.checked:
            note = f"validity {c.validity}: still holds the lock"
            yield Action("check", name, None, note), s.with_node(i, c._replace(checked=True))
            released = s.with_node(i, Client())._replace(extra=unlocked(s.extra, i))
            yield Action("release", name, None, "DEL on every master"), released
        if c.checked:
            storage, _ = s.storage.write(c.ghost, fencing=False)
            done = c._replace(checked=False, ghost=c.ghost if c.validity else 0)
            after = s.with_node(i, done)._replace(storage=storage)
            yield Action("write", name, STORAGE, leadership_note(c.ghost)), after

    def set_nx(self, s: ClusterState, i: int, c: Client) -> Successor:
        """SET NX PX on the next master; after the last one, the client counts its OKs."""
        keys: Keys = s.extra
        m = c.asked
        ok = keys[m].owner == 0
        note = "OK" if ok else f"refused: taken by {node_name(keys[m].owner)}"
        if ok:
            keys = keys[:m] + (Key(i, self.ttl),) + keys[m + 1 :]
        c = c._replace(asked=m + 1, oks=c.oks + ok)
        if c.asked == len(MASTERS):
            validity = self.ttl - c.elapsed - self.drift
            if c.oks >= MAJORITY and validity > 0:
                note += f"; {c.oks} of 5 OK: the lock is held, validity {validity}"
                c = Client(validity=validity, ghost=s.ghost + 1)
                s = s._replace(ghost=c.ghost)
            else:
                note += f"; {c.oks} of 5 OK, validity {validity}: failed, unlocks every master"
                c, keys = Client(), unlocked(keys, i)
        action = Action("SET NX", node_name(i), MASTERS[m], note)
        return action, s.with_node(i, c)._replace(extra=keys)

    def urgent(self, s: ClusterState, i: int) -> bool:
        """A running client finishes its attempt and sends its checked write within a tick."""
        c: Client = s.node(i)
        return c.checked or c.asked > 0

    def tick_node(self, c: Client) -> Client:
        validity = max(c.validity - 1, 0)
        elapsed = min(c.elapsed + 1, self.ttl) if c.asked else 0
        ghost = c.ghost if validity or c.checked else 0
        return c._replace(validity=validity, elapsed=elapsed, ghost=ghost)

    def tick_extra(self, s: ClusterState) -> tuple[Keys, str]:
        expiring = "".join(m for m, k in zip(MASTERS, s.extra, strict=True) if k.left == 1)
        keys = tuple(Key(k.owner, k.left - 1) if k.left > 1 else Key() for k in s.extra)
        return keys, f"keys expire on {', '.join(expiring)}" if expiring else ""

    def fault_steps(self, s: ClusterState, kind: FaultKind) -> Iterator[Successor]:
        """A clock jump on a master whose key is set: the key expires at once."""
        for m, key in enumerate(s.extra):
            if key.owner:
                keys = s.extra[:m] + (Key(),) + s.extra[m + 1 :]
                note = f"{node_name(key.owner)}'s key expires at once"
                yield Action("clock jump", MASTERS[m], None, note), s._replace(extra=keys)

    def describe(self, s: ClusterState) -> Mapping[str, Mapping[str, object]]:
        view = dict(super().describe(s))
        for name, key in zip(MASTERS, s.extra, strict=True):
            view[name] = {"owner": node_name(key.owner) if key.owner else None, "left": key.left}
        return view

    def summary(self, s: ClusterState) -> Mapping[str, str]:
        lines = {node_name(i): c.summary() for i, c in enumerate(s.nodes, start=1)}
        for name, key in zip(MASTERS, s.extra, strict=True):
            lines[name] = f"{node_name(key.owner)}, {key.left} left" if key.owner else "free"
        lines[STORAGE] = s.storage.summary()
        return lines


def build(ttl: int, drift: int, locks: int, **faults: int) -> Redlock:
    return Redlock(ttl, drift, locks, FaultBounds.of(**faults))


def params(pauses: int, clock_jumps: int) -> tuple[Param, ...]:
    """The parameters, with these fault budgets by default."""
    return (
        Param("ttl", 2, 1, 4, "the lock's TTL in ticks (the PX of each SET)"),
        Param("drift", 1, 0, 2, "ticks held back for clock drift when computing validity"),
        Param("locks", 2, 1, 3, "clients stop trying once this many locks are granted"),
        Param("pauses", pauses, 0, 2, "client pauses (GC): a client stops while time passes"),
        CLOCK_JUMP.param(default=clock_jumps),
    )


PROTOCOLS = (
    ProtocolEntry("redlock", "Redlock with client pauses and clock jumps", params(1, 1), build),
    ProtocolEntry("redlock-gc-pause", "Redlock with client pauses only", params(1, 0), build),
    ProtocolEntry("redlock-timing-ok", "Redlock while timing stays in bounds", params(0, 0), build),
)

lock_acquired = sometimes(
    "lock-acquired",
    lambda s: any(c.is_leader for c in s.nodes),
    "some client takes the lock from a majority of the masters",
)

PROPERTIES = (lock_acquired,)

EXPECTED = {
    "redlock": {
        "single-leader": {"verdict": "VIOLATED", "max_steps": 11},
        "no-stale-write": {"verdict": "VIOLATED", "max_steps": 15},
        "lock-acquired": "HOLDS",
    },
    "redlock-gc-pause": {
        "single-leader": "HOLDS",
        "no-stale-write": {"verdict": "VIOLATED", "max_steps": 18},
        "lock-acquired": "HOLDS",
    },
    "redlock-timing-ok": dict.fromkeys(
        ("single-leader", "no-stale-write", "lock-acquired", "write-accepted", "failover"), "HOLDS"
    ),
}
