"""The network: node-to-node partitions, node-to-store partitions, and messages in flight.

A partition splits the nodes into an island and the rest; nodes talk only within
their side. A node can also be cut off from the store, and the store itself can be
down (`store_down`, in protocols that opt into store crashes): then no node reaches
it. Messages in flight are a sorted tuple (a set: sending a message already in flight
changes nothing), so equal networks are equal states.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import combinations
from typing import NamedTuple

from leadercheck.models.cluster.nodes import node_name, node_set
from leadercheck.models.cluster.records import quick_replace


class Message(NamedTuple):
    kind: str
    src: int
    dst: int
    epoch: int = 0

    def __str__(self) -> str:
        return f"{self.kind}({node_name(self.src)}->{node_name(self.dst)})"


@quick_replace
class Network(NamedTuple):
    island: frozenset[int] = frozenset()
    store_cut: frozenset[int] = frozenset()
    msgs: tuple[Message, ...] = ()
    store_down: bool = False  # the store has crashed and not yet restarted

    def connected(self, a: int, b: int) -> bool:
        return (a in self.island) == (b in self.island)

    def reaches_store(self, node: int) -> bool:
        return node not in self.store_cut and not self.store_down

    @property
    def healthy(self) -> bool:
        """No link is cut (a store that is down is the store's fault, not a link's)."""
        return not self.island and not self.store_cut

    def send(self, *msgs: Message) -> Network:
        return self._replace(msgs=tuple(sorted(set(self.msgs).union(msgs))))

    def remove(self, msg: Message) -> Network:
        return self._replace(msgs=tuple(m for m in self.msgs if m != msg))

    def drop_where(self, lost: set[Message]) -> Network:
        return self._replace(msgs=tuple(m for m in self.msgs if m not in lost))

    def split(self, island: frozenset[int]) -> Network:
        """Partition the nodes; messages between the two sides are lost."""
        cut = Network(island, self.store_cut, (), self.store_down)
        return cut._replace(msgs=tuple(m for m in self.msgs if cut.connected(m.src, m.dst)))

    def cut_store(self, node: int) -> Network:
        return self._replace(store_cut=self.store_cut | {node})

    def heal(self) -> Network:
        """Restore every link (a store that is down stays down)."""
        return Network(msgs=self.msgs, store_down=self.store_down)

    def describe(self) -> dict[str, object]:
        """The links and messages (the store's being down is shown with the store)."""
        return {
            "island": [node_name(n) for n in sorted(self.island)],
            "cut_from_store": [node_name(n) for n in sorted(self.store_cut)],
            "in_flight": [str(m) for m in self.msgs],
        }

    def summary(self, nodes: int) -> str:
        parts = []
        if self.island:
            rest = frozenset(range(1, nodes + 1)) - self.island
            parts.append(f"{node_set(self.island)} | {node_set(rest)}")
        if self.store_cut:
            parts.append(f"{node_set(self.store_cut)} cut from store")
        if self.store_down:
            parts.append("store down")
        return "; ".join(parts) if parts else "healthy"


def islands(nodes: int) -> Iterator[frozenset[int]]:
    """Every way to split 1..nodes in two, each named once by its smaller side.

    A side of exactly half is named by the half that contains node 1.
    """
    everyone = range(1, nodes + 1)
    for size in range(1, nodes // 2 + 1):
        for side in combinations(everyone, size):
            if 2 * size == nodes and 1 not in side:
                continue
            yield frozenset(side)
