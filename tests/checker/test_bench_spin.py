"""The raft-election benchmark in Promela (checker/app/benchmarks/spin.py) is the benchmark: Spin's
counts equal the reference counts of ../shared/benchmarks/raft-election.md, and the broken
variants fail ElectionSafety, so timing `pan` against `verify` compares like with like."""

from __future__ import annotations

import os
import shutil

import pytest

from leadercheck.checker.app.benchmarks.spin import SpinRun, parse_pan, promela
from leadercheck.checker.errors import LeadercheckError

HAVE_SPIN = shutil.which("spin") is not None and shutil.which("cc") is not None
# CI installs spin and cc before the slow set (.ci/run): there these run, or fail


def test_every_action_instance_is_one_step_of_one_loop() -> None:
    text = promela(3, 2, 3)
    # Timeout for nodes 1..NC, BecomeLeader for every node, and per possible message
    # (terms 2..3, ordered pairs of nodes): handle and drop a request, handle and drop
    # each of the two responses
    assert text.count(":: d_step") == 2 + 3 + 2 * 6 * (2 + 4)
    assert text.count("assert(") == text.count(":: d_step")  # ElectionSafety in every step
    with pytest.raises(LeadercheckError, match="unknown raft-election variant"):
        promela(3, 3, 2, "nocount")


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
