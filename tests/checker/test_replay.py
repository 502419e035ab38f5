"""Replaying saved traces on models: exact reproduction, a differing note, a disabled action."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from leadercheck.checker import LeadercheckError
from leadercheck.checker.engine.replay import replay
from leadercheck.checker.render.explain import explain_lines
from leadercheck.checker.render.trace_file import load_trace, parse_trace
from leadercheck.models.catalogue import lookup
from leadercheck.specs import PROPERTIES

ROOT = Path(__file__).resolve().parents[2]
LEASE = ROOT / "counterexamples" / "lease-no-fencing.json"


def _model(name: str, params: dict[str, int]):  # type: ignore[no-untyped-def]
    protocol = lookup(name)
    return protocol.build(protocol.resolve({k: str(v) for k, v in params.items()}))


def test_the_committed_trace_reproduces_exactly() -> None:
    saved = load_trace(LEASE)
    result = replay(_model(saved.protocol, dict(saved.params)), saved, PROPERTIES["no-stale-write"])
    assert result.completed and result.reproduces
    assert result.findings == [] and result.first_parting is None
    assert [s.replayed for s in result.steps] == list(saved.actions)


def test_on_the_fenced_variant_the_traces_part_at_the_stale_write() -> None:
    saved = load_trace(LEASE)
    model = _model("lease-fencing", dict(saved.params))
    result = replay(model, saved, PROPERTIES["no-stale-write"], compare_states=False)
    assert result.completed and not result.reproduces
    assert result.first_parting == 10 and result.prop_broken is False
    assert result.findings == [
        "step 10: n1 -> storage: write (token 1 rejected: 1 < 2), recorded: token 1 accepted"
    ]


def test_an_action_that_is_not_enabled_stops_the_replay() -> None:
    doc = json.loads(LEASE.read_text())
    doc["steps"][6]["action"]["actor"] = "n3"  # n3 acquires, but the recorded state says n2
    saved = parse_trace(json.dumps(doc))
    result = replay(_model(saved.protocol, dict(saved.params)), saved, PROPERTIES["no-stale-write"])
    assert not result.reproduces and result.first_parting == 6
    assert result.findings[0].startswith("step 6: the state differs from the recorded one")
    doc["steps"][3]["action"]["name"] = "crash-loop"
    saved = parse_trace(json.dumps(doc))
    result = replay(_model(saved.protocol, dict(saved.params)), saved, PROPERTIES["no-stale-write"])
    assert not result.completed and len(result.steps) == 3
    assert result.findings == ["step 3: n1: crash-loop (process pause begins) is not enabled"]
    assert result.prop_broken is False


def test_an_edited_recorded_state_is_a_divergence_at_that_step() -> None:
    doc = json.loads(LEASE.read_text())
    doc["steps"][4]["state"]["store"]["ttl_left"] = 7
    saved = parse_trace(json.dumps(doc))
    result = replay(_model(saved.protocol, dict(saved.params)), saved, PROPERTIES["no-stale-write"])
    assert result.completed and not result.reproduces and result.first_parting == 4
    assert result.findings == [
        "step 4: the state differs from the recorded one: store.ttl_left: recorded 7, replayed 1"
    ]


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda d: d.pop("schema"), "'schema'"),
        (lambda d: d.update(schema="other/2"), "expected 'leadercheck.trace/1'"),
        (lambda d: d.update(params={"nodes": "3"}), "'params.nodes'"),
        (lambda d: d.update(steps={}), "'steps' must be a list"),
        (lambda d: d["steps"][2]["action"].pop("actor"), "'steps[2].action.actor'"),
        (lambda d: d["steps"][0].update(action={}), "'steps[0].action'"),
        (lambda d: d.update(length=3), "'length'"),
        (lambda d: d["steps"][2]["action"].update(unreached="x"), "'steps[2].action.unreached'"),
        (lambda d: d["steps"][2]["action"].update(unreached=[1]), "'steps[2].action.unreached'"),
    ],
)
def test_a_malformed_file_names_the_field(edit, field) -> None:  # type: ignore[no-untyped-def]
    doc = json.loads(LEASE.read_text())
    edit(doc)
    with pytest.raises(LeadercheckError, match="^t.json: .*" + re.escape(field)):
        parse_trace(json.dumps(doc), "t.json")


def test_sends_that_could_not_leave_are_kept_and_read_back() -> None:
    """raft-no-quorum's lone n3 times out behind the partition: the file keeps the two
    RequestVotes that could not leave (never in a state), and reading it back gives them
    to the chart as they were; a file from before they were kept reads as none."""
    doc = json.loads((ROOT / "counterexamples" / "raft-no-quorum.json").read_text())
    assert doc["steps"][5]["action"]["unreached"] == ["RequestVote(n3->n1)", "RequestVote(n3->n2)"]
    saved = parse_trace(json.dumps(doc))
    assert saved.steps[5].action.unreached == ("RequestVote(n3->n1)", "RequestVote(n3->n2)")
    for step in doc["steps"][1:]:
        del step["action"]["unreached"]
    assert parse_trace(json.dumps(doc)).steps[5].action.unreached == ()


def test_not_json_and_not_an_object() -> None:
    with pytest.raises(LeadercheckError, match="not JSON"):
        parse_trace("{", "t.json")
    with pytest.raises(LeadercheckError, match="not a JSON object"):
        parse_trace("[1]", "t.json")


def test_explain_has_one_sentence_per_step() -> None:
    saved = load_trace(LEASE)
    lines = explain_lines(saved)
    steps = [line for line in lines if line.startswith("Step ")]
    assert len(steps) == 10 and all(line.endswith(".") for line in steps)
    assert steps[2] == (
        "Step 3 (t=0): n1 pauses (process pause begins);"
        ' now n1 is "paused, leader t1, write t1 pending".'
    )
    assert lines[-1].startswith("The property no-stale-write")
    assert lines[-1].endswith("below epoch 2, which it had already accepted.")


def test_an_invariant_broken_midway_and_mended_by_the_end_is_broken_at_that_step() -> None:
    """A fix replayed on a schedule may break the claim at one step and mend it by the
    last: the replay judges every state it reaches, not the last one only."""
    from leadercheck.checker import always

    nobody_paused = always(
        "nobody-paused", lambda s: not any(n.paused for n in s.nodes), "no node is paused",
        lambda s: "a node is paused",
    )  # fmt: skip
    saved = load_trace(LEASE)  # n1 pauses at step 3 and resumes at step 6, of 10
    result = replay(_model(saved.protocol, dict(saved.params)), saved, nobody_paused)
    assert nobody_paused.predicate(result.final_state)  # mended at the end...
    assert result.completed and result.prop_broken and result.broken_at == 3  # ...broken at 3
    assert result.violated
