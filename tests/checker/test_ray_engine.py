"""The partitioned search on Ray actors gives check()'s counts, verdicts and traces."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from leadercheck.checker import CheckResult, EndReason, Model, Property, Verdict, always, check
from leadercheck.checker.engine.strategies.processes.partitioned import check_parallel
from leadercheck.checker.engine.strategies.ray_actors.actors import RayTransport, ray_transport
from leadercheck.models.catalogue import lookup
from leadercheck.specs.expectations import load_expectations

WORKERS = 2


@pytest.fixture(scope="module")
def transport() -> Iterator[RayTransport]:
    """One local Ray instance (two CPUs) for the module; each search starts its actors."""
    started = ray_transport(WORKERS, None)
    try:
        yield started
    finally:
        started.close()


def protocol(name: str, **params: int) -> tuple[Model[Any], tuple[Property, ...]]:
    entry = lookup(name)
    model = entry.build(entry.resolve({k: str(v) for k, v in params.items()}))
    return model, load_expectations().properties(name)


def same_as_check(
    model: Model[Any], props: tuple[Property, ...], transport: RayTransport
) -> CheckResult:
    single = check(model, props)
    parallel = check_parallel(model, props, workers=WORKERS, transport=transport)
    assert parallel.end is single.end
    for a, b in zip(single.results, parallel.results, strict=True):
        assert (b.verdict, b.reason, b.trace) == (a.verdict, a.reason, a.trace)
    s, p = single.stats, parallel.stats
    assert p.depth == s.depth
    if single.end is EndReason.EXHAUSTED:
        assert (p.distinct_states, p.generated_states) == (s.distinct_states, s.generated_states)
    return parallel


@pytest.mark.slow  # the default suite stays under 3 minutes; CI runs it
def test_raft_election_on_ray(transport: RayTransport) -> None:
    model, props = protocol("raft-election", N=3, NC=2, MaxTerm=2)
    result = same_as_check(model, props, transport)
    assert result.end is EndReason.EXHAUSTED
    assert result.stats.distinct_states == 321
    assert transport.actors == []  # each search ends its actors


@pytest.mark.slow  # the default suite stays under 3 minutes; CI runs it
def test_states_with_strings_and_none_hash_alike_in_every_actor(transport: RayTransport) -> None:
    # Bully's states hold node names, roles and message kinds (str) and None: the counts
    # match only if every actor hashes them alike (PYTHONHASHSEED, address randomization).
    model, props = protocol("bully", crashes=0)
    result = same_as_check(model, (always("anything", lambda s: True),), transport)
    assert result.end is EndReason.EXHAUSTED
    same_as_check(model, props, transport)


@pytest.mark.slow  # the default suite stays under 3 minutes; CI runs it
def test_a_violation_trace_on_ray(transport: RayTransport) -> None:
    model, props = protocol("raft-election", N=4, NC=2, MaxTerm=2, variant=1)
    result = same_as_check(model, props, transport)
    assert result.result("single-leader").verdict is Verdict.VIOLATED


@pytest.mark.slow  # the default suite stays under 3 minutes; CI runs it
def test_one_actor_on_the_same_instance(transport: RayTransport) -> None:
    single = RayTransport(1, False, transport.runtime_env)  # one batch per step: no list
    model, props = protocol("raft-election", N=3, NC=2, MaxTerm=2)
    parallel = check_parallel(model, props, workers=1, transport=single)
    expected = check(model, props)
    assert parallel.stats.distinct_states == expected.stats.distinct_states == 321
    assert [r.trace for r in parallel.results] == [r.trace for r in expected.results]
    single.close()  # it did not start Ray: the module's instance stays up


def test_importing_the_module_starts_nothing() -> None:
    import subprocess
    import sys

    module = "leadercheck.checker.engine.strategies.ray_actors.actors"
    code = f"import {module}, sys; print('ray' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
