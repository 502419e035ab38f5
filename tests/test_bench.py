"""`verify bench`: the benchmark runner's output, on a small stand-in case (no timing asserts)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from checker.bench import CASES, BenchCase
from checker.cli import main
from models.catalogue import PROTOCOLS


def test_every_benchmark_names_a_protocol_and_its_parameters() -> None:
    for case in CASES:
        protocol = PROTOCOLS[case.protocol]
        protocol.resolve(dict(case.params))  # raises on an unknown or out-of-range parameter


def test_bench_reports_counts_speed_and_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    small = BenchCase("lease-no-fencing", (("nodes", "2"), ("pauses", "0")))
    monkeypatch.setattr("checker.cli.CASES", (small,))
    result = CliRunner().invoke(main, ["bench", "--repeat", "1", "--json"])
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.stdout)["benchmarks"]
    assert row["model"] == "lease-no-fencing" and row["params"] == {"nodes": "2", "pauses": "0"}
    assert row["distinct_states"] > 0 and row["generated_states"] >= row["distinct_states"]
    for key in ("depth", "seconds", "states_per_second", "peak_memory_bytes", "bytes_per_state"):
        assert key in row
    text = CliRunner().invoke(main, ["bench", "--repeat", "1"]).stdout
    assert text.splitlines()[0].split()[:3] == ["model", "and", "size"]
    assert "lease-no-fencing nodes=2 pauses=0" in text


def test_bench_of_an_unknown_model_is_a_usage_error() -> None:
    result = CliRunner().invoke(main, ["bench", "--only", "nothing"])
    assert result.exit_code == 2 and "no benchmark of model 'nothing'" in result.stderr
