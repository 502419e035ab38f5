"""leader-eventually on real protocols (checker/liveness.py over the cluster fairness)."""

from __future__ import annotations

from checker.result import Verdict
from checker.search import check
from models.catalogue import lookup
from specs.claims import leader_eventually


def test_even_quorum_never_elects_and_the_lasso_shows_it() -> None:
    entry = lookup("even-quorum")
    model = entry.build(entry.resolve({}))
    result = check(model, [leader_eventually]).result("leader-eventually")
    assert result.verdict is Verdict.VIOLATED
    lasso = result.trace
    assert lasso is not None and lasso.loop_from is not None
    assert all(not n.is_leader for step in lasso.steps for n in step.state.nodes)
    loop = lasso.actions[lasso.loop_from :]
    assert loop and all(a.name == "tick" for a in loop)  # time passes, nobody can act
    assert lasso.last.state == lasso.steps[lasso.loop_from].state
    for before, step in zip(lasso.steps, lasso.steps[1:], strict=False):
        assert (step.action, step.state) in list(model.successors(before.state))
