"""The facts every lease protocol is compared on, whatever system holds the lease.

The model's store holds one lease (holder, token, ticks left) and its storage the highest
token accepted and whether a stale write got through; the real store holds a key or a
row, and the real storage a log of accepted writes. Both sides are told in the same
words. Real tokens (etcd's create revisions, ZooKeeper's sequence numbers) are numbered
in the order they first appear, as the model numbers its tokens 1, 2, 3, ...; a system
whose tokens are the model's own (a row's counter) numbers them as they are.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from leadercheck.checker.conform.bindings.base import NO_REPLY, Binding, View, note_of, reply_lost
from leadercheck.checker.conform.replies import Fields
from leadercheck.checker.conform.world import Facts
from leadercheck.checker.model import Action


class TokenNumbers:
    """Real tokens numbered 1, 2, ... in the order they are first seen (or kept as they are)."""

    def __init__(self, literal: bool = False) -> None:
        self.literal = literal
        self.numbers: dict[int, int] = {}

    def of(self, real: int) -> int:
        if self.literal:
            return real
        return self.numbers.setdefault(real, len(self.numbers) + 1)


#: the store's fact while it is down (crashed, not yet restarted): nobody reaches it
STORE_DOWN = "store down"


def lease_fact(holder: str | None, token: int) -> str:
    return f"{holder} holds lease token {token}" if holder else "no lease held"


def storage_fact(tokens: Iterable[int]) -> str:
    """The storage's log of accepted tokens, in the order accepted, told as the model's view."""
    hi, stale = 0, False
    for token in tokens:
        stale = stale or token < hi
        hi = max(hi, token)
    if not hi and not stale:
        return "no writes"
    return f"highest token {hi}" + (", a stale write accepted" if stale else "")


def model_lease_facts(view: View) -> Facts:
    store, storage = view["store"], view["storage"]
    if store.get("down"):
        held = STORE_DOWN
    else:
        holder = store["holder"] if store["ttl_left"] else None
        held = lease_fact(holder, int(store["token"]))
    hi = int(storage["hi_epoch"])
    text = f"highest token {hi}" if hi else "no writes"
    if storage["stale_write_accepted"]:
        text += ", a stale write accepted"
    return {"store": held, "storage": text}


#: how each call ends, in the words both sides use
CALL_WORDS = {
    "acquire": ("granted", "refused"),
    "update": ("granted", "refused"),
    "renew": ("renewed", "refused"),
    "write": ("accepted", "rejected"),
    "check": ("believes it leads", "believes it does not lead"),  # the client's own belief
}
#: the field of each call's reply that says which of its words it ended in
REPLY_KEYS = {
    "acquire": "granted",
    "update": "granted",
    "renew": "renewed",
    "write": "accepted",
    "check": "believes_leader",
}


def model_outcome(action: Action, before: View, after: View) -> str:
    """What the model says the action's call returns; local steps return "done"."""
    if reply_lost(action) or note_of(action).startswith("fails"):
        return NO_REPLY  # a reply lost, or a call to a store it cannot reach
    words = CALL_WORDS.get(action.name)
    if words is None:
        return "done"
    if action.name == "write":
        return words[0] if "accepted" in note_of(action) else words[1]
    if action.name == "check":  # the model checks while its lease's ticks run ("still leader")
        return words[0] if after[action.actor]["role"] == "leader" else words[1]
    if note_of(action).startswith("refused"):  # a renewal of a lock no longer its own
        return words[1]
    node = after[action.actor]
    if action.name == "update":
        return words[0] if node["lease_token"] and node["role"] == "leader" else words[1]
    return words[0]  # the model takes a lease or renews one only when the store agrees


def real_outcome(op: str, reply: Mapping[str, Any]) -> str:
    if not reply.get("ok"):
        return NO_REPLY
    result = reply.get("result") or {}
    words = CALL_WORDS.get(op)
    if words is None:
        return "done"
    return words[0] if result.get(REPLY_KEYS[op]) else words[1]


class LeaseBinding(Binding):
    """A lease protocol on some store: its steps' calls by name (`CALLS`), and outcomes and
    model facts in the words above. A system adds its client, its setup and its real facts."""

    CALLS: ClassVar[Mapping[str, list[str]]] = {}
    replies: Mapping[str, Fields] = {
        "acquire": {"granted": "bool", "token": "int|str?", "holds_as": "str?"},
        "update": {"granted": "bool", "token": "int|str?"},
        "read": {"free": "bool", "token": "int|str?"},
        "renew": {"renewed": "bool"},
        "check": {"believes_leader": "bool", "token": "int|str?"},
        "write": {"accepted": "bool", "token": "int|str?"},
    }

    #: a store value that names no node, told as the node whose client said it holds the
    #: lease under it (`"holds_as"` in its acquire's result: a lock library's own id, as
    #: etcd3gw's Lock stores its uuid); a fresh dict per run (`reset`)
    holds_as: dict[str, str]

    def __init__(self, protocol: str, params: Mapping[str, int]) -> None:
        super().__init__(protocol, params)
        self.holds_as = {}

    def heard(self, node: str, op: str, reply: Mapping[str, Any]) -> None:
        said = (reply.get("result") or {}).get("holds_as") if reply.get("ok") else None
        if isinstance(said, str) and said:
            self.holds_as[said] = node

    def holder_of(self, value: str) -> str:
        """The node a store value names: itself, or the node that said it holds under it;
        a value no node claims is told as it is (it matches no model node)."""
        if value in self.nodes:
            return value
        return self.holds_as.get(value, f"an unclaimed value {value[:40]!r}")

    refusals: Mapping[str, Mapping[str, Any]] = {
        op: {key: False} for op, key in REPLY_KEYS.items() if op != "check"
    }

    def calls(self, action: Action) -> list[str] | None:
        calls = self.CALLS.get(action.name)
        return None if calls is None else list(calls)

    def outcome(self, op_reply: Mapping[str, Any]) -> str:
        return real_outcome(op_reply.get("op", ""), op_reply)

    def expected_outcome(self, action: Action, before: View, after: View) -> str:
        return model_outcome(action, before, after)

    def model_facts(self, view: View) -> Facts:
        return model_lease_facts(view)
