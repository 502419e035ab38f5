"""A search stopped by a bound or Ctrl-C saves a checkpoint where it stopped, and a search
resumed from it ends with the counts, verdicts and traces of one never stopped: on toy
models whose counts are known, with and without the fairness graph (liveness), with
symmetry, and on raft at small parameters. Ctrl-C is simulated by a KeyboardInterrupt from
the progress callback, a claim's predicate or the model's successors (no SIGINT handler is
installed, so each is taken for the user's), which may come in the middle of an expansion
or of a state's visit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest

from leadercheck.checker import Action, Model, always, sometimes
from leadercheck.checker.engine import explore
from leadercheck.checker.engine.checkpoint import FILE, Checkpoints
from leadercheck.checker.engine.settings import Reductions, unbounded
from leadercheck.checker.engine.strategies.bfs import breadth_first
from leadercheck.checker.properties import Property, leads_to
from leadercheck.checker.result import CheckResult, EndReason, Progress
from leadercheck.models.catalogue import PROTOCOLS
from leadercheck.specs.expectations import load_expectations
from tests.toys import Counter, DeepLock, Tokens, lock_closed

Case = tuple[Callable[[], Model[Any]], Sequence[Property], Reductions]
ROOT = Path(__file__).resolve().parents[2]


def _raft(**given: str) -> Callable[[], Model[Any]]:
    entry = PROTOCOLS["raft"]
    return lambda: entry.build(entry.resolve(given))


class Ring(Counter):
    """Counter(limit) that wraps around to 0: every state lies on a cycle (liveness)."""

    def successors(self, state: int) -> Iterable[tuple[Action, int]]:
        yield from super().successors(state)
        if state >= self.limit - 1:
            yield Action("wrap", "counter"), 0


RAFT = load_expectations().properties("raft")
CASES: dict[str, Case] = {
    "counter": (
        lambda: Counter(60),
        [always("non-negative", lambda s: s >= 0), sometimes("reaches-57", lambda s: s == 57)],
        Reductions(),
    ),
    "deep-lock": (lambda: DeepLock(4, 2), [lock_closed(4)], Reductions()),
    "tokens-symmetry": (
        lambda: Tokens(3, 5),
        [always("below-5", lambda s: max(s) < 5)],
        Reductions(symmetry=True),
    ),
    "ring-liveness": (
        lambda: Ring(40),
        [
            leads_to("back-to-0", lambda s: s == 39, lambda s: s == 0),
            sometimes("at-30", lambda s: s == 30),
        ],
        Reductions(),
    ),
    "raft-2-nodes": (_raft(nodes="2"), RAFT, Reductions()),  # leads-to: the fairness graph
    "raft-no-faults": (_raft(crashes="0", partitions="0"), RAFT, Reductions(exact=True)),
}


def search(case: Case, **settings: Any) -> CheckResult:
    model, properties, reductions = case
    return breadth_first(model(), properties, unbounded(reductions=reductions, **settings))


def same_search(whole: CheckResult, resumed: CheckResult) -> None:
    assert resumed.end == whole.end
    for field in ("distinct_states", "generated_states", "transitions", "depth"):
        assert getattr(resumed.stats, field) == getattr(whole.stats, field), field
    assert [(r.prop.name, r.verdict, r.reason) for r in resumed.results] == [
        (r.prop.name, r.verdict, r.reason) for r in whole.results
    ]
    assert [r.trace for r in resumed.results] == [r.trace for r in whole.results]


def stop_then_resume(case: Case, tmp_path: Path, **stop: Any) -> tuple[CheckResult, CheckResult]:
    """A search stopped as `stop` says with --checkpoint (never due: only the stop saves),
    then resumed, unbounded, into another directory."""
    cut_dir, resumed_dir = tmp_path / "cut", tmp_path / "resumed"
    cut_cp = Checkpoints(cut_dir, {"case": "x"}, every=1e9)
    cut = search(case, checkpoints=cut_cp, **stop)
    assert cut_cp.written == 1 and (cut_dir / FILE).exists(), cut.notes
    resume_cp = Checkpoints(resumed_dir, {"case": "x"}, every=1e9, resume_from=cut_dir)
    return cut, search(case, checkpoints=resume_cp)


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize(  # a cut at the start and one midway here; near the end in -m slow
    "share", [0.0, 0.37, pytest.param(0.8, marks=pytest.mark.slow)]
)
def test_a_state_bound_saves_where_it_stopped_and_resume_ends_as_unstopped(
    name: str, share: float, tmp_path: Path
) -> None:
    whole = search(CASES[name])
    bound = max(1, int(whole.stats.distinct_states * share))
    cut, resumed = stop_then_resume(CASES[name], tmp_path, max_states=bound)
    if cut.end is EndReason.MAX_STATES:
        assert cut.stats.distinct_states == bound  # the stop is where the bound says
    same_search(whole, resumed)


@pytest.mark.parametrize("name", list(CASES))
def test_a_depth_bound_saves_where_it_stopped_and_resume_ends_as_unstopped(
    name: str, tmp_path: Path
) -> None:
    whole = search(CASES[name])
    cut, resumed = stop_then_resume(CASES[name], tmp_path, max_depth=whole.stats.depth // 2)
    assert cut.end in (EndReason.MAX_DEPTH, EndReason.DECIDED) or whole.end is EndReason.DECIDED
    same_search(whole, resumed)


def test_a_memory_bound_saves_where_it_stopped(tmp_path: Path) -> None:
    case = CASES["raft-no-faults"]
    whole = search(case)
    cut, resumed = stop_then_resume(case, tmp_path, max_memory=1)  # met at the first check
    assert cut.end is EndReason.MAX_MEMORY
    same_search(whole, resumed)


class Interrupt:
    """Raises KeyboardInterrupt at its `at`-th call (as Ctrl-C would, at that point)."""

    def __init__(self, at: int) -> None:
        self.at, self.calls = at, 0

    def __call__(self, *args: Any) -> None:
        self.calls += 1
        if self.calls == self.at:
            raise KeyboardInterrupt


def interrupted_case(case: Case, where: str, at: int) -> Case:
    """`case` with a KeyboardInterrupt from its model's successors or from a claim's
    predicate at the `at`-th call."""
    make_model, properties, reductions = case
    interrupt = Interrupt(at)
    if where == "claim":

        def watched(state: Any) -> bool:
            interrupt()
            return True

        return make_model, [*properties, always("watched", watched)], reductions

    def model() -> Model[Any]:
        inner = make_model()
        real = inner.successors

        def successors(state: Any) -> Any:
            pairs = list(real(state))
            interrupt()
            return pairs

        inner.successors = successors  # type: ignore[method-assign]
        inner.next_states = lambda state: [s for _, s in successors(state)]  # type: ignore[method-assign]
        return inner

    return model, properties, reductions


@pytest.mark.parametrize("name", ["counter", "ring-liveness", "tokens-symmetry", "raft-2-nodes"])
@pytest.mark.parametrize("where", ["claim", "successors"])
@pytest.mark.parametrize("share", [0.0, 0.3, 0.77])
def test_ctrl_c_saves_where_it_stopped_and_resume_ends_as_unstopped(
    name: str, where: str, share: float, tmp_path: Path
) -> None:
    whole = search(CASES[name])
    calls = whole.stats.distinct_states if where == "claim" else whole.stats.distinct_states // 2
    at = max(1, int(calls * share))
    cut_case = interrupted_case(CASES[name], where, at)
    cut_dir = tmp_path / "cut"
    cut_cp = Checkpoints(cut_dir, {}, every=1e9)
    cut = search(cut_case, checkpoints=cut_cp)
    assert cut.end is EndReason.INTERRUPTED
    assert cut_cp.written == 1, cut.notes
    # resumed without the interruption: the claim that interrupted is judged again, whole
    if where == "claim":
        resume_case = interrupted_case(CASES[name], where, 0)
    else:
        resume_case = CASES[name]
    whole = search(resume_case)
    resume_cp = Checkpoints(tmp_path / "resumed", {}, every=1e9, resume_from=cut_dir)
    same_search(whole, search(resume_case, checkpoints=resume_cp))


def test_ctrl_c_from_the_progress_callback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(explore, "PROGRESS_EVERY", 64)
    case = CASES["raft-no-faults"]
    whole = search(case)
    seen: list[Progress] = []

    def progress(p: Progress) -> None:
        seen.append(p)
        if len(seen) == 40:
            raise KeyboardInterrupt

    cp = Checkpoints(tmp_path / "cut", {}, every=1e9)
    cut = search(case, checkpoints=cp, progress=progress)
    assert cut.end is EndReason.INTERRUPTED and cp.written == 1
    assert cut.stats.distinct_states < whole.stats.distinct_states
    resume_cp = Checkpoints(tmp_path / "resumed", {}, every=1e9, resume_from=tmp_path / "cut")
    same_search(whole, search(case, checkpoints=resume_cp))


def test_a_stop_while_the_initial_states_are_stored(tmp_path: Path) -> None:
    class Many(Counter):
        def initial_states(self) -> Sequence[int]:
            return [0, 3, 1, 3, 7, 2]

    case: Case = (lambda: Many(20), [sometimes("at-19", lambda s: s == 19)], Reductions())
    whole = search(case)
    for bound in (1, 2, 4):
        _, resumed = stop_then_resume(case, tmp_path / str(bound), max_states=bound)
        same_search(whole, resumed)
    cut_case = interrupted_case(case, "claim", 3)  # Ctrl-C at the third initial state
    cp = Checkpoints(tmp_path / "ki", {}, every=1e9)
    assert search(cut_case, checkpoints=cp).end is EndReason.INTERRUPTED
    resume = interrupted_case(case, "claim", 0)
    resume_cp = Checkpoints(tmp_path / "ki2", {}, every=1e9, resume_from=tmp_path / "ki")
    same_search(search(resume), search(resume, checkpoints=resume_cp))


def test_a_stop_saves_once_and_a_search_that_ends_saves_nothing_more(tmp_path: Path) -> None:
    case = CASES["counter"]
    cp = Checkpoints(tmp_path / "cp", {}, every=0)  # at every level, and at the stop
    cut = search(case, checkpoints=cp, max_depth=5)
    assert cut.end is EndReason.MAX_DEPTH
    assert cp.written == 6  # levels 0..5 (the stop is the sixth level's start: not again)
    done = Checkpoints(tmp_path / "done", {}, every=1e9)
    assert search(case, checkpoints=done).end is EndReason.EXHAUSTED
    assert done.written == 0


class Tagged(Model[tuple[int, Any]]):
    """0..30, add 1 or 2, and 30 goes back to 0; a state (n, tag) tags n < 4 with a string
    (salted by PYTHONHASHSEED) when `strings`, else with n. A stop at 20 states leaves only
    int-tagged states in the queue: only earlier, stored states hash otherwise in another
    process, and the wrap back to 0 meets them again."""

    def __init__(self, strings: bool) -> None:
        self.strings = strings

    def _state(self, n: int) -> tuple[int, Any]:
        return (n, f"s{n}" if self.strings and n < 4 else n)

    def initial_states(self) -> Sequence[tuple[int, Any]]:
        return [self._state(0)]

    def successors(self, state: tuple[int, Any]) -> Iterable[tuple[Action, tuple[int, Any]]]:
        n = state[0]
        for step in (1, 2):
            if n + step <= 30:
                yield Action(f"add{step}", "counter"), self._state(n + step)
        if n == 30:
            yield Action("wrap", "counter"), self._state(0)


RESUME = """
import json, sys
from pathlib import Path
from leadercheck.checker import always
from leadercheck.checker.engine.checkpoint import Checkpoints
from leadercheck.checker.engine.strategies.bfs import check
from tests.checker.test_checkpoint_stops import Tagged

how, strings, folder = sys.argv[1], sys.argv[2] == "strings", Path(sys.argv[3])
claims = [always("fine", lambda s: True)]
if how == "cut":
    cp = Checkpoints(folder / "cut", {}, every=1e9)
    result = check(Tagged(strings), claims, max_states=20, checkpoints=cp)
else:
    cp = Checkpoints(folder / how, {}, every=1e9, resume_from=folder / "cut")
    result = check(Tagged(strings), claims, checkpoints=cp)
print(json.dumps([result.end.name, result.stats.distinct_states, result.stats.generated_states]))
"""


def _run(how: str, states: str, folder: Path, seed: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": seed}
    command = [sys.executable, "-c", RESUME, how, states, str(folder)]
    return subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("states", ["strings", "ints"])
def test_a_process_that_hashes_stored_states_otherwise_is_refused(
    states: str, tmp_path: Path
) -> None:
    """Whatever the build salts (strings always; None's address on a PIE build before 3.12),
    a resume in a process that hashes a stored state otherwise is refused, even when every
    queued state hashes alike; one that hashes every state alike resumes, to the counts of
    a search never stopped."""
    whole = search(
        (lambda: Tagged(states == "strings"), [always("fine", lambda s: True)], Reductions())
    )
    cut = _run("cut", states, tmp_path, "0")
    assert cut.returncode == 0 and json.loads(cut.stdout)[0] == "MAX_STATES", cut.stderr
    same = _run("same-seed", states, tmp_path, "0")
    assert same.returncode == 0, same.stderr
    counts = [whole.end.name, whole.stats.distinct_states, whole.stats.generated_states]
    assert json.loads(same.stdout) == counts
    other = _run("other-seed", states, tmp_path, "1")
    if states == "ints":
        assert other.returncode == 0 and json.loads(other.stdout) == counts, other.stderr
    else:
        assert other.returncode != 0 and "hashes states differently" in other.stderr
