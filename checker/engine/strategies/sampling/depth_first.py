"""Depth-first search over a Bloom filter of fixed size: bitstate hashing, Spin's supertrace.

Memory is the bit array plus the stack (each frame: a state and its successors still
to try), whatever the size of the state space; the price is that a new state whose bits
are all set already is taken for a visited one and skipped, with everything reachable
only through it. The search runs in rounds of a fixed number of expansions, so a swarm's
workers stop at the same points in every run: worker 0 tries successors in the model's
order, worker j > 0 in an order shuffled by its own generator, seeded by (seed, j).
"""

from __future__ import annotations

from random import Random
from typing import Any

from leadercheck.checker.engine.bits import BitArray
from leadercheck.checker.engine.interrupts import from_model
from leadercheck.checker.engine.observers import ClaimRaised
from leadercheck.checker.engine.strategies.processes.partitioned import WorkerSetup
from leadercheck.checker.engine.strategies.sampling.report import SampledWorker, WorkerReport


def order_random(seed: int, worker: int) -> Random | None:
    """Worker `worker`'s shuffler of successor orders (None: the model's own order)."""
    return None if worker == 0 else Random(f"leadercheck-order:{seed}:{worker}")


class BitstateWorker(SampledWorker):
    """One depth-first search with its own bit array; built in its process."""

    def __init__(self, setup: WorkerSetup, index: int) -> None:
        super().__init__(setup, index)
        sampling = self.options.sampling
        self.max_depth = self.options.max_depth
        self.bits = BitArray(sampling.memory, sampling.hashes)
        self.order = order_random(sampling.seed, index)
        # frames [state, its (move, successor) pairs still to try or None, next position]
        self.stack: list[list[Any]] = []
        self.path: list[int] = []  # the moves from the initial state to the top frame's state
        # (both are emptied and filled in place: `round` holds them)
        self.next_initial = 0
        self.rounds = self.distinct = self.expanded = self.generated = self.deepest = 0
        self.finished = False  # the search is over: explored, violated, or failed
        self.cut = False  # the depth bound kept a state unexpanded

    def round(self, expansions: int) -> WorkerReport:
        """Expand up to `expansions` more states (fewer if the search ends first)."""
        self.rounds += 1
        budget = expansions
        stack, path, add = self.stack, self.path, self.bits.add
        next_states, order, max_depth = self.model.next_states, self.order, self.max_depth
        try:
            while budget > 0 and not self.finished:
                if not stack:
                    self._next_initial()
                    continue
                frame = stack[-1]
                pairs = frame[1]
                if pairs is None:
                    if max_depth is not None and len(stack) > max_depth:
                        self.cut = True  # its successors lie past the depth bound
                        self._pop()
                        continue
                    budget -= 1
                    before = hash(frame[0])  # every state checked: expanding changes nothing
                    pairs = list(enumerate(next_states(frame[0])))
                    if hash(frame[0]) != before:
                        self.values.unchanged(frame[0], before)
                    self.expanded += 1
                    self.generated += len(pairs)
                    if order is not None:
                        order.shuffle(pairs)
                    frame[1] = pairs
                position, count = frame[2], len(pairs)
                while position < count:  # the next successor not in the bit array
                    move, succ = pairs[position]
                    position += 1
                    if add(succ):
                        break
                else:
                    self._pop()
                    continue
                frame[2] = position
                path.append(move)
                stack.append([succ, None, 0])
                self._arrived(succ)
        except ClaimRaised as exc:
            self._fail(exc.name, exc.error)
        except BaseException as exc:  # model code (its successors): reported with its trace
            if not from_model(exc):
                raise  # the user's Ctrl-C (worker 0 runs in the coordinator's process)
            self._fail("successors", exc)
        return self.report()

    def report(self) -> WorkerReport:
        return self.figures(
            walks=0,
            steps=self.expanded,
            generated=self.generated,
            distinct=self.distinct,
            deepest=self.deepest,
            finished=self.finished,
            cut=self.cut,
            bits_set=self.bits.set_bits,
        )

    def bit_array(self) -> bytes:
        """The bits, for the coordinator's union of a swarm's arrays."""
        return bytes(self.bits.data)

    # -- the stack ------------------------------------------------------------

    def _next_initial(self) -> None:
        if self.next_initial >= len(self.initial):
            self.finished = True
            return
        position = self.next_initial
        self.next_initial += 1
        self.generated += 1
        state = self.initial[position]
        if self.bits.add(state):
            self.path.append(position)
            self.stack.append([state, None, 0])
            self._arrived(state)

    def _pop(self) -> None:
        self.stack.pop()
        self.path.pop()

    def _arrived(self, state: Any) -> None:
        """A new state is on top of the stack: count it and check the pending claims."""
        self.distinct += 1
        depth = len(self.path) - 1
        if depth > self.deepest:
            self.deepest = depth
        if self.decide(state, (self.rounds, self.index), self.path):
            self.finished = True  # the search stops at the first violation

    def _fail(self, what: str, exc: BaseException) -> None:
        self.failed(what, exc, self.path)
        self.finished = True
