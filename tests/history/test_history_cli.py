"""`verify history` as a user runs it: each sample's verdict and exit code, --json as one
object, the charts written only with --out and the same bytes every run, every bad path
refused before any work, a conformance timeline read as a history, and Ctrl-C."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from leadercheck.checker.app.main import main
from leadercheck.checker.conform.harness import Entry
from leadercheck.checker.conform.report import SCHEMA as CONFORMANCE_SCHEMA
from leadercheck.checker.history import format as history_format
from leadercheck.checker.history.bench import leader_history
from tests.helpers import ROOT, run_interrupted, snapshot, special_path

SAMPLES = ROOT / "examples" / "histories"


def verify(*args: str | Path) -> Result:
    return CliRunner().invoke(main, ["history", *(str(a) for a in args)])


def report(*args: str | Path) -> tuple[int, dict[str, Any]]:
    result = verify(*args, "--json")
    return result.exit_code, json.loads(result.stdout)


@pytest.mark.parametrize(
    ("name", "code", "verdict", "refused", "claims"),
    [
        ("clean.jsonl", 0, "PERMITTED", None, {"single-leader": [], "no-stale-write": []}),
        ("stale-write.json", 1, "PERMITTED", None, {"single-leader": [], "no-stale-write": [5]}),
        ("two-holders.json", 1, "NOT PERMITTED", 3,
         {"single-leader": [1, 3], "no-stale-write": [5]}),
        ("impossible.json", 1, "NOT PERMITTED", 4, {"single-leader": [], "no-stale-write": []}),
    ],
)  # fmt: skip
def test_each_sample_history_has_its_verdict(
    name: str, code: int, verdict: str, refused: int | None, claims: dict[str, list[int]]
) -> None:
    exit_code, doc = report(SAMPLES / name)
    assert exit_code == code
    assert doc["verdict"] == verdict
    assert (doc["refused"] or {}).get("event") == refused
    assert {c["name"]: c["events"] for c in doc["claims"]} == claims
    assert doc["schema"] == "leadercheck.history-report/1" and doc["files"] == []


def test_the_report_names_the_stale_write_and_what_the_model_could_do(tmp_path: Path) -> None:
    result = verify(SAMPLES / "stale-write.json", "--protocol", "lease-fencing")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()  # stderr says the search began
    assert lines[1].startswith("model: lease-fencing nodes=2 ttl=2 tokens=3 crashes=any")
    assert (
        "NOT PERMITTED  the model takes events 1 to 4 but not event 5 (2.6 s, n1 write token "
        "4021 accepted)" in result.output
    )
    assert "t=2: n1 -> storage: write (token 1 rejected: 1 < 2)" in result.output
    assert "VIOLATED       no-stale-write: event 5 (2.6 s, n1 write token 4021 accepted) is " \
        "stale" in result.output  # fmt: skip
    assert lines[-1] == "verdict: not permitted by the model; breaks no-stale-write"


def test_a_clean_history_exits_0_and_writes_nothing_without_out(tmp_path: Path) -> None:
    result = verify(SAMPLES / "clean.jsonl")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == "verdict: permitted by the model, breaks no claim"


def test_charts_are_written_with_out_byte_for_byte_the_same(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    for out in (first, second):
        assert verify(SAMPLES / "stale-write.json", "--out", out).exit_code == 1
    names = sorted(p.name for p in first.iterdir())
    assert names == sorted(p.name for p in second.iterdir())
    assert {n.rsplit(".", 1)[0] for n in names} >= {
        "stale-write.history",
        "stale-write.no-stale-write",
    }
    for name in names:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name
    trace = json.loads((first / "stale-write.no-stale-write.json").read_text())
    assert trace["params"]["pauses"] == 1 and trace["params"]["crashes"] == 0  # what it spent
    assert trace["steps"][-1]["text"] == "n1 -> storage: write (token 1 accepted)"
    assert trace["steps"][-1]["state"]["storage"]["stale_write_accepted"] is True
    assert "event 5 at 2.6 s" in (first / "stale-write.no-stale-write.dot").read_text()
    replayed = CliRunner().invoke(main, ["replay", str(first / "stale-write.no-stale-write.json")])
    assert replayed.exit_code == 1 and "no-stale-write is broken again" in replayed.output


def test_a_long_chart_is_its_last_steps(tmp_path: Path) -> None:
    path = tmp_path / "long.json"
    path.write_text(json.dumps(leader_history(300)))
    assert verify(path, "--out", tmp_path / "out").exit_code == 0
    trace = json.loads((tmp_path / "out" / "long.history.json").read_text())
    assert trace["length"] == 200 and trace["steps"][0]["action"] is None


def test_a_conformance_timeline_reads_as_a_history(tmp_path: Path) -> None:
    """The manual's etcd run (docs/commands/conform.md: `verify conform ... --timeline`, its
    entries written by the harness's own `Entry.to_json`): its lease calls are the events, at
    their real times; the ticks the run made set the history's tick."""
    assert history_format.CONFORMANCE_SCHEMA == CONFORMANCE_SCHEMA
    rows = [
        (0, 0.008, "servers and clients started"),
        (0, 0.029, "n1 grant: lease=4709536184051485447; n1 acquire: granted=True, token=2"),
        (0, 0.036, "n1 check: believes_leader=True, token=2"),
        (0, 0.041, "SIGSTOP n1 (pid 30387)"),
        (1, 1.048, "1 s of real time passed"),
        (2, 2.121, "1 s of real time passed"),
        (2, 2.149, "n2 grant: lease=7970142314267738887; n2 acquire: granted=True, token=4"),
        (2, 2.172, "n2 write: accepted=True, token=4"),
        (2, 2.179, "SIGCONT n1 (pid 30387)"),
        (2, 2.192, "n1 write: accepted=True, token=2"),
    ]
    record = {
        "schema": CONFORMANCE_SCHEMA,
        "protocol": "lease-no-fencing",
        "params": {"nodes": 3, "ttl": 2, "tokens": 3, "crashes": 1, "partitions": 1,
                   "losses": 1, "pauses": 1},
        "timing": {"tick_seconds": 1.0, "ttl_scale": 1.0, "settle_seconds": 1.5},
        "timeline": [Entry(k, t, "", real, at, {}, {}).to_json()
                     for k, (t, at, real) in enumerate(rows)],
    }  # fmt: skip
    path = tmp_path / "timeline.json"
    path.write_text(json.dumps(record))
    code, doc = report(path)
    assert code == 1 and doc["verdict"] == "PERMITTED" and doc["origin"] == "conformance timeline"
    assert doc["tick_seconds"] == pytest.approx(1.0605) and doc["events"] == 4
    assert {c["name"]: c["events"] for c in doc["claims"]} == {
        "single-leader": [],
        "no-stale-write": [4],
    }
    code, doc = report(path, "--protocol", "lease-fencing")
    assert doc["verdict"] == "NOT PERMITTED" and doc["refused"]["event"] == 4
    record["timeline"] = [{**e, "real": "n1 create: seq=3"} for e in record["timeline"]]
    path.write_text(json.dumps(record))
    result = verify(path)
    assert result.exit_code == 2 and "no lease call" in result.output


@pytest.mark.parametrize("kind", ["fifo", "directory", "missing", "link-to-zero", "/dev/zero"])
def test_an_input_that_is_no_regular_file_is_refused(tmp_path: Path, kind: str) -> None:
    result = verify(special_path(tmp_path, kind))
    assert result.exit_code == 2 and result.output.count("\n") == 1, result.output


def test_an_oversize_history_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(history_format, "MAX_BYTES", 1024)
    result = verify(special_path(tmp_path, "oversize", oversize=1024))
    assert result.exit_code == 2 and "larger than 1 KiB" in result.output


@pytest.mark.parametrize("kind", ["fifo", "file", "symlink", "/dev/null"])
def test_an_out_that_is_no_directory_is_refused(tmp_path: Path, kind: str) -> None:
    out = special_path(tmp_path, kind)
    before = snapshot(out)
    result = verify(SAMPLES / "stale-write.json", "--out", out)
    assert result.exit_code == 2 and result.output.count("\n") == 1, result.output
    assert snapshot(out) == before


@pytest.mark.parametrize("kind", ["symlink", "fifo", "directory"])
def test_a_chart_file_that_is_no_regular_file_is_refused_before_any_work(
    tmp_path: Path, kind: str
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    target = out / "stale-write.history.svg"
    if kind == "symlink":
        (tmp_path / "elsewhere").write_text("keep")
        target.symlink_to(tmp_path / "elsewhere")
    elif kind == "fifo":
        os.mkfifo(target)
    else:
        target.mkdir()
    result = verify(SAMPLES / "stale-write.json", "--out", out)
    assert result.exit_code == 2 and result.output.count("\n") == 1, result.output
    assert sorted(p.name for p in out.iterdir()) == ["stale-write.history.svg"]  # nothing written


def test_out_may_not_name_the_history_itself(tmp_path: Path) -> None:
    """A chart file that is the history under another name (a hard link) is refused."""
    history = tmp_path / "h.json"
    history.write_text((SAMPLES / "stale-write.json").read_text())
    out = tmp_path / "out"
    out.mkdir()
    os.link(history, out / "h.history.json")
    before = history.read_bytes()
    result = verify(history, "--out", out)
    assert result.exit_code == 2 and "is the history itself" in result.output
    assert history.read_bytes() == before


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--protocol", "lease-fencin"], "unknown protocol 'lease-fencin' (did you mean"),
        (["--protocol", "raft-election"], "verify history follows the cluster protocols"),
        (["-p", "tokenz=3"], "unknown parameter 'tokenz'"),
        (["-p", "pauses=9"], "parameter pauses=9 is out of range 0..3"),
        (["-p", "nodes=2", "--protocol", "lease-no-fencing"], "names 3 nodes, more than nodes=2"),
        (["--tick", "0.3"], "ttl_seconds 2 s is not a whole number of ticks of 0.3 s"),
        (["--tick", "0.000001"], "ticks of 1e-06 s, more than 1,000,000"),
        (["--tick", "0"], "--tick 0: give a number above 0"),
        (["--tick", "1", "--tick", "2"], "given 2 times"),
    ],
)
def test_bad_arguments_are_one_line_and_exit_2(tmp_path: Path, args: list[str], said: str) -> None:
    history = SAMPLES / ("two-holders.json" if "nodes=2" in args else "stale-write.json")
    result = verify(history, *args, "--out", tmp_path / "out")
    assert result.exit_code == 2 and result.output.count("\n") == 1, result.output
    assert said in result.output, result.output
    assert not (tmp_path / "out").exists()


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    result = verify(SAMPLES / "stale-write.json", "--protocol", "nope", "--debug")
    assert result.exit_code == 2 and "Traceback" in result.output


def test_ctrl_c_ends_the_search_with_exit_3_and_nothing_written(tmp_path: Path) -> None:
    path = tmp_path / "long.json"
    path.write_text(json.dumps(leader_history(60_000)))
    out = tmp_path / "out"
    args = [sys.executable, "-m", "leadercheck.checker.app", "history", str(path)]
    done = run_interrupted([*args, "--out", str(out)], cwd=ROOT, ready="events, taken through")
    assert done.returncode == 3, (done.returncode, done.stderr[-300:])
    assert "INCOMPLETE" in done.stdout or "interrupted" in done.stderr
    assert not out.exists() or not list(out.iterdir())
