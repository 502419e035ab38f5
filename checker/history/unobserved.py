"""The model's steps between two events: faults without a budget, and none that cannot help.

A real history may need more pauses, crashes or lost replies than a protocol's default
budgets allow; the budgets bound an exhaustive search, not the protocol. So every budget
the history does not fix (`-p pauses=1` fixes one) is unbounded: after each step it is
filled up again. That is exact, not an approximation: budgets only enable faults (a state
with more left has every step of the same state with less), so a history is a behaviour
with budgets filled up at every step exactly when it is one with budgets large enough,
and states never differ by what they have left.

Faults are still many, and most of them change nothing a history can see. Three kinds
are left out because the model promises they cannot matter (the promises partial-order
reduction relies on, `ClusterModel.stop_only_delays` and `cut_only_blocks`):

- cutting a node off from the store, when a cut only blocks (`cut_only_blocks`): every
  step enabled while cut is enabled, with the same effect, while not;
- pausing a node that owes nothing (not `urgent`), when a stopped node only falls silent
  (`stop_only_delays`): it is never forced to act, a tick treats it alike paused or not,
  and nothing else asks whether it is paused, so not pausing it and not letting it act
  is the same behaviour;
- crashing a quiet node (a follower whose restart gives back its record, which ticks
  leave alone and which owes nothing): the crash and a later restart give back what was
  there, and meanwhile nothing else reads it (`stop_only_delays`).

And, with `stop_only_delays`, two recoveries are made only where they matter. A crash
whose restart is quiet is followed at once by the restart: a down node only waits, and
the restarted quiet node can wait too, so it can do everything the down one could. A
resume comes with the node's next step of its own (or the `lose` it logs): until then a
paused node and a resumed one that does nothing are alike to everything else, and a
resumed one may hold time back (it may owe a step). So a node paused with a write it has
not sent is one state, not two, whichever way the history goes on.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from leadercheck.checker.model import FAULT, Action
from leadercheck.models.cluster import STORE, ClusterModel, ClusterState
from leadercheck.models.cluster.base import BUILT_IN_FAULTS
from leadercheck.models.cluster.nodes import node_name

Step = tuple[Action, Any]
NODE_FAULTS = ("crash", "restart", "pause", "resume")  # what ClusterModel does to a node


class Unobserved:
    """`successors` as the history search takes them: budgets filled up, useless faults out.

    `unbounded` names the budgets (parameters) with no bound; the others are counted as
    the model counts them."""

    def __init__(self, model: ClusterModel, unbounded: Sequence[str]) -> None:
        self.model = model
        self.top = model.initial_states()[0].faults
        self.fields = tuple(name for name in BUILT_IN_FAULTS if name in unbounded)
        self.extra = frozenset(
            k for k, kind in enumerate(model.fault_kinds) if kind.name in unbounded
        )
        self.everything = len(self.fields) == len(BUILT_IN_FAULTS) and len(self.extra) == len(
            model.fault_kinds
        )
        self.index = {node_name(i): i for i in model.ids}
        self._restarts: dict[int, Action] = {}  # each node's restart step, once found

    def moves(self, s: ClusterState) -> Iterator[tuple[tuple[Step, ...], ClusterState]]:
        """Each move of `s`: its steps and where it ends. A crash may come with its restart,
        a resume comes with the node's next step of its own."""
        for action, after in self.model.successors(s):
            if action.kind == FAULT and self._useless(s, action):
                continue
            after = self.refill(after)
            node = self.index.get(action.actor)
            if node is not None and action.name == "crash":
                restart = self._quiet_restart(after, node)
                if restart is not None:
                    yield ((action, after), restart), restart[1]
                    continue
            if node is not None and action.name == "resume" and self.model.stop_only_delays:
                for step in self._own_steps(after, action.actor):
                    yield ((action, after), step), step[1]
                continue
            yield ((action, after),), after

    def resume(self, s: ClusterState, name: str) -> Step | None:
        """The step that resumes paused node `name` (a lose it logs needs it running)."""
        return next(((a, self.refill(t)) for a, t in self.model.successors(s)
                     if a.name == "resume" and a.actor == name), None)  # fmt: skip

    def _own_steps(self, s: ClusterState, name: str) -> Iterator[Step]:
        """The steps node `name` takes itself (its calls and protocol steps, not a fault
        done to it): a resume only matters before one of them (stop_only_delays)."""
        for action, after in self.model.successors(s):
            if action.actor != name or action.name in NODE_FAULTS or action.name == "partition":
                continue
            if action.kind == FAULT and self._useless(s, action):
                continue
            yield action, self.refill(after)

    def refill(self, s: ClusterState) -> ClusterState:
        """`s` with every unbounded budget as it was at the start."""
        f, top = s.faults, self.top
        if f == top:
            return s
        if self.everything:
            return s._replace(faults=top)
        filled = f._replace(**{name: getattr(top, name) for name in self.fields})
        if self.extra:
            extra = tuple(top.extra[k] if k in self.extra else v for k, v in enumerate(f.extra))
            filled = filled._replace(extra=extra)
        return s._replace(faults=filled)

    def _useless(self, s: ClusterState, action: Action) -> bool:
        m = self.model
        if action.name == "partition" and action.target == STORE:
            return m.cut_only_blocks
        i = self.index.get(action.actor)
        if i is None or not m.stop_only_delays:
            return False
        if action.name == "pause":
            return not m.urgent(s, i)
        if action.name == "crash":
            node = s.node(i)
            return m.restart_node(m.crash_node(node), i) == node and self._quiet(s, i, node)
        return False

    def _quiet(self, s: ClusterState, i: int, node: Any) -> bool:
        """A follower with no tenure that ticks leave alone and that owes nothing."""
        m = self.model
        if node.is_leader or node.role != "follower" or node.tenure:
            return False
        return bool(m.tick_node(node) == node and not m.urgent(s.with_node(i, node), i))

    def _quiet_restart(self, down: ClusterState, i: int) -> Step | None:
        """The restart of crashed node i, when it gives a quiet node (stop_only_delays):
        the model's own restart step, found among its successors once per node and then
        made as `ClusterModel` makes it (the record `restart_node` gives, nothing else)."""
        m = self.model
        if not m.stop_only_delays:
            return None
        restarted = m.restart_node(down.node(i), i)
        if not self._quiet(down, i, restarted):
            return None
        action = self._restarts.get(i)
        if action is None:
            name = node_name(i)
            action, after = next(
                (a, s) for a, s in m.successors(down) if a.name == "restart" and a.actor == name
            )
            if after != down.with_node(i, restarted):
                return None  # a restart that does more than restart_node says: left to search
            self._restarts[i] = action
        return action, self.refill(down.with_node(i, restarted))
