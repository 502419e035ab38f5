"""What each participant is at each step of a trace: the facts a sequence chart draws.

Pure functions from a `Trace` to per-step, per-participant facts and to the intervals and
messages they make up. Nothing here draws; `chart.py` does. Generic over the view
vocabulary below: a trace whose views lack a key simply has no such fact, and nothing of it
is drawn.

The view vocabulary read (`Step.view`, the model's `describe()`; `Step.action`):

- a node is a participant whose view has `up` or `role`; every other participant that the
  trace summarises (store, storage, a proxy) is a lane only if some action names it as
  actor or target, or its summary changes;
- node `leadership` (an int): which leadership this is as the checker counts them, shown
  (`leader #2 (token 1)`) where a model says it: where an epoch is handed out twice;
- node `role`: `"leader"` leads; any other value (follower, candidate) is shown as is;
  a node's `leads` (true or false), where its view has one, says whether it leads instead
  (the cluster models add it where a node's role and its `is_leader` disagree);
- node epoch: the first of the keys `term`, `lease_token`, `token`, `key_token`, `znode`,
  `ghost_epoch`, `epoch`; the word it is shown with comes from the key (EPOCH_WORDS);
- node `up` (false: crashed), node `paused`; any participant's `down` (true: crashed, as a
  store that is down);
- `network.island`: the nodes on one side of a node partition (the rest are the other
  side); `network.cut_from_store`: nodes that cannot reach the participant `store`;
- `network.in_flight`: messages as text, `Kind(sender->receiver)`; a message's identity is
  its text. It is sent at the step where it appears and ends at the step where it
  disappears: delivered if that step's action is not a fault and names its receiver (as
  target, as the cluster models' delivery `Action(kind, sender, receiver)` does, or actor),
  else lost (a `lose` action, a partition that cut it, its receiver's crash); one still in
  flight at the end is neither;
- belief is what the view says, paused or not (a model whose node keeps its own lease
  timer says `follower` once it runs out, even in a pause); what a node decided and has not
  yet done is its view's `pending_*` keys (`pending_write_token: 1`: a write decided under
  token 1), which is why a node that no longer leads may still write;
- faults: every action of kind FAULT or RECOVERY (by name in a saved trace), on the lane
  of its actor; a countdown (`*_left`) of the store or storage that runs out with no call
  to it is an expiry on that lane (a lease the store lets go of by time);
- time: the ticks so far, a tick being an action of kind TICK in the clock's fairness class
  (a `stabilize` of kind TICK has a class of its own and moves no clock); in a trace read
  from a file, which keeps no kinds, the action `tick` of `clock`.

A saved trace (`trace_file.load_trace`) becomes a `Trace` through `trace_from_saved`; its
actions then carry no kinds, so faults are known by name (FAULT_NAMES).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from leadercheck.checker.engine.replay import SavedTrace
from leadercheck.checker.model import (
    BY_KIND,
    CLOCK_CLASS,
    FAULT,
    RECOVERY,
    TICK,
    UNKNOWN_KIND,
    Action,
)
from leadercheck.checker.trace import Step, Trace

T = TypeVar("T")
LEADER = "leader"
# The epoch keys of a node's view, first found wins, and the word each is shown with.
EPOCH_WORDS: tuple[tuple[str, str], ...] = (
    ("term", "term"),
    ("lease_token", "token"),
    ("token", "token"),
    ("key_token", "token"),
    ("znode", "znode"),
    ("ghost_epoch", "epoch"),
    ("ghost", "epoch"),
    ("epoch", "epoch"),
)
GHOST = "epoch"  # the word of an epoch the checker counts where the protocol has none
# What a saved trace's faults are called (a trace file keeps no action kinds).
FAULT_NAMES = frozenset({"crash", "lose", "partition", "pause"})
RECOVERY_NAMES = frozenset({"restart", "resume", "heal"})
_MESSAGE = re.compile(r"(?P<kind>[^()]+)\((?P<sender>[^()]+?)->(?P<receiver>[^()]+)\)")

DELIVERED, LOST, IN_FLIGHT = "delivered", "lost", "in flight"
UNREACHED = "unreached"  # sent at a step but could not leave: behind a partition, or down


@dataclass(frozen=True)
class Facts:
    """One participant at one step, as its view says it (a paused node too: its view, not
    a belief the chart infers, so the chart, the state table and `explain` agree)."""

    role: str | None = None
    epoch: int | None = None
    word: str | None = None  # the epoch's word: term, token, znode, epoch
    leads: bool = False  # role == leader (or its view's `leads`) and up
    leadership: int | None = None  # the view's `leadership`, where it says one
    paused: bool = False
    crashed: bool = False
    island: bool = False  # on the island side of a node partition
    rest: bool = False  # on the other side of a node partition
    cut_from_store: bool = False

    def title(self, epoch: int | None = None, word: str | None = None) -> str:
        """`leader (term 1)`, `candidate (term 2)`, `follower`: role and epoch in words (an
        epoch 0 only as a term: a token or ghost epoch of 0 means none)."""
        role = self.role or "running"
        epoch = self.epoch if epoch is None else epoch
        word = word or self.word
        if word is None or epoch is None or (epoch == 0 and word != "term"):
            return role
        if word == GHOST:  # the checker's count of leaderships, not an epoch of the protocol
            return f"{role} #{epoch}"
        return f"{role} ({word} {epoch})"

    @property
    def standing(self) -> str:
        """What a chart says of a node that does not lead: its role, with its term if the
        protocol has terms (every node is in one); tokens belong to leaders only."""
        return self.title() if self.word == "term" else (self.role or "")


@dataclass(frozen=True)
class Interval:
    """Steps start..stop-1 of one participant; stop is len(trace.steps) if it lasts."""

    who: str
    start: int
    stop: int

    def overlaps(self, other: Interval) -> bool:
        return self.start < other.stop and other.start < self.stop

    def __contains__(self, step: int) -> bool:
        return self.start <= step < self.stop


@dataclass(frozen=True)
class Leadership(Interval):
    """A node believing it leads, under one epoch (None: the view has no epoch key)."""

    epoch: int | None = None
    word: str | None = None
    role: str = LEADER  # the model's word for a node that leads: primary, holds the lock
    number: int | None = None  # the view's `leadership`: which one, where its epoch is shared

    @property
    def title(self) -> str:
        role = f"{self.role} #{self.number}" if self.number else self.role
        return Facts(role=role, epoch=self.epoch, word=self.word).title()


@dataclass(frozen=True)
class Pause(Interval):
    """A paused node, its role and epoch when the pause began, and what ran out meanwhile."""

    belief: str = ""
    meanwhile: str = ""  # what ran out while it was paused: "its lease ran out at t=2"


@dataclass(frozen=True)
class Pending(Interval):
    """What a node decided and has not yet done, from its view's `pending_*` keys: `what`
    (write) and what it carries (`token 1`, `token 1, leadership 2`)."""

    what: str = ""
    carries: str = ""

    @property
    def title(self) -> str:
        return f"{self.what} pending" + (f" ({self.carries})" if self.carries else "")


@dataclass(frozen=True)
class Fault:
    """A fault or a recovery at `step`, on the lane of `who` (its actor), named as the
    model names it (crash, restart, pause, resume, lose, partition, heal, clock jump)."""

    step: int
    name: str
    who: str
    target: str | None
    recovery: bool
    note: str = ""


@dataclass(frozen=True)
class Expiry:
    """A countdown of the store or storage that ran out at `step` by time alone: the words
    are the lane's summary after it (`lease t1 expired`), else what ran out."""

    step: int
    who: str
    words: str


@dataclass(frozen=True)
class Partition:
    """Steps start..stop-1 during which the nodes are split into `island` and `rest`."""

    start: int
    stop: int
    island: tuple[str, ...]
    rest: tuple[str, ...]

    @property
    def title(self) -> str:
        return "{" + ", ".join(self.island) + "} | {" + ", ".join(self.rest) + "}"


@dataclass(frozen=True)
class Message:
    """One message: sent at step `sent`, ended at `ended` (None: still in flight)."""

    text: str
    kind: str
    sender: str
    receiver: str
    sent: int
    ended: int | None
    fate: str  # DELIVERED, LOST, IN_FLIGHT or UNREACHED
    cause: str = ""  # for a lost one: how it was lost, in words


@dataclass(frozen=True)
class Lanes:
    """Every fact of a trace a chart draws; `facts[i][name]` is participant name at step i."""

    nodes: tuple[str, ...]
    others: tuple[str, ...]  # store, storage, proxy: the ones the trace uses
    facts: tuple[Mapping[str, Facts], ...]
    times: tuple[int, ...]  # ticks so far, per step
    ticks: tuple[bool, ...]  # whether step i is a tick
    leaderships: tuple[Leadership, ...]
    pauses: tuple[Pause, ...]
    crashes: tuple[Interval, ...]
    partitions: tuple[Partition, ...]
    store_cuts: tuple[Interval, ...]
    messages: tuple[Message, ...]
    pendings: tuple[Pending, ...] = ()
    faults: tuple[Fault, ...] = ()
    expiries: tuple[Expiry, ...] = ()

    @property
    def columns(self) -> tuple[str, ...]:
        return self.nodes + self.others

    def split_brains(self) -> list[tuple[Leadership, Leadership]]:
        """Pairs of leaderships of two nodes that overlap in time."""
        found = []
        for k, a in enumerate(self.leaderships):
            for b in self.leaderships[k + 1 :]:
                if a.who != b.who and a.overlaps(b):
                    found.append((a, b))
        return found


# -- per step --------------------------------------------------------------------------------


def epoch_of(view: Mapping[str, object]) -> tuple[int | None, str | None]:
    """The epoch of a node's view and its word, from the first epoch key it has."""
    for key, word in EPOCH_WORDS:
        value = view.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value, word
    return None, None


def _number(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value else None


def is_node(view: Mapping[str, object]) -> bool:
    return "up" in view or "role" in view


@dataclass(frozen=True)
class Datum:
    """A field a claim reads (`Property.reads`) that changed on a lane at a step."""

    step: int
    who: str
    key: str
    old: object
    new: object
    # what the lane held before a crash wiped it, when it now holds something else: a
    # volatile vote given twice, a counter handed out again
    before_crash: object = None

    @property
    def words(self) -> list[str]:
        """The datum as drawn: its new value, and on a second line what a crash wiped."""
        said = [f"{self.key} {_value_words(self.new)}".strip()]  # no key: a lane's summary
        if self.before_crash is not None:
            said.append(f"({_value_words(self.before_crash)} before the crash)")
        return said


def _value_words(value: object) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value) or "(empty)"
    return "none" if value is None else str(value)


def data_changes(trace: Trace, lanes: Sequence[str], keys: Sequence[str]) -> list[Datum]:
    """Where each of `keys` changes on each of `lanes`, step by step (not in the initial
    state, which the header shows): the data the claim is about, as it moves. A value
    set after a crash wiped a different one says what it was."""
    found = []
    held: dict[tuple[str, str], object] = {}  # the last value that was not empty
    wiped: dict[tuple[str, str], object] = {}  # what a crash emptied, until a new value
    for before, step in zip(trace.steps, trace.steps[1:], strict=False):
        for who in lanes:
            was, now = before.view.get(who, {}), step.view.get(who, {})
            for key in keys:
                if key in was and not _empty(was[key]):
                    held[(who, key)] = was[key]
                if key not in now or key not in was or now[key] == was[key]:
                    continue
                forgot = None
                if _empty(now[key]) and now.get("up") is False:
                    wiped[(who, key)] = held.get((who, key))
                elif not _empty(now[key]):
                    forgot = wiped.pop((who, key), None)
                    forgot = None if _empty(forgot) or forgot == now[key] else forgot
                found.append(Datum(step.index, who, key, was[key], now[key], forgot))
    return found


def _empty(value: object) -> bool:
    return value is None or value in ((), [], "", 0, "none")


def chart_gaps(views: Sequence[Mapping[str, Mapping[str, object]]]) -> list[str]:
    """What a chart of these views (a model's `describe()` of some states) will lack, in
    the words `verify --lint` says it: the keys above that no view has."""
    nodes = [v for view in views for v in view.values() if is_node(v)]
    if not nodes:
        return [
            "no participant's view has `up` or `role`, so the chart draws no node lifelines, "
            "leadership bars or pauses (build on ClusterModel, or give each node's "
            "describe() `up`, `paused` and `role`)"
        ]
    gaps = []
    if not any("role" in v or "leads" in v for v in nodes):
        gaps.append(
            "no node's view has `role` or `leads`, so the chart draws no leadership bars and "
            "no two-leaders marker"
        )
    if not any(epoch_of(v)[0] is not None for v in nodes):
        keys = ", ".join(f"`{key}`" for key, _ in EPOCH_WORDS)
        gaps.append(
            f"no node's view has an epoch ({keys}), so the bars carry none (right for a "
            "protocol without epochs)"
        )
    if not any("paused" in v for v in nodes):
        gaps.append("no node's view has `paused`, so pauses are not drawn")
    return gaps


def columns(trace: Trace) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The nodes, then the other participants the trace uses, in first-seen order."""
    names: dict[str, None] = dict.fromkeys(trace.participants)
    for step in trace.steps:
        for name, view in step.view.items():
            if is_node(view):
                names.setdefault(name, None)
    nodes = tuple(n for n in names if any(is_node(s.view.get(n, {})) for s in trace.steps))
    named = {a.actor for a in trace.actions} | {a.target for a in trace.actions if a.target}
    others = tuple(
        n
        for n in names
        if n not in nodes and (n in named or len({s.summary.get(n) for s in trace.steps}) > 1)
    )
    return nodes, others


def _network(step: Step) -> Mapping[str, object]:
    return step.view.get("network", {})


def _names(value: object) -> tuple[str, ...]:
    if isinstance(value, (list, tuple)):
        return tuple(str(v) for v in value)
    return ()


def step_facts(trace: Trace, nodes: Sequence[str], others: Sequence[str]) -> list[dict[str, Facts]]:
    """Each step's facts per lane, as the views say them (a paused node included: what its
    view says it is, the chart says; what it decided before the pause is `pendings`)."""
    out: list[dict[str, Facts]] = []
    for step in trace.steps:
        net = _network(step)
        island = set(_names(net.get("island")))
        cut = set(_names(net.get("cut_from_store")))
        row: dict[str, Facts] = {}
        for name in nodes:
            view = step.view.get(name, {})
            role = view.get("role")
            up = view.get("up", True) is not False
            paused = bool(view.get("paused", False)) and up
            epoch, word = epoch_of(view)
            leads = bool(view.get("leads", role == LEADER)) and up
            row[name] = Facts(
                role=str(role) if role is not None else None,
                epoch=epoch,
                word=word,
                leads=leads,
                leadership=_number(view.get("leadership")),
                paused=paused,
                crashed=not up,
                island=name in island,
                rest=bool(island) and name not in island,
                cut_from_store=name in cut,
            )
        for name in others:
            view = step.view.get(name, {})
            row[name] = Facts(crashed=view.get("down") is True or view.get("up") is False)
        out.append(row)
    return out


def is_tick(action: Action | None) -> bool:
    """A tick of the clock: kind TICK in the clock's class (by name only in a saved trace
    old enough to keep no kinds)."""
    if action is None:
        return False
    if action.kind == TICK:
        return action.fairness in (BY_KIND, CLOCK_CLASS)
    return action.kind == UNKNOWN_KIND and action.name == "tick" and action.actor == "clock"


def is_fault(action: Action) -> bool:
    """A fault by its declared kind (by its name only where the kind is unknown)."""
    return action.kind == FAULT or (action.kind == UNKNOWN_KIND and action.name in FAULT_NAMES)


def is_recovery(action: Action) -> bool:
    """A recovery by its declared kind (by its name only where the kind is unknown)."""
    return action.kind == RECOVERY or (
        action.kind == UNKNOWN_KIND and action.name in RECOVERY_NAMES
    )


def clock(trace: Trace) -> tuple[tuple[int, ...], tuple[bool, ...]]:
    """Per step: the ticks so far, and whether the step is one."""
    ticks = tuple(is_tick(s.action) for s in trace.steps)
    times, now = [], 0
    for ticked in ticks:
        now += ticked
        times.append(now)
    return tuple(times), ticks


# -- intervals -------------------------------------------------------------------------------


def _spans(values: Sequence[T | None]) -> list[tuple[int, int, T]]:
    """Maximal runs of one value that is set (not None, empty or False) as (start, stop,
    value): a partition's island, a pending write, a node's being paused."""
    spans, start = [], 0
    for i in range(1, len(values) + 1):
        if i == len(values) or values[i] != values[start]:
            value = values[start]
            if value:
                spans.append((start, i, value))
            start = i
    return spans


def _runs(flags: Sequence[bool]) -> list[tuple[int, int]]:
    """Maximal runs of True as (start, stop)."""
    return [(start, stop) for start, stop, _ in _spans(flags)]


def _known(epoch: int | None, word: str | None) -> int | None:
    """The epoch if it says one: a token or ghost epoch of 0 means none (a term 0 is one)."""
    return epoch if epoch is not None and (epoch != 0 or word == "term") else None


def leaderships(facts: Sequence[Mapping[str, Facts]], nodes: Sequence[str]) -> list[Leadership]:
    """Per node, each run of steps its view says it leads, split where its epoch changes to
    another known one (a leader whose view drops its token goes on under the one it had); a
    paused node keeps the epoch it had when the pause began."""
    found = []
    for name in nodes:
        current: Leadership | None = None
        for i, row in enumerate(facts):
            f = row[name]
            epoch = _known(f.epoch, f.word) if not f.paused or current is None else None
            if current is not None and (
                not f.leads or None not in (epoch, current.epoch) and epoch != current.epoch
            ):
                found.append(replace(current, stop=i))
                current = None
            if f.leads and current is None:
                current = Leadership(
                    name, i, len(facts), epoch, f.word, f.role or LEADER, f.leadership
                )
            elif current is not None and current.epoch is None and epoch is not None:
                current = replace(current, epoch=epoch, word=f.word)
            if current is not None and current.number is None and f.leadership:
                current = replace(current, number=f.leadership)
        if current is not None:
            found.append(current)
    return sorted(found, key=lambda lead: (lead.start, nodes.index(lead.who)))


def pauses(
    facts: Sequence[Mapping[str, Facts]],
    nodes: Sequence[str],
    trace: Trace | None = None,
    times: Sequence[int] = (),
) -> list[Pause]:
    found = []
    for name in nodes:
        for start, stop in _runs([row[name].paused for row in facts]):
            before = facts[start - 1 if start else start][name]  # what it knew when it stopped
            meanwhile = _ran_out(trace, name, start, stop, times) if trace is not None else ""
            found.append(Pause(name, start, stop, before.title(), meanwhile))
    return sorted(found, key=lambda p: (p.start, nodes.index(p.who)))


def _ran_out(trace: Trace, name: str, start: int, stop: int, times: Sequence[int]) -> str:
    """The first countdown of the node's own view (a key ending in `_left`, such as
    `lease_left`) that reached 0 while it was paused: 'its lease ran out at t=2'."""
    steps = trace.steps
    for k in range(max(start, 1), min(stop, len(steps))):
        what = ran_out(steps[k - 1].view.get(name, {}), steps[k].view.get(name, {}))
        if what:
            at = f" at t={times[k]}" if k < len(times) else ""
            return f"its {what} ran out{at}"
    return ""


def ran_out(was: Mapping[str, object], now: Mapping[str, object]) -> str:
    """What of a view counted down to 0 between two steps (`lease` for `lease_left`)."""
    for key, value in now.items():
        old = was.get(key)
        if key.endswith("_left") and value == 0 and isinstance(old, int) and old > 0:
            return key[: -len("_left")].replace("_", " ")
    return ""


_PENDING = re.compile(r"pending_(?P<what>[a-z]+)(?:_(?P<carrier>[a-z_]+))?")


def pendings(trace: Trace, nodes: Sequence[str]) -> list[Pending]:
    """Per node, each run of steps with the same `pending_*` values set (0, none or empty:
    nothing pending): a write decided under token 1 is `write pending (token 1)`."""
    found = [
        Pending(name, start, stop, what, carries)
        for name in nodes
        for start, stop, (what, carries) in _spans(
            [_pending(step.view.get(name, {})) for step in trace.steps]
        )
    ]
    return sorted(found, key=lambda p: (p.start, nodes.index(p.who)))


def _pending(view: Mapping[str, object]) -> tuple[str, str] | None:
    """What a view holds pending, the first in name order: (`write`, `token 1, ...`)."""
    parts: dict[str, list[str]] = {}
    for key, value in view.items():
        match = _PENDING.fullmatch(key)
        if match is None or _empty(value) or isinstance(value, bool):
            continue
        carrier = (match["carrier"] or "").replace("_", " ")
        parts.setdefault(match["what"], []).append(f"{carrier} {_value_words(value)}".strip())
    return min(((what, ", ".join(w)) for what, w in parts.items()), default=None)


def faults(trace: Trace) -> list[Fault]:
    """Every fault and recovery of the trace, in step order."""
    found = []
    for step in trace.steps[1:]:
        act = step.action
        if act is None:
            continue
        recovery = is_recovery(act)
        if recovery or is_fault(act):
            note = str(act.note) if act.note else ""
            found.append(Fault(step.index, act.name, act.actor, act.target, recovery, note))
    return found


def expiries(trace: Trace, others: Sequence[str]) -> list[Expiry]:
    """Where the store, the storage or another such lane lets go of something by time, at
    a step that is no call to it: a countdown of its view (`*_left`) reaches 0, or at a
    tick a field of its view empties (a Redis master's key that expires)."""
    found = []
    for before, step in zip(trace.steps, trace.steps[1:], strict=False):
        act = step.action
        for who in others:
            if act is not None and who in (act.actor, act.target):
                continue
            was, now = before.view.get(who, {}), step.view.get(who, {})
            what = ran_out(was, now)
            emptied = is_tick(act) and any(
                key in was and not _empty(was[key]) and _empty(value) for key, value in now.items()
            )
            if what or emptied:
                after = step.summary.get(who, "")
                changed = bool(after) and after != before.summary.get(who, "")
                found.append(Expiry(step.index, who, after if changed else f"{what} ran out"))
    return found


def crashes(facts: Sequence[Mapping[str, Facts]], names: Sequence[str]) -> list[Interval]:
    found = [
        Interval(name, start, stop)
        for name in names
        for start, stop in _runs([row[name].crashed for row in facts])
    ]
    return sorted(found, key=lambda c: (c.start, names.index(c.who)))


def store_cuts(facts: Sequence[Mapping[str, Facts]], nodes: Sequence[str]) -> list[Interval]:
    found = [
        Interval(name, start, stop)
        for name in nodes
        for start, stop in _runs([row[name].cut_from_store for row in facts])
    ]
    return sorted(found, key=lambda c: (c.start, nodes.index(c.who)))


def partitions(trace: Trace, nodes: Sequence[str]) -> list[Partition]:
    """Each run of steps with the same non-empty island, and the rest of the nodes."""
    sides = [tuple(sorted(_names(_network(s).get("island")))) for s in trace.steps]
    return [
        Partition(start, stop, island, tuple(n for n in nodes if n not in island))
        for start, stop, island in _spans(sides)
    ]


# -- messages --------------------------------------------------------------------------------


def parse_message(text: str) -> tuple[str, str, str] | None:
    """(kind, sender, receiver) of `Kind(sender->receiver)`, or None."""
    match = _MESSAGE.fullmatch(text.strip())
    if match is None:
        return None
    return match["kind"], match["sender"], match["receiver"]


def _in_flight(step: Step) -> list[str]:
    return list(_names(_network(step).get("in_flight")))


def _ending(action: Action | None, kind: str, sender: str, receiver: str) -> tuple[str, str]:
    """How a message that disappears at a step with `action` ended: fate and cause."""
    if action is None:
        return LOST, "gone"
    if not is_fault(action) and receiver in (action.target, action.actor):
        return DELIVERED, ""
    if action.name == "lose":
        return LOST, "lost by the network"
    if action.name == "partition":
        return LOST, "cut off by the partition"
    if action.name == "crash" and action.actor == receiver:
        return LOST, f"dropped: {receiver} crashed"
    return LOST, f"gone at {action.name}"


def messages(trace: Trace, facts: Sequence[Mapping[str, Facts]]) -> list[Message]:
    """Every message that is ever in flight, sent to delivered, lost or still in flight,
    and every one a step sent that could not leave (its action's `unreached`)."""
    found = _unreached(trace, facts)
    open_: dict[str, tuple[int, tuple[str, str, str]]] = {}
    previous: set[str] = set()
    for step in trace.steps:
        now = _in_flight(step)
        for text in sorted(previous - set(now)):
            sent, (kind, sender, receiver) = open_.pop(text)
            fate, cause = _ending(step.action, kind, sender, receiver)
            found.append(Message(text, kind, sender, receiver, sent, step.index, fate, cause))
        for text in now:
            if text not in previous:
                parsed = parse_message(text)
                if parsed is not None:
                    open_[text] = (step.index, parsed)
        previous = {t for t in now if t in open_}
    for text, (sent, (kind, sender, receiver)) in open_.items():
        found.append(Message(text, kind, sender, receiver, sent, None, IN_FLIGHT))
    return sorted(found, key=lambda m: (m.sent, m.ended is None, m.ended or 0, m.text))


def _unreached(trace: Trace, facts: Sequence[Mapping[str, Facts]]) -> list[Message]:
    """The messages each step sent that could not leave, and why, as things stood before."""
    found: list[Message] = []
    for step in trace.steps[1:]:
        for text in step.action.unreached if step.action is not None else ():
            parsed = parse_message(str(text))
            if parsed is None:
                continue
            kind, sender, receiver = parsed
            there = facts[step.index - 1].get(receiver)
            cause = f"{receiver} is down" if there and there.crashed else "across the partition"
            i = step.index
            found.append(Message(str(text), kind, sender, receiver, i, i, UNREACHED, cause))
    return found


def lanes(trace: Trace) -> Lanes:
    """Every fact of `trace` that a chart draws."""
    nodes, others = columns(trace)
    facts = step_facts(trace, nodes, others)
    times, ticks = clock(trace)
    return Lanes(
        nodes=nodes,
        others=others,
        facts=tuple(facts),
        times=times,
        ticks=ticks,
        leaderships=tuple(leaderships(facts, nodes)),
        pauses=tuple(pauses(facts, nodes, trace, times)),
        crashes=tuple(crashes(facts, nodes + others)),
        partitions=tuple(partitions(trace, nodes)),
        store_cuts=tuple(store_cuts(facts, nodes)),
        messages=tuple(messages(trace, facts)),
        pendings=tuple(pendings(trace, nodes)),
        faults=tuple(faults(trace)),
        expiries=tuple(expiries(trace, others)),
    )


def trace_from_saved(saved: SavedTrace) -> Trace:
    """A trace file's steps as a `Trace` (its recorded views; no states, no action kinds)."""
    steps = tuple(Step(s.index, s.action, s.state, s.summary, None) for s in saved.steps)
    return Trace(steps, saved.loop_from)
