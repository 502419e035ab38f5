"""Guard rails (checker/engine/guard.py): each misuse of a model is a ModelError naming the model,
the state and the fault, never a wrong verdict; rebuilt traces are verified."""

from __future__ import annotations

import json
import os
import pickle
import re
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest

from leadercheck.checker import (
    Action,
    EndReason,
    Model,
    ModelError,
    Step,
    Trace,
    Verdict,
    always,
    check,
)
from leadercheck.checker.engine.guard import (
    SAMPLE_ALL,
    SAMPLE_EVERY,
    GuardedModel,
    check_initial,
    check_shadowing,
    check_value,
    order_digest,
    preflight,
)
from leadercheck.checker.engine.settings import Reductions
from leadercheck.checker.engine.strategies.processes.partitioned import check_parallel
from leadercheck.checker.engine.successors import verify_trace
from leadercheck.checker.properties import Property, eventually, sometimes
from tests.misuse_models import (
    BareInitial,
    ByIdentity,
    Cell,
    Changing,
    Doubled,
    Drifting,
    FastButWrong,
    Flipping,
    HoldsIdentity,
    ListState,
    MutatesBag,
    MutatesBox,
    Node,
    SetOfStrings,
    Shadowed,
    ShadowedLater,
)
from tests.toys import Counter, Exploding, Tokens

ROOT = Path(__file__).resolve().parents[2]
ANYTHING = [always("anything", lambda s: True)]
NONDETERMINISM = (
    "so successors() did not repeat itself (nondeterministic order?); nothing was written"
)


def _fails(model: Model[Any], message: str, props: Sequence[Property] = ANYTHING) -> None:
    """Preflight and a guarded check both stop with exactly `message`."""
    with pytest.raises(ModelError) as caught:
        preflight(model, props)
    assert str(caught.value) == message
    with pytest.raises(ModelError) as caught:
        check(GuardedModel(model), props)
    assert str(caught.value) == message


# -- a correct model ------------------------------------------------------------


def test_a_correct_model_passes_preflight_without_warnings() -> None:
    assert preflight(Counter(10), [always("small", lambda x: x <= 10)]) == []


@pytest.mark.parametrize("limit", [10, 3000])  # 3000: past the first SAMPLE_ALL expansions
def test_a_guarded_model_gives_the_same_counts_and_traces(limit: int) -> None:
    props = [always("below", lambda x: x < limit), sometimes("half", lambda x: x == limit // 2)]
    plain, guarded = check(Counter(limit), props), check(GuardedModel(Counter(limit)), props)
    assert guarded.stats.distinct_states == plain.stats.distinct_states == limit + 1
    assert guarded.stats.generated_states == plain.stats.generated_states
    assert guarded.stats.depth == plain.stats.depth
    for mine, theirs in zip(guarded.results, plain.results, strict=True):
        assert mine.verdict is theirs.verdict
        assert mine.trace == theirs.trace


def test_a_guarded_model_keeps_symmetry_liveness_and_attributes() -> None:
    symmetric = Reductions(symmetry=True)
    plain = check(Tokens(3, 2), ANYTHING, reductions=symmetric).stats
    guarded = GuardedModel(Tokens(3, 2))
    mine = check(guarded, ANYTHING, reductions=symmetric).stats
    assert (mine.distinct_states, mine.generated_states, mine.depth) == (
        plain.distinct_states,
        plain.generated_states,
        plain.depth,
    )
    assert mine.distinct_states == 10  # C(3 + 2, 2) orbits
    assert guarded.top == 2 and guarded.symmetry_groups() == [range(3)]  # delegated
    live = check(GuardedModel(Counter(4)), [eventually("four", lambda x: x == 4)])
    assert live.result("four").verdict is Verdict.HOLDS


def test_sampling_is_every_call_then_one_in_512() -> None:
    inner = Counter(5000)
    calls = 0
    original = inner.successors

    def counted(state: int) -> Iterable[tuple[Action, int]]:
        nonlocal calls
        calls += 1
        return original(state)

    inner.successors = counted  # type: ignore[method-assign]
    guarded = GuardedModel(inner)
    for state in range(3 * SAMPLE_EVERY):
        guarded.successors(state)
    sampled = SAMPLE_ALL + 3  # the first 256 calls, then calls 512, 1024 and 1536
    assert guarded.calls == 3 * SAMPLE_EVERY
    assert calls == 3 * SAMPLE_EVERY + sampled  # a sampled call expands twice


def test_a_guarded_model_pickles_and_runs_in_workers() -> None:
    guarded = GuardedModel(Counter(30))
    again = pickle.loads(pickle.dumps(guarded))
    assert again.limit == 30 and list(again.successors(0)) == list(Counter(30).successors(0))
    result = check_parallel(guarded, ANYTHING, workers=2)
    assert result.stats.distinct_states == 31


# -- nondeterministic order ------------------------------------------------------


def test_a_nondeterministic_order_is_caught() -> None:
    _fails(
        Flipping(5),
        "Flipping.successors(state) gave its actions in a different order (or different "
        "actions) on a second call: the order must be fixed (do not iterate sets of strings "
        "or use random); state 0, first difference at position 0: counter: add1 (0->1) -> 1 "
        "vs counter: add2 (0->2) -> 2",
    )


def test_next_states_must_agree_with_successors() -> None:
    _fails(
        FastButWrong(4),
        "FastButWrong.next_states(state) disagrees with its successors(state): it must give "
        "their next states in the same order; state 0, first difference at position 0: 2 vs 1",
    )


def test_order_digest_is_plain_text_of_the_labels() -> None:
    assert order_digest(Counter(2)) == [
        "('add1', 'counter', None, '0->1')|('add2', 'counter', None, '0->2')",
        "('add1', 'counter', None, '1->2')",
        "",
    ]
    # the exploration stops once it has met 100 states: states 0..99 are met while 0..96
    # are expanded whole (97's expansion meets the 100th)
    lines = order_digest(Counter(5000), max_states=100)
    assert len(lines) == 97 and lines[96].endswith("'96->98')")


def _digest_under(seed: str) -> list[str]:
    code = (
        "import json; from leadercheck.checker.engine.guard import order_digest; "
        "from tests.misuse_models import SetOfStrings; "
        "print(json.dumps(order_digest(SetOfStrings())))"
    )
    env = {**os.environ, "PYTHONHASHSEED": seed}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    digest: list[str] = json.loads(out.stdout)
    return digest


def test_order_digest_shows_an_order_that_depends_on_the_hash_seed() -> None:
    assert preflight(SetOfStrings(), ANYTHING) == []  # fixed within a process: not caught
    one, two = _digest_under("1"), _digest_under("2")
    assert len(one) == len(two) == 4  # states 0..3; 3 has no successor
    assert one != two


# -- value semantics ---------------------------------------------------------------


def test_a_state_hashed_by_identity_is_rejected() -> None:
    _fails(
        ByIdentity(4),
        "states of ByIdentity compare by identity (the class Cell defines no __eq__/__hash__): "
        "two equal states would count as two; state Cell(0)",
    )


def test_identity_inside_a_namedtuple_is_named_with_its_path() -> None:
    _fails(
        HoldsIdentity(),
        "states of HoldsIdentity compare by identity (the class Cell, at state.cell, defines "
        "no __eq__/__hash__): two equal states would count as two; state "
        "Holder(n=0, cell=Cell(0))",
    )


def test_check_value_accepts_values_and_names_unhashable_parts() -> None:
    check_value((1, "a", None, frozenset({2}), Verdict.HOLDS, b"x", 1.5), "Fine")
    with pytest.raises(
        ModelError, match=re.escape("Bad: a state is unhashable (a list, at state[1])")
    ):
        check_value((1, [2]), "Bad")
    with pytest.raises(ModelError, match=re.escape("(the class Cell, at state[0][1], defines")):
        check_value(((0, Cell(1)),), "Bad")


def test_a_list_as_the_initial_state_is_a_model_error() -> None:
    _fails(
        ListState(),
        "ListState: a state is unhashable (a list): [0, 0]; states must be immutable and "
        "hashable: tuples, NamedTuples, frozen dataclasses",
    )


def test_initial_states_must_be_a_sequence_of_states() -> None:
    _fails(
        BareInitial(),
        "BareInitial.initial_states() must return a sequence of states; got a Point: "
        "Point(x=0, y=0) (return [state] for one initial state)",
    )

    class Empty(Counter):
        def initial_states(self) -> Sequence[int]:
            return []

    class Generated(Counter):
        def initial_states(self) -> Sequence[int]:
            return (x for x in (0, 1))  # type: ignore[return-value]

    with pytest.raises(ModelError, match=r"^Empty.initial_states\(\) returned no states"):
        check_initial(Empty(3))
    assert check_initial(Generated(3)) == [0, 1]


# -- mutation ----------------------------------------------------------------------


def test_a_state_mutated_in_place_is_caught() -> None:
    _fails(
        MutatesBox(),
        "MutatesBox.successors mutated the state it was given in place (state Box(n=0)); "
        "states must be immutable: tuples, NamedTuples, frozen dataclasses",
    )


def test_a_hash_that_reads_a_mutable_list_is_caught() -> None:
    _fails(
        MutatesBag(),
        "MutatesBag.successors mutated the state it was given in place (state Bag([])); "
        "states must be immutable: tuples, NamedTuples, frozen dataclasses",
    )


# -- duplicates and shadowing ------------------------------------------------------


def test_a_duplicate_successor_is_a_warning_once_per_action() -> None:
    warnings = preflight(Doubled(6), ANYTHING)
    assert warnings == [
        "Doubled: state 0 yields 'add1' by counter twice with the same next state "
        "(a duplicate successor)"
    ]
    guarded = GuardedModel(Doubled(6))
    assert check(guarded, ANYTHING).stats.distinct_states == 7  # a warning, not an error
    assert guarded.warnings == warnings


def test_a_field_that_shadows_a_property_is_rejected() -> None:
    message = (
        "field 'tenure' of Node shadows the property 'tenure' of Tenured, which claims read; "
        "rename the field"
    )
    _fails(Shadowed(), message)
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        check_shadowing(((0, Node()),))


def test_a_shadowing_record_that_appears_later_is_rejected() -> None:
    _fails(
        ShadowedLater(),
        "field 'tenure' of DataNode shadows the property 'tenure' of Tenured, which claims "
        "read; rename the field",
    )


def test_a_property_that_raises_is_named_by_preflight() -> None:
    with pytest.raises(ModelError) as caught:
        preflight(Counter(3), [always("inverse", lambda x: 1 / x > 0)])
    assert str(caught.value) == (
        "Counter: the property 'inverse' raised ZeroDivisionError on state 0: division by zero"
    )


def test_a_model_that_raises_is_left_to_the_search_and_its_trace() -> None:
    assert preflight(Exploding(10, at=3), ANYTHING) == []
    with pytest.raises(ModelError, match=r"^model raised ValueError in successors after 2 steps"):
        check(GuardedModel(Exploding(10, at=3)), ANYTHING)


# -- traces are verified when rebuilt ----------------------------------------------


def _changing_check(how: str) -> str:
    model = Changing(10, how)

    def below_7(x: int) -> bool:
        if x >= 7:
            model.changed = True  # the search has found it: the rebuild sees another order
        return x < 7

    with pytest.raises(ModelError) as caught:
        check(model, [always("below-7", below_7)])
    return str(caught.value)


def test_a_trace_that_ends_elsewhere_is_not_returned() -> None:
    assert _changing_check("reverse") == (
        "Changing: the trace to the state that breaks below-7 could not be rebuilt: its last "
        f"state does not break below-7, {NONDETERMINISM}"
    )


def test_a_trace_through_an_unexplored_state_is_not_returned() -> None:
    assert _changing_check("elsewhere") == (
        "Changing: the trace to the state that breaks below-7 could not be rebuilt: step 1's "
        f"state was never explored, {NONDETERMINISM}"
    )


def test_a_trace_past_the_end_of_the_successors_is_not_an_index_error() -> None:
    assert _changing_check("none") == (
        "Changing: the trace to the state that breaks below-7 could not be rebuilt: step 1 "
        f"takes successor 0 (from 0) of a state that now has 0, {NONDETERMINISM}"
    )


def test_the_same_holds_with_symmetry_and_exact() -> None:
    for reductions in (Reductions(exact=True), Reductions(symmetry=True)):
        model = Changing(10, "elsewhere")

        def below_7(x: int, model: Changing = model) -> bool:
            model.changed = model.changed or x >= 7
            return x < 7

        with pytest.raises(ModelError, match="step 1's state was never explored"):
            check(model, [always("below-7", below_7)], reductions=reductions)


def test_a_lasso_rebuilt_elsewhere_is_not_returned() -> None:
    with pytest.raises(ModelError) as caught:
        check(Drifting(after=2), [eventually("reach-2", lambda s: s == 2)])
    assert str(caught.value) == (
        "Drifting: the lasso that breaks reach-2 could not be rebuilt: step 1's state was "
        f"never explored, {NONDETERMINISM}"
    )


def test_a_lasso_must_return_to_where_its_loop_starts() -> None:
    def step(i: int, state: int) -> Step:
        return Step(i, None if i == 0 else Action("flip", "p"), {}, {}, state)

    prop = eventually("reach-2", lambda s: s == 2)
    verify_trace(prop, Trace((step(0, 0), step(1, 1), step(2, 0)), loop_from=0), "M")
    verify_trace(prop, Trace((step(0, 0), step(1, 1)), loop_from=1), "M")  # stuttering
    with pytest.raises(ModelError) as caught:
        verify_trace(prop, Trace((step(0, 0), step(1, 1), step(2, 3)), loop_from=0), "M")
    assert str(caught.value) == (
        "M: the lasso that breaks reach-2 could not be rebuilt: its last state is not the "
        f"state of step 0, where its loop starts, {NONDETERMINISM}"
    )


def test_a_guarded_model_catches_an_order_that_changes_during_the_search() -> None:
    class Late(Flipping):
        """Deterministic for its first 1000 calls, then flips on every other one."""

        def successors(self, state: int) -> Iterable[tuple[Action, int]]:
            self.calls += 1
            pairs = list(Counter(self.limit).successors(state))
            return pairs[::-1] if self.calls > 1000 and self.calls % 2 else pairs

    with pytest.raises(ModelError, match=r"^Late.successors\(state\) gave its actions"):
        check(GuardedModel(Late(3000)), ANYTHING)


# -- no properties ------------------------------------------------------------------


def test_a_check_without_properties_explores_everything() -> None:
    result = check(Counter(10), [])
    assert result.end is EndReason.EXHAUSTED
    assert result.stats.distinct_states == 11
    assert result.stats.generated_states == 1 + 10 + 9
    assert result.results == ()


@pytest.mark.parametrize(
    ("model", "message"),
    [
        (ListState(), "ListState: a state is unhashable (a list)"),
        (ByIdentity(4), "states of ByIdentity compare by identity"),
        (BareInitial(), "BareInitial.initial_states() must return a sequence of states"),
    ],
)
def test_check_itself_refuses_bad_initial_states(model: Model[Any], message: str) -> None:
    """Without the guard too, `check()` and the partitioned search check the initial states
    (cheaply: there are few), so the Python API never answers on them."""
    prop = sometimes("anything", lambda s: True)
    for search in (check, lambda m, p: check_parallel(m, p, workers=2)):
        with pytest.raises(ModelError, match=re.escape(message)):
            search(model, [prop])
