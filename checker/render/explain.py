"""A saved trace as prose for an incident review: the root cause first, then one sentence per step.

Everything is read from the trace file, so it reads the same way for every protocol:
the recorded actions (who did what to whom, with the note), each participant's
one-line summary and full state before and after a step, and the property with the
reason the search recorded. The root cause names what broke, anything unhealthy
from the initial state (a partition, a node cut from the store), and the few steps
that matter: the faults, the step where a participant the reason names last changed,
and the deciding step (for a lasso: the loop that repeats forever).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from leadercheck.checker.engine.replay import RecordedStep, SavedTrace
from leadercheck.checker.model import FAULT, UNKNOWN_KIND, Action
from leadercheck.checker.render.lanes import is_tick
from leadercheck.checker.render.text import step_count

TICK = "tick"
# Moves of the environment rather than the protocol: faults, and the network's and
# the clock's own steps (a partition heals, timing stabilizes). A lost request or
# reply is a protocol step with a fault in it: its note says so.
FAULT_NAMES = frozenset({"crash", "pause", "partition", "lose", "clock jump", "drift"})
ENVIRONMENT = frozenset({"network", "clock"})
_LOST = re.compile(r"\b(request|reply|message)s? lost\b")
_TIMER = re.compile(r"(left$|ttl|timer|tick|until|deadline|elapsed|wait)", re.IGNORECASE)
MAX_KEY_STEPS = 5  # steps the root cause names, the deciding step included

# How an action with no target reads ({a}: the actor).
EVENTS = {
    TICK: "time passes",
    "crash": "{a} crashes",
    "restart": "{a} restarts",
    "pause": "{a} pauses",
    "resume": "{a} resumes",
    "partition": "the network partitions",
    "heal": "the network heals",
    "lose": "the network loses a message",
    "stabilize": "timing stabilizes",
    "clock jump": "{a}'s clock jumps",
    "drift": "{a}'s clock drifts",
    "timeout": "{a} times out",
    "election": "{a} starts an election",
    "declare": "{a} declares itself leader",
    "promote": "{a} promotes itself",
    "demote": "{a} demotes itself",
    "heartbeat": "{a} sends heartbeats",
    "send heartbeat": "{a} sends heartbeats",
    "check": "{a} checks",
    "settle": "{a} settles",
}
# How a message from one node to another reads ({a}: the sender, {t}: the receiver).
MESSAGES = {
    "RequestVote": "{a} asks {t} for its vote with RequestVote",
    "VoteGranted": "{a} grants {t} its vote with VoteGranted",
    "VoteRefused": "{a} refuses {t} its vote with VoteRefused",
    "gossip": "{a} gossips with {t}",
}
PAST = {"crash": "crashed", "pause": "paused", "resume": "resumed", "restart": "restarted"}


def participant(name: str) -> str:
    """'n1' and 'A' stay as they are; a role word such as 'store' or 'clock' gets an article."""
    return f"the {name}" if name.isalpha() and name.islower() else name


def _possessive(name: str) -> str:
    return f"{participant(name)}'s"


def is_node(name: str) -> bool:
    """A cluster member (n1, p2): a name with a digit in it."""
    return any(c.isdigit() for c in name)


def _note(action: Action) -> str:
    """The note as written out (a model's note may be computed when shown)."""
    return str(action.shown().note)


def is_fault(action: Action) -> bool:
    """A fault or a step of the environment (network, clock) other than a tick: by the
    action's declared kind, by its name only where a file kept no kind. A recovery
    (a resume, a restart) is told with the fault it ends, not as one of its own."""
    if is_tick(action):
        return False
    if action.kind == FAULT or action.actor in ENVIRONMENT:
        return True
    return action.kind == UNKNOWN_KIND and (
        action.name in FAULT_NAMES or bool(_LOST.search(_note(action)))
    )


def _nodes(names: Sequence[str]) -> str:
    return "{" + ", ".join(names) + "}"


def deed(action: Action, with_note: bool = True) -> str:
    """What the action does, in words, with its note: 'n1 asks n2 for its vote with
    RequestVote (at n2: adopts term 1; ...)'. A delivery's actor is the sender, its target
    the receiver, and its note what the receiver makes of it."""
    a = participant(action.actor)
    note = _note(action) if with_note else ""
    if action.target is None:
        known = EVENTS.get(action.name)
        text = known.format(a=a) if known else f'{a} takes the step "{action.name}"'
        return f"{text} ({note})" if note else text
    t = participant(action.target)
    if action.name == "partition":
        text = f"the link between {a} and {t} is cut"
        return text if note in ("", "link cut") else f"{text} ({note})"
    if is_node(action.target):  # a message to a node
        text = MESSAGES.get(action.name, "{a} sends {name} to {t}")
        text = text.format(a=a, t=t, name=action.name)
        return f"{text} (at {t}: {note})" if note else text
    if action.name == "write":
        text = f"{a} writes to {t}"
    elif action.name == "read":
        text = f"{a} reads {t}"
    else:
        text = f"{a} asks {t} to {action.name}"
    return f"{text} ({note})" if note else text


def _value(v: object) -> str:
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, list):
        return ", ".join(_value(x) for x in v) if v else "none"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_value(x)}" for k, x in v.items()) + "}"
    return str(v)


def _field(name: str) -> str:
    return str(name).replace("_", " ")


def _is_number(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _fields(
    before: RecordedStep, after: RecordedStep, only: Sequence[str] | None = None
) -> list[tuple[str, str, Any, Any]]:
    """(participant, field, old, new) for every field that changed (of `only`, if given)."""
    changed = []
    for p in after.state if only is None else only:
        old, new = before.state.get(p), after.state.get(p)
        if not isinstance(old, Mapping) or not isinstance(new, Mapping):
            continue
        for key in new:
            if key in old and old[key] != new[key]:
                changed.append((p, str(key), old[key], new[key]))
    return changed


def _summary_changes(before: RecordedStep, after: RecordedStep, first: str = "") -> list[str]:
    """Each participant whose summary changed, `first` (the actor) first."""
    order = ([first] if first in after.summary else []) + [p for p in after.summary if p != first]
    changes = []
    for p in order:
        old, new = before.summary.get(p), after.summary.get(p)
        if new is not None and old != new:
            changes.append(f'{participant(p)} is "{new}"')
    return changes


def _and(items: Sequence[str]) -> str:
    if len(items) <= 2:
        return " and ".join(items)
    return ", ".join(items[:-1]) + f" and {items[-1]}"


def _timer(key: str) -> bool:
    """A field that counts time (a lease's ticks left, a timer, time elapsed)."""
    return bool(_TIMER.search(key))


def _counters(fields: list[tuple[str, str, Any, Any]]) -> list[str]:
    """What a tick did to the timers: 'n1's lease runs down: 2 → 1 ticks left'."""
    said = []
    for p, key, old, new in fields:
        if not (_timer(key) and _is_number(old) and _is_number(new)):
            continue
        if key.endswith("left"):
            what = re.sub(r"_?(ticks_)?left$", "", key)
            whose = f"{_possessive(p)} {_field(what)}" if what else participant(p)
            how = "runs out" if new == 0 and old > 0 else "runs down"
            said.append(f"{whose} {how}: {old} → {new} ticks left")
        else:
            how = "runs down" if new < old else "grows"
            said.append(f"{_possessive(p)} {_field(key)} {how}: {old} → {new}")
    return said


def _other_fields(fields: list[tuple[str, str, Any, Any]], limit: int = 3) -> list[str]:
    """The changed fields as the trace file names them: 'timing.stable: no → yes'."""
    said = [f"{p}.{key}: {_value(old)} → {_value(new)}" for p, key, old, new in fields]
    if len(said) > limit:
        said = said[:limit] + [f"{len(said) - limit} more"]
    return said


def effect(before: RecordedStep, after: RecordedStep) -> str:
    """What changed with the step: a tick's counters and the summaries that changed, or,
    when no summary changed, the fields of the full state that did."""
    assert after.action is not None
    parts = []
    if is_tick(after.action):
        counters = _counters(_fields(before, after, list(after.summary)))
        if counters:
            parts.append(_and(counters))
    changes = _summary_changes(before, after, after.action.actor)
    if changes:
        parts.append("now " + _and(changes))
    elif not parts:
        fields = _fields(before, after)
        if fields:
            parts.append("in the full state " + _and(_other_fields(fields)))
    return "; ".join(parts) if parts else "nothing changes"


def _times(steps: Sequence[RecordedStep]) -> list[int]:
    """t at each step: how many ticks have passed."""
    t, times = 0, []
    for step in steps:
        if step.action is not None and is_tick(step.action):
            t += 1
        times.append(t)
    return times


def step_sentence(before: RecordedStep, after: RecordedStep, t: int) -> str:
    """'Step 4 (t=1): time passes; n1's lease left runs down 2 → 1 and ...'."""
    assert after.action is not None
    return f"Step {after.index} (t={t}): {deed(after.action)}; {effect(before, after)}."


def _list(v: object) -> list[str]:
    return [str(x) for x in v] if isinstance(v, list) else []


def unhealthy(step: RecordedStep) -> dict[str, str]:
    """What is not healthy in a state, each with how it goes on when it lasts: a partition,
    nodes cut from the store, participants down or paused."""
    found = {}
    network = step.state.get("network")
    network = network if isinstance(network, Mapping) else {}
    island = _list(network.get("island"))
    if island:
        rest = [p for p in step.summary if is_node(p) and p not in island]
        split = f"{len(island)}|{len(rest)} ({_nodes(island)} | {_nodes(rest)})"
        found[f"the network is partitioned {split}"] = "it never heals"
    cut = _list(network.get("cut_from_store"))
    if cut:
        found[f"{_and(cut)} {'is' if len(cut) == 1 else 'are'} cut from the store"] = (
            "the link is never restored"
        )
    for p, view in step.state.items():
        if not isinstance(view, Mapping):
            continue
        if view.get("up") is False or view.get("down") is True:
            found[f"{participant(p)} is down"] = "it never comes back"
        elif view.get("paused") is True:
            found[f"{participant(p)} is paused"] = "it never resumes"
    return found


def _named(reason: str, names: Sequence[str]) -> list[str]:
    """The participants the reason names ('n1 and n3 are both leader', 'the storage ...')."""
    return [p for p in names if re.search(rf"(?<![\w-]){re.escape(p)}(?![\w-])", reason)]


def _last_change(steps: Sequence[RecordedStep], p: str, before: int) -> int | None:
    """The last step before `before` that changed p's summary; 0 if none did."""
    for k in range(min(before, len(steps)) - 1, 0, -1):
        if steps[k].summary.get(p) != steps[k - 1].summary.get(p):
            return k
    return 0 if steps[0].summary.get(p) is not None else None


def _history(steps: Sequence[RecordedStep], actor: str, until: int) -> tuple[str, bool]:
    """The faults and recoveries that befell `actor` before step `until` ('paused at step 3
    and resumed at step 9'), and whether one was a pause."""
    events, paused = [], False
    for step in steps[1:until]:
        a = step.action
        if a is not None and a.actor == actor and a.name in PAST:
            events.append(f"{PAST[a.name]} at step {step.index}")
            paused = paused or a.name == "pause"
    return _and(events), paused


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _sentence(text: str) -> str:
    return text if text.endswith(".") else f"{text}."


def _what_broke(saved: SavedTrace, with_reason: bool = True) -> str:
    about = f" ({saved.property_description})" if saved.property_description else ""
    name = f"the property {saved.property_name}{about}"
    last = len(saved.steps) - 1
    where = f"at step {last}" if last else "in the initial state"
    if saved.property_kind == "sometimes":
        said = f"{name} is reached {where}"
    elif saved.loop_from is not None:
        said = f"{name} is violated"
    else:
        said = f"{name} is broken {where}"
    return f"{said}: {saved.reason}" if saved.reason and with_reason else said


def loop_sentence(saved: SavedTrace, opening: str = "From here") -> str:
    """How a lasso goes on forever, and why nothing ever gets better there."""
    steps, start = saved.steps, saved.loop_from
    assert start is not None
    last = len(steps) - 1
    why = f": {saved.reason}" if saved.reason else ""
    if start >= last:
        return _sentence(
            f"{opening} nothing happens any more (no fair action is enabled at step {last}){why}"
        )
    loop = steps[start + 1 :]
    deeds = [deed(s.action, with_note=False) for s in loop if s.action is not None]
    still = all(s.summary == steps[start].summary and s.state == steps[start].state for s in loop)
    which = "the last step repeats" if len(loop) == 1 else f"the last {len(loop)} steps repeat"
    what = ", ".join(deeds) + (", and nothing changes" if still else "")
    return _sentence(f"{opening} {which} forever (back to step {start}): {what}{why}")


def _key_steps(saved: SavedTrace) -> tuple[dict[int, str], list[str]]:
    """The steps that matter besides the deciding one, each with why (empty: a fault), and
    the participants the reason names that are so from the initial state."""
    steps = saved.steps
    last = len(steps) - 1
    lasso = saved.loop_from is not None
    end = saved.loop_from if saved.loop_from is not None else last - 1
    key: dict[int, str] = {}
    for step in steps[1 : end + 1]:
        if step.action is not None and is_fault(step.action):
            key[step.index] = ""
    actor = steps[last].action.actor if not lasso and last > 0 else None  # type: ignore[union-attr]
    for step in reversed(steps[1:last]):
        # the tick that last changed the deciding actor: what time did to it
        if actor and step.action is not None and is_tick(step.action):
            before = steps[step.index - 1].summary.get(actor)
            if step.summary.get(actor) != before:
                ran_out = [
                    c
                    for c in _counters(_fields(steps[step.index - 1], step, [actor]))
                    if "runs out" in c
                ]
                becomes = f'{participant(actor)} becomes "{step.summary.get(actor)}"'
                ran = [c.split(":")[0] for c in ran_out]
                key[step.index] = f": {_and(ran)}, and {becomes}" if ran else f", and {becomes}"
                break
    initially = []
    for p in _named(saved.reason, list(steps[-1].summary)):
        # the step since which p is as the reason finds it; if the deciding step made it
        # so, the step before that made it what the deciding step changed
        k = _last_change(steps, p, last if not lasso else last + 1)
        changed_last = (
            not lasso and last > 0 and steps[last].summary.get(p) != steps[last - 1].summary.get(p)
        )
        if k == 0 and not changed_last:
            initially.append(f'{participant(p)} is "{steps[0].summary.get(p, "not recorded")}"')
        elif k:
            key.setdefault(
                k, f', and {participant(p)} becomes "{steps[k].summary.get(p, "not recorded")}"'
            )
    return key, initially


def _while(action: Action, before: RecordedStep) -> str:
    """' while it is "leader t1"': the actor's summary when it acted."""
    if action.actor not in before.summary or is_tick(action):
        return ""
    who = "it" if deed(action).startswith(participant(action.actor)) else action.actor
    return f' while {who} is "{before.summary.get(action.actor, "not recorded")}"'


def _from_the_start(saved: SavedTrace, named: list[str]) -> str:
    """'From the initial state the network is partitioned 2|2 (...), and it never heals.'"""
    steps = saved.steps
    first = unhealthy(steps[0])
    lasting = [how for what, how in first.items() if all(what in unhealthy(s) for s in steps)]
    facts = list(first) + named
    if not facts:
        return ""
    return _sentence(", and ".join([f"From the initial state {_and(facts)}", *lasting]))


def _deciding(saved: SavedTrace, times: Sequence[int]) -> str:
    """'step 10 (t=2) decides it: n1 writes ... while it is "...", late: it paused at step 3'."""
    steps = saved.steps
    k = len(steps) - 1
    action = steps[k].action
    assert action is not None
    text = f"step {k} (t={times[k]}) decides it: {deed(action)}{_while(action, steps[k - 1])}"
    history, paused = _history(steps, action.actor, k)
    if history:
        text += f", late: it {history}" if paused else f", after it {history}"
    return text


def root_cause(saved: SavedTrace) -> str:
    """What broke, what is unhealthy from the start, and the steps that matter."""
    steps = saved.steps
    times = _times(steps)
    lasso = saved.loop_from is not None
    deciding = not lasso and len(steps) > 1
    key, named = _key_steps(saved)
    said = []
    for k in sorted(key)[-(MAX_KEY_STEPS - deciding) :]:
        action = steps[k].action
        assert action is not None
        why = key[k] or _while(action, steps[k - 1])
        said.append(f"step {k} (t={times[k]}): {deed(action)}{why}")
    if deciding:
        said.append(_deciding(saved, times))
    sentences = [
        _sentence(_what_broke(saved, with_reason=not lasso)),
        # a lasso's reason speaks of the loop's states, not of how they began
        _from_the_start(saved, [] if lasso else named),
        "The steps that matter: " + "; ".join(said) + "." if said else "",
        loop_sentence(saved, "Then") if lasso else "",
    ]
    return "Root cause: " + " ".join(s for s in sentences if s)


def _heading(saved: SavedTrace) -> str:
    params = ", ".join(f"{k}={v}" for k, v in saved.params.items())
    kind = saved.trace_kind or "trace"
    length = step_count(len(saved.steps) - 1)
    lasso = "" if saved.loop_from is None else f", a lasso back to step {saved.loop_from}"
    return f"{saved.protocol} ({params}): a {kind} of {length} for {saved.property_name}{lasso}."


def explain_lines(saved: SavedTrace) -> list[str]:
    """The setting, the root cause, one sentence per step, and how it ends."""
    steps = saved.steps
    first = steps[0].summary
    start = [f'{participant(p)} is "{s}"' for p, s in first.items()] + list(unhealthy(steps[0]))
    lines = [
        _heading(saved),
        "",
        root_cause(saved),
        "",
        f"Initially {_and(start)}." if start else "Initially nothing is summarised.",
    ]
    times = _times(steps)
    for prev, step in zip(steps, steps[1:], strict=False):
        lines.append(step_sentence(prev, step, times[step.index]))
    if saved.loop_from is not None:
        lines.append(loop_sentence(saved))
    else:
        lines.append(_sentence(_capital(_what_broke(saved))))
    return lines
