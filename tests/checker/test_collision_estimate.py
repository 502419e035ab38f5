"""The fingerprint-collision estimate: TLC's formula on the fingerprint's bits (60 in the
Python search, 96 in the compiled one), in the report and the JSON."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from leadercheck.checker.app.main import main
from leadercheck.checker.engine.store import FP_MASK
from leadercheck.checker.result import FINGERPRINT_SPACE, Stats


def stats(distinct: int, generated: int) -> Stats:
    return Stats(distinct, generated, generated - 1, 0, 1.0, 0)


def test_the_estimate_follows_the_counts() -> None:
    assert FINGERPRINT_SPACE == FP_MASK + 1
    # n (g - n) / 2^60 when repeats dominate, n^2 / 2^61 when they do not
    assert stats(1_000_000, 11_000_000).collision_probability == pytest.approx(1e13 / 2**60)
    assert stats(1_000_000, 1_000_000).collision_probability == pytest.approx(5e11 / 2**60)
    assert stats(10**12, 10**13).collision_probability == 1.0  # never more than certain
    assert stats(1, 1).collision_probability < 1e-18


def test_the_estimate_follows_the_bits_and_adds_other_searches() -> None:
    wide = replace(stats(1_000_000, 11_000_000), fingerprint_bits=96)
    assert wide.collision_probability == pytest.approx(1e13 / 2**96)
    both = replace(wide, collision_elsewhere=1e-6)  # a second search, on 60 bits
    assert both.collision_probability == pytest.approx(1e-6 + 1e13 / 2**96)
    assert replace(both, exact=True).collision_probability == pytest.approx(1e-6)


@pytest.mark.slow  # the default suite stays under 3 minutes; CI runs it
@pytest.mark.parametrize(
    ("flags", "bits", "text"), [([], 96, "5.4e-19"), (["--interpreted"], 60, "3.7e-08")]
)
def test_report_and_json_carry_it(tmp_path: Path, flags: list[str], bits: int, text: str) -> None:
    pytest.importorskip("numba")  # the compiled search's fingerprints are the wider ones
    args = ["--protocol", "raft-election", "--out", str(tmp_path), *flags]
    out = CliRunner().invoke(main, args).stdout
    assert (
        f"fingerprints: {bits} bits; estimated chance that a collision hid a state: {text}" in out
    )
    doc = json.loads(CliRunner().invoke(main, [*args, "--json"]).stdout)
    n, g = 71_329, 667_295
    assert doc["stats"]["fingerprint_bits"] == bits
    expected = float(f"{n * (g - n) / 2**bits:.3g}")
    assert doc["stats"]["fingerprint_collision_probability"] == expected


@pytest.mark.slow  # two searches: the reduced one compiled, liveness in Python
def test_a_check_of_two_searches_adds_their_estimates(tmp_path: Path) -> None:
    pytest.importorskip("numba")
    args = ["--protocol", "raft", "--symmetry", "--out", str(tmp_path), "--json"]
    doc = json.loads(CliRunner().invoke(main, args).stdout)
    phases = {ph["name"]: ph for ph in doc["stats"]["phases"]}
    assert doc["stats"]["fingerprint_bits"] == 60  # the unreduced liveness search is larger
    assert len(phases) >= 2 and doc["stats"]["fingerprint_collision_probability"] > 0
    text = CliRunner().invoke(main, args[:-1]).stdout
    assert "bits in the largest search, each other search's estimate added" in text
