"""`verify conform`'s refusals, which need no server: one line, exit 2, nothing started."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import Result

from leadercheck.checker.conform.bindings import BINDINGS, binding_for
from leadercheck.checker.conform.harness import unsupported
from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.model import Action
from tests.conform.helpers import verify

ROOT = Path(__file__).resolve().parents[2]
LEASE = ROOT / "counterexamples" / "lease-no-fencing.json"


def refused(result: Result, text: str) -> None:
    assert result.exit_code == 2, result.output
    assert text in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1, result.stderr  # one line


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (["--against", "etcd"], "conform needs a TRACE.json, or --random N"),
        ([str(LEASE), "--against", "mongo"], "unknown system 'mongo'"),
        (
            [str(ROOT / "counterexamples" / "bully.json"), "--against", "etcd"],
            "bully cannot be run against etcd: it runs lease-no-fencing, lease-fencing",
        ),
        ([str(LEASE), "--against", "etcd", "--tick", "0"], "--tick 0: give seconds"),
        ([str(LEASE), "--against", "etcd", "--tick", "0.3"], "etcd grants leases in whole seconds"),
        ([str(LEASE), "--against", "etcd", "--ttl-scale", "0"], "--ttl-scale 0"),
        ([str(LEASE), "--against", "etcd", "-p", "nodes=2"], "-p is for --random"),
        ([str(LEASE), "--against", "etcd", "--random", "2"], "or --random N, not both"),
        (["--against", "etcd", "--random", "2", "--html", "d"], "--html is for a trace"),
        (["--against", "etcd", "--random", "0"], "--random 0"),
        (["--against", "etcd", "--random", "2", "--steps", "0"], "--steps 0"),
        (["--against", "etcd", "--random", "2", "--protocol", "raft"], "raft cannot be run"),
        ([str(LEASE), "--against", "etcd", "--endpoint", "localhost"], "--endpoint 'localhost'"),
        (
            [str(LEASE), "--against", "etcd", "--protocol", "lease-cas"],
            "lease-cas cannot take step 1 of the trace",
        ),
        (["missing.json", "--against", "etcd"], "missing.json"),
        (
            [str(LEASE), "--against", "etcd", "--partition", "sideways"],
            "--partition 'sideways' is not one of 'reset', 'silent'",
        ),
        (
            [
                str(ROOT / "counterexamples" / "zookeeper.json"),
                "--against",
                "zookeeper",
                "--kill-member",
                "leader",
            ],
            "--kill-member: zookeeper runs here as one server",
        ),
        ([str(LEASE), "--against", "etcd", "--kill-member", "boss"], "give leader or follower"),
        ([str(LEASE), "--against", "etcd", "--kill-member", "leader@11"], "1 to 10"),
        ([str(LEASE), "--against", "etcd", "--kill-member", "leader@x"], "1 to 10"),
        (
            [
                str(LEASE),
                "--against",
                "etcd",
                "--kill-member",
                "leader",
                "--endpoint",
                "127.0.0.1:2379",
            ],
            "not on --endpoint's",
        ),
        (
            ["--against", "etcd", "--random", "2", "--steps", "8", "--cut-member", "leader@9"],
            "the step is one of a schedule's (--steps), 1 to 8",
        ),
        (
            ["--against", "etcd", "--random", "2", "--kill-member", "x", "--cut-member", "x"],
            "give --kill-member or --cut-member, not both",
        ),
    ],
)
def test_bad_input_is_refused_in_one_line(args: list[str], text: str) -> None:
    refused(verify("conform", *args), text)


def test_a_malformed_trace_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    refused(verify("conform", str(bad), "--against", "etcd"), "bad.json")


def test_a_timeline_that_cannot_be_written_is_refused_before_anything_runs(tmp_path: Path) -> None:
    target = tmp_path / "dir.json"
    target.mkdir()
    refused(
        verify("conform", str(LEASE), "--against", "etcd", "--timeline", str(target)),
        "is a directory",
    )


def test_every_registered_binding_is_a_known_protocol_and_system() -> None:
    from leadercheck.checker.protocols.catalogue import built_in, load_catalogue

    names = set(built_in().protocols) | set(
        load_catalogue(str(ROOT / "examples/redlock.py")).protocols
    )
    assert {p for p, _ in BINDINGS} <= names
    with pytest.raises(LeadercheckError, match="unknown system"):
        binding_for("lease-fencing", "consul", {"nodes": 3})


def test_steps_no_system_can_make_real_are_named() -> None:
    binding = binding_for("lease-no-fencing", "etcd", {"nodes": 3, "ttl": 2})
    assert "a partition between nodes" in str(unsupported(binding, Action("partition", "network")))
    assert "not a node's call" in str(unsupported(binding, Action("lose", "network")))
    assert unsupported(binding, Action("acquire", "n1", "store")) is None
    assert unsupported(binding, Action("tick", "clock")) is None
    assert "no etcd operation" in str(unsupported(binding, Action("vote", "n1", "n2")))


def test_the_record_of_a_run_says_how_time_was_mapped() -> None:
    from leadercheck.checker.conform.report import time_mapping
    from leadercheck.checker.conform.world import Timing

    assert time_mapping(Timing()) == (
        "a tick is 1 s of real time; a TTL of k ticks is granted as 1·k s;"
        " facts may take up to 0.5 s to show (half a tick)"
    )
    assert "deliberately wrong" in time_mapping(Timing(ttl_scale=2))
    json.dumps(time_mapping(Timing(tick=0.5)))


def test_a_session_timeout_zookeeper_would_clamp_is_refused() -> None:
    trace = ROOT / "counterexamples" / "zookeeper.json"
    refused(
        verify("conform", str(trace), "--against", "zookeeper", "--tick", "30"),
        "outside the 0.4-20 s the server grants",
    )
