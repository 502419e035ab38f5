"""Paxos Commit (Gray and Lamport) as a user writes it for `verify --model`: the benchmark of
a user model's per-state cost (`verify bench --user-model`).

It follows the TLA+ specification in the TLA+ Examples (specifications/transaction_commit/
PaxosCommit.tla), action for action, with states as a user would write them: tuples of
strings, named tuples, and the set of messages ever sent as a frozenset. Resource managers
(RMs) prepare or abort on their own; each RM's decision is chosen by its own instance of
Paxos among the acceptors, with leaders starting ballots and proposing. With 2 RMs, 3
acceptors, majorities of 2 and ballots {0, 1}, TLC finds 1,321,761 distinct states, 28
deep (the Examples' manifest); this model must find the same. Written against the public
API only: nothing here knows how the search works.

`paxos-commit-bits` is the same protocol as the plain search of paxos_plain.py runs it,
states as ints and actions as masks, behind the same API: its successors are that
program's, so `verify` on it against the program alone is the checker's own cost a state.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any, NamedTuple

from leadercheck.checker import Action, Model, always, sometimes
from leadercheck.checker.app.benchmarks import paxos_plain as bits
from leadercheck.models.params import Param, ProtocolEntry

WORKING, PREPARED, COMMITTED, ABORTED, NONE = "working", "prepared", "committed", "aborted", "none"


class Msg(NamedTuple):
    """A message ever sent; fields a type does not have stay at their defaults."""

    type: str
    ins: int = -1  # the RM whose instance of Paxos it belongs to
    mbal: int = -1
    bal: int = -1
    val: str = ""
    acc: int = -1


class Acc(NamedTuple):
    """An acceptor's state in one instance."""

    mbal: int = 0
    bal: int = -1
    val: str = NONE


class PCState(NamedTuple):
    rm: tuple[str, ...]  # each RM's state
    acc: tuple[tuple[Acc, ...], ...]  # acc[ins][a]
    msgs: frozenset[Msg]


class PaxosCommit(Model[PCState]):
    def __init__(self, rms: int, acceptors: int, ballots: int) -> None:
        self.rms = range(rms)
        self.acceptors = range(acceptors)
        self.ballots = range(ballots)
        # every majority of the acceptors (any two intersect), as TLC's model lists them
        size = acceptors // 2 + 1
        self.majorities = [
            frozenset(a for a in self.acceptors if mask >> a & 1)
            for mask in range(1 << acceptors)
            if bin(mask).count("1") == size
        ]

    def initial_states(self) -> list[PCState]:
        a = tuple(tuple(Acc() for _ in self.acceptors) for _ in self.rms)
        return [PCState((WORKING,) * len(self.rms), a, frozenset())]

    def successors(self, s: PCState) -> Iterator[tuple[Action, PCState]]:
        for r in self.rms:
            name = f"rm{r + 1}"
            if s.rm[r] == WORKING:
                prepare = Msg("phase2a", ins=r, bal=0, val=PREPARED)
                yield Action("prepare", name), self._rm(s, r, PREPARED, prepare)
                abort = Msg("phase2a", ins=r, bal=0, val=ABORTED)
                yield Action("choose to abort", name), self._rm(s, r, ABORTED, abort)
            if Msg("Commit") in s.msgs:
                yield Action("receive Commit", name), self._rm(s, r, COMMITTED)
            if Msg("Abort") in s.msgs:
                yield Action("receive Abort", name), self._rm(s, r, ABORTED)
        for b in self.ballots:
            if b == 0:
                continue
            for r in self.rms:
                leader = f"leader of rm{r + 1}"
                yield (
                    Action("phase 1a", leader, note=f"ballot {b}"),
                    s._replace(msgs=s.msgs | {Msg("phase1a", ins=r, bal=b)}),
                )
                yield from self._phase2a(s, b, r, leader)
        yield from self._decide(s)
        for a in self.acceptors:
            yield from self._phase1b(s, a)
            yield from self._phase2b(s, a)

    def _rm(self, s: PCState, r: int, to: str, send: Msg | None = None) -> PCState:
        rm = s.rm[:r] + (to,) + s.rm[r + 1 :]
        return PCState(rm, s.acc, s.msgs if send is None else s.msgs | {send})

    def _phase2a(self, s: PCState, b: int, r: int, leader: str) -> Iterator[tuple[Action, PCState]]:
        if any(m.type == "phase2a" and m.bal == b and m.ins == r for m in s.msgs):
            return
        for majority in self.majorities:
            got = [
                m
                for m in s.msgs
                if m.type == "phase1b" and m.ins == r and m.mbal == b and m.acc in majority
            ]
            if {m.acc for m in got} != majority:
                continue
            top = max((m.bal for m in got), default=-1)
            val = ABORTED if top == -1 else next(m.val for m in got if m.bal == top)
            send = Msg("phase2a", ins=r, bal=b, val=val)
            yield (
                Action("phase 2a", leader, note=f"ballot {b}: {val}"),
                s._replace(msgs=s.msgs | {send}),
            )

    def _decided(self, s: PCState, r: int, val: str) -> bool:
        return any(
            all(Msg("phase2b", ins=r, bal=b, val=val, acc=a) in s.msgs for a in majority)
            for b in self.ballots
            for majority in self.majorities
        )

    def _decide(self, s: PCState) -> Iterator[tuple[Action, PCState]]:
        if all(self._decided(s, r, PREPARED) for r in self.rms):
            yield Action("decide Commit", "leader"), s._replace(msgs=s.msgs | {Msg("Commit")})
        if any(self._decided(s, r, ABORTED) for r in self.rms):
            yield Action("decide Abort", "leader"), s._replace(msgs=s.msgs | {Msg("Abort")})

    def _phase1b(self, s: PCState, a: int) -> Iterator[tuple[Action, PCState]]:
        for m in sorted(s.msgs):  # sorted: a frozenset's order changes from run to run
            if m.type != "phase1a":
                continue
            mine = s.acc[m.ins][a]
            if mine.mbal >= m.bal:
                continue
            acc = self._acc(s, m.ins, a, mine._replace(mbal=m.bal))
            reply = Msg("phase1b", ins=m.ins, mbal=m.bal, bal=mine.bal, val=mine.val, acc=a)
            yield Action("phase 1b", f"acceptor {a + 1}"), PCState(s.rm, acc, s.msgs | {reply})

    def _phase2b(self, s: PCState, a: int) -> Iterator[tuple[Action, PCState]]:
        for m in sorted(s.msgs):
            if m.type != "phase2a":
                continue
            mine = s.acc[m.ins][a]
            if mine.mbal > m.bal:
                continue
            acc = self._acc(s, m.ins, a, Acc(m.bal, m.bal, m.val))
            reply = Msg("phase2b", ins=m.ins, bal=m.bal, val=m.val, acc=a)
            yield Action("phase 2b", f"acceptor {a + 1}"), PCState(s.rm, acc, s.msgs | {reply})

    def _acc(self, s: PCState, ins: int, a: int, new: Acc) -> tuple[tuple[Acc, ...], ...]:
        row = s.acc[ins][:a] + (new,) + s.acc[ins][a + 1 :]
        return s.acc[:ins] + (row,) + s.acc[ins + 1 :]

    def summary(self, s: PCState) -> dict[str, str]:
        lines = {f"rm{r + 1}": s.rm[r] for r in self.rms}
        lines["msgs"] = f"{len(s.msgs)} sent"
        return lines


RM_NAMES = {
    bits.WORKING: WORKING,
    bits.PREPARED: PREPARED,
    bits.COMMITTED: COMMITTED,
    bits.ABORTED: ABORTED,
}


class PaxosCommitBits(Model[int]):
    """The same protocol on one int a state (paxos_plain.py's layout and successors)."""

    def __init__(self, rms: int, acceptors: int, ballots: int) -> None:
        self.layout = bits.Layout(rms, acceptors, ballots)
        self.names: dict[int, tuple[Any, ...]] = {m: k for k, m in self.layout.msg.items()}
        self.msg_base = min(self.names).bit_length() - 1  # the messages' bits start here

    def initial_states(self) -> list[int]:
        return [0]

    def next_states(self, s: int) -> list[int]:
        return bits.successors(s, self.layout)

    def successors(self, s: int) -> list[tuple[Action, int]]:
        return [(self._action(s, t), t) for t in bits.successors(s, self.layout)]

    def _action(self, s: int, t: int) -> Action:
        """The step from s to t, named by the message it sends or the RM it changes."""
        base = self.msg_base
        sent = (t & ~s) >> base << base
        sent &= -sent  # the lowest new bit: a step sends at most one message
        if sent not in self.names:  # no message: an RM received a decision
            changed = [r for r in self.layout.rms if (s ^ t) >> 2 * r & 3] or [0]
            r = changed[0]
            got = "Commit" if t >> 2 * r & 3 == bits.COMMITTED else "Abort"
            return Action(f"receive {got}", f"rm{r + 1}")
        key = self.names[sent]
        kind = key[0]
        if kind in ("Commit", "Abort"):
            return Action(f"decide {kind}", "leader")
        if kind == "2a" and key[2] == 0:
            name = "prepare" if key[3] == bits.V_PREPARED else "choose to abort"
            return Action(name, f"rm{key[1] + 1}")
        if kind in ("1a", "2a"):
            return Action(f"phase {kind}", f"leader of rm{key[1] + 1}", note=f"ballot {key[2]}")
        return Action(f"phase {kind}", f"acceptor {key[-1] + 1}")

    def rm_states(self, s: int) -> tuple[str, ...]:
        return tuple(RM_NAMES[s >> 2 * r & 3] for r in self.layout.rms)

    def summary(self, s: int) -> dict[str, str]:
        return {f"rm{r + 1}": state for r, state in enumerate(self.rm_states(s))}


def _rms(s: PCState | int, model: Model[Any]) -> tuple[str, ...]:
    """Each RM's state, of either model's states (the claims are the same for both)."""
    if isinstance(s, int):
        assert isinstance(model, PaxosCommitBits)
        return model.rm_states(s)
    return s.rm


def _consistent(s: PCState | int, model: Model[Any]) -> bool:
    rms = _rms(s, model)
    return not (ABORTED in rms and COMMITTED in rms)


consistent = always(
    "consistent",
    _consistent,
    "no RM commits while another aborts",
    lambda s, model: "one RM committed and another aborted",
    with_model=True,
)
committed = sometimes(
    "committed",
    lambda s, model: all(r == COMMITTED for r in _rms(s, model)),
    "every RM commits",
    with_model=True,
)

SIZE = (  # both protocols' parameters: the Examples' PaxosCommit.cfg by default
    Param("rms", 2, 1, 3, "resource managers"),
    Param("acceptors", 3, 1, 5, "acceptors (majorities of them decide)"),
    Param("ballots", 2, 1, 3, "ballot numbers 0 .. ballots-1"),
)
PROTOCOLS = (
    ProtocolEntry(
        "paxos-commit",
        "Paxos Commit (Gray and Lamport), as in the TLA+ Examples",
        SIZE,
        PaxosCommit,
    ),
    ProtocolEntry(
        "paxos-commit-bits",
        "the same, each state one int (the plain search's encoding, paxos_plain.py)",
        SIZE,
        PaxosCommitBits,
    ),
)
PROPERTIES = (consistent, committed)
EXPECTED = {
    "paxos-commit": {"consistent": "HOLDS", "committed": "HOLDS"},
    "paxos-commit-bits": {"consistent": "HOLDS", "committed": "HOLDS"},
}


def search_user_states(rms: int, acceptors: int, ballots: int) -> tuple[int, int, int]:
    """The plain program's loop (paxos_plain.py `bfs`) over this model's own states and
    code, with nothing around it: what the model costs without a checker."""
    model = PaxosCommit(rms, acceptors, ballots)
    return bits.bfs(model.initial_states(), model.next_states)


if __name__ == "__main__":  # the bare loop, for `verify bench --user-model`
    size = bits.sizes(sys.argv[1:], "paxos_commit.py")
    if size is None:
        sys.exit(2)
    print(*search_user_states(*size))
