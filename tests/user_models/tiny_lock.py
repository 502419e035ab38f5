"""A user's protocol module, as `verify --model` loads it: a lock two processes share.

`tiny-lock` takes the lock with one atomic test-and-set; `tiny-lock-racy` tests and sets in
two steps, so both processes can see it free and both enter (mutual exclusion breaks in 4
steps). Written against the public API only, as a user would.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from leadercheck.checker import Action, Model, always, sometimes
from leadercheck.models.params import Measure, Param, ProtocolEntry

IDLE, SAW_FREE, INSIDE = "idle", "saw-free", "inside"


class LockState(NamedTuple):
    holder: int  # 0: the lock is free
    procs: tuple[str, ...]  # each process's phase


class TinyLock(Model[LockState]):
    def __init__(self, procs: int, atomic: bool) -> None:
        self.n = procs
        self.atomic = atomic

    def initial_states(self) -> list[LockState]:
        return [LockState(0, (IDLE,) * self.n)]

    def successors(self, s: LockState) -> Iterator[tuple[Action, LockState]]:
        for i, phase in enumerate(s.procs, start=1):
            name = f"p{i}"
            if phase == IDLE and self.atomic and s.holder == 0:
                yield Action("test-and-set", name, "lock"), self._to(s, i, INSIDE, i)
            elif phase == IDLE and not self.atomic and s.holder == 0:
                yield Action("test", name, "lock", "sees it free"), self._to(s, i, SAW_FREE)
            elif phase == SAW_FREE:
                yield Action("set", name, "lock"), self._to(s, i, INSIDE, i)
            elif phase == INSIDE:
                yield Action("release", name, "lock"), self._to(s, i, IDLE, 0)

    def _to(self, s: LockState, i: int, phase: str, holder: int | None = None) -> LockState:
        procs = s.procs[: i - 1] + (phase,) + s.procs[i:]
        return LockState(s.holder if holder is None else holder, procs)

    def describe(self, s: LockState) -> dict[str, dict[str, object]]:
        view: dict[str, dict[str, object]] = {"lock": {"holder": s.holder}}
        for i, phase in enumerate(s.procs, start=1):
            view[f"p{i}"] = {"phase": phase}
        return view

    def summary(self, s: LockState) -> dict[str, str]:
        lines = {f"p{i}": phase for i, phase in enumerate(s.procs, start=1)}
        lines["lock"] = f"held by p{s.holder}" if s.holder else "free"
        return lines


def _inside(s: LockState) -> list[int]:
    return [i for i, phase in enumerate(s.procs, start=1) if phase == INSIDE]


mutual_exclusion = always(
    "mutual-exclusion",
    lambda s: len(_inside(s)) <= 1,
    "at most one process is inside",
    lambda s: " and ".join(f"p{i}" for i in _inside(s)) + " are both inside",
)
entered = sometimes("entered", lambda s: bool(_inside(s)), "some process gets in")

PROCS = Param("procs", 2, 2, 4, "processes sharing the lock")
PROTOCOLS = (
    ProtocolEntry(
        "tiny-lock",
        "an atomic test-and-set lock",
        (PROCS,),
        lambda procs: TinyLock(procs, atomic=True),
        (
            Measure(
                "processes inside, over every reachable state",
                "procs",
                (2, 3),
                lambda procs: TinyLock(procs, atomic=True),
                lambda s: len(_inside(s)),
                lambda s: True,
            ),
        ),
    ),
    ProtocolEntry(
        "tiny-lock-racy",
        "test, then set: two processes can both see the lock free",
        (PROCS,),
        lambda procs: TinyLock(procs, atomic=False),
    ),
)
PROPERTIES = (mutual_exclusion, entered)
EXPECTED = {
    "tiny-lock": {"mutual-exclusion": "HOLDS", "entered": "HOLDS"},
    "tiny-lock-racy": {
        "mutual-exclusion": {"verdict": "VIOLATED", "max_steps": 4},
        "entered": "HOLDS",
    },
}
