"""Liveness under weak fairness: fair cycles and stuttering are reported as lassos, unfair
cycles never are."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from leadercheck.checker.app.main import main
from leadercheck.checker.engine.strategies.bfs import check
from leadercheck.checker.properties import always, eventually, leads_to
from leadercheck.checker.render.context import TraceContext
from leadercheck.checker.render.dot import trace_to_dot
from leadercheck.checker.render.text import trace_lines
from leadercheck.checker.render.trace_json import trace_to_json
from leadercheck.checker.result import Verdict
from tests.toys import Counter, Labelled


def _states(trace: object) -> list[int]:
    return [s.state for s in trace.steps]  # type: ignore[attr-defined]


def test_a_fair_cycle_that_avoids_the_goal_is_a_lasso() -> None:
    # 0 -a-> 1 -a-> 0 forever; b leads to the goal 2 but is enabled only in state 1, so
    # the cycle does not keep b enabled: weak fairness allows never taking it.
    model = Labelled([0], {0: [(1, "a")], 1: [(0, "a"), (2, "b")]})
    result = check(model, [eventually("reach-2", lambda s: s == 2)]).result("reach-2")
    assert result.verdict is Verdict.VIOLATED
    trace = result.trace
    assert trace is not None and trace.loop_from == 0
    assert _states(trace) == [0, 1, 0]  # the loop 0 -> 1 -> 0, from the initial state
    assert result.reason == "a fair cycle of 2 steps (from step 0) on which it never comes true"


def test_an_unfair_cycle_is_not_reported() -> None:
    # 0 -a-> 0 forever while b (to the goal) stays enabled: weak fairness forces b.
    model = Labelled([0], {0: [(0, "a"), (1, "b")]})
    result = check(model, [eventually("reach-1", lambda s: s == 1)]).result("reach-1")
    assert result.verdict is Verdict.HOLDS and result.trace is None


def test_the_only_non_progress_cycle_is_unfair() -> None:
    # Two cycles avoid the goal 3: 0 <-> 1 (b enabled everywhere on it, never taken: unfair)
    # and none else; every fair behaviour leaves it through b.
    model = Labelled([0], {0: [(1, "a"), (3, "b")], 1: [(0, "a"), (3, "b")]})
    result = check(model, [eventually("reach-3", lambda s: s == 3)]).result("reach-3")
    assert result.verdict is Verdict.HOLDS


def test_unfair_actions_are_never_forced() -> None:
    # Only a fault leads on from 0: staying in 0 forever is fair (stuttering).
    model = Labelled([0], {0: [(1, "fault")]}, unfair=["fault"])
    result = check(model, [eventually("reach-1", lambda s: s == 1)]).result("reach-1")
    assert result.verdict is Verdict.VIOLATED
    assert result.trace is not None and result.trace.loop_from == 0 and len(result.trace) == 0
    assert "no fair action is enabled" in result.reason


def test_a_deadlock_short_of_the_goal_is_a_lasso() -> None:
    result = check(Counter(3), [eventually("reach-9", lambda s: s == 9)]).result("reach-9")
    assert result.verdict is Verdict.VIOLATED
    trace = result.trace
    assert trace is not None and trace.last.state == 3 and trace.loop_from == len(trace)


def test_leads_to_starts_from_the_trigger() -> None:
    # 0 -> 1 -> 2 -> 1 -> ...: from the trigger state 2 the goal 0 never comes back.
    model = Labelled([0], {0: [(1, "a")], 1: [(2, "a")], 2: [(1, "a")]})
    good = leads_to("0-then-1", lambda s: s == 0, lambda s: s == 1)
    bad = leads_to("2-then-0", lambda s: s == 2, lambda s: s == 0)
    result = check(model, [good, bad])
    assert result.result("0-then-1").verdict is Verdict.HOLDS
    lasso = result.result("2-then-0").trace
    assert lasso is not None
    assert _states(lasso) == [0, 1, 2, 1, 2] and lasso.loop_from == 2


def test_the_cycle_takes_a_class_that_is_enabled_everywhere() -> None:
    # On 0 <-> 1, class c is enabled in both states and only stays inside via 1 -c-> 0:
    # a fair cycle must take it, so the reported loop does.
    model = Labelled([0], {0: [(1, "a"), (1, "c")], 1: [(0, "c"), (5, "b")], 5: [(5, "z")]})
    result = check(model, [eventually("reach-9", lambda s: s == 9)]).result("reach-9")
    trace = result.trace
    assert result.verdict is Verdict.VIOLATED and trace is not None
    assert _states(trace) == [0, 1, 0] and trace.loop_from == 0
    assert [a.actor for a in trace.actions] == ["a", "c"]  # c is enabled in 0 and 1: taken


def test_safety_and_liveness_in_one_check() -> None:
    model = Labelled([0], {0: [(1, "a")], 1: [(0, "a")]})
    result = check(
        model, [always("small", lambda s: s < 2), eventually("reach-1", lambda s: s == 1)]
    )
    assert [r.verdict for r in result.results] == [Verdict.HOLDS, Verdict.HOLDS]


def test_a_lasso_is_rendered_with_its_loop() -> None:
    model = Labelled([0], {0: [(1, "a")], 1: [(2, "a")], 2: [(1, "a")]})
    outcome = check(model, [leads_to("2-then-0", lambda s: s == 2, lambda s: s == 0)]).results[0]
    ctx = TraceContext("toy", {}, outcome)
    lines = trace_lines(ctx)
    assert "loop: step 4 returns to the state of step 2, so steps 3 to 4 repeat forever" in (
        "\n".join(lines)
    )
    doc = json.loads(trace_to_json(ctx))
    assert doc["loop_from"] == 2 and doc["trace_kind"] == "counterexample"
    dot = trace_to_dot(ctx)
    assert 'class="step-2 step-4 loop"' in dot and "repeat forever" in dot


def test_a_plain_counterexample_has_no_loop() -> None:
    outcome = check(Counter(3), [always("small", lambda s: s < 3)]).results[0]
    ctx = TraceContext("toy", {}, outcome)
    assert "loop_from" not in json.loads(trace_to_json(ctx))
    assert "loop:" not in "\n".join(trace_lines(ctx))


def test_a_saved_lasso_replays_and_a_broken_loop_does_not(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["--protocol", "even-quorum", "--out", str(out)])
    assert result.exit_code == 1
    assert "leader-eventually        VIOLATED    lasso of 2 steps, looping from step 1" in (
        result.stdout
    )
    saved = out / "even-quorum.json"
    replayed = CliRunner().invoke(main, ["replay", str(saved)])
    assert replayed.exit_code == 1  # the violation reproduces
    assert "leader-eventually is broken again" in replayed.stdout
    doc = json.loads(saved.read_text())
    doc["loop_from"] = 0  # the last state is not the initial one: the loop does not close
    saved.write_text(json.dumps(doc))
    assert CliRunner().invoke(main, ["replay", str(saved)]).exit_code == 0  # no violation
