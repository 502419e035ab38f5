"""The fingerprint-collision estimate: TLC's formula on 60 bits, in the report and the JSON."""

from __future__ import annotations

import json
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


@pytest.mark.slow  # the default suite stays under 3 minutes; CI runs it
def test_report_and_json_carry_it(tmp_path: Path) -> None:
    args = ["--protocol", "raft-election", "--out", str(tmp_path)]
    text = CliRunner().invoke(main, args).stdout
    assert "fingerprints: 60 bits; estimated chance that a collision hid a state: 3.7e-08" in text
    doc = json.loads(CliRunner().invoke(main, [*args, "--json"]).stdout)
    n, g = 71_329, 667_295
    assert doc["stats"]["fingerprint_collision_probability"] == float(f"{n * (g - n) / 2**60:.3g}")
