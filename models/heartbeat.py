"""Heartbeat election without a quorum: the split-brain anti-pattern.

The algorithm: the leader sends a heartbeat to every node it can reach on each
tick. A follower that hears one restarts its timer; a follower whose timer runs out
(`timeout` ticks without a heartbeat) promotes itself and starts sending heartbeats.
A leader that hears a heartbeat from a leader with a lower id steps down, so two
leaders that can hear each other converge. There is no store, no vote and no quorum.

The bug: a partition that cuts the leader off from the others leaves it leading its
side while the other side times out and promotes a second leader. Both keep
writing. The protocol has no epochs, so single-leader here means at most one
leader at any instant; each promotion draws a ghost epoch, carried on writes, so
the no-stale-write claim can be judged as well.

Node 1 starts as leader. Faults: crash, partition, message loss, pause.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from leadercheck.checker.model import Action
from leadercheck.models.cluster import (
    STORAGE,
    ClusterModel,
    ClusterState,
    FaultBounds,
    Message,
    countdown,
)
from leadercheck.models.cluster.base import Successor
from leadercheck.models.cluster.nodes import node_name, with_life
from leadercheck.models.cluster.storage import leadership_note
from leadercheck.models.params import NODES, Param, ProtocolEntry, fault_params

HEARTBEAT = "heartbeat"


class HeartbeatNode(NamedTuple):
    up: bool = True
    paused: bool = False
    leader: bool = False
    follows: int = 0  # who it believes leads; 0: nobody
    timer: int = 0  # ticks left before it gives up on the leader
    ghost: int = 0  # ghost epoch of its leadership, carried on its writes
    due: bool = False  # a leader owes this tick's heartbeat

    @property
    def is_leader(self) -> bool:
        return self.leader

    @property
    def role(self) -> str:
        return "leader" if self.leader else "follower"

    @property
    def epoch(self) -> int | None:
        return None  # no epochs in this protocol

    @property
    def tenure(self) -> int:
        return self.ghost if self.leader else 0

    def describe(self) -> dict[str, object]:
        return {
            "up": self.up,
            "paused": self.paused,
            "role": self.role,
            "follows": node_name(self.follows) if self.follows else None,
            "timer": self.timer,
            "ghost_epoch": self.ghost,
            "heartbeat_due": self.due,
        }

    def summary(self) -> str:
        if self.leader:
            role = "LEADER"
        else:
            role = f"follows {node_name(self.follows)}" if self.follows else "follower"
        return with_life(self.up, self.paused, role)


class HeartbeatModel(ClusterModel):
    """Promote on a missed heartbeat, with no quorum: a partition makes two leaders."""

    uses_store = False
    node_partitions = True
    uses_ghost = True

    def __init__(self, nodes: int, timeout: int, faults: FaultBounds):
        super().__init__(nodes, faults)
        self.timeout = timeout

    def initial_node(self, i: int) -> HeartbeatNode:
        if i == 1:
            return HeartbeatNode(leader=True, follows=1, ghost=1, due=True)
        return HeartbeatNode(follows=1, timer=self.timeout)

    def initial_extra(self) -> dict[str, int]:
        return {"ghost": 1}

    def node_steps(self, s: ClusterState, i: int) -> Iterator[Successor]:
        node: HeartbeatNode = s.node(i)
        name = node_name(i)
        if node.leader:
            if node.due:
                beats = [Message(HEARTBEAT, i, j) for j in self.ids if j != i]
                after, unreached = s.with_node(i, node._replace(due=False)).post(*beats)
                to = [m.dst for m in beats if m not in unreached]
                note = "to " + ", ".join(node_name(j) for j in to) if to else "nobody reachable"
                yield Action("send heartbeat", name, None, note, unreached=unreached), after
            storage, _ = s.storage.write(node.ghost, fencing=False)
            note = leadership_note(node.ghost)
            yield Action("write", name, STORAGE, note), s._replace(storage=storage)
        elif node.timer == 0:
            ghost = s.ghost + 1
            promoted = node._replace(leader=True, follows=i, ghost=ghost, due=True)
            note = f"no heartbeat for {self.timeout} ticks"
            yield (
                Action("promote", name, None, note),
                s.with_node(i, promoted)._replace(ghost=ghost),
            )

    def deliver(self, s: ClusterState, msg: Message) -> Successor:
        node: HeartbeatNode = s.node(msg.dst)
        action = Action(HEARTBEAT, node_name(msg.src), node_name(msg.dst))
        if node.leader and msg.src > msg.dst:
            return action._replace(note="ignored: lower id leads"), s
        heard = node._replace(leader=False, follows=msg.src, timer=self.timeout, due=False)
        note = "steps down" if node.leader else ""
        return action._replace(note=note), s.with_node(msg.dst, heard)

    def urgent(self, s: ClusterState, i: int) -> bool:
        node: HeartbeatNode = s.node(i)
        return node.leader and node.due

    def tick_node(self, node: HeartbeatNode) -> HeartbeatNode:
        if node.leader:
            return node._replace(due=True)
        return node._replace(timer=countdown(node.timer))

    def crash_node(self, node: HeartbeatNode) -> HeartbeatNode:
        return HeartbeatNode(up=False)

    def restart_node(self, node: HeartbeatNode, i: int) -> HeartbeatNode:
        return HeartbeatNode(timer=self.timeout)


def _build(nodes: int, timeout: int, **faults: int) -> HeartbeatModel:
    return HeartbeatModel(nodes, timeout, FaultBounds(**faults))


PROTOCOLS = (
    ProtocolEntry(
        "heartbeat-no-quorum",
        "promote on a missed heartbeat, no quorum, no store (split brain)",
        (
            NODES,
            Param("timeout", 2, 1, 5, "ticks without a heartbeat before a follower promotes"),
            *fault_params(crashes=0, partitions=1, losses=1, pauses=0),
        ),
        _build,
    ),
)
