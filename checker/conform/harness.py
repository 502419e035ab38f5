"""Driving a real system through model steps and comparing what it does with the model.

One mechanism serves both directions. `perform` makes one model action real: a node's
call through its client process (a lost reply is the proxy dropping the answer to the
call's last request), a fault (SIGSTOP/SIGCONT, SIGKILL and a new process, the link to the
store cut and healed) or a tick (real time passes). `settle` then reads the real facts
until they are one of the states the model allows, or `Timing.settle` seconds have passed.
A saved trace allows one state per step (`run_trace`); a random schedule allows every
state the model reaches with the same observations (random_walks.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from leadercheck.checker.conform import clocks
from leadercheck.checker.conform.agent import Agent, NoAnswer
from leadercheck.checker.conform.anomaly import (
    DOWN,
    UNKNOWN,
    Belief,
    Broken,
    belief_of,
    real_breaks,
)
from leadercheck.checker.conform.bindings.base import NO_REPLY, Binding, View, reply_lost
from leadercheck.checker.conform.failures import talking_to
from leadercheck.checker.conform.replies import BELIEF
from leadercheck.checker.conform.world import READ_MARGIN, Facts, Timing, World
from leadercheck.checker.engine.interrupts import real_interrupt
from leadercheck.checker.engine.replay import normalise
from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.model import TICK, Action

STORE = "store"  # the actor a model's coordination store is (its crash and restart)

NODE_FAULTS = ("pause", "resume", "crash", "restart")


def behind(drift: float, timing: Timing) -> str | None:
    """Why a run can no longer be judged, or None. Model time is made real by sleeping a
    tick, and the steps between ticks take real time too: `drift` is how far real time has
    run ahead of model time since the run was closest to it, when a step's facts were
    read. A lease granted k ticks before a read ends k ticks after its grant in both; read
    `drift` late, it may have run out for real while the model still has it held once the
    drift nears a tick (READ_MARGIN short of it, for the read itself). A machine too busy
    to run the harness on time gets there (a 1 s tick that took 3 s); past that point a
    mismatch may be the slow machine's doing, and a match may hide one."""
    if drift >= max(timing.tick - READ_MARGIN, timing.tick / 2):
        return (
            f"its facts were read {drift:.2f} s behind model time (a tick is {timing.tick:g} s):"
            " a lease may have run out for real where the model still has it held"
        )
    return None


@dataclass(frozen=True)
class ModelStep:
    """One step of the model's side: the action (None: the initial state), the view after
    it, and the model time (ticks so far)."""

    index: int
    action: Action | None
    view: View
    ticks: int


@dataclass(frozen=True)
class Entry:
    """One row of the timeline: the model step, what was done for real, and both sides' facts."""

    step: int
    ticks: int
    model_event: str
    real_event: str
    at: float  # seconds since the run began
    expected: Mapping[str, str]
    observed: Mapping[str, str]
    effect: bool | None = None  # a fault's own effect on the real system (Performed)
    beliefs: Mapping[str, Belief] = field(default_factory=dict)  # each client's own
    action: str = ""  # the model action's name (empty for the initial state)

    @property
    def matches(self) -> bool:
        return dict(self.expected) == dict(self.observed)

    def differences(self) -> list[str]:
        keys = sorted(set(self.expected) | set(self.observed))
        return [
            f"{k}: the model says {self.expected.get(k, '-')!r}, the real system"
            f" {self.observed.get(k, '-')!r}"
            for k in keys
            if self.expected.get(k) != self.observed.get(k)
        ]

    def to_json(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "t": self.ticks,
            "model": self.model_event,
            "real": self.real_event,
            "at_seconds": self.at,
            "expected": dict(self.expected),
            "observed": dict(self.observed),
            "matches": self.matches,
            "fault_effect": self.effect,
            "beliefs": {node: belief.words() for node, belief in self.beliefs.items()},
        }


def stall_words(step: int, why: str) -> str:
    """Where and how a run fell behind the time mapping, as reports say it."""
    return f"at step {step}, {why}"


@dataclass
class Conformance:
    """The outcome of one run: every timeline entry, and where it diverged if it did."""

    protocol: str
    system: str
    entries: list[Entry] = field(default_factory=list)
    interrupted: bool = False
    seconds: float = 0.0
    #: the step where the machine fell behind the time mapping, and how (`behind`)
    stall: tuple[int, str] | None = None
    #: the least drift of real time past model time at a step's read so far (`timed`)
    least_drift: float | None = None
    #: a random schedule's model path that agrees with everything observed (its start,
    #: then each action and state), for keeping the schedule as a trace
    path: tuple[Any, tuple[tuple[Action, Any], ...]] | None = None
    dangerous_steps: int = 0  # steps taken where safety rested on the client (guidance.py)
    member_fault: str | None = None  # "--kill-member leader@3": how to replay its fault
    timing: Timing | None = None  # the time mapping the run used (its window may be wider)

    def breaks(self) -> dict[str, Broken]:
        """Where each observable claim first broke on the real system in this run."""
        return real_breaks([(e.step, e.observed, e.beliefs) for e in self.entries])

    @property
    def mismatch(self) -> Entry | None:
        """The first step whose real facts the model did not predict."""
        return next((e for e in self.entries if not e.matches), None)

    @property
    def divergence(self) -> Entry | None:
        """The first mismatch, unless the time mapping broke at or before it."""
        return None if self.unjudged else self.mismatch

    @property
    def unjudged(self) -> bool:
        """Whether the machine fell behind the time mapping before the run diverged (or in
        a run that never did): from there on, a mismatch may be the slow machine's doing
        (a lease read after it ran out) and a match may hide one, so the run tells
        nothing either way."""
        first = self.mismatch
        return self.stall is not None and (first is None or self.stall[0] <= first.step)

    @property
    def verdict(self) -> str:
        if self.divergence is not None:
            return "DIVERGES"
        return "INCOMPLETE" if self.interrupted or self.unjudged else "CONFORMS"

    def timed(self, step: int, ticks: int, read_at: float, timing: Timing) -> None:
        """Note when step `step`'s facts were read (`read_at`, monotonic seconds) against
        its model time; remember the first step the run fell behind at (`behind`)."""
        drift = read_at - ticks * timing.tick
        least = drift if self.least_drift is None else min(self.least_drift, drift)
        if self.stall is None:
            why = behind(drift - least, timing)
            if why is not None:
                self.stall = (step, why)
        self.least_drift = least


class Unsupported(LeadercheckError):
    """A step the harness cannot make real on this system (checked before anything runs)."""


def unsupported(binding: Binding, action: Action) -> str | None:
    """Why `action` cannot be made real with `binding`, or None if it can."""
    harness_made = action.name in (*NODE_FAULTS, "partition", "heal", "tick", "drift")
    if action.actor == STORE and action.name in ("crash", "restart"):
        if binding.store_crashes:
            return None
        if type(binding).store_crashes:  # a system that can, on servers it did not start
            return f"a {action.name} of the store (made real only on servers this run starts)"
    if harness_made and binding.calls(action) is None:
        if action.name not in binding.faults:
            return f"a {action.name} (not one of the faults {binding.system} makes real here)"
        if action.name in NODE_FAULTS and action.actor not in binding.nodes:
            return f"a {action.name} of {action.actor} (only nodes' processes are real here)"
        if action.name == "partition" and action.target is None:
            return "a partition between nodes (only a node's link to the store is proxied)"
        return None
    if binding.caller(action) is None:
        return f"{action} (not a node's call)"
    if binding.calls(action) is None:
        return f"{action} (no {binding.system} operation for it)"
    return None


def start_agents(binding: Binding, world: World) -> None:
    for node in world.nodes:
        agent = Agent(
            node,
            binding.client_module,
            binding.client_config(world, node),
            world.log_dir,
            world.timing.start_timeout,
            None if node in binding.harness_nodes else binding.client_command,
            world.clocks[node].environment() if node in world.clocks else None,
        )
        world.agents[node] = agent
        _start(binding, agent)


def _start(binding: Binding, agent: Agent) -> None:
    """Start a node's client process; its ready line is the first reply the binding hears
    (a client may say there which value its lock is stored under: `holds_as`)."""
    agent.start()
    binding.heard(agent.name, "ready", {"ok": True, "result": agent.told})


class Performed(NamedTuple):
    """One action made real: the real event as the timeline shows it, how its call ended,
    and for a fault (or a lost reply) whether it had an effect of its own on the real
    system (None: not a fault). A fault without one is said so, never printed as done."""

    event: str
    outcome: str
    effect: bool | None = None


def perform(binding: Binding, world: World, action: Action) -> Performed:
    """Make `action` real."""
    timing = world.timing
    if action.name == "tick":
        time.sleep(timing.tick)
        return Performed(f"{timing.tick:g} s of real time passed", "done")
    if action.actor == STORE and action.name in ("crash", "restart"):
        return _store_fault(world, action.name)
    if action.name in NODE_FAULTS:
        return _node_fault(binding, world.agents[action.actor], action.name)
    if action.name == "drift":
        clock = world.clocks[action.actor]
        clock.lose(timing.tick)
        return Performed(
            f"{action.actor}'s clock set back {timing.tick:g} s (libfaketime): it reads"
            f" {clock.behind:g} s behind real time",
            "done",
            True,
        )
    if action.name == "partition":
        held = world.links[action.actor].cut(silent=binding.silent_cuts)
        how = (
            f"holds every byte of its {held} open connection{'s' * (held != 1)} and new ones"
            " until the heal (silent: nobody hears until its timeouts fire)"
            if binding.silent_cuts
            else f"cuts every connection ({held} open) and resets new ones"
        )
        return Performed(f"the proxy between {action.actor} and the store {how}", "done", True)
    if action.name == "heal":
        for proxy in world.links.values():
            proxy.heal()
        return Performed("every proxy lets connections through again", "done", True)
    return _call(binding, world, action)


def befall_member(binding: Binding, world: World, index: int) -> str:
    """Before step `index`, the store member `--kill-member` or `--cut-member` names is
    SIGKILLed or cut off from its peers (if this is its step); the words the timeline puts
    before the step's own event."""
    if binding.member_fault is None or world.fault_step != index:
        return ""
    kind, role, _ = binding.member_fault
    if kind == "kill":
        fault = world.server.kill_member(role)
        done = "SIGKILLed"
    else:
        fault = world.server.isolate_member(role)
        done = "cut off from its peers (it still serves its clients)"
        # the facts are read from the majority: the cut member cannot answer a read
        world.links["storage"].avoid(fault.endpoint)
    took = fault.election_seconds
    elected = "" if took is None else f"; the others elected a new leader in {took:g} s"
    return (
        f"[{binding.system} member {fault.name}, its Raft {role}, {done} outside the model,"
        f" whose store is the majority left{elected}] "
    )


def _store_fault(world: World, fault: str) -> Performed:
    """The store's server SIGKILLed, or started again without what it held (a store that
    keeps nothing on disk: the model's `restart_store`)."""
    if fault == "crash":
        world.server.crash(0)
        return Performed("SIGKILL the store's server: what it held in memory is gone", "done", True)
    took = world.server.restart(0)
    return Performed(f"the store's server started again, empty, in {took:g} s", "done", True)


def _node_fault(binding: Binding, agent: Agent, fault: str) -> Performed:
    """A pause, resume, crash or restart of one node's client process. A pause stops what
    the client does between calls (a keep-alive thread, a session's heartbeats); a client
    that does nothing between calls is not changed by it, and the timeline says so."""
    name, pid = agent.name, _pid(agent)
    idle = "no effect of its own: its client runs nothing between calls"
    if fault == "pause":
        agent.pause()
        if agent.background is None:
            return Performed(f"SIGSTOP {name} (pid {pid}): {idle}", "done", False)
        return Performed(f"SIGSTOP {name} (pid {pid}): its {agent.background} stops", "done", True)
    if fault == "resume":
        agent.resume()
        if agent.background is None:
            return Performed(f"SIGCONT {name} (pid {pid}): {idle}", "done", False)
        return Performed(
            f"SIGCONT {name} (pid {pid}): its {agent.background} runs on", "done", True
        )
    if fault == "crash":
        agent.kill()
        return Performed(
            f"SIGKILL {name} (pid {pid}): what it held in memory is gone", "done", True
        )
    _start(binding, agent)
    return Performed(f"{name} restarted: a new client process (pid {_pid(agent)})", "done", True)


def _call(binding: Binding, world: World, action: Action) -> Performed:
    node = binding.caller(action)
    assert node is not None, "unsupported() lets only a node's calls through"
    agent = world.agents[node]
    calls = binding.calls(action) or []
    told: list[str] = []
    reply: dict[str, Any] = {"ok": True, "result": {}}
    for k, op in enumerate(calls):
        losing = k == len(calls) - 1 and reply_lost(action)
        if losing:
            world.links[node].lose_next_reply(binding.lost_replies.get(op))
        try:
            reply = agent.call(op, world.timing.call_timeout)
        except NoAnswer as exc:
            reply = {"ok": False, "error": str(exc)}
        agent.check_result(op, reply, binding.replies.get(op))
        reply["op"] = op
        binding.heard(node, op, reply)
        effect = None
        if losing:
            link = world.links[node]
            effect = link.wait_reply_lost(world.timing.call_timeout)
            link.disarm()  # a loss that found no reply to take must not take a later one
            told.append(
                f"proxy dropped {node}'s reply to {link.lost_request}"
                if effect
                else "no effect: the proxy had no reply to lose"
            )
        told.append(binding.describe_call(node, op, reply))
        if not reply.get("ok"):
            break
    return Performed("; ".join(told), call_outcome(binding, reply), effect)


def call_outcome(binding: Binding, reply: Mapping[str, Any]) -> str:
    """How a call ended, in the binding's words. A failure the client marks `refused` (the
    system said no, as an exception: kazoo's SessionExpiredError for a write a dead
    session may not make) is the operation's refusal; any other failure is no reply."""
    if reply.get("ok"):
        return binding.outcome(reply)
    op = str(reply.get("op", ""))
    refusal = binding.refused_result(op) if reply.get("refused") is True else None
    if refusal is None:
        return NO_REPLY
    return binding.outcome({"ok": True, "op": op, "result": refusal})


def read_beliefs(world: World, before: Mapping[str, Belief]) -> dict[str, Belief]:
    """What each client believes now, as it answers itself (`belief`, read only, bounded):
    a paused one keeps what it believed when it stopped, a crashed one believes nothing."""
    found: dict[str, Belief] = {}
    for node, agent in world.agents.items():
        if not agent.alive:
            found[node] = DOWN
        elif agent.paused:
            found[node] = before.get(node, UNKNOWN)
        else:
            try:
                reply = agent.call("belief", world.timing.call_timeout)
            except NoAnswer:
                reply = {"ok": False}
            agent.check_result("belief", reply, BELIEF)
            result = reply.get("result")
            told = reply.get("ok") and isinstance(result, dict)
            found[node] = belief_of(result) if told and result else UNKNOWN
    return found


def _pid(agent: Agent) -> int | None:
    return agent.process.pid if agent.process is not None else None


def settle(binding: Binding, world: World, allowed: Sequence[Facts]) -> Facts:
    """The real facts once they are one of `allowed`, or the last read after `Timing.settle`."""
    wanted = [dict(a) for a in allowed]
    deadline = time.monotonic() + world.timing.settle
    facts = read_facts(binding, world)
    while dict(facts) not in wanted and time.monotonic() < deadline:
        time.sleep(0.05)
        facts = binding.real_facts(world)
    return facts


def read_facts(binding: Binding, world: World) -> Facts:
    """The real facts, read once; when the read ended is the world's `read_at` (a step's
    facts are as of its first read: see `Conformance.timed`)."""
    facts = binding.real_facts(world)
    world.read_at = time.monotonic()
    return facts


def begin(binding: Binding, world: World) -> None:
    """A run's start, the same for a trace and a random schedule: empty store and storage,
    a link per node, a client process per node, the timeline's clock from now. The caller
    closes the world whatever happens (a client that fails to start included)."""
    faulted = binding.member_fault is not None or binding.store_crashes
    if faulted and world.server is not None:
        took = world.server.make_whole()  # the member an earlier schedule killed or cut
        if took is not None:
            world.started_as += f" (the store member faulted before brought back in {took:g} s)"
    binding.reset(world)
    world.open_links()
    if binding.member_fault is not None:
        world.open_storage_link()
        world.fault_step = binding.member_fault[2]  # a random schedule may draw its own
    if binding.drifting_clocks:
        world.open_clocks(clocks.require())
    start_agents(binding, world)
    binding.initial_state(world)
    world.timing = renewals_allowed(world.timing, world.agents.values())
    world.started = time.monotonic()


def renewals_allowed(timing: Timing, agents: Iterable[Agent]) -> Timing:
    """The settle window widened by the longest period at which a client renews on its
    own (its ready line's `renews_every`): such a lease's real end falls anywhere in the
    last period before its holder stopped, where the model's is at a tick. (A world is
    begun once, so its window is widened once.)"""
    period = max((a.renews_every or 0.0 for a in agents), default=0.0)
    if not period:
        return timing
    why = f"{timing.settle_why}, and a client renews on its own every {period:g} s"
    return replace(timing, settle=round(timing.settle + period, 3), settle_why=why)


def expected_facts(binding: Binding, before: View, step: ModelStep) -> dict[str, str]:
    facts = dict(binding.model_facts(step.view))
    if step.action is not None:
        facts["call"] = (
            binding.expected_outcome(step.action, before, step.view)
            if binding.caller(step.action) is not None and step.action.name not in NODE_FAULTS
            else "done"
        )
    return facts


def run_trace(
    binding: Binding,
    world: World,
    steps: Sequence[ModelStep],
    progress: Callable[[Entry], None] = lambda e: None,
) -> Conformance:
    """Every step of a saved trace made real in order; stops at the first divergence."""
    for step in steps[1:]:
        assert step.action is not None
        why = unsupported(binding, step.action)
        if why is not None:
            raise Unsupported(f"step {step.index}: {why} cannot be made real on {binding.system}")
    result = Conformance(binding.protocol, binding.system)
    begun = time.monotonic()
    system, where = binding.system, world.store
    try:
        with talking_to(system, where, "starting the run"):
            begin(binding, world)
        result.timing = world.timing
        before = steps[0].view
        first = expected_facts(binding, before, steps[0])
        with talking_to(system, where, "reading the facts of the initial state"):
            observed = settle(binding, world, [first])
            beliefs = read_beliefs(world, {})
        result.timed(0, 0, world.read_at, world.timing)
        result.entries.append(
            Entry(
                0,
                0,
                "initial state",
                world.started_as,
                world.now(),
                first,
                observed,
                beliefs=beliefs,
            )
        )
        progress(result.entries[-1])
        for step in steps[1:] if result.entries[-1].matches else ():
            assert step.action is not None
            with talking_to(system, where, f"step {step.index}: {step.action}"):
                befell = befall_member(binding, world, step.index)
                real, outcome, effect = perform(binding, world, step.action)
                real = befell + real
            expected = expected_facts(binding, before, step)
            state_facts = {k: v for k, v in expected.items() if k != "call"}
            with talking_to(system, where, f"reading the facts after step {step.index}"):
                if outcome != expected["call"]:
                    observed = {**read_facts(binding, world), "call": outcome}
                else:
                    observed = {**settle(binding, world, [state_facts]), "call": outcome}
                beliefs = read_beliefs(world, result.entries[-1].beliefs)
            result.timed(step.index, step.ticks, world.read_at, world.timing)
            entry = Entry(
                step.index,
                step.ticks,
                str(step.action),
                real,
                world.now(),
                expected,
                observed,
                effect,
                beliefs,
                step.action.name,
            )
            result.entries.append(entry)
            progress(entry)
            before = step.view
            if not entry.matches:
                break
    except KeyboardInterrupt:
        if not real_interrupt():  # raised by code, not by the user's Ctrl-C
            raise
        result.interrupted = True
    finally:
        try:
            world.close()
        except KeyboardInterrupt:  # a second Ctrl-C while closing: everything is closed
            result.interrupted = True
        result.seconds = round(time.monotonic() - begun, 2)
    return result


def model_steps(model: Any, visited: Sequence[Any], actions: Sequence[Action]) -> list[ModelStep]:
    """The model's side of a schedule: each state's view (normalised as trace files hold
    it) after each action, with the ticks so far."""
    steps = [ModelStep(0, None, normalise(model.describe(visited[0])), 0)]
    ticks = 0
    for k, (action, state) in enumerate(zip(actions, visited[1:], strict=True), start=1):
        ticks += action.kind == TICK
        steps.append(ModelStep(k, action.shown(), normalise(model.describe(state)), ticks))
    return steps
