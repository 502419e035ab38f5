"""`verify explain`'s prose: the root cause, messages in the right direction, what a tick
changes, and a lasso's loop, on the committed trace files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from leadercheck.checker.render.explain import explain_lines, root_cause
from leadercheck.checker.render.trace_file import load_trace, parse_trace

ROOT = Path(__file__).resolve().parents[2]
TRACES = ROOT / "counterexamples"
EVERY = sorted(TRACES.glob("*.json")) + sorted(
    (ROOT / "examples" / "counterexamples").glob("*.json")
)


def _lines(name: str) -> list[str]:
    return explain_lines(load_trace(TRACES / f"{name}.json"))


def test_even_quorum_names_the_partition_from_the_start_and_the_endless_loop() -> None:
    lines = _lines("even-quorum")
    assert lines[0] == (
        "even-quorum (crashes=0, losses=0, nodes=4, pauses=0, terms=2): a counterexample of"
        " 2 steps for leader-eventually, a lasso back to step 1."
    )
    cause = lines[2]
    assert cause.startswith("Root cause: the property leader-eventually (on every fair")
    assert (
        "From the initial state the network is partitioned 2|2 ({n1, n2} | {n3, n4}),"
        " and it never heals."
    ) in cause
    assert "step 1 (t=0): timing stabilizes (no more faults; one election at a time)" in cause
    assert cause.endswith(
        "Then the last step repeats forever (back to step 1): time passes, and nothing"
        " changes: a fair cycle of 1 step (from step 1) on which it never comes true: no side"
        " of the partition can elect a leader: {n1, n2} can gather 2 of 4 votes, {n3, n4} can"
        " gather 2 of 4 votes; a leader needs 3."
    )
    assert lines[-1].startswith("From here the last step repeats forever (back to step 1)")


def test_lease_no_fencing_names_the_pause_the_expiry_and_the_late_write() -> None:
    cause = _lines("lease-no-fencing")[2]
    assert cause == (
        "Root cause: the property no-stale-write (once a write of epoch E is accepted, no"
        " write of an older epoch is) is broken at step 10: the storage accepted a write whose"
        " epoch is below epoch 2, which it had already accepted. The steps that matter:"
        ' step 3 (t=0): n1 pauses (process pause begins) while it is "leader t1, write t1'
        ' pending"; step 5 (t=2): time passes: n1\'s lease runs out, and n1 becomes "paused,'
        ' follower, write t1 pending"; step 8 (t=2): n2 writes to the storage (token 2'
        ' accepted), and the storage becomes "highest epoch 2"; step 10 (t=2) decides it:'
        ' n1 writes to the storage (token 1 accepted) while it is "follower, write t1'
        ' pending", late: it paused at step 3 and resumed at step 9.'
    )


def test_a_tick_says_what_ran_down_and_counts_time() -> None:
    steps = [line for line in _lines("lease-no-fencing") if line.startswith("Step ")]
    assert steps[3] == (
        "Step 4 (t=1): time passes; n1's lease runs down: 2 → 1 ticks left"
        " and the store's ttl runs down: 2 → 1 ticks left."
    )
    assert steps[4].startswith(
        "Step 5 (t=2): time passes; n1's lease runs out: 1 → 0 ticks left and the store's ttl"
        ' runs out: 1 → 0 ticks left; now n1 is "paused, follower, write t1 pending"'
    )
    assert steps[9].startswith("Step 10 (t=2): n1 writes to the storage (token 1 accepted)")


def test_a_message_goes_from_its_sender_and_the_note_is_the_receivers() -> None:
    steps = [line for line in _lines("raft-no-quorum") if line.startswith("Step ")]
    assert steps[1] == (
        "Step 2 (t=0): n1 asks n2 for its vote with RequestVote (at n2: adopts term 1; grants"
        ' its term 1 vote); now n2 is "follower t1, voted n1".'
    )
    assert steps[2] == (
        "Step 3 (t=0): n2 grants n1 its vote with VoteGranted (at n1: 2 votes, 2 needed:"
        ' leader t1); now n1 is "leader t1".'
    )


def test_a_participant_the_reason_names_that_never_changed_is_there_from_the_start() -> None:
    cause = _lines("bully")[2]
    assert 'From the initial state n3 is "LEADER".' in cause
    assert "step 2 (t=0): n2 crashes (volatile state lost)" in cause
    assert "after it crashed at step 2 and restarted at step 3" in cause


def test_a_long_loop_lists_what_repeats() -> None:
    cause = _lines("bully-flapping")[2]
    assert (
        "Then the last 11 steps repeat forever (back to step 7): n1 sends ELECTION to n2,"
        " n2 sends OK to n1, the network heals,"
    ) in cause


@pytest.mark.parametrize("path", EVERY, ids=lambda p: p.name)
def test_every_committed_trace_is_explained(path: Path) -> None:
    saved = load_trace(path)
    lines = explain_lines(saved)
    assert lines[2].startswith("Root cause: the property ")
    steps = [line for line in lines if line.startswith("Step ")]
    assert len(steps) == len(saved.steps) - 1 and all(s.endswith(".") for s in steps)
    assert not any('does "' in line for line in lines)


def _doc(**changes: object) -> dict[str, object]:
    doc = json.loads((TRACES / "lease-no-fencing.json").read_text())
    doc.update(changes)
    return doc


def test_a_witness_is_reached_not_broken() -> None:
    doc = _doc(trace_kind="witness", reason="a write is accepted")
    doc["property"] = {"name": "write-accepted", "kind": "sometimes", "description": ""}
    cause = root_cause(parse_trace(json.dumps(doc)))
    assert cause.startswith(
        "Root cause: the property write-accepted is reached at step 10: a write is accepted."
    )


def test_a_trace_of_one_step_and_one_of_none() -> None:
    doc = _doc()
    doc["steps"] = doc["steps"][:2]  # type: ignore[index]
    doc["length"] = 1
    lines = explain_lines(parse_trace(json.dumps(doc)))
    assert "a counterexample of 1 step for no-stale-write." in lines[0]
    doc["steps"] = doc["steps"][:1]  # type: ignore[index]
    doc["length"] = 0
    lines = explain_lines(parse_trace(json.dumps(doc)))
    assert "is broken in the initial state" in lines[2]
    assert not any(line.startswith("Step ") for line in lines)


def test_names_with_braces_are_text_not_templates() -> None:
    doc = _doc()
    doc["steps"][3]["action"]["name"] = "{x}"  # type: ignore[index]
    doc["steps"][5]["action"]["target"] = "n{1}"  # type: ignore[index]
    steps = [s for s in explain_lines(parse_trace(json.dumps(doc))) if s.startswith("Step ")]
    assert steps[2].startswith('Step 3 (t=0): n1 takes the step "{x}" (process pause begins)')
    assert steps[4].startswith("Step 5 (t=2): the clock sends tick to n{1};")
