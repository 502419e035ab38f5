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


class LeadsWithToken:
    """Role properties of a node that leads exactly while it holds a non-zero token.

    The token is also its epoch and its tenure. Mix it into a node record (after its
    NamedTuple of fields) and say which field is the token: `lead_token`.
    """

    __slots__ = ()

    @property
    def lead_token(self) -> int:
        """The token the node leads under; 0: not leader."""
        raise NotImplementedError

    @property
    def is_leader(self) -> bool:
        return self.lead_token != 0

    @property
    def role(self) -> str:
        return "leader" if self.lead_token else "follower"

    @property
    def epoch(self) -> int | None:
        return self.lead_token or None

    @property
    def tenure(self) -> int:
        return self.lead_token
