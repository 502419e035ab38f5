"""Node ids and participant names: nodes are 1..N, shown as n1..nN."""

from __future__ import annotations

STORE = "store"
STORAGE = "storage"
CLOCK = "clock"
NETWORK = "network"


def node_name(node: int) -> str:
    return f"n{node}"


def node_set(nodes: frozenset[int] | tuple[int, ...]) -> str:
    return "{" + ", ".join(node_name(n) for n in sorted(nodes)) + "}"


def with_life(up: bool, paused: bool, role: str) -> str:
    """A node's one-line summary, prefixed by its lifecycle when it is not running."""
    if not up:
        return "crashed"
    return f"paused, {role}" if paused else role
