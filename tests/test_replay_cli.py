"""`verify replay` and `verify explain` through click's runner: exit codes and output lines.

replay's exit code answers the question of its form: on the trace's own protocol, 1 = the
violation reproduces; on another (a fix), 0 = the trace no longer violates there, 1 = it
still does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from leadercheck.checker.app.main import main

ROOT = Path(__file__).resolve().parents[1]
LEASE = ROOT / "counterexamples" / "lease-no-fencing.json"
COMMITTED = sorted((ROOT / "counterexamples").glob("*.json"))


def verify(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _edited(tmp_path: Path, edit) -> str:  # type: ignore[no-untyped-def]
    doc = json.loads(LEASE.read_text())
    edit(doc)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(doc))
    return str(path)


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: p.name)
def test_every_committed_trace_replays_exactly(path: Path) -> None:
    """A counterexample reproduces its violation (exit 1); a witness still reaches its
    goal (exit 0: a `sometimes` claim holds, as `verify --protocol` says of it)."""
    result = verify("replay", str(path))
    assert "reproduced: all" in result.stdout
    if json.loads(path.read_text())["trace_kind"] == "witness":
        assert result.exit_code == 0, result.output
        assert result.stdout.splitlines()[-1].startswith("verdict: HOLDS along this trace")
    else:
        assert result.exit_code == 1, result.output
        assert result.stdout.endswith("verdict: VIOLATED (the violation reproduces)\n")


def test_replay_prints_numbered_lines_and_runs_only_the_subcommand(tmp_path: Path) -> None:
    result = verify("replay", str(LEASE))
    assert result.exit_code == 1  # the violation reproduces
    assert " 10  n1 -> storage: write (token 1 accepted)" in result.stdout
    assert "=> no-stale-write broken: the storage accepted a write" in result.stdout
    assert "distinct states" not in result.stdout  # main's own body did not run
    assert not (tmp_path / "counterexamples").exists()


def test_cross_variant_replay_parts_at_step_10_where_the_property_holds() -> None:
    result = verify("replay", str(LEASE), "--protocol", "lease-fencing")
    assert result.exit_code == 0  # the fix holds against this schedule
    out = result.stdout
    assert out.splitlines()[-1] == (
        "verdict: HOLDS along this trace (the fix holds against this schedule: lease-fencing "
        "does not break no-stale-write along it; `verify --protocol lease-fencing` checks "
        "every schedule)"
    )
    assert (
        "step 10: n1 -> storage: write (token 1 rejected: 1 < 2), recorded: token 1 accepted" in out
    )
    assert "the replay parts from the record at step 10; no-stale-write holds" in out


def test_an_edited_actor_is_rejected_with_the_step_number(tmp_path: Path) -> None:
    def edit(doc: dict) -> None:  # type: ignore[type-arg]
        doc["steps"][1]["action"]["actor"] = "n2"
        doc["steps"][1]["action"]["note"] = "CAS ok"

    result = verify("replay", _edited(tmp_path, edit))
    assert result.exit_code == 0  # the schedule no longer breaks the property
    assert (
        "step 1: n2 -> store: acquire (CAS ok: token 1, ttl 2), recorded: CAS ok" in result.stdout
    )
    assert result.stdout.splitlines()[-1] == (
        "verdict: HOLDS along this trace (the violation no longer reproduces: "
        "lease-no-fencing does not break no-stale-write)"
    )


def test_an_edited_note_is_rejected_with_the_step_number(tmp_path: Path) -> None:
    def edit(doc: dict) -> None:  # type: ignore[type-arg]
        doc["steps"][8]["action"]["note"] = "token 2 rejected"

    result = verify("replay", _edited(tmp_path, edit))
    assert result.exit_code == 1  # a note differs, and the violation happens all the same
    assert result.stdout.splitlines()[-1] == (
        "verdict: VIOLATED (no-stale-write still breaks, though not as recorded)"
    )
    assert "step 8: n2 -> storage: write (token 2 accepted), recorded: token 2 rejected" in (
        result.stdout
    )


def test_an_action_that_is_not_enabled_stops_the_replay(tmp_path: Path) -> None:
    def edit(doc: dict) -> None:  # type: ignore[type-arg]
        doc["steps"][9]["action"]["name"] = "restart"

    result = verify("replay", _edited(tmp_path, edit))
    assert result.exit_code == 0  # the replay stops before the stale write
    assert "step 9: n1: restart (process pause ends) is not enabled" in result.stdout
    assert "diverged: the replay stops at step 9 of 10" in result.stdout


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.update(schema="leadercheck.trace/0"), "expected 'leadercheck.trace/1'"),
        (lambda d: d.update(protocol="lease-no-fence"), "'protocol': unknown protocol"),
        (lambda d: d.update(params=[3]), "'params' must be an object of integers"),
        (lambda d: d["params"].update(ttl=2.5), "'params.ttl' must be an integer"),
        (lambda d: d["params"].update(ttl=99), "parameter ttl=99 is out of range"),
        (lambda d: d["params"].pop("ttl"), "'params' lacks ttl"),
        (lambda d: d["params"].update(speed=1), "'params.speed' is not a parameter"),
        (lambda d: d["property"].update(name="liveness"), "'property.name' 'liveness'"),
        (lambda d: d["steps"][4].pop("action"), "'steps[4].action' is missing"),
        (lambda d: d["steps"][4]["action"].update(note=None), "'steps[4].action.note'"),
    ],
)
def test_a_malformed_file_exits_2_naming_the_field(tmp_path: Path, edit, message) -> None:  # type: ignore[no-untyped-def]
    result = verify("replay", _edited(tmp_path, edit))
    assert result.exit_code == 2
    assert result.stdout == ""
    assert message in result.stderr and result.stderr.count("\n") == 1


def test_not_json_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text("not json")
    for command in ("replay", "explain"):
        result = verify(command, str(path))
        assert result.exit_code == 2
        assert result.stderr.startswith(f"error: {path}: not JSON")


def test_a_protocol_missing_parameters_fails_clearly() -> None:
    result = verify("replay", str(LEASE), "--protocol", "raft")
    assert result.exit_code == 2
    assert "'params' lacks terms, which raft requires" in result.stderr


def test_explain_tells_one_sentence_per_step() -> None:
    result = verify("explain", str(LEASE))
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    steps = [line for line in lines if line.startswith("Step ")]
    assert [line.split(" (")[0] for line in steps] == [f"Step {k}" for k in range(1, 11)]
    assert lines[2].startswith("Root cause: the property no-stale-write")
    assert steps[3] == (
        "Step 4 (t=1): time passes; n1's lease runs down: 2 → 1 ticks left"
        " and the store's ttl runs down: 2 → 1 ticks left."
    )
    assert lines[-1].startswith("The property no-stale-write (once a write of epoch E")


def test_against_a_variant_that_still_breaks_the_property_exits_1() -> None:
    result = verify("replay", str(LEASE), "--protocol", "lease-no-confirmation")
    assert result.exit_code == 1, result.output
    assert result.stdout.splitlines()[-1] == (
        "verdict: VIOLATED (the fix does not hold: lease-no-confirmation still breaks "
        "no-stale-write)"
    )


def test_against_a_variant_that_cannot_follow_the_schedule_exits_0_and_says_so() -> None:
    result = verify("replay", str(LEASE), "--protocol", "lease-cas")
    assert result.exit_code == 0, result.output
    last = result.stdout.splitlines()[-1]
    assert "lease-cas cannot take step 1 and does not break no-stale-write before it" in last


def test_the_help_says_what_each_form_exits() -> None:
    text = " ".join(verify("replay", "--help").stdout.split())
    assert "On the trace's own protocol (no --protocol): does the violation reproduce? 1 yes" in (
        text
    )
    assert "With --protocol FIX: does the fix hold against this schedule? 0 yes" in text
    assert "1 no, the fix still violates" in text
