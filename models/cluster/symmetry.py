"""`InterchangeableNodes`: a cluster protocol whose node ids can be renamed at will.

A protocol mixes this in (before `ClusterModel`) when nothing it does depends on which
id a node has: no lowest-id-wins rule, no node with a special part. Renaming the nodes
of a reachable state then gives a state with the same future, renamed, and the claims
cannot tell the two apart, so `--symmetry` can keep one state of each orbit.

Ids occur in the node order, the store's holder, the partition and store links, and
messages in flight; this mixin renames all of those. A protocol whose node records or
`extra` hold node ids says how to rename them (`rename_node`, `rename_extra`) and keeps
them out of `node_key`. tests/models/test_symmetry_declared.py checks, for every
protocol that declares it, that renaming commutes with the successor function on every
reachable state, for every renaming: a wrong declaration fails that test.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from leadercheck.models.cluster.base import ClusterState
from leadercheck.models.cluster.network import Message, Network


class InterchangeableNodes:
    """Declares all nodes one symmetry group and renames cluster states."""

    n: int

    def symmetry_groups(self) -> tuple[tuple[int, ...], ...]:
        return (tuple(range(self.n)),)

    def rename_node(self, node: Any, new_id: Sequence[int]) -> Any:
        """The record with every node id j in it replaced by new_id[j] (none by default)."""
        return node

    def rename_extra(self, extra: Any, new_id: Sequence[int]) -> Any:
        """The protocol's shared state with node ids renamed (default: holds none)."""
        return extra

    def node_key(self, node: Any, i: int) -> Any:
        """What renaming carries along with node i's record: by default the record itself.

        It must not mention node ids (say "itself" or "another" instead of an id).
        """
        return repr(node)

    def permute(self, s: ClusterState, perm: Sequence[int]) -> ClusterState:
        new_id = (0, *(p + 1 for p in perm))  # id 0 means nobody and stays 0
        nodes: list[Any] = [None] * self.n
        for old, record in enumerate(s.nodes):
            nodes[perm[old]] = self.rename_node(record, new_id)
        net = s.net
        island = frozenset(new_id[i] for i in net.island)
        if 2 * len(island) == self.n and 1 not in island:  # an even split is named by n1's half
            island = frozenset(range(1, self.n + 1)) - island
        msgs = tuple(
            sorted(Message(m.kind, new_id[m.src], new_id[m.dst], m.epoch) for m in net.msgs)
        )
        return s._replace(
            nodes=tuple(nodes),
            store=s.store._replace(holder=new_id[s.store.holder]),
            net=Network(island, frozenset(new_id[i] for i in net.store_cut), msgs, net.store_down),
            extra=self.rename_extra(s.extra, new_id),
        )

    def node_keys(self, s: ClusterState) -> list[tuple[Any, ...]]:
        """Per node: its record's key, its side of a split, its links, its messages."""
        n = self.n
        island = s.net.island
        traffic: list[list[tuple[str, int, int]]] = [[] for _ in range(n + 1)]
        for m in s.net.msgs:
            traffic[m.src].append((m.kind, m.epoch, 0))
            traffic[m.dst].append((m.kind, m.epoch, 1))
        keys = []
        for i in range(1, n + 1):
            side = len(island) if i in island else (n - len(island) if island else 0)
            keys.append(
                (
                    self.node_key(s.nodes[i - 1], i),
                    s.store.holder == i,
                    i in s.net.store_cut,
                    side,
                    sorted(traffic[i]),
                )
            )
        return keys
