"""--exact: the store keeps full states, so colliding fingerprints hide nothing; on real
protocols it changes no verdict, count or trace."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner

from leadercheck.checker import Action, Model
from leadercheck.checker.app.main import main
from leadercheck.checker.engine.settings import Reductions
from leadercheck.checker.engine.store import FP_MASK
from leadercheck.checker.engine.strategies.bfs import check
from leadercheck.checker.errors import ModelError
from leadercheck.checker.properties import always
from leadercheck.checker.result import Verdict


class Clash(int):
    """An int whose fingerprint is 0 (its hash is 2^60), but 0, whose fingerprint is 1."""

    def __hash__(self) -> int:
        return 1 if self == 0 else FP_MASK + 1


class Colliding(Model[Clash]):
    """0 -> 1, 2, ..., 9, all nine with one fingerprint; 9 is the bad one."""

    def initial_states(self) -> Sequence[Clash]:
        return [Clash(0)]

    def successors(self, state: Clash) -> Iterable[tuple[Action, Clash]]:
        if state == 0:
            for k in range(1, 10):
                yield Action("step", "fan", note=str(k)), Clash(k)


class Chain(Colliding):
    """0 -> 1 -> ... -> 9: each state after the first collides with its own parent."""

    def successors(self, state: Clash) -> Iterable[tuple[Action, Clash]]:
        if state < 9:
            yield Action("step", "chain"), Clash(state + 1)


def test_fingerprints_collide_and_exact_states_do_not() -> None:
    claim = [always("not-nine", lambda s: s != 9)]
    hashed = check(Colliding(), claim)
    exact = check(Colliding(), claim, reductions=Reductions(exact=True))
    assert hashed.stats.distinct_states == 2  # every successor taken for the first one
    assert hashed.verdict is Verdict.HOLDS  # the wrong answer a collision gives
    assert exact.stats.distinct_states == 10 and exact.verdict is Verdict.VIOLATED
    trace = exact.results[0].trace
    assert trace is not None and len(trace) == 1
    assert exact.stats.exact and exact.stats.collision_probability == 0.0


def test_a_successor_that_collides_with_its_parent_is_caught() -> None:
    claim = [always("not-nine", lambda s: s != 9)]
    with pytest.raises(ModelError, match="differs from the state it came from but hashes"):
        check(Chain(), claim)
    assert check(Chain(), claim, reductions=Reductions(exact=True)).verdict is Verdict.VIOLATED


@pytest.mark.parametrize("extra", [(), ("--symmetry",), ("--por",)], ids=["plain", "sym", "por"])
def test_exact_changes_nothing_on_a_protocol(extra: tuple[str, ...], tmp_path: Path) -> None:
    args = ["--protocol", "raft-no-quorum", "--json", *extra]
    hashed = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "a")])
    exact = CliRunner().invoke(main, [*args, "--exact", "--out", str(tmp_path / "b")])
    assert hashed.exit_code == exact.exit_code == 1
    a, b = json.loads(hashed.stdout), json.loads(exact.stdout)
    assert b["stats"]["exact"] and b["stats"]["fingerprint_collision_probability"] == 0.0
    for key in ("distinct_states", "generated_states", "depth"):
        assert a["stats"][key] == b["stats"][key]
    assert [p["verdict"] for p in a["properties"]] == [p["verdict"] for p in b["properties"]]
    mine = (tmp_path / "b" / "raft-no-quorum.json").read_bytes()
    assert mine == (tmp_path / "a" / "raft-no-quorum.json").read_bytes()


def test_exact_judges_liveness_on_the_same_graph(tmp_path: Path) -> None:
    args = ["--protocol", "even-quorum", "--json"]
    a = json.loads(CliRunner().invoke(main, [*args, "--out", str(tmp_path)]).stdout)
    b = json.loads(CliRunner().invoke(main, [*args, "--exact", "--out", str(tmp_path)]).stdout)
    assert [p["verdict"] for p in a["properties"]] == [p["verdict"] for p in b["properties"]]
    assert a["stats"]["phases"][1]["transitions"] == b["stats"]["phases"][1]["transitions"]


def test_exact_needs_one_process() -> None:
    result = CliRunner().invoke(main, ["--protocol", "raft", "--exact", "--workers", "2"])
    assert result.exit_code == 2 and "--exact keeps full states in one process" in result.stderr
