"""What each system module says about its own configuration: where its files spell each
knob, whose default a missing one takes, what the system itself makes of the values (clamps,
negotiation), its documented rules, and how its knobs make the timing models' numbers.

Every system here elects a leader the same way underneath: a lease the store keeps for a
TTL, renewed by its holder, and a holder that believes it leads for a while on its own clock
after it last renewed. So one `Timing` shape serves all five, written as formulas over the
knobs and the environment (by name, in seconds), evaluated on numbers for the models and on
solver terms for the safe region:

- **stale leader**: the holder believes it leads `believes` after it last renewed (its own
  clock); the store keeps the lease `store_ttl`. A `reset` (Patroni's watchdog) may end the
  holder's acts sooner.
- **false failover**: renewals every `renew`, each up to `delay` late. A pause deposes a
  healthy leader once the gap reaches the sooner of the store's TTL and the leader's own
  give-up horizon (`holds_for`: client-go's renewDeadline window, ZooKeeper's read timeout); a
  store out of everyone's reach deposes it once the gap reaches `outage` (None: the system
  rides the outage out, as Patroni's failsafe mode does).
- **worst failover**: the terms of the system's own loop from the leader's crash to a new
  leader (a watch where the system watches, a poll where it polls), summed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from leadercheck.checker.config.document import Document
from leadercheck.checker.config.reading import Finder, Knob

Values = Mapping[str, Any]  # knobs and environment figures by name (numbers or solver terms)
Formula = Callable[[Values], Any]


@dataclass(frozen=True)
class Term:
    """One term of a derived duration, with what it stands for."""

    what: str
    seconds: Formula


@dataclass(frozen=True)
class Reset:
    """A second end to a deposed holder's acts: something stops it `lease` after it last
    renewed (counted like `Timing.believes`), delayed by a pause of at most `pause`."""

    lease: Formula
    pause: Formula
    why: str


@dataclass(frozen=True)
class Timing:
    """How one system's knobs make the timing models' numbers, in seconds."""

    leader: str  # what the system calls its leader: "primary", "lock holder"
    believes: Formula  # how long the holder believes it leads after it last renewed
    believes_why: str  # the formula in the system's words
    store_ttl: Formula  # how long the store keeps the lease after the renewal it applied
    store_ttl_why: str
    remedy: str  # what closes the stale-leader hazard for any pause
    renew: Formula | None = None  # the renewal interval (None: never renewed)
    renew_why: str = ""
    delay: Formula | None = None  # how late a renewal may reach the store
    holds_for: Formula | None = None  # the leader's own horizon after its last renewal
    holds_for_why: str = ""
    outage: Formula | None = None  # its horizon while the store is out of reach (a formula
    # returning None, or no formula: the system rides the outage out)
    outage_why: str = ""
    rides_out_why: str = ""  # why it keeps leading when `outage` says None
    failover: tuple[Term, ...] = ()
    reset: Reset | None = None

    def pause_ttl(self, v: Values) -> float:
        """What a pause must outlast to depose a healthy leader: the sooner of the store's
        TTL and the leader's own horizon."""
        ttl = float(self.store_ttl(v))
        return ttl if self.holds_for is None else min(ttl, float(self.holds_for(v)))


@dataclass(frozen=True)
class Elector:
    """One leader election a file configures, as its system will run it."""

    program: str  # "kube-scheduler", "Patroni", "cert-manager controller"
    knobs: Mapping[str, Knob]
    facts: Mapping[str, str] = field(default_factory=dict)  # settings that are not numbers
    notes: tuple[str, ...] = ()  # what the reader found worth saying about the file
    name: str = ""  # which one, when a file holds several ("container csi-provisioner")


Reader = Callable[[Finder, Mapping[str, Any]], list[Elector]]  # (the file, leadercheck.client)
Effective = Callable[[dict[str, float], Mapping[str, str]], list[str]]
Rule = Callable[[Values, Mapping[str, str]], "str | None"]  # the broken rule in words, or None


@dataclass(frozen=True)
class System:
    """A system's knowledge of its own files and semantics."""

    name: str  # as --system spells it
    title: str  # as the report names it
    recognise: Callable[[Document], bool]
    read: Reader
    like: Mapping[str, str]  # names that look like one of its knobs (normalised) -> the knob
    effective: Effective  # adjusts the values in place as the system does; says what changed
    rules: tuple[Rule, ...]  # each checked on its own, so one unreadable knob hides no other
    timing: Callable[[Mapping[str, str]], Timing]  # by the elector's facts
    claims: tuple[str, ...] = ("rules", "stale-leader", "false-failover")
    advice: Callable[[Values, Mapping[str, str]], list[str]] | None = None  # stale-leader's
    limits: tuple[Formula, ...] = ()  # its rules as conditions a suggested value must meet
    units: Mapping[str, float] = field(default_factory=dict)  # a knob's step (Patroni: 1 s)
    # what else must move for a knob to take a suggested value (ZooKeeper's cap on a session)
    moves_too: Callable[[str, float, Values], str] | None = None
    moved: Mapping[str, str] = field(default_factory=dict)  # a knob's name where a value it
    # runs with is not the file's (ZooKeeper's granted session, not the client's ask)


def unchanged(values: dict[str, float], facts: Mapping[str, str]) -> list[str]:
    """An `Effective` for a system that runs with its values as written."""
    return []
