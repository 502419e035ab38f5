"""Bully under a flapping link: elections never stop (a livelock lasso); with a bounded
number of partitions they do (leadership-settles HOLDS on the same engine)."""

from __future__ import annotations

import json
from pathlib import Path

import networkx as nx
import pytest
from click.testing import CliRunner

from leadercheck.checker.app.main import main
from leadercheck.checker.engine.strategies.bfs import check
from leadercheck.checker.result import Verdict
from leadercheck.models.bully import BullyModel, FlappingBully
from leadercheck.models.catalogue import lookup
from leadercheck.models.cluster import ClusterState, FaultBounds
from leadercheck.specs.claims import leadership_settles


def _standing(s: ClusterState) -> list[int]:
    return [i for i, n in enumerate(s.nodes, start=1) if n.up and n.role == "candidate"]


def _leaders(s: ClusterState) -> list[int]:
    return [i for i, _ in s.leaders()]


def _whole_graph(model: FlappingBully) -> nx.DiGraph:
    """Every reachable state and transition, as full states (small models only)."""
    graph = nx.DiGraph()
    todo = list(model.initial_states())
    graph.add_nodes_from(todo)
    while todo:
        state = todo.pop()
        for _, succ in model.successors(state):
            if succ not in graph:
                todo.append(succ)
            graph.add_edge(state, succ)
    return graph


def test_a_flapping_link_keeps_elections_going_forever() -> None:
    model = FlappingBully(3, timeout=2)
    result = check(model, [leadership_settles]).result("leadership-settles")
    assert result.verdict is Verdict.VIOLATED
    lasso = result.trace
    assert lasso is not None and lasso.loop_from is not None
    for before, step in zip(lasso.steps, lasso.steps[1:], strict=False):
        assert (step.action, step.state) in list(model.successors(before.state))
    loop_states = [step.state for step in lasso.steps[lasso.loop_from :]]
    assert loop_states[0] == loop_states[-1]  # the loop closes
    assert any(_standing(s) for s in loop_states)  # and keeps coming back to an election
    loop_actions = [a.name for a in lasso.actions[lasso.loop_from :]]
    assert "partition" in loop_actions and "heal" in loop_actions  # the link flaps in it
    assert "tick" in loop_actions and "election" in loop_actions
    assert all(s.faults.partitions == 0 for s in loop_states)  # no budget is spent


def test_the_livelock_changes_leader_on_the_way() -> None:
    # The lasso is the shortest; the fair component it loops in also holds the cycles in
    # which n2 takes over behind the cut and steps down once nN's heartbeat reaches it.
    model = FlappingBully(3, timeout=2)
    lasso = check(model, [leadership_settles]).result("leadership-settles").trace
    assert lasso is not None and lasso.loop_from is not None
    graph = _whole_graph(model)
    entry = lasso.steps[lasso.loop_from].state
    component = next(c for c in nx.strongly_connected_components(graph) if entry in c)
    leaderships = {tuple(_leaders(s)) for s in component}
    assert {(3,), (2, 3), (2,)} & leaderships >= {(3,), (2, 3)}


@pytest.mark.slow  # the default suite stays under 3 minutes; CI runs it
def test_a_bounded_number_of_partitions_lets_elections_settle() -> None:
    model = BullyModel(3, 2, FaultBounds(partitions=2))
    result = check(model, [leadership_settles]).result("leadership-settles")
    assert result.verdict is Verdict.HOLDS


def test_the_catalogue_entry_reports_and_replays_the_livelock(tmp_path: Path) -> None:
    entry = lookup("bully-flapping")
    assert [p.name for p in entry.params] == ["nodes", "timeout"]
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["--protocol", "bully-flapping", "--out", str(out)])
    assert result.exit_code == 1
    assert "leadership-settles  VIOLATED    lasso of" in result.stdout
    assert "back to where it fails" in result.stdout
    saved = out / "bully-flapping.json"
    replayed = CliRunner().invoke(main, ["replay", str(saved)])
    assert replayed.exit_code == 1, replayed.stdout  # the violation reproduces
    assert "leadership-settles is broken again" in replayed.stdout
    doc = json.loads(saved.read_text())
    doc["loop_from"] = 0  # the initial state is not on the loop: it does not close
    saved.write_text(json.dumps(doc))
    assert CliRunner().invoke(main, ["replay", str(saved)]).exit_code == 0  # no violation
