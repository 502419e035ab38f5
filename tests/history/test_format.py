"""Reading a history: both spellings, exact times, and every bad input refused in one line
that names the line and the field (through the command: exit 2, nothing written)."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from click.testing import CliRunner

from leadercheck.checker.app.main import main
from leadercheck.checker.history.events import HistoryError
from leadercheck.checker.history.format import parse_history

HEADER = {"schema": "leadercheck.history/1", "tick_seconds": 1, "ttl_seconds": 2}
ACQUIRE = {"at": 0.1, "node": "n1", "event": "acquire", "token": 7}
WRITE = {"at": 0.3, "node": "n1", "event": "write", "token": 7, "accepted": True}


def document(*events: dict[str, object], **header: object) -> str:
    return json.dumps({**HEADER, **header, "events": list(events)}, indent=2)


def lines(*events: dict[str, object], **header: object) -> str:
    head = [json.dumps({**HEADER, **header})] if header is not None else []
    return "\n".join([*head, *(json.dumps(e) for e in events)]) + "\n"


def test_a_document_and_json_lines_read_alike() -> None:
    one = parse_history(document(ACQUIRE, WRITE), "a.json")
    other = parse_history(lines(ACQUIRE, WRITE), "a.jsonl")
    assert one.events == other.events
    assert [e.named() for e in one.events] == [
        "event 1 (0.1 s, n1 acquire token 7)",
        "event 2 (0.3 s, n1 write token 7 accepted)",
    ]
    assert one.tick_seconds == 1 and one.ttl_seconds == 2 and one.protocol is None


def test_json_lines_need_no_header_and_times_are_exact() -> None:
    history = parse_history('{"at": 0.3, "node": "n2", "event": "lose"}\n', "h.jsonl")
    assert history.tick_seconds is None and history.events[0].at == Fraction(3, 10)
    assert history.events[0].at / Fraction(1, 10) == 3  # 0.3 / 0.1 is 3 ticks, not 2.999


def test_the_header_names_the_nodes_the_model_numbers() -> None:
    history = parse_history(
        document({**ACQUIRE, "node": "web-2"}, nodes=["web-1", "web-2"]), "h.json"
    )
    assert history.model_node("web-2") == "n2" and history.node_count() == 2


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (document(ACQUIRE, {**WRITE, "at": 0.05}), 'line 12: "at" 0.05 s is before 0.1 s of '
         "event 1: times must not decrease"),
        (document({**ACQUIRE, "event": "elect"}), 'line 6: "event" is "elect"; events are '
         "acquire, renew, lose, write"),
        (document({**ACQUIRE, "token": -1}), 'line 6: "token" must be a whole number from 0'),
        (document({**ACQUIRE, "token": 7.5}), '"token" must be a whole number'),
        (document({**ACQUIRE, "node": "db-1"}), 'line 6: unknown node "db-1"; nodes are n1, n2'),
        (document({**ACQUIRE, "node": "db-1"}, nodes=["web-1"]), 'line 9: unknown node "db-1"; '
         "the header names web-1"),
        (document({**WRITE, "accepted": "yes"}), 'a write needs "accepted": true or false'),
        (document({**ACQUIRE, "accepted": True}), '"accepted" belongs to write events'),
        (document({**ACQUIRE, "tokn": 7}), "event 1 has an unknown field \"tokn\""),
        (document({"at": 1, "node": "n1", "event": "renew"}), 'a renew event needs "token"'),
        (document({"node": "n1", "event": "lose"}), 'event 1 has no "at"'),
        (document(ACQUIRE).replace('"at": 0.1', '"at": NaN'), "line 6: NaN is not a number"),
        (document(ACQUIRE).replace('"at": 0.1', '"at": 1e999999'), "line 6: 1e999999 is out of"),
        (document(ACQUIRE).replace('"token": 7', '"token": 7, "token": 8'), 'line 6: field '
         '"token" is given twice'),
        (document(ACQUIRE)[:-4], "line 12: not JSON"),
        (document(ACQUIRE, tick_seconds=0), '"tick_seconds" must be a number of seconds above 0'),
        (document(ACQUIRE, schema="leadercheck.trace/1"), '"schema" is "leadercheck.trace/1"'),
        (document(), "no events"),
        (lines(ACQUIRE) + "{not json\n", "line 3: not JSON"),
        (lines(ACQUIRE) + "[1, 2]\n", "line 3: event 2 must be a JSON object, got a list"),
        ("", "empty"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_naming_line_and_field(tmp_path: Path, text: str, said: str) -> None:
    with pytest.raises(HistoryError, match=None) as caught:
        parse_history(text, "h.json")
    assert said in str(caught.value), str(caught.value)
    path = tmp_path / "h.json"
    path.write_text(text)
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["history", str(path), "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert result.output.count("\n") == 1 and result.output.startswith("error: "), result.output
    assert said in result.output
    assert not out.exists()  # nothing written


def test_a_history_file_never_runs_code(tmp_path: Path) -> None:
    """A `protocol` or `params` naming code is a name looked up, never imported."""
    path = tmp_path / "h.json"
    path.write_text(document(ACQUIRE, protocol="os.system", params={"nodes": "__import__"}))
    result = CliRunner().invoke(main, ["history", str(path)])
    assert result.exit_code == 2 and "unknown protocol 'os.system'" in result.output


def test_a_byte_order_mark_is_read_and_a_huge_node_list_checked_in_one_pass() -> None:
    """A UTF-8 BOM, as some editors save, is no reason to refuse a history; 300,000 node
    names with one repeated at the end are refused at once (it once took minutes)."""
    assert parse_history("\ufeff" + document(ACQUIRE), "bom.json").events
    names = [f"n{i}" for i in range(300_000)] + ["n5"]
    with pytest.raises(HistoryError, match='"nodes" names "n5" twice'):
        parse_history(document(ACQUIRE, nodes=names), "many.json")
