"""What a recorded history is, once read: its events, how time maps, and the errors.

Apart from the reading (format.py) so that every reader of a history (the file format, a
conformance timeline: timeline.py) and every judge of one depends on it, not on each other.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction

from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.render.context import seconds_text

MAX_TOKEN = 2**63 - 1  # tokens are the real system's: etcd revisions, ZooKeeper zxids


class HistoryError(LeadercheckError):
    """A history file that cannot be read as one: the line and the field, in one line."""


@dataclass(frozen=True)
class Event:
    """One thing a node logged: `number` counts from 1 in the file's order."""

    number: int
    at: Fraction  # seconds since the history began
    node: str  # as the history names it
    kind: str  # acquire, renew, lose or write
    token: int | None  # the real system's fencing token
    accepted: bool | None  # writes only: did the storage take it
    line: int = field(compare=False)  # where the file holds it (not what it is)

    def text(self) -> str:
        """`n1 write token 101 accepted`: the event in the history's own words."""
        words = [self.node, self.kind]
        if self.token is not None:
            words.append(f"token {self.token}")
        if self.accepted is not None:
            words.append("accepted" if self.accepted else "rejected")
        return " ".join(words)

    def named(self) -> str:
        """`event 4 (2.5 s, n1 write token 101 accepted)`: how every report names it."""
        return f"event {self.number} ({seconds(self.at)}, {self.text()})"


@dataclass(frozen=True)
class History:
    """A recorded history: what it claims to be a run of, how time maps, and the events."""

    source: str
    protocol: str | None  # None: not said (the default protocol, or --protocol)
    params: Mapping[str, str]  # as -p would give them, checked later by the protocol
    tick_seconds: Fraction | None
    ttl_seconds: Fraction | None
    nodes: tuple[str, ...] | None  # the real names, in the order the model numbers them
    events: tuple[Event, ...]
    origin: str = "history"  # or "conformance timeline"

    def model_node(self, name: str) -> str:
        """The model's name for a node the history names (n1, n2, ...)."""
        if self.nodes is None:
            return name
        return f"n{self.nodes.index(name) + 1}"

    def node_count(self) -> int:
        """How many nodes the events need the model to have."""
        if self.nodes is not None:
            return len(self.nodes)
        return max((int(e.node[1:]) for e in self.events), default=1)


def seconds(value: Fraction) -> str:
    """A time as reports write it: `2.5 s`."""
    return f"{seconds_text(float(value))} s"
