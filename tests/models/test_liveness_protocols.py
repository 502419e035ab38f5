"""leader-eventually on real protocols (checker/engine/liveness.py over the cluster fairness)."""

from __future__ import annotations

import pytest

from leadercheck.checker.engine.strategies.bfs import check
from leadercheck.checker.result import Verdict
from leadercheck.models.catalogue import lookup
from leadercheck.models.cluster import ClusterState
from leadercheck.models.raft import RaftModel
from leadercheck.specs.claims import leader_eventually, leader_recovers


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
    # timing stabilizes (the clock's fair step), and then no node stands: none reaches a
    # majority of the four, so none can win, and time passes forever
    assert [a.name for a in lasso.actions] == ["stabilize", "tick"]
    assert lasso.loop_from == 1
    stable = lasso.last.state
    assert not any(a.name == "timeout" for a, _ in model.successors(stable))
    # the lasso says why, in votes: the 2|2 partition leaves no side a majority of four
    assert result.reason.endswith(
        "on which it never comes true: no side of the partition can elect a leader: "
        "{n1, n2} can gather 2 of 4 votes, {n3, n4} can gather 2 of 4 votes; a leader needs 3"
    )


@pytest.mark.slow  # 12 s
def test_five_nodes_split_two_three_always_elect_eventually() -> None:
    entry = lookup("even-quorum")
    model = entry.build(entry.resolve({"nodes": "5"}))
    result = check(model, [leader_eventually]).result("leader-eventually")
    assert result.verdict is Verdict.HOLDS


@pytest.fixture(scope="module")
def raft() -> RaftModel:
    model = lookup("raft").build(lookup("raft").resolve({}))
    assert isinstance(model, RaftModel)
    return model


@pytest.mark.slow  # the default suite stays under 3 minutes; CI runs it
def test_raft_recovers_a_leader_once_timing_is_stable(raft: RaftModel) -> None:
    result = check(raft, [leader_recovers]).result("leader-recovers")
    assert result.verdict is Verdict.HOLDS


class _EveryTimeoutAtOnce(RaftModel):
    """Raft without the timing assumption: timeouts fire whenever, even after stabilizing."""

    def _may_time_out(self, s: ClusterState, i: int) -> bool:
        return True


@pytest.mark.slow  # 40 s
def test_without_the_timing_assumption_split_votes_go_on_until_the_terms_run_out(
    raft: RaftModel,
) -> None:
    broken = _EveryTimeoutAtOnce(raft.n, raft.terms, raft.bounds, stabilizes=True)
    result = check(broken, [leader_recovers]).result("leader-recovers")
    assert result.verdict is Verdict.VIOLATED
    lasso = result.trace
    assert lasso is not None and lasso.loop_from is not None
    after = lasso.actions[[a.name for a in lasso.actions].index("stabilize") :]
    timeouts = [a for a in after if a.name == "timeout"]
    assert len({a.actor for a in timeouts}) >= 2  # two candidates split the votes
    assert all(not n.is_leader for n in lasso.last.state.nodes)


def test_a_cut_off_node_does_not_burn_the_kept_term(raft: RaftModel) -> None:
    """After stabilizing, a node that cannot reach a majority does not stand (PreVote)."""
    start = raft.initial_states()[0]
    split = next(s for a, s in raft.successors(start) if a.name == "partition")
    stable = next(s for a, s in raft.successors(split) if a.name == "stabilize")
    lone = next(iter(stable.net.island))
    assert not any(
        a.name == "timeout" and a.actor == f"n{lone}" for a, _ in raft.successors(stable)
    )
    assert any(a.name == "timeout" for a, _ in raft.successors(stable))


@pytest.mark.slow
def test_raft_at_five_nodes_recovers_a_leader_after_any_partition() -> None:
    """The manual's 5-node run (docs/concepts/liveness.md): one term before stabilizing and
    one after, no crash (660,621 states, about two minutes)."""
    entry = lookup("raft")
    model = entry.build(entry.resolve({"nodes": "5", "terms": "1", "crashes": "0"}))
    result = check(model, [leader_recovers])
    assert result.result("leader-recovers").verdict is Verdict.HOLDS
    assert result.stats.distinct_states == 660_621
