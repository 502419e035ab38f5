"""Spin runs the shared benchmark's compact Promela (checker/app/benchmarks/spin.py): its counts
equal the reference counts of ../shared/benchmarks/raft-election.md, and the broken variants
fail ElectionSafety, so timing `pan` against `verify` compares like with like, Spin at its best."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from leadercheck.checker.app.benchmarks.spin import (
    COMPACT,
    Contender,
    SpinRow,
    SpinRun,
    Timed,
    parse_pan,
    spin_lines,
)
from leadercheck.checker.errors import LeadercheckError

HAVE_SPIN = shutil.which("spin") is not None and shutil.which("cc") is not None
# CI installs spin and cc before the slow set (.ci/run): there these run, or fail


SHARED = Path(__file__).resolve().parents[3] / "shared" / "benchmarks" / COMPACT.name


@pytest.mark.skipif(not SHARED.is_file(), reason="no ../shared/benchmarks beside the checkout")
def test_the_promela_is_the_shared_benchmarks_own() -> None:
    assert COMPACT.read_bytes() == SHARED.read_bytes()


def test_unknown_variants_are_refused_before_any_work() -> None:
    with pytest.raises(LeadercheckError, match="unknown raft-election variant 'nocount'"):
        SpinRun(3, 3, 2, "nocount")


def test_pan_output_is_read() -> None:
    out = (
        "State-vector 44 byte, depth reached 27, errors: 0\n"
        "  1588 states, stored\n     8181 states, matched\n"
        "     9769 transitions (= stored+matched)\npan: elapsed time 0.01 seconds\n"
    )
    found = parse_pan(out)
    assert (found.stored, found.transitions, found.errors, found.seconds) == (1588, 9769, 0, 0.01)
    with pytest.raises(LeadercheckError, match="pan's output has no"):
        parse_pan("pan: something else")
    with pytest.raises(LeadercheckError, match="depth bound cut its search short"):
        parse_pan("error: max search depth too small\n" + out)


def test_the_table_gives_medians_and_the_ratios_of_one_run() -> None:
    def runs(*seconds: float) -> tuple[Timed, ...]:
        return tuple(Timed(s, 100 << 20) for s in seconds)

    row = SpinRow(
        (4, 4, 2),
        (
            Contender("verify --symmetry", 35_063, runs(1.0, 3.0, 2.0)),
            Contender("verify", 818_626, runs(8.0, 9.0, 7.0)),
            Contender("pan", 818_626, runs(3.0, 2.0, 4.0)),
        ),
    )
    assert row.ratio == 1.5  # pan's median 3 s over verify --symmetry's 2 s
    assert row.rate_share == pytest.approx(3.0 / 8.0)  # 818,626 / 8 s over 818,626 / 3 s
    line = spin_lines([row])[-1]
    assert line.startswith(
        "| raft-election N=4 NC=4 MaxTerm=2 | 2.00 s | 3.00 s | 1.50x | 35,063 |"
    )
    assert "| 0.38 |" in line


@pytest.mark.parametrize(
    ("size", "stored", "transitions"),
    [((3, 3, 2), 1_588, 9_769), ((3, 2, 3), 71_329, 667_295)],
)
@pytest.mark.slow
@pytest.mark.skipif(not HAVE_SPIN and not os.environ.get("CI"), reason="no spin or cc")
def test_spin_finds_the_reference_counts(
    size: tuple[int, int, int], stored: int, transitions: int
) -> None:
    run = SpinRun(*size)
    try:
        found = run.run(timeout=300)
    finally:
        run.close()
    assert (found.stored, found.transitions, found.errors) == (stored, transitions, 0)


@pytest.mark.parametrize(("variant", "n"), [("noquorum", 4), ("forgetvote", 3)])
@pytest.mark.slow
@pytest.mark.skipif(not HAVE_SPIN and not os.environ.get("CI"), reason="no spin or cc")
def test_spin_finds_the_broken_variants_violated(variant: str, n: int) -> None:
    run = SpinRun(n, 2, 2, variant)
    try:
        assert run.run(timeout=300).errors == 1
    finally:
        run.close()


def test_bench_spin_refuses_what_it_does_not_take() -> None:
    from click.testing import CliRunner

    from leadercheck.checker.app.main import main

    result = CliRunner().invoke(main, ["bench", "--spin", "--only", "raft-election"])
    assert result.exit_code == 2
    assert result.stderr == (
        "error: --spin runs its own models and searches: drop --only/--search/--large/--sampled\n"
    )
