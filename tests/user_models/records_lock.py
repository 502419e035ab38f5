"""A user's protocol whose states hold every kind of value a checkpoint encodes: a queue lock
over nested frozen dataclasses (with slots and without), a NamedTuple, an Enum, frozensets
of records and of strings, an optional field and bytes.

Processes join a queue, the head takes the lock when it is free, and leaves it after its
visit; each process counts its visits (at most `visits`) and the lock remembers every
(process, phase) it has seen. `records-lock` holds mutual exclusion; a waiting process
always gets in (a leads-to claim, judged on the fairness graph, whose classes are the
processes' names).
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import NamedTuple

from leadercheck.checker import Action, Model, always, leads_to, sometimes
from leadercheck.models.params import Param, ProtocolEntry


class Phase(enum.Enum):
    IDLE = "idle"
    WAITING = "waiting"
    INSIDE = "inside"


@dataclass(frozen=True, slots=True)
class Proc:
    phase: Phase
    visits: int


class Stamp(NamedTuple):
    who: int
    phase: Phase


@dataclass(frozen=True, slots=True)
class Lock:
    holder: int | None  # None: free
    queue: tuple[int, ...]
    seen: frozenset[Stamp]  # every (process, phase) the lock has seen


@dataclass(frozen=True)  # no slots: a __dict__, which the checkpoint rebuilds too
class World:
    procs: tuple[Proc, ...]
    lock: Lock
    names: frozenset[str]  # the processes that have been inside
    tag: bytes = b"v1"


class RecordsLock(Model[World]):
    def __init__(self, procs: int, visits: int) -> None:
        self.n, self.visits = procs, visits

    def initial_states(self) -> list[World]:
        idle = Proc(Phase.IDLE, 0)
        return [World((idle,) * self.n, Lock(None, (), frozenset()), frozenset())]

    def successors(self, s: World) -> Iterator[tuple[Action, World]]:
        lock = s.lock
        for i, proc in enumerate(s.procs, start=1):
            name = f"p{i}"
            if proc.phase is Phase.IDLE and proc.visits < self.visits:
                queued = replace(lock, queue=(*lock.queue, i))
                yield Action("join", name, "lock"), self._to(s, i, Phase.WAITING, queued)
            elif proc.phase is Phase.WAITING and lock.holder is None and lock.queue[0] == i:
                taken = replace(lock, holder=i, queue=lock.queue[1:])
                yield Action("enter", name, "lock"), self._to(s, i, Phase.INSIDE, taken)
            elif proc.phase is Phase.INSIDE:
                yield Action("leave", name, "lock"), self._to(s, i, Phase.IDLE, lock, holder=None)

    def _to(self, s: World, i: int, phase: Phase, lock: Lock, **change: object) -> World:
        proc = s.procs[i - 1]
        visits = proc.visits + (phase is Phase.IDLE)
        procs = (*s.procs[: i - 1], Proc(phase, visits), *s.procs[i:])
        lock = replace(lock, seen=lock.seen | {Stamp(i, phase)}, **change)  # type: ignore[arg-type]
        names = s.names | {f"p{i}"} if phase is Phase.INSIDE else s.names
        return World(procs, lock, names)

    def summary(self, s: World) -> dict[str, str]:
        lines = {f"p{i}": p.phase.value for i, p in enumerate(s.procs, start=1)}
        lines["lock"] = f"held by p{s.lock.holder}" if s.lock.holder else "free"
        return lines


def _inside(s: World) -> list[int]:
    return [i for i, p in enumerate(s.procs, start=1) if p.phase is Phase.INSIDE]


mutual_exclusion = always(
    "mutual-exclusion", lambda s: len(_inside(s)) <= 1, "at most one process is inside"
)
everyone_in = sometimes(
    "everyone-in", lambda s: len(s.names) == len(s.procs), "every process gets in"
)
waiting_gets_in = leads_to(
    "waiting-gets-in",
    lambda s: any(p.phase is Phase.WAITING for p in s.procs),
    lambda s: bool(_inside(s)),
    "a waiting process is followed by one inside",
)

PROTOCOLS = (
    ProtocolEntry(
        "records-lock",
        "a queue lock over records, enums and frozensets",
        (
            Param("procs", 3, 2, 4, "processes sharing the lock"),
            Param("visits", 2, 1, 3, "visits each process makes"),
        ),
        lambda procs, visits: RecordsLock(procs, visits),
    ),
)
PROPERTIES = (mutual_exclusion, everyone_in, waiting_gets_in)
EXPECTED = {
    "records-lock": {
        "mutual-exclusion": "HOLDS",
        "everyone-in": "HOLDS",
        "waiting-gets-in": "HOLDS",
    },
}
