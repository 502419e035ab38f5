"""The reverse direction: random schedules run on the real system, the model as the oracle.

A schedule is drawn step by step (hypothesis): at each step, among the actions the model
enables in any state it may be in (and that the binding can make real), one is chosen
and performed for real. What the real system then shows (the call's outcome and the
facts) narrows the model's possible states to those reached by that action with exactly
those observations. If none is left, the real system did something the model cannot:
the observed history is not a path of the model. Hypothesis shrinks such a history
(fewer steps, earlier choices) by running the shorter schedules for real; the shortest
failing history seen is the one reported. A wall-clock budget bounds the whole search,
shrinking included.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

from leadercheck.checker.conform.anomaly import real_breaks
from leadercheck.checker.conform.bindings.base import Binding, reply_lost
from leadercheck.checker.conform.failures import talking_to
from leadercheck.checker.conform.guidance import DANGER, Guide
from leadercheck.checker.conform.harness import (
    NODE_FAULTS,
    Conformance,
    Entry,
    ModelStep,
    befall_member,
    begin,
    expected_facts,
    perform,
    read_beliefs,
    read_facts,
    settle,
    unsupported,
)
from leadercheck.checker.conform.world import Timing, World
from leadercheck.checker.engine.interrupts import real_interrupt
from leadercheck.checker.engine.replay import normalise
from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.model import TICK, Action, Model


class Divergence(Exception):
    """Raised inside a hypothesis example so that it shrinks the schedule."""


class Violation(Exception):
    """Raised inside a hypothesis example whose run broke a claim on the real system, so
    that it shrinks that schedule too (a failure of its own, apart from a divergence)."""


class _Stop(BaseException):
    """Ends hypothesis's run at once, from inside an example: Ctrl-C, the budget spent, or
    the real system failing. Not an Exception, so hypothesis neither shrinks nor replays
    it; it may still report it as FlakyStrategyDefinition (an example that stops before
    a draw an earlier one made), so the caller remembers that it stopped and why."""


@dataclass
class Walks:
    """What the random schedules found: how many ran, the shortest one that broke a claim
    on the real system (`violations`: the headline) and the shortest divergent one.

    `drawn` schedules were drawn before any broke a claim or diverged; after that every
    run is hypothesis shrinking it (`shrinks`). `partial` is the schedule a Ctrl-C cut
    short, as far as it got."""

    protocol: str
    system: str
    drawn: int = 0
    shrinks: int = 0
    steps: int = 0
    failures: list[Conformance] = field(default_factory=list)
    violations: list[Conformance] = field(default_factory=list)
    first_violation: tuple[int, float] | None = None  # schedules drawn and seconds to it
    seconds: float = 0.0
    out_of_budget: bool = False
    interrupted: bool = False
    partial: Conformance | None = None
    coverage: Coverage = field(default_factory=lambda: Coverage())
    timing: Timing | None = None  # the time mapping the runs used (a client may widen it)
    first_found: tuple[int, float] | None = None  # schedules drawn and seconds to the first
    guided: bool = False  # drawn toward dangerous steps (guidance.py), else uniformly
    unjudged: int = 0  # schedules whose mismatch came after the machine fell behind
    stall: tuple[int, str] | None = None  # the first such fall behind: its step, and how
    #: a schedule broke a claim at the model's nearest danger: none can break it sooner,
    #: so the search stopped there, unshrunk
    shortest_possible: bool = False

    @property
    def schedules(self) -> int:
        return self.drawn + self.shrinks

    @property
    def shortest(self) -> Conformance | None:
        return min(self.failures, key=lambda c: len(c.entries), default=None)

    @property
    def shortest_violation(self) -> Conformance | None:
        """The schedule that broke a claim on the real system soonest (its first break's
        step, then its length)."""
        return min(
            self.violations,
            key=lambda c: (min(b.step for b in c.breaks().values()), len(c.entries)),
            default=None,
        )


@dataclass
class Coverage:
    """What the schedules did: each action's count, each fault with and without an effect
    of its own on the real system, the steps where safety rested on the client, and the
    schedules in which each claim broke on the real system."""

    actions: Counter[str] = field(default_factory=Counter)
    faults_with_effect: Counter[str] = field(default_factory=Counter)
    faults_without_effect: Counter[str] = field(default_factory=Counter)
    dangerous_steps: int = 0
    anomalies: Counter[str] = field(default_factory=Counter)

    def add(self, run: Conformance) -> None:
        for entry in run.entries[1:]:
            self.actions[entry.action] += 1
            fault = entry.action if entry.action in FAULT_STEPS else f"{entry.action}, reply lost"
            if entry.effect is True:
                self.faults_with_effect[fault] += 1
            elif entry.effect is False:
                self.faults_without_effect[fault] += 1
        if run.member_fault is not None:  # a member killed or cut (said in its step's text)
            self.faults_with_effect[run.member_fault.split("@")[0].removeprefix("--")] += 1
        self.dangerous_steps += run.dangerous_steps
        self.anomalies.update(run.breaks().keys())

    def to_json(self) -> dict[str, Any]:
        return {
            "actions": dict(sorted(self.actions.items())),
            "faults_with_effect": dict(sorted(self.faults_with_effect.items())),
            "faults_without_effect": dict(sorted(self.faults_without_effect.items())),
            "dangerous_steps": self.dangerous_steps,
            "schedules_with_anomaly": dict(sorted(self.anomalies.items())),
        }


Label = tuple[str, str, str | None, bool]  # name, actor, target, reply lost
# The faults made by the harness; any other step with an effect is a call whose reply
# the proxy lost.
FAULT_STEPS = frozenset({*NODE_FAULTS, "partition", "heal", "drift"})
Path = tuple[Any, tuple[tuple[Action, Any], ...]]  # a model path: its start, then each step


def _label(action: Action) -> Label:
    return (action.name, action.actor, action.target, reply_lost(action))


def _facts(
    binding: Binding, model: Model[Any], before: Any, action: Action, after: Any
) -> dict[str, str]:
    """What the model predicts after `action` from `before`, as a trace step would."""
    step = ModelStep(0, action.shown(), normalise(model.describe(after)), 0)
    return expected_facts(binding, normalise(model.describe(before)), step)


def kept_alive(labels: list[Label], world: World) -> list[Label]:
    """The moves a schedule may take next when clients renew on their own: a client with a
    keep-alive thread (`renews_every` in its ready line) renews its lease within a moment
    of being able to, so a running node that holds a lease renews before anything else
    happens (the model's renew is an explicit step; the real client's is not). Without
    such clients, every move."""
    keeping = {node for node, agent in world.agents.items() if agent.renews_every}
    due = [label for label in labels if label[0] == "renew" and label[1] in keeping]
    return due or labels


def walk(
    model: Model[Any],
    binding: Binding,
    world: World,
    choose: Callable[[Sequence[int]], int],
    max_steps: int,
    guide: Guide | None = None,
    fault_step: int | None = None,
) -> Conformance:
    """One random schedule on the real system; stops at the first observation the model
    cannot explain, or the first claim broken on the real system. `choose` picks a move by
    its weight (the guide's, else all equal). A Ctrl-C ends it as it stands
    (`interrupted`); the real system failing is a
    SystemFailure (failures.py), raised once the world is closed. The result keeps one
    path of the model that agrees with everything observed (`path`), for the schedule to
    be kept as a trace. A store member is killed or cut off before `fault_step` (or the
    step --kill-member/--cut-member names); the next run's start brings it back."""
    result = Conformance(binding.protocol, binding.system)
    system, where = binding.system, world.store
    try:
        with talking_to(system, where, "starting the run"):
            begin(binding, world)
            if fault_step is not None:
                world.fault_step = fault_step
        result.timing = world.timing
        starts = list(model.initial_states())
        initial = [dict(binding.model_facts(normalise(model.describe(s)))) for s in starts]
        with talking_to(system, where, "reading the facts of the initial state"):
            observed = settle(binding, world, initial)
            beliefs = read_beliefs(world, {})
        result.timed(0, 0, world.read_at, world.timing)
        paths: dict[Any, Path] = {
            s: (s, ()) for s, f in zip(starts, initial, strict=True) if f == dict(observed)
        }
        result.entries.append(
            Entry(
                0,
                0,
                "initial state",
                world.started_as,
                world.now(),
                initial[0],
                observed,
                beliefs=beliefs,
            )  # fmt: skip
        )
        result.path = next(iter(paths.values()), None)
        ticks = 0
        for index in range(1, max_steps + 1) if paths else ():
            moves: dict[Label, list[tuple[Any, Action, Any]]] = {}
            for s in paths:
                for action, after in model.successors(s):
                    shown = action.shown()
                    if unsupported(binding, shown) is None:
                        moves.setdefault(_label(shown), []).append((s, shown, after))
            if not moves:
                break
            labels = sorted(moves, key=lambda k: (k[0] == "tick", k[0], k[1], str(k[2]), k[3]))
            labels = kept_alive(labels, world)
            now = guide.now(list(paths)) if guide is not None else None
            weights = [guide.weight(moves[k], now) if guide else 1 for k in labels]
            options = moves[labels[choose(weights)]]
            action = options[0][1]
            if guide is not None and guide.weight(options, now) == DANGER:
                result.dangerous_steps += 1
            ticks += action.kind == TICK
            with talking_to(system, where, f"step {index}: {action}"):
                befell = befall_member(binding, world, index)
                real, outcome, effect = perform(binding, world, action)
                real = befell + real
            if befell and binding.member_fault is not None:  # as the option replays it
                kind, role, _ = binding.member_fault
                result.member_fault = f"--{kind}-member {role}@{index}"
            allowed = [
                (s, a, after, _facts(binding, model, s, a, after)) for s, a, after in options
            ]
            wanted = [
                {k: v for k, v in f.items() if k != "call"}
                for *_, f in allowed
                if f["call"] == outcome
            ]
            with talking_to(system, where, f"reading the facts after step {index}"):
                facts = settle(binding, world, wanted) if wanted else read_facts(binding, world)
                beliefs = read_beliefs(world, result.entries[-1].beliefs)
            result.timed(index, ticks, world.read_at, world.timing)
            seen = {**facts, "call": outcome}
            survivors: dict[Any, Path] = {}
            for s, a, after, f in allowed:
                if f == seen and after not in survivors:
                    start, steps = paths[s]
                    survivors[after] = (start, (*steps, (a, after)))
            expected = next((f for *_, f in allowed if f == seen), allowed[0][3])
            result.entries.append(
                Entry(
                    index,
                    ticks,
                    str(action),
                    real,
                    world.now(),
                    expected,
                    seen,
                    effect,
                    beliefs,
                    action.name,
                )
            )
            if not survivors or real_breaks([(index, seen, beliefs)]):
                break  # the model cannot explain it, or a claim broke for real: the finding
            paths = survivors
            result.path = next(iter(paths.values()))
    except KeyboardInterrupt:
        if not real_interrupt():  # raised by code, not by the user's Ctrl-C
            raise
        result.interrupted = True
    finally:
        try:
            world.close()
        except KeyboardInterrupt:  # a second Ctrl-C while closing: everything is closed
            result.interrupted = True
    return result


def random_walks(
    model: Model[Any],
    binding: Binding,
    make_world: Callable[[], World],
    schedules: int,
    seed: int,
    max_steps: int,
    budget: float,
    progress: Callable[[Conformance], None] = lambda c: None,
    found: Walks | None = None,
    guide: Guide | None = None,
    keep: Callable[[Conformance], None] = lambda c: None,
) -> Walks:
    """`schedules` random schedules (and hypothesis's shrinking of any that broke a claim on
    the real system or diverged).

    Returns what ran, however it ended: all of them, the budget spent (`out_of_budget`)
    or a Ctrl-C (`interrupted`; the schedule it cut short is `partial`). `found` may be
    given to see what ran even if a Ctrl-C comes after this returns (the caller's server
    stop). A LeadercheckError (the real system failing, a model error) ends the search
    at once and is raised as it is. With a `guide`, moves are drawn by its weights;
    `keep` is given every schedule that ran to its end (to keep it as a trace)."""
    from hypothesis import HealthCheck, Phase, Verbosity, given, reject, settings
    from hypothesis import seed as hypothesis_seed
    from hypothesis import strategies as st

    found = found if found is not None else Walks(binding.protocol, binding.system)
    found.guided = guide is not None
    # no schedule breaks a claim before the step the model's nearest danger is (a guide's
    # distance from the start, plus the step itself): one that breaks there is as short
    # as any can be, and shrinking it (minutes of real time) could find nothing shorter
    nearest = guide.now(list(model.initial_states())) if guide is not None else None
    begun = time.monotonic()
    failed: list[LeadercheckError] = []
    stopped: list[bool] = []

    def stop() -> NoReturn:
        stopped.append(True)
        raise _Stop

    @hypothesis_seed(seed)
    @settings(
        max_examples=schedules,
        deadline=None,
        database=None,
        derandomize=False,
        phases=[Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
        verbosity=Verbosity.quiet,
    )
    @given(st.data())
    def schedule(data: st.DataObject) -> None:
        if stopped:
            stop()
        if time.monotonic() - begun > budget:
            found.out_of_budget = True
            stop()
        try:

            def choose(weights: Sequence[int]) -> int:
                """A move, each as likely as its weight (shrinking toward the first)."""
                drawn = data.draw(st.integers(0, sum(weights) - 1))
                for k, weight in enumerate(weights):
                    if drawn < weight:
                        return k
                    drawn -= weight
                raise AssertionError("a draw past the total weight")

            fault_step = None  # a member's fault before a step drawn for this schedule
            if binding.member_fault is not None and binding.member_fault[2] is None:
                fault_step = data.draw(st.integers(1, max_steps))
            # every schedule may run to max_steps: it ends at its first divergence anyway,
            # so a longer bound never makes the history reported longer
            run = walk(model, binding, make_world(), choose, max_steps, guide, fault_step)
        except LeadercheckError as exc:
            failed.append(exc)
            stop()
        if run.interrupted:
            found.interrupted, found.partial = True, run
            stop()
        if found.failures or found.violations:
            found.shrinks += 1
        else:
            found.drawn += 1
        found.steps += len(run.entries) - 1
        found.coverage.add(run)
        found.timing = run.timing or found.timing
        keep(run)
        progress(run)
        broke = run.breaks()
        if broke:  # a claim broke on the real system: what the run is for
            if not found.violations:
                found.first_violation = (found.drawn, round(time.monotonic() - begun, 2))
            found.violations.append(run)
            if run.divergence is not None:  # it also diverged: the report says both
                if not found.failures:
                    found.first_found = found.first_violation
                found.failures.append(run)
            if nearest is not None and min(b.step for b in broke.values()) <= nearest + 1:
                found.shortest_possible = True
                stop()
            raise Violation(",".join(sorted(broke)))
        if run.unjudged:  # the machine fell behind the time mapping (before any divergence)
            found.unjudged += 1
            found.stall = found.stall or run.stall
            reject()
        if run.divergence is not None:
            if not found.failures:
                found.first_found = (found.drawn, round(time.monotonic() - begun, 2))
            found.failures.append(run)
            raise Divergence(str(run.divergence.step))

    try:
        schedule()
    except (_Stop, Divergence, Violation):
        pass
    except KeyboardInterrupt:  # between schedules, or in hypothesis's own code
        if not real_interrupt():
            raise
        found.interrupted = True
    except Exception:
        # Hypothesis may tell a stop in its own words (an example that ends before drawing
        # what an earlier one drew is FlakyStrategyDefinition to it), or complain that a
        # shrunk schedule did not diverge again (a real system is not deterministic). What
        # ended the search is known here either way.
        if not (stopped or found.failures or found.violations):
            raise
    finally:
        found.seconds = round(time.monotonic() - begun, 2)
    if failed:
        raise failed[0]
    return found
