"""Paxos Commit as a plain breadth-first search over integers and bitmasks: the floor a
user model's search is measured against (`verify bench --user-model`).

The same specification as paxos_commit.py (the TLA+ Examples' PaxosCommit.tla), written the
way a Python programmer writes a one-off search to be fast: a state is one int (2 bits per
RM's state, 6 per acceptor and instance, then one bit per message that may ever be sent),
the visited set a set of ints, each action a few precomputed masks. No checker, no claims,
no traces: only the count. Run as a program:

    python -m leadercheck.checker.app.benchmarks.paxos_plain RMS ACCEPTORS BALLOTS

prints `distinct generated depth` (TLC: 1321761 distinct, 28 deep counting the initial
state as 1, for 2 3 2). paxos_commit.py, run the same way, runs the same loop over the user
model's own states and code, to tell the model's cost from the checker's.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from itertools import combinations
from typing import Any

WORKING, PREPARED, COMMITTED, ABORTED = 0, 1, 2, 3
NONE, V_PREPARED, V_ABORTED = 0, 1, 2
ACC_BITS = 6  # mbal (2 bits), bal + 1 (2), val (2)


class Layout:
    """Where each field and each possible message sits in a state's int."""

    def __init__(self, rms: int, acceptors: int, ballots: int) -> None:
        self.rms, self.acceptors, self.ballots = range(rms), range(acceptors), range(ballots)
        self.acc_base = 2 * rms
        bit = self.acc_base + ACC_BITS * rms * acceptors
        self.msg: dict[tuple[object, ...], int] = {}

        def add(key: tuple[object, ...]) -> None:
            nonlocal bit
            self.msg[key] = 1 << bit
            bit += 1

        for r in self.rms:
            for b in self.ballots:
                if b:
                    add(("1a", r, b))
                    for a in self.acceptors:
                        for pb in range(-1, ballots):
                            for v in (NONE, V_PREPARED, V_ABORTED):
                                add(("1b", r, b, pb, v, a))
                for v in (V_PREPARED, V_ABORTED):
                    add(("2a", r, b, v))
                    for a in self.acceptors:
                        add(("2b", r, b, v, a))
        add(("Commit",))
        add(("Abort",))
        size = acceptors // 2 + 1
        self.majorities = list(combinations(self.acceptors, size))
        # Decided(r, v): some ballot's phase 2b messages from some majority, as masks
        self.decided = {
            (r, v): [
                sum(self.msg[("2b", r, b, v, a)] for a in ms)
                for b in self.ballots
                for ms in self.majorities
            ]
            for r in self.rms
            for v in (V_PREPARED, V_ABORTED)
        }

    def acc_shift(self, r: int, a: int) -> int:
        return self.acc_base + ACC_BITS * (r * len(self.acceptors) + a)


def successors(s: int, lay: Layout) -> list[int]:
    out = []
    msg = lay.msg
    commit, abort = msg[("Commit",)], msg[("Abort",)]
    for r in lay.rms:
        st = s >> (2 * r) & 3
        clear = s & ~(3 << (2 * r))
        if st == WORKING:
            out.append(clear | PREPARED << (2 * r) | msg[("2a", r, 0, V_PREPARED)])
            out.append(clear | ABORTED << (2 * r) | msg[("2a", r, 0, V_ABORTED)])
        if s & commit:
            out.append(clear | COMMITTED << (2 * r))
        if s & abort:
            out.append(clear | ABORTED << (2 * r))
    for b in lay.ballots:
        if not b:
            continue
        for r in lay.rms:
            out.append(s | msg[("1a", r, b)])
            if s & msg[("2a", r, b, V_PREPARED)] or s & msg[("2a", r, b, V_ABORTED)]:
                continue
            for ms in lay.majorities:
                top, val, ok = -1, V_ABORTED, True
                for a in ms:
                    found = False
                    for pb in range(-1, len(lay.ballots)):
                        for v in (NONE, V_PREPARED, V_ABORTED):
                            if s & msg[("1b", r, b, pb, v, a)]:
                                found = True
                                if pb > top:
                                    top, val = pb, v
                    if not found:
                        ok = False
                        break
                if ok:
                    out.append(s | msg[("2a", r, b, val)])
    if all(any(s & m == m for m in lay.decided[(r, V_PREPARED)]) for r in lay.rms):
        out.append(s | commit)
    if any(any(s & m == m for m in lay.decided[(r, V_ABORTED)]) for r in lay.rms):
        out.append(s | abort)
    for a in lay.acceptors:
        for r in lay.rms:  # phase 1b: a phase 1a message of a higher ballot
            sh = lay.acc_shift(r, a)
            mine = s >> sh & 63
            mbal, bal, val = mine & 3, (mine >> 2 & 3) - 1, mine >> 4
            for b in lay.ballots:
                if b and mbal < b and s & msg[("1a", r, b)]:
                    now = (s & ~(63 << sh)) | (b | (bal + 1) << 2 | val << 4) << sh
                    out.append(now | msg[("1b", r, b, bal, val, a)])
        for r in lay.rms:  # phase 2b: a phase 2a message of this ballot or higher
            sh = lay.acc_shift(r, a)
            mbal = s >> sh & 3
            for b in lay.ballots:
                for v in (V_PREPARED, V_ABORTED):
                    if mbal <= b and s & msg[("2a", r, b, v)]:
                        now = (s & ~(63 << sh)) | (b | (b + 1) << 2 | v << 4) << sh
                        out.append(now | msg[("2b", r, b, v, a)])
    return out


def bfs(
    initial: Sequence[Any], next_states: Callable[[Any], Iterable[Any]]
) -> tuple[int, int, int]:
    """(distinct states, generated states, depth) of a breadth-first search keeping every
    state whole in a set: the loop a programmer writes, and nothing else."""
    seen = set(initial)
    level, generated, depth = list(seen), len(initial), 0
    while level:
        nxt = []
        for s in level:
            for t in next_states(s):
                generated += 1
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        if nxt:
            depth += 1
        level = nxt
    return len(seen), generated, depth


def search(rms: int, acceptors: int, ballots: int) -> tuple[int, int, int]:
    """The plain search of Paxos Commit on ints: every RM working; every acceptor at mbal
    0, bal -1 (stored 0), val none; no message: the int 0."""
    lay = Layout(rms, acceptors, ballots)
    return bfs([0], lambda s: successors(s, lay))


def sizes(argv: list[str], program: str) -> tuple[int, int, int] | None:
    """RMS ACCEPTORS BALLOTS from the command line; None (after the usage) if they are not."""
    if len(argv) != 3 or not all(x.isdigit() for x in argv):
        print(f"usage: {program} RMS ACCEPTORS BALLOTS", file=sys.stderr)
        return None
    rms, acceptors, ballots = (int(x) for x in argv)
    return rms, acceptors, ballots


def main(argv: list[str]) -> int:
    size = sizes(argv, "paxos_plain.py")
    if size is None:
        return 2
    print(*search(*size))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
