"""Random walks from the initial states (simulation), as TLC's -simulate and Stateright's
simulation checker take them.

Walk number i draws from its own generator, seeded by (seed, i), so it is the same walk
whichever worker runs it and whatever ran before: a swarm of K workers gives worker j
the walks j, j + K, j + 2K, ..., each worker in its own style (a walk length, weights on
the kinds of action), and the first walk, by number, that decides a claim is the same
in every run of the same command. Claims are checked on each state the worker has not
met before (a state's claims do not change), so repeats cost a hash and nothing more.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from random import Random
from time import monotonic
from typing import Any

from leadercheck.checker.engine.interrupts import from_model
from leadercheck.checker.engine.observers import ClaimRaised
from leadercheck.checker.engine.store import FP_MASK
from leadercheck.checker.engine.strategies.processes.partitioned import WorkerSetup
from leadercheck.checker.engine.strategies.sampling.report import SampledWorker, WorkerReport
from leadercheck.checker.model import FAULT, RECOVERY, STEP, TICK


@dataclass(frozen=True)
class WalkStyle:
    """How one worker of a swarm walks: a share of the walk length, and weights on the
    kinds of action (uniform among the enabled actions when there are none)."""

    depth_share: float
    weights: tuple[tuple[str, float], ...] = ()

    def describe(self) -> str:
        words = [f"{self.depth_share:g}x depth"]
        words += [f"{PLURAL.get(kind, kind)} x{weight:g}" for kind, weight in self.weights]
        return ", ".join(words)


# Worker j of a swarm walks in STYLES[j % len(STYLES)]; a lone simulation in the first.
# Short walks come second: a violation in a small cluster tends to be shallow, and more
# walks a second start it from more places (measured on raft at five nodes, README).
STYLES = (
    WalkStyle(1.0),  # uniform, whole walks: the plain simulation
    WalkStyle(0.25),  # very short walks: shallow states often
    WalkStyle(0.5, ((FAULT, 0.25), (RECOVERY, 0.25))),  # few faults
    WalkStyle(1.0, ((STEP, 3.0),)),  # the protocol's own steps first
    WalkStyle(0.5, ((FAULT, 3.0), (RECOVERY, 2.0))),  # many faults
    WalkStyle(1.0, ((TICK, 0.25),)),  # time passes slowly
)
PLURAL = {STEP: "steps", FAULT: "faults", RECOVERY: "recoveries", TICK: "ticks"}


def style_of(worker: int) -> WalkStyle:
    return STYLES[worker % len(STYLES)]


def walk_random(seed: int, walk: int) -> Random:
    """Walk number `walk`'s own generator (a string seed is hashed by SHA-512, the same in
    every process and under every PYTHONHASHSEED)."""
    return Random(f"leadercheck-walk:{seed}:{walk}")


class WalkWorker(SampledWorker):
    """Runs walks index, index + K, ... of one simulation; built in its process."""

    def __init__(self, setup: WorkerSetup, index: int) -> None:
        super().__init__(setup, index)
        sampling = self.options.sampling
        self.workers = setup.workers
        self.seed = sampling.seed
        self.style = style_of(index)
        self.depth = max(1, round(sampling.depth * self.style.depth_share))
        self.weights: Mapping[str, float] | None = dict(self.style.weights) or None
        self.first_violation = self.options.first_violation  # shared by the swarm, or None
        self.seen: set[int] = set()
        self.next_walk = index  # the number of the next walk this worker runs
        self.walks = self.steps = self.generated = self.deepest = 0
        self.stopped = False  # a violation (or a failure) ends this worker's walks
        self.exhausted = False  # its walks up to the walk budget are done

    def round(
        self, count: int, limit: int | None, deadline: float | None, cutoffs: Mapping[str, int]
    ) -> WorkerReport:
        """Run up to `count` more walks, numbered below `limit`, until `deadline`
        (time.monotonic()); a claim in `cutoffs` is no longer checked from that walk on
        (another worker decided it there, and only the first decision counts)."""
        for _ in range(count):
            number = self.next_walk
            if limit is not None and number >= limit:
                self.exhausted = True
            if self.stopped or self.exhausted:
                break
            if deadline is not None and monotonic() >= deadline:
                break
            first = self.first_violation
            if first is not None and number > first.value:
                break  # another worker broke an invariant in an earlier walk: it wins
            late = [name for name, at in cutoffs.items() if at <= number]
            if late:
                self.claims.drop(late)
            self._walk(number, deadline)
            self.next_walk += self.workers
            self.walks += 1
        return self.report()

    def report(self) -> WorkerReport:
        return self.figures(
            walks=self.walks,
            steps=self.steps,
            generated=self.generated,
            distinct=len(self.seen),
            deepest=self.deepest,
            finished=self.stopped or self.exhausted,
            cut=False,
            bits_set=0,
        )

    def fingerprints(self) -> list[int]:
        """The fingerprints of the states met, for the coordinator's count of the union."""
        return list(self.seen)

    # -- one walk -----------------------------------------------------------

    def _walk(self, number: int, deadline: float | None = None) -> None:
        rng = walk_random(self.seed, number)
        initial = self.initial
        start = rng.randrange(len(initial)) if len(initial) > 1 else 0
        state = initial[start]
        moves = [start]
        self.generated += 1
        try:
            if self._new(state, hash(state) & FP_MASK, number, moves):
                return
            next_states, successors = self.model.next_states, self.model.successors
            weights, randrange = self.weights, rng.randrange
            seen = self.seen
            for taken in range(self.depth):
                if taken & 4095 == 4095 and deadline is not None and monotonic() >= deadline:
                    return  # a very long walk: the time budget ends it
                before = hash(state)  # every state checked: expanding it changes nothing
                if weights is None:
                    succs = list(next_states(state))
                    count = len(succs)
                else:
                    pairs = list(successors(state))
                    count = len(pairs)
                if hash(state) != before:
                    self.values.unchanged(state, before)
                if not count:
                    break
                if weights is None:
                    move = randrange(count)
                    state = succs[move]
                else:
                    odds = [weights.get(action.kind, 1.0) for action, _ in pairs]
                    move = rng.choices(range(count), odds)[0]
                    state = pairs[move][1]
                self.generated += count
                self.steps += 1
                moves.append(move)
                fp = hash(state) & FP_MASK
                if fp not in seen and self._new(state, fp, number, moves):
                    return
        except ClaimRaised as exc:
            self.failed(exc.name, exc.error, moves)
            self.stopped = True
        except BaseException as exc:  # model code: reported with the trace that led to it
            if not from_model(exc):
                raise  # the user's Ctrl-C (worker 0 runs in the coordinator's process)
            self.failed("successors", exc, moves)
            self.stopped = True
        finally:
            self.deepest = max(self.deepest, len(moves) - 1)

    def _new(self, state: Any, fp: int, number: int, moves: list[int]) -> bool:
        """Remember `state`, whose fingerprint is `fp`, and check the pending claims on it if
        it is new; True when it breaks an invariant (the walks stop at the first violation)."""
        if fp in self.seen:
            return False
        self.seen.add(fp)
        if not self.decide(state, (number,), moves):
            return False
        self.stopped = True
        first = self.first_violation
        if first is not None:
            with first.get_lock():
                first.value = min(first.value, number)
        return True
