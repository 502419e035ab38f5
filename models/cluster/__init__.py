"""The shared cluster vocabulary every protocol composes.

Nodes, the coordination store, the storage a leader writes to, time as countdowns,
the network with partitions and messages, and bounded faults (built in, or kinds a
protocol declares: `FaultKind`). `ClusterModel` ties them into one state shape so the
specs can read any protocol the same way.
"""

from leadercheck.models.cluster.base import (
    ClusterModel,
    ClusterState,
    FaultBounds,
    NodeState,
    Successor,
)
from leadercheck.models.cluster.faults import STORE_CRASH, FaultKind, Faults
from leadercheck.models.cluster.network import Message, Network
from leadercheck.models.cluster.nodes import STORAGE, STORE, node_name
from leadercheck.models.cluster.storage import Storage, leadership_note
from leadercheck.models.cluster.store import Store
from leadercheck.models.cluster.symmetry import InterchangeableNodes
from leadercheck.models.cluster.time import countdown

__all__ = [
    "STORAGE",
    "STORE",
    "STORE_CRASH",
    "ClusterModel",
    "ClusterState",
    "FaultBounds",
    "FaultKind",
    "Faults",
    "InterchangeableNodes",
    "Message",
    "Network",
    "NodeState",
    "Storage",
    "Store",
    "Successor",
    "countdown",
    "leadership_note",
    "node_name",
]
