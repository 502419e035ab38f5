"""The terminal report's verdict lines: a witness is reached, one step is one step, and the
`--json` verdicts stay HOLDS / VIOLATED / INCOMPLETE."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from leadercheck.checker import always, check, sometimes
from leadercheck.checker.app.main import main
from leadercheck.checker.render.report import Run, json_report, report_lines
from leadercheck.checker.render.text import step_count
from tests.toys import Counter

ROOT = Path(__file__).resolve().parents[2]


def _run(*props) -> Run:  # type: ignore[no-untyped-def]
    return Run("counter", {}, check(Counter(4), list(props)), {}, {})


def test_step_count_is_singular_for_one() -> None:
    assert [step_count(n) for n in (0, 1, 2, 1234)] == [
        "0 steps",
        "1 step",
        "2 steps",
        "1,234 steps",
    ]


def test_a_witness_reads_reached_and_one_step_is_singular() -> None:
    run = _run(always("below-1", lambda x: x < 1), sometimes("two", lambda x: x == 2))
    lines = report_lines(run)
    assert "  below-1  VIOLATED    counterexample of 1 step" in lines
    assert "  two      HOLDS       reached in 1 step" in lines
    assert "witness for two:" in lines
    verdicts = {p["name"]: p["verdict"] for p in json_report(run)["properties"]}
    assert verdicts == {"below-1": "VIOLATED", "two": "HOLDS"}


def test_a_witness_in_the_initial_state() -> None:
    lines = report_lines(_run(sometimes("zero", lambda x: x == 0)))
    assert "  zero  HOLDS       reached in the initial state" in lines


@pytest.fixture()
def _at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


@pytest.mark.usefixtures("_at_root")
def test_the_cli_report_of_a_user_model(tmp_path: Path) -> None:
    args = ["--model", "tests/user_models/tiny_lock.py", "--protocol", "tiny-lock-racy"]
    result = CliRunner().invoke(main, [*args, "--out", str(tmp_path)])
    assert result.exit_code == 1
    assert "  mutual-exclusion  VIOLATED    counterexample of 4 steps" in result.stdout
    assert "  entered           HOLDS       reached in 2 steps" in result.stdout
    as_json = CliRunner().invoke(main, [*args, "--out", str(tmp_path), "--json"])
    doc = json.loads(as_json.stdout)
    assert [p["verdict"] for p in doc["properties"]] == ["VIOLATED", "HOLDS"]
    assert [p.get("trace_length") for p in doc["properties"]] == [4, 2]


@pytest.mark.usefixtures("_at_root")
def test_replay_says_how_long_the_trace_is(tmp_path: Path) -> None:
    args = ["--model", "tests/user_models/tiny_lock.py", "--protocol", "tiny-lock-racy"]
    assert CliRunner().invoke(main, [*args, "--out", str(tmp_path)]).exit_code == 1
    doc = json.loads((tmp_path / "tiny-lock-racy.json").read_text())
    doc["steps"], doc["length"] = doc["steps"][:2], 1
    one = tmp_path / "one.json"
    one.write_text(json.dumps(doc))
    replayed = CliRunner().invoke(main, ["replay", str(one), "--model", args[1]])
    assert re.search(
        r"tiny-lock-racy counterexample of 1 step for mutual-exclusion", replayed.stdout
    )
    assert "the replay parts" not in replayed.stdout
    assert "every step is as recorded, but mutual-exclusion holds along it" in replayed.stdout
