"""What a model step shows a history: the events a real node would have logged.

Read in the vocabulary the chart reads (checker/render/lanes.py): a node leads when its
view's role is leader (or its `leads` says so), under the epoch of its first epoch key
(`lease_token`, `term`, `znode`, ...). A step shows

- acquire(n, e): afterwards n runs and leads under epoch e, and before it n did not lead
  under e (whatever step made it so: a compare-and-swap, a row's UPDATE, a znode check);
- renew(n, e): n's own `renew` step with its reply delivered (one whose reply was lost is
  a fault: the node never learns that it renewed, so it logs nothing);
- write(n, e, accepted): n's `write` to the storage, whose note says the epoch and the
  storage's answer (`token 2 accepted`, `epoch 3 rejected: 3 < 4`).

Every other step is unobserved. A `lose` is no step but a fact of a state: the node runs
and does not lead (its lease may have run out at an earlier tick, unlogged: a paused or
busy process notices late).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from leadercheck.checker.model import FAULT, Action, Model
from leadercheck.checker.render.lanes import LEADER, epoch_of, is_node

_WRITE = re.compile(r"\b(?:token|epoch|term|znode) (\d+) (accepted|rejected)\b")


class Seen(NamedTuple):
    """One event as the model shows it: tokens are the model's (1, 2, 3 in grant order)."""

    kind: str
    node: str
    token: int | None = None
    accepted: bool | None = None


class NodeFacts(NamedTuple):
    """What the history can tell of a node in a state."""

    running: bool  # up and not paused: able to log anything
    leads: bool
    epoch: int | None
    paused: bool = False


class Observer:
    """Reads states and steps of one model as events; each state's view is read once."""

    def __init__(self, model: Model[Any]) -> None:
        self.model = model
        self._facts: dict[Any, Mapping[str, NodeFacts]] = {}

    def forget(self) -> None:
        """Drop the views read so far (the search calls this to bound its memory)."""
        self._facts.clear()

    def facts(self, state: Any) -> Mapping[str, NodeFacts]:
        known = self._facts.get(state)
        if known is None:
            known = self._facts[state] = node_facts(self.model.describe(state))
        return known

    def seen(self, before: Any, action: Action, after: Any) -> tuple[Seen, ...]:
        """The events a step shows (none: an unobserved step)."""
        if action.name == "write":
            matched = _WRITE.search(str(action.shown().note))
            if matched is None:
                return (Seen("write", action.actor),)  # a write whose epoch it does not say
            token, verdict = matched.groups()
            return (Seen("write", action.actor, int(token), verdict == "accepted"),)
        if action.name == "renew" and action.kind != FAULT:
            facts = self.facts(before).get(action.actor)
            return (Seen("renew", action.actor, facts.epoch if facts else None),)
        was, now = self.facts(before), self.facts(after)
        return tuple(
            Seen("acquire", name, f.epoch)
            for name, f in now.items()
            if f.running and f.leads and not (was[name].leads and was[name].epoch == f.epoch)
        )

    def may_lose(self, state: Any, node: str) -> bool:
        """Whether `node` can log that it lost the lease here: it runs and does not lead."""
        facts = self.facts(state).get(node)
        return facts is not None and facts.running and not facts.leads


def node_facts(view: Mapping[str, Mapping[str, object]]) -> dict[str, NodeFacts]:
    """Each node's facts from a state's view (`Model.describe`)."""
    found: dict[str, NodeFacts] = {}
    for name, part in view.items():
        if not is_node(part):
            continue
        up = part.get("up", True) is not False
        leads = bool(part.get("leads", part.get("role") == LEADER)) and up
        epoch, _ = epoch_of(part)
        paused = up and bool(part.get("paused", False))
        found[name] = NodeFacts(up and not paused, leads, epoch if leads else None, paused)
    return found
