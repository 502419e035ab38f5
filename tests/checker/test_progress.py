"""Progress reports and a clean stop on Ctrl-C, in the engine and through `verify`."""

from __future__ import annotations

import io
import sys
from collections.abc import Iterable
from pathlib import Path

from leadercheck.checker import Action, EndReason, Progress, Verdict, always, check
from leadercheck.checker.render.progress import ProgressLine
from tests.helpers import run_interrupted
from tests.toys import Counter


def test_progress_is_reported_as_the_search_grows() -> None:
    seen: list[Progress] = []
    result = check(Counter(10_000), [always("ok", lambda x: True)], progress=seen.append)
    assert result.verdict is Verdict.HOLDS
    assert [p.distinct_states for p in seen] == [2048, 4096, 6144, 8192]
    assert all(p.queue >= 1 and p.generated_states >= p.distinct_states for p in seen)


class _Interrupted(Counter):
    def successors(self, state: int) -> Iterable[tuple[Action, int]]:
        if state == 50:
            raise KeyboardInterrupt
        return super().successors(state)


def test_an_interrupt_ends_the_search_incomplete_with_its_statistics() -> None:
    result = check(_Interrupted(1000), [always("small", lambda x: x < 900)])
    assert result.end is EndReason.INTERRUPTED
    assert result.verdict is Verdict.INCOMPLETE
    assert result.result("small").reason == "interrupted"
    assert 50 <= result.stats.distinct_states < 60


def test_progress_line_is_silent_for_the_first_second_then_redraws_and_clears() -> None:
    out = io.StringIO()
    line = ProgressLine(out)
    line(Progress(100, 200, 5, 3, 0.5))
    assert out.getvalue() == ""
    line(Progress(5000, 9000, 40, 7, 1.5))
    assert "5,000 states" in out.getvalue() and "queue 40" in out.getvalue()
    assert "depth 7" in out.getvalue()
    line.clear()
    assert out.getvalue().endswith("\r")


def test_progress_lines_for_a_log_say_each_second_where_the_search_is() -> None:
    """`--progress` where stderr is no terminal: whole lines, the first at once (a supervisor
    waits for it), then one a second, never redrawn in place."""
    out = io.StringIO()
    line = ProgressLine(out, lines=True)
    line(Progress(100, 200, 5, 3, 0.1))
    line(Progress(200, 400, 8, 3, 0.2))  # within the second: not repeated
    said = out.getvalue().splitlines()
    assert said == ["progress:  100 states  1,000/s  queue 5  depth 3  0.1 s"]
    assert "\r" not in out.getvalue()


def test_ctrl_c_prints_partial_statistics_and_exits_3(tmp_path: Path) -> None:
    args = [sys.executable, "-m", "leadercheck.checker.app", "--protocol", "lease-fencing",
            "-p", "nodes=5", "-p", "crashes=2", "--progress", "--out",
            "/nonexistent-never-written"]  # fmt: skip
    done = run_interrupted(args, tmp_path, ready="progress:")
    stdout, stderr = done.stdout, done.stderr
    assert done.returncode == 3, stderr
    assert "INCOMPLETE  interrupted" in stdout
    assert "(interrupted)" in stdout and "verdict: INCOMPLETE" in stdout
    assert not (tmp_path / "out").exists()
