"""A machine too busy to keep the time mapping makes a run unjudged, never a verdict.

Model time is made real by sleeping a tick, and the steps between ticks take real time too.
When real time runs a tick ahead of model time (a 1 s tick that took three seconds on a
loaded machine), a lease may be read after it ran out for real where the model still has
it held. Such a run is INCOMPLETE (exit 3), and a random schedule that fell behind is not
counted as divergent; no server is needed to judge it."""

from __future__ import annotations

import pytest

from leadercheck.checker.app.conform_runs import _code
from leadercheck.checker.conform.harness import Conformance, Entry, behind
from leadercheck.checker.conform.world import Timing
from leadercheck.checker.render.conformance import verdict_lines

TIMING = Timing(tick=1.0, settle=0.6)


@pytest.mark.parametrize(
    ("tick", "drift", "late"),
    [(1.0, 0.0, False), (1.0, 0.89, False), (1.0, 0.9, True), (1.0, 2.37, True),
     (0.1, 0.049, False), (0.1, 0.05, True), (30.0, 29.8, False), (30.0, 29.9, True)],
)  # fmt: skip
def test_a_run_falls_behind_when_its_reads_drift_a_tick_from_model_time(
    tick: float, drift: float, late: bool
) -> None:
    assert (behind(drift, Timing(tick=tick)) is not None) is late


def entry(step: int, matches: bool) -> Entry:
    expected = {"store": "n2 holds lease token 1"}
    observed = expected if matches else {"store": "no lease held"}
    return Entry(step, step, f"step {step}", "real", float(step), expected, observed)


def run(*reads: tuple[int, float, bool]) -> Conformance:
    """A run whose step k was read at `at` seconds, `ticks` ticks into the model."""
    result = Conformance("lease-fencing", "etcd")
    for step, (ticks, at, matches) in enumerate(reads):
        result.entries.append(entry(step, matches))
        result.timed(step, ticks, 100.0 + at, TIMING)
    return result


def test_steps_that_take_time_between_ticks_are_not_falling_behind() -> None:
    """A tenth of a second a step, a tick slept at each tick: the drift stays small."""
    steps = [(0, 0.05, True), (0, 0.15, True), (1, 1.2, True), (1, 1.3, True), (2, 2.35, False)]
    result = run(*steps)
    assert result.stall is None and result.verdict == "DIVERGES"
    assert result.divergence is not None and result.divergence.step == 4


def test_a_mismatch_after_the_machine_fell_behind_is_not_a_divergence() -> None:
    """Renewed at 1.37 s for two ticks, read 2.86 s after the next tick began: the lease
    is gone for real, the model has it held; the run says it cannot tell."""
    result = run((0, 0.07, True), (1, 1.37, True), (1, 1.5, True), (2, 4.36, False))
    assert result.mismatch is not None and result.mismatch.step == 3
    assert result.divergence is None and result.unjudged
    assert result.verdict == "INCOMPLETE" and _code({"verdict": result.verdict}) == 3
    assert result.stall is not None and result.stall[0] == 3
    assert result.stall[1].startswith("its facts were read 2.29 s behind model time")


def test_a_divergence_before_the_machine_fell_behind_stands() -> None:
    result = run((0, 0.07, True), (0, 0.1, False), (1, 3.0, True))
    assert result.stall is not None and result.stall[0] == 2
    assert result.divergence is not None and result.divergence.step == 1
    assert result.verdict == "DIVERGES" and not result.unjudged


def test_a_run_that_fell_behind_and_matched_is_not_called_conforming() -> None:
    """A late read may also see a lease gone that ran out late: a match tells nothing."""
    assert run((0, 0.0, True), (1, 2.5, True)).verdict == "INCOMPLETE"
    assert run((0, 0.0, True), (1, 1.1, True)).verdict == "CONFORMS"


def test_the_report_says_the_machine_fell_behind_and_where() -> None:
    record = {
        "verdict": "INCOMPLETE",
        "seconds": 5.2,
        "timeline": [{}, {}, {}],
        "divergence": None,
        "fell_behind": "at step 2, its facts were read 2.29 s behind model time",
    }
    (line,) = verdict_lines(record)
    assert line.startswith(
        "INCOMPLETE: the machine fell behind the time mapping at step 2, its facts were read"
        " 2.29 s behind model time; what the real system showed after that cannot be held"
        " against the model"
    )
    assert "--tick" in line


def test_the_exit_code_says_a_claim_broke_for_real_before_how_the_run_compared() -> None:
    """1: a claim broke on the real system, whether the run conformed, diverged or was cut
    short; else 0 conforms, 4 diverges (a finding of its own, never 1), 3 incomplete."""
    broke = [{"claim": "no-stale-write", "step": 10, "evidence": "storage: ..."}]
    for verdict in ("CONFORMS", "DIVERGES", "INCOMPLETE"):
        assert _code({"verdict": verdict, "real_breaks": broke}) == 1
        assert _code({"verdict": verdict, "violating_history": {"steps": 12}}) == 1
    assert _code({"verdict": "CONFORMS", "real_breaks": []}) == 0
    assert _code({"verdict": "DIVERGES", "real_breaks": []}) == 4
    assert _code({"verdict": "DIVERGES", "violating_history": None}) == 4
    assert _code({"verdict": "INCOMPLETE"}) == 3
