"""What a conformance run holds while it drives a real system: nodes, links, clock, facts.

`World` is the real side of one run: a client process per model node (agent.Agent), a
fault proxy between each node and the store (proxy.FaultProxy), the store's and the
storage's addresses, and the mapping of model time to real time. `Facts` are what can be
compared between the model and the real system after a step: a few named, human-readable
strings (who holds the lease, what the storage accepted, how the step's call ended), so a
divergence reads as "model: ... / real: ...".
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from leadercheck.checker.conform.agent import Agent
from leadercheck.checker.conform.clocks import FakeClock
from leadercheck.checker.conform.proxy import FaultProxy

Facts = Mapping[str, str]


@dataclass(frozen=True)
class Timing:
    """Model time in real time: a tick is `tick` seconds; a TTL of k ticks is granted as
    k * tick * ttl_scale seconds (1.0: the honest mapping; anything else is a deliberately
    wrong one, which the comparison must catch). Facts may take up to `settle` seconds to
    show a step's effect (`settle_why` says where the figure comes from: see
    `settle_window`); a call gets `call_timeout` seconds to answer."""

    tick: float = 1.0
    ttl_scale: float = 1.0
    settle: float = 0.5
    call_timeout: float = 5.0
    start_timeout: float = 20.0
    settle_why: str = "half a tick"

    def ttl_seconds(self, ticks: int) -> float:
        return ticks * self.tick * self.ttl_scale


GIVEN = "given with --settle"
READ_MARGIN = 0.1  # seconds to read the facts once the server has carried out an expiry


def settle_window(tick: float, expiry_lag: float, system: str) -> tuple[float, str]:
    """How long a step's effect may take to show, and why: half a tick, so that a lease
    whose real end is half a tick or more from the model's diverges (a TTL of two ticks
    granted 1.5 times too long ends a whole tick late); or, if longer, the time the server
    itself may take to carry out an expiry (`Binding.expiry_lag`: etcd's lessor revokes
    expired leases every 500 ms) and a moment to read it."""
    half = tick / 2
    own = expiry_lag + READ_MARGIN if expiry_lag else 0.0
    if own > half:
        return round(own, 3), f"{system} carries out an expiry up to {expiry_lag:g} s late"
    return round(half, 3), "half a tick"


@dataclass
class World:
    """The running clients, their links to the store, and where store and storage are."""

    system: str
    nodes: tuple[str, ...]
    timing: Timing
    store: list[tuple[str, int]]  # the store's client addresses (each node's link proxies one)
    storage: list[tuple[str, int]]  # reached directly: the model cuts links to the store only
    log_dir: Path
    extra: dict[str, Any] = field(default_factory=dict)  # a binding's own settings (a DSN)
    agents: dict[str, Agent] = field(default_factory=dict)
    links: dict[str, FaultProxy] = field(default_factory=dict)
    clocks: dict[str, FakeClock] = field(default_factory=dict)  # nodes whose clocks drift
    server: Any = None  # the servers started for the run (None: the user's --endpoint)
    fault_step: int | None = None  # the step a store member is killed or cut before
    started_as: str = "servers and clients started"  # the timeline's first real event
    started: float = field(default_factory=time.monotonic)
    read_at: float = 0.0  # when a step's facts were first read (monotonic): harness.read_facts

    def now(self) -> float:
        """Seconds since the run began, for the timeline."""
        return round(time.monotonic() - self.started, 3)

    def open_links(self) -> None:
        """A proxy per node to its own member of the store first, the others after it (a
        new connection goes on to the next when a member is down, as clients fail over)."""
        for k, name in enumerate(self.nodes):
            first = k % len(self.store)
            targets = self.store[first:] + self.store[:first]
            self.links[name] = FaultProxy(targets, name=f"{name}-store").start()

    def open_storage_link(self) -> None:
        """The storage reached through a proxy that is never cut and goes on to the next
        member when one is down (a run that kills a store member: the storage stays up)."""
        proxy = FaultProxy(list(self.storage), name="storage").start()
        self.links["storage"] = proxy  # closed with the others
        self.storage = [("127.0.0.1", proxy.port)]

    def open_clocks(self, lib: str) -> None:
        """A clock file per node, each reading real time until a drift sets it back."""
        for name in self.nodes:
            self.clocks[name] = FakeClock(self.log_dir / f"{name}.clock", lib)

    def link_address(self, node: str) -> tuple[str, int]:
        proxy = self.links[node]
        return ("127.0.0.1", proxy.port)

    def close(self) -> None:
        """Every client process killed and every link closed, whatever state they are in.

        A Ctrl-C meanwhile (a second one, while the first winds the run down) does not
        leave a client running: each step is finished, and the interrupt raised again once
        everything is closed."""
        interrupted = False
        steps = [agent.kill for agent in self.agents.values()]
        steps += [proxy.stop for proxy in self.links.values()]
        for step in steps:
            while True:
                try:
                    step()  # both are harmless when repeated
                    break
                except KeyboardInterrupt:
                    interrupted = True
        self.agents.clear()
        self.links.clear()
        self.clocks.clear()
        if interrupted:
            raise KeyboardInterrupt
