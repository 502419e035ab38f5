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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from leadercheck.checker.conform.bindings.base import Binding, reply_lost
from leadercheck.checker.conform.harness import (
    Conformance,
    Entry,
    ModelStep,
    begin,
    expected_facts,
    perform,
    settle,
    unsupported,
)
from leadercheck.checker.conform.world import Facts, World
from leadercheck.checker.model import TICK, Action, Model
from leadercheck.checker.replay import normalise


class Divergence(Exception):
    """Raised inside a hypothesis example so that it shrinks the schedule."""


@dataclass
class Walks:
    """What the random schedules found: how many ran, and the shortest divergent one."""

    protocol: str
    system: str
    schedules: int = 0
    steps: int = 0
    failures: list[Conformance] = field(default_factory=list)
    seconds: float = 0.0
    out_of_budget: bool = False
    interrupted: bool = False

    @property
    def shortest(self) -> Conformance | None:
        return min(self.failures, key=lambda c: len(c.entries), default=None)


Label = tuple[str, str, str | None, bool]  # name, actor, target, reply lost


def _label(action: Action) -> Label:
    return (action.name, action.actor, action.target, reply_lost(action))


def _facts(
    binding: Binding, model: Model[Any], before: Any, action: Action, after: Any
) -> dict[str, str]:
    """What the model predicts after `action` from `before`, as a trace step would."""
    step = ModelStep(0, action.shown(), normalise(model.describe(after)), 0)
    return expected_facts(binding, normalise(model.describe(before)), step)


def walk(
    model: Model[Any],
    binding: Binding,
    world: World,
    choose: Callable[[int], int],
    max_steps: int,
) -> Conformance:
    """One random schedule on the real system; stops at the first observation the model
    cannot explain."""
    result = Conformance(binding.protocol, binding.system)
    try:
        begin(binding, world)
        states = list(model.initial_states())
        initial = [dict(binding.model_facts(normalise(model.describe(s)))) for s in states]
        observed = settle(binding, world, initial)
        states = [s for s, f in zip(states, initial, strict=True) if f == dict(observed)]
        result.entries.append(
            Entry(
                0,
                0,
                "initial state",
                "servers and clients started",
                world.now(),
                initial[0],
                observed,
            )  # fmt: skip
        )
        if not states:
            return result
        ticks = 0
        for index in range(1, max_steps + 1):
            moves: dict[Label, list[tuple[Any, Action, Any]]] = {}
            for s in states:
                for action, after in model.successors(s):
                    shown = action.shown()
                    if unsupported(binding, shown) is None:
                        moves.setdefault(_label(shown), []).append((s, shown, after))
            if not moves:
                break
            labels = sorted(moves, key=lambda k: (k[0] == "tick", k[0], k[1], str(k[2]), k[3]))
            chosen = labels[choose(len(labels))]
            options = moves[chosen]
            action = options[0][1]
            ticks += action.kind == TICK
            real, outcome = perform(binding, world, action)
            allowed = [(after, _facts(binding, model, s, a, after)) for s, a, after in options]
            wanted = [
                {k: v for k, v in f.items() if k != "call"}
                for _, f in allowed
                if f["call"] == outcome
            ]
            facts: Facts = settle(binding, world, wanted) if wanted else binding.real_facts(world)
            seen = {**facts, "call": outcome}
            survivors = [after for after, f in allowed if f == seen]
            expected = next((f for _, f in allowed if f == seen), allowed[0][1])
            result.entries.append(
                Entry(index, ticks, str(action), real, world.now(), expected, seen)
            )
            if not survivors:
                break
            states = list(dict.fromkeys(survivors))
    except KeyboardInterrupt:
        result.interrupted = True
    finally:
        world.close()
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
) -> Walks:
    """`schedules` random schedules (and hypothesis's shrinking of any divergent one)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hypothesis_seed
    from hypothesis import strategies as st

    found = Walks(binding.protocol, binding.system)
    begun = time.monotonic()

    @hypothesis_seed(seed)
    @settings(
        max_examples=schedules,
        deadline=None,
        database=None,
        derandomize=False,
        phases=[Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
    )
    @given(st.data())
    def schedule(data: st.DataObject) -> None:
        if found.interrupted or time.monotonic() - begun > budget:
            found.out_of_budget = not found.interrupted
            return
        length = data.draw(st.integers(1, max_steps), label="steps")
        run = walk(
            model,
            binding,
            make_world(),
            lambda n: data.draw(st.integers(0, n - 1)),
            length,
        )
        found.schedules += 1
        found.steps += len(run.entries) - 1
        progress(run)
        if run.interrupted:
            found.interrupted = True
            return
        if run.divergence is not None:
            found.failures.append(run)
            raise Divergence(str(run.divergence.step))

    try:
        schedule()
    except Divergence:
        pass
    except Exception as exc:  # hypothesis's own complaints after our budget ran out
        if not found.failures and not found.out_of_budget:
            raise exc
    found.seconds = round(time.monotonic() - begun, 2)
    return found
