"""The compiled kernels (models/kernels/) are their models: on every reachable state of the
sizes below, a row decodes to the state it encodes, the kernel's successors are the model's in
the model's order, the claim key determines every claim, and the representative is one per
orbit of the model's symmetry. Then the compiled search (checker/engine/compiled/) gives what
the one-process search of the Python code gives: counts, verdicts, traces byte for byte, the
same early stops."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import deque
from typing import Any

import numpy as np
import pytest

from leadercheck.checker.engine.compiled import NOTE, compiled_kernel
from leadercheck.checker.engine.compiled.search import CompiledSearch
from leadercheck.checker.engine.reductions.symmetry import canonicalizer
from leadercheck.checker.engine.settings import Reductions, unbounded
from leadercheck.checker.engine.strategies.bfs import breadth_first
from leadercheck.checker.kernel import Kernel
from leadercheck.checker.model import Model
from leadercheck.checker.properties import Kind
from leadercheck.checker.result import CheckResult, EndReason, Verdict
from leadercheck.models.catalogue import PROTOCOLS as CATALOGUE
from leadercheck.models.lease_bench import LeaseBenchModel
from leadercheck.models.raft_election import RaftElectionModel
from leadercheck.specs.claims import PROPERTIES

STATE_CLAIMS = [p for p in PROPERTIES.values() if p.kind in (Kind.ALWAYS, Kind.SOMETIMES)]
VARIANTS = {"correct": 0, "noquorum": 1, "forgetvote": 2}


def claims_of(kernel: Kernel[Any], state: Any) -> tuple[object, ...]:
    """Every covered claim's value on `state` (what it raises counts as a value too)."""
    values: list[object] = []
    for prop in (p for p in STATE_CLAIMS if kernel.covers(p)):
        try:
            values.append(bool(prop.predicate(state)))
        except Exception as exc:  # a claim about a vocabulary this model has not
            values.append(type(exc).__name__)
    return tuple(values)


def swaps(model: Model[Any]) -> list[list[int]]:
    """The renamings that swap two neighbours of one symmetry group: they generate the
    group, so a function unchanged by each of them on every reachable state is unchanged
    by every renaming (the states reachable are closed under renaming)."""
    groups = [tuple(g) for g in model.symmetry_groups()]
    n = sum(len(g) for g in groups)
    out = []
    for group in groups:
        for a, b in zip(group, group[1:], strict=False):
            perm = list(range(n))
            perm[a], perm[b] = b, a
            out.append(perm)
    return out


def rows_of(kernel: Kernel[Any], states: list[Any]) -> Any:
    return np.array([kernel.encode(s) for s in states], dtype=np.uint64).reshape(
        len(states), kernel.words
    )


def canonical_rows(kernel: Kernel[Any], states: list[Any]) -> list[tuple[int, ...]]:
    rows = rows_of(kernel, states)
    kernel.canonicalize(rows, len(rows))
    return [tuple(int(w) for w in row) for row in rows]


def hold_to_model(model: Model[Any], symmetric: bool) -> int:
    """Walk every reachable state of `model` and hold its kernel to it; the states walked.

    With symmetry: the representative is unchanged by each swap of two neighbours in a
    group (so by every renaming), and the one-process search's own canonical form (checked
    on its own in tests/checker/test_symmetry.py) finds it in the state's orbit."""
    kernel = model.kernel(symmetric)
    assert kernel is not None
    moves_of = swaps(model) if symmetric else []
    python_canonical = canonicalizer(model) if symmetric else None
    out = np.empty((kernel.max_successors, kernel.words), dtype=np.uint64)
    parents = np.empty(len(out), dtype=np.int64)
    moves = np.empty(len(out), dtype=np.int64)
    claims_by_key: dict[int, tuple[object, ...]] = {}
    keys = np.empty(1, dtype=np.uint64)
    start = model.initial_states()
    seen = set(start)
    queue = deque(start)
    walked = 0
    while queue:
        state = queue.popleft()
        walked += 1
        row = rows_of(kernel, [state])
        assert kernel.decode([int(w) for w in row[0]]) == state
        done, count = kernel.expand(row, 0, 1, out, parents, moves)
        succs = list(model.next_states(state))
        assert (done, count) == (1, len(succs)) and count <= kernel.max_successors
        assert [tuple(int(w) for w in out[j]) for j in range(count)] == [
            kernel.encode(s) for s in succs
        ], f"successors of {state}"
        assert list(moves[:count]) == list(range(count))
        kernel.claim_keys(row, 1, keys)
        claims = claims_of(kernel, state)
        assert claims_by_key.setdefault(int(keys[0]), claims) == claims, state
        if symmetric:
            assert python_canonical is not None
            renamed = [state, *(model.permute(state, perm) for perm in moves_of)]
            reps = canonical_rows(kernel, renamed)
            assert len(set(reps)) == 1, f"two representatives for the orbit of {state}"
            assert python_canonical(kernel.decode(reps[0])) == python_canonical(state)
        for succ in succs:
            if succ not in seen:
                seen.add(succ)
                queue.append(succ)
    return walked


def raft_election(n: int, nc: int, max_term: int, variant: str) -> RaftElectionModel:
    return RaftElectionModel(n, nc, max_term, VARIANTS[variant])


@pytest.mark.parametrize("symmetric", [False, True])
@pytest.mark.parametrize(
    ("size", "states"),
    [
        ((3, 3, 2, "correct"), 1_588),
        pytest.param((3, 3, 2, "forgetvote"), None, marks=pytest.mark.slow),
        pytest.param((4, 2, 2, "noquorum"), None, marks=pytest.mark.slow),
        pytest.param((3, 2, 3, "correct"), 71_329, marks=pytest.mark.slow),
        pytest.param((5, 2, 2, "correct"), 107_029, marks=pytest.mark.slow),
        pytest.param((4, 3, 2, "forgetvote"), None, marks=pytest.mark.slow),
    ],
)
def test_raft_election_kernel_is_the_model(
    size: tuple[int, int, int, str], states: int | None, symmetric: bool
) -> None:
    walked = hold_to_model(raft_election(*size), symmetric)
    if states is not None:
        assert walked == states


def lease_bench(n: int, ttl: int, max_time: int, fencing: bool) -> LeaseBenchModel:
    return LeaseBenchModel(n, ttl, max_time, fencing)


@pytest.mark.parametrize("symmetric", [False, True])
@pytest.mark.parametrize(
    ("size", "states"),
    [
        ((2, 2, 4, True), 884),
        ((2, 2, 4, False), None),
        ((3, 2, 3, False), None),
        pytest.param((2, 2, 8, True), 10_484, marks=pytest.mark.slow),
        pytest.param((3, 2, 6, True), 19_640, marks=pytest.mark.slow),
        pytest.param((4, 1, 4, False), None, marks=pytest.mark.slow),
    ],
)
def test_lease_bench_kernel_is_the_model(
    size: tuple[int, int, int, bool], states: int | None, symmetric: bool
) -> None:
    walked = hold_to_model(lease_bench(*size), symmetric)
    if states is not None:
        assert walked == states


def catalogue(name: str, **params: int) -> Model[Any]:
    entry = CATALOGUE[name]
    return entry.build(entry.resolve({k: str(v) for k, v in params.items()}))


@pytest.mark.parametrize("symmetric", [False, True])
@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("raft", {"nodes": 3, "terms": 1}),
        pytest.param("raft-no-quorum", {"nodes": 3}, marks=pytest.mark.slow),
        pytest.param("raft-volatile-vote", {"nodes": 3}, marks=pytest.mark.slow),
        ("even-quorum", {"nodes": 4}),
        pytest.param("raft", {}, marks=pytest.mark.slow),
        pytest.param("raft", {"nodes": 3, "terms": 1, "losses": 1, "pauses": 1},
                     marks=pytest.mark.slow),
        pytest.param("even-quorum", {"nodes": 5, "terms": 1}, marks=pytest.mark.slow),
        pytest.param("raft", {"nodes": 4, "terms": 1}, marks=pytest.mark.slow),
        pytest.param("raft-no-quorum", {"nodes": 5, "terms": 1}, marks=pytest.mark.slow),
    ],
)  # fmt: skip
def test_raft_kernel_is_the_model(name: str, params: dict[str, int], symmetric: bool) -> None:
    hold_to_model(catalogue(name, **params), symmetric)


# -- the compiled search against the one-process search of the Python code ------------


def both(model: Model[Any], **settings: Any) -> tuple[CheckResult, CheckResult]:
    props = [p for p in STATE_CLAIMS if p.name in ("single-leader", "leader-elected", "failover")]
    compiled = breadth_first(model, props, unbounded(**settings))
    interpreted = breadth_first(model, props, unbounded(compiled=False, **settings))
    assert NOTE in compiled.notes and NOTE not in interpreted.notes
    return compiled, interpreted


def same(a: CheckResult, b: CheckResult, symmetric: bool = False) -> None:
    """The same search; with symmetry the two pick other representatives of an orbit, so
    where a search stops early it stops elsewhere: the same verdicts and trace lengths."""
    if not symmetric or a.end is EndReason.EXHAUSTED:
        assert (a.stats.distinct_states, a.stats.generated_states, a.stats.depth, a.end) == (
            b.stats.distinct_states,
            b.stats.generated_states,
            b.stats.depth,
            b.end,
        )
    assert a.end is b.end
    for x, y in zip(a.results, b.results, strict=True):
        assert (x.prop.name, x.verdict) == (y.prop.name, y.verdict)
        if x.trace is None or y.trace is None:
            assert x.trace is y.trace
        elif symmetric:
            assert len(x.trace) == len(y.trace)  # both shortest
        else:
            assert x.reason == y.reason
            assert [s.state for s in x.trace.steps] == [s.state for s in y.trace.steps]
            assert [s.action for s in x.trace.steps] == [s.action for s in y.trace.steps]


@pytest.mark.parametrize("symmetry", [False, True])
@pytest.mark.parametrize("variant", ["correct", "noquorum", "forgetvote"])
@pytest.mark.parametrize(
    "bounds",
    [{}, {"max_states": 700}, {"max_states": 1}, {"max_depth": 5}, {"max_depth": 40}],
)
def test_compiled_search_is_the_one_process_search(
    variant: str, symmetry: bool, bounds: dict[str, int]
) -> None:
    model = raft_election(4 if variant == "noquorum" else 3, 3, 2, variant)
    compiled, interpreted = both(model, reductions=Reductions(symmetry=symmetry), **bounds)
    same(compiled, interpreted, symmetry)
    if variant != "correct" and not bounds:
        assert compiled.result("single-leader").verdict is Verdict.VIOLATED
        assert compiled.end is EndReason.DECIDED


@pytest.mark.parametrize("symmetry", [False, True])
@pytest.mark.parametrize("fencing", [True, False])
@pytest.mark.parametrize("bounds", [{}, {"max_states": 300}, {"max_depth": 6}])
def test_compiled_lease_bench_is_the_one_process_search(
    fencing: bool, symmetry: bool, bounds: dict[str, int]
) -> None:
    model = lease_bench(3, 2, 4, fencing)
    props = [PROPERTIES[name] for name in ("no-stale-write", "single-leader", "write-accepted")]
    compiled = breadth_first(
        model, props, unbounded(reductions=Reductions(symmetry=symmetry), **bounds)
    )
    interpreted = breadth_first(
        model, props, unbounded(compiled=False, reductions=Reductions(symmetry=symmetry), **bounds)
    )
    assert NOTE in compiled.notes
    same(compiled, interpreted, symmetry)
    if not fencing and not bounds:
        assert compiled.result("no-stale-write").verdict is Verdict.VIOLATED


def test_exact_states_give_the_same_search() -> None:
    model = raft_election(3, 2, 3, "correct")
    compiled, interpreted = both(model, reductions=Reductions(exact=True, symmetry=True))
    same(compiled, interpreted, True)
    assert compiled.stats.exact and compiled.stats.distinct_states == 35_688


@pytest.mark.slow
@pytest.mark.parametrize(
    ("size", "expected"),
    [
        ((3, 3, 3), (3_738_761, 51_927_028, 18)),
        ((4, 4, 2), (818_626, 11_651_709, 16)),
    ],
)
def test_compiled_reference_counts_at_the_benchmark_sizes(
    size: tuple[int, int, int], expected: tuple[int, int, int]
) -> None:
    """The counts TLC and Spin give (issue 42's sizes; Spin's for the first)."""
    result = breadth_first(raft_election(*size, "correct"), [], unbounded())
    stats = result.stats
    assert (stats.distinct_states, stats.generated_states, stats.depth) == expected


@pytest.mark.slow
def test_compiled_lease_bench_at_its_large_size() -> None:
    """N=3 TTL=4 MaxTime=20: the count TLC and Spin give (1,666,512), and the generated and
    depth figures of the one-process search (docs/commands/bench.md)."""
    result = breadth_first(lease_bench(3, 4, 20, True), [], unbounded())
    stats = result.stats
    assert (stats.distinct_states, stats.generated_states, stats.depth) == (
        1_666_512,
        9_010_013,
        32,
    )


def test_a_claim_the_kernel_does_not_cover_is_judged_on_every_state() -> None:
    """A user's own claims (here about the messages, which the claim key leaves out, and
    one named like a shared claim) are not taken for the covered ones."""
    from leadercheck.checker.properties import always

    quiet = always("no-request-for-term-3", lambda s: not any(m[1] == 3 for m in s.msgs))
    impostor = always("single-leader", lambda s: len(s.msgs) < 5)
    model = raft_election(3, 2, 3, "correct")
    kernel = model.kernel(False)
    assert kernel is not None
    assert kernel.covers(PROPERTIES["single-leader"]) and not kernel.covers(impostor)
    for claims in ([quiet], [impostor], [quiet, PROPERTIES["single-leader"]]):
        compiled = breadth_first(model, claims, unbounded())
        interpreted = breadth_first(model, claims, unbounded(compiled=False))
        same(compiled, interpreted)
        assert compiled.results[0].verdict is Verdict.VIOLATED


def test_a_subclass_gets_no_kernel() -> None:
    class Mine(RaftElectionModel):
        pass

    assert Mine(3, 3, 2, 0).kernel(False) is None
    assert compiled_kernel(Mine(3, 3, 2, 0), [], unbounded()) is None


def test_what_only_the_one_process_search_does_goes_there() -> None:
    model = raft_election(3, 3, 2, "correct")
    assert compiled_kernel(model, [], unbounded()) is not None
    assert compiled_kernel(model, [], unbounded(compiled=False)) is None
    assert compiled_kernel(model, [], unbounded(reductions=Reductions(por=True))) is None
    live = [p for p in PROPERTIES.values() if p.kind not in (Kind.ALWAYS, Kind.SOMETIMES)]
    assert compiled_kernel(model, live[:1], unbounded()) is None


def test_without_numba_every_search_is_the_python_one() -> None:
    code = (
        "import sys; sys.modules['numba'] = None\n"
        "from leadercheck.models.raft_election import RaftElectionModel\n"
        "print(RaftElectionModel(3, 3, 2, 0).kernel(False))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == "None\n"


# -- off the happy path: Ctrl-C, the memory bound, a level on disk, a full disk ---------


def searched(model: Model[Any], **settings: Any) -> tuple[CompiledSearch, CheckResult]:
    base = unbounded(**settings)
    props = [PROPERTIES["single-leader"]]
    kernel = compiled_kernel(model, props, base)
    assert kernel is not None
    search = CompiledSearch(model, kernel, props, base)
    return search, search.run()


def test_ctrl_c_between_batches_is_incomplete_and_whole() -> None:
    calls = []

    def progress(_: Any) -> None:
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt

    search, result = searched(raft_election(3, 2, 3, "correct"), progress=progress)
    assert result.end is EndReason.INTERRUPTED
    assert result.result("single-leader").verdict is Verdict.INCOMPLETE
    assert 0 < result.stats.distinct_states < 71_329
    assert len(search.parents) == len(search.moves) == result.stats.distinct_states


def test_the_memory_bound_stops_the_search_incomplete() -> None:
    _, result = searched(raft_election(3, 2, 3, "correct"), max_memory=1)
    assert result.end is EndReason.MAX_MEMORY
    assert result.result("single-leader").verdict is Verdict.INCOMPLETE


def recorded_tempdirs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The temporary directories the searches make from now on (to see them removed)."""
    import leadercheck.checker.engine.compiled.search as search_module

    made: list[str] = []
    real = search_module.tempfile.mkdtemp

    def mkdtemp(**kw: Any) -> str:
        made.append(real(**kw))
        return made[-1]

    monkeypatch.setattr(search_module.tempfile, "mkdtemp", mkdtemp)
    return made


def test_levels_on_disk_give_the_same_search(monkeypatch: pytest.MonkeyPatch) -> None:
    import leadercheck.checker.engine.compiled.search as search_module

    made = recorded_tempdirs(monkeypatch)
    monkeypatch.setattr(search_module, "SPILL_SHARE", 1 << 62)  # every level to disk
    model = raft_election(3, 2, 3, "correct")
    _, on_disk = searched(model, max_memory=1 << 40)
    assert made and not any(os.path.exists(d) for d in made)  # removed
    _, in_memory = searched(model)
    assert on_disk.stats.distinct_states == in_memory.stats.distinct_states == 71_329
    assert on_disk.stats.generated_states == in_memory.stats.generated_states


def test_a_full_disk_stops_the_search_incomplete_with_the_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import errno

    import leadercheck.checker.engine.compiled.levels as levels

    class Full:
        def write(self, data: bytes) -> int:
            raise OSError(errno.ENOSPC, "No space left on device")

        def flush(self) -> None:
            pass

        def close(self) -> None:
            pass

    monkeypatch.setattr(levels.os, "fdopen", lambda fd, mode: (levels.os.close(fd), Full())[1])
    import leadercheck.checker.engine.compiled.search as search_module

    monkeypatch.setattr(search_module, "SPILL_SHARE", 1 << 62)
    _, result = searched(raft_election(3, 2, 3, "correct"), max_memory=1 << 40)
    assert result.end is EndReason.MAX_MEMORY
    assert result.result("single-leader").verdict is Verdict.INCOMPLETE
    assert any("No space left on device" in note for note in result.notes)


@pytest.mark.parametrize(
    ("slots", "end", "distinct"), [(2048, "exhausted", 1_588), (1024, "max", 921)]
)
def test_an_exact_table_that_may_not_grow_fills_up_before_the_search_stops(
    monkeypatch: pytest.MonkeyPatch, slots: int, end: str, distinct: int
) -> None:
    """Where growing the table would pass the memory bound, it fills up to 90% instead
    (slower lookups, the search goes on); with --exact, whose rows stay in memory, the
    search is then INCOMPLETE."""
    import leadercheck.checker.engine.compiled.table as table

    monkeypatch.setattr(table, "FIRST_SLOTS", slots)
    monkeypatch.setattr(table.Table, "growth", lambda self: 1 << 62)
    exact = Reductions(exact=True)
    _, result = searched(raft_election(3, 3, 2, "correct"), max_memory=1 << 40, reductions=exact)
    expected = EndReason.EXHAUSTED if end == "exhausted" else EndReason.MAX_MEMORY
    assert result.end is expected
    assert result.stats.distinct_states == distinct


def small_table(monkeypatch: pytest.MonkeyPatch, slots: int = 1024) -> list[str]:
    """A table of `slots` that may never grow: past it the fingerprints go to disk again
    and again. Returns the temporary directories the searches make (to see them gone)."""
    import leadercheck.checker.engine.compiled.table as table

    monkeypatch.setattr(table, "FIRST_SLOTS", slots)
    monkeypatch.setattr(table.Table, "growth", lambda self: 1 << 62)
    return recorded_tempdirs(monkeypatch)


@pytest.mark.parametrize("levels", ["levels in memory", "levels on disk"])
@pytest.mark.parametrize("symmetry", [False, True])
@pytest.mark.parametrize("variant", ["correct", "forgetvote"])
@pytest.mark.parametrize("bounds", [{}, {"max_states": 5_000}, {"max_depth": 7}])
def test_fingerprints_on_disk_give_the_same_search(
    monkeypatch: pytest.MonkeyPatch,
    variant: str,
    symmetry: bool,
    bounds: dict[str, int],
    levels: str,
) -> None:
    """Past the memory bound the visited set goes to disk (disk.py) and the search goes
    on: the same counts, depth, end, verdicts and traces, state for state, as in memory
    (the states found on disk dropped from a level in memory or in its file)."""
    import leadercheck.checker.engine.compiled.search as search_module

    model = raft_election(3, 2, 3, variant)
    props = [p for p in STATE_CLAIMS if p.name in ("single-leader", "leader-elected")]
    reductions = Reductions(symmetry=symmetry)
    in_memory = breadth_first(model, props, unbounded(reductions=reductions, **bounds))
    if levels == "levels on disk":
        monkeypatch.setattr(search_module, "SPILL_SHARE", 1 << 62)
    made = small_table(monkeypatch)
    settings = unbounded(reductions=reductions, max_memory=1 << 40, **bounds)
    on_disk = breadth_first(model, props, settings)
    same(on_disk, in_memory)
    flushed = [n for n in on_disk.notes if "visited fingerprints went to disk" in n]
    assert flushed or on_disk.stats.distinct_states < 1000
    assert made and not any(os.path.exists(d) for d in made)  # removed


def test_a_full_disk_under_the_fingerprints_stops_the_search_with_the_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import errno

    import leadercheck.checker.engine.compiled.disk as disk

    small_table(monkeypatch)

    def full(*args: Any, **kwargs: Any) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(disk, "_write", full)
    _, result = searched(raft_election(3, 2, 3, "correct"), max_memory=1 << 40)
    assert result.end is EndReason.MAX_MEMORY
    assert result.result("single-leader").verdict is Verdict.INCOMPLETE
    assert any("No space left on device" in note for note in result.notes)
