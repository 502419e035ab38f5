"""Single-leader and no-stale-write, judged on a history's events themselves.

No model is involved: what the events say is judged against the two claims as a reviewer
reads a log, with the lease's length in seconds.

- A node holds the lease from an acquire or a renew at time t until t + ttl or its next
  `lose`, whichever comes first. Two different nodes holding at one instant break
  single-leader (the two events that began their holding are named).
- An accepted write is stale when the writer's leadership (its acquire of that token,
  extended by its renewals) had ended before it: expired, lost, or another node acquired
  since; or when its token is below one the storage had already accepted (tokens compared
  as the real system orders them). A write the storage rejected is never stale.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from leadercheck.checker.history.events import Event, seconds

SINGLE_LEADER, NO_STALE_WRITE = "single-leader", "no-stale-write"
HOLDS, VIOLATED = "HOLDS", "VIOLATED"


@dataclass(frozen=True)
class Finding:
    """A claim judged on the events: the first event that breaks it, and the others."""

    claim: str
    verdict: str  # HOLDS or VIOLATED
    reason: str
    events: tuple[int, ...] = ()  # the numbers of the events that break it (the first time)
    breaking: int | None = None  # the number of the event at which it is broken
    count: int = 0  # how many times it is broken in all


@dataclass
class _Holding:
    """A node's hold on the lease: since `start` (the acquire or renew that began or last
    extended it) until `until`, unless `lost` first; `rival` is another node's acquire
    since, which ends its leadership (but not its hold: that is the second leader)."""

    start: Event
    token: int | None
    until: Fraction
    acquired: Event | None  # the acquire that gave it this token, if the history shows one
    lost: Event | None = None
    rival: Event | None = None

    def holds_at(self, at: Fraction) -> bool:
        return at < self.until and (self.lost is None or at < self.lost.at)


def judge(events: Sequence[Event], ttl: Fraction) -> tuple[Finding, Finding]:
    """Both claims on `events`, with leases lasting `ttl` seconds."""
    holdings: dict[str, _Holding] = {}
    overlaps: list[tuple[_Holding, Event]] = []
    stale: list[tuple[Event, list[str]]] = []
    highest: Event | None = None  # the accepted write with the highest token so far
    for event in events:
        held = holdings.get(event.node)
        if event.kind in ("acquire", "renew"):
            overlaps += [(h, event) for n, h in holdings.items() if n != event.node
                         and h.holds_at(event.at)]  # fmt: skip
            if event.kind == "acquire":
                for node, other in holdings.items():
                    if node != event.node and other.rival is None:
                        other.rival = event
            if event.kind == "renew" and held is not None and held.token == event.token:
                held.start, held.until, held.lost = event, event.at + ttl, None
            else:
                acquired = event if event.kind == "acquire" else None
                holdings[event.node] = _Holding(event, event.token, event.at + ttl, acquired)
        elif event.kind == "lose":
            if held is not None and held.lost is None and held.holds_at(event.at):
                held.lost = event
        elif event.accepted:
            why = _stale(held, event, highest)
            if why:
                stale.append((event, why))
            if highest is None or (event.token or 0) > (highest.token or 0):
                highest = event
    return _single_leader(overlaps), _no_stale_write(stale)


def _stale(held: _Holding | None, write: Event, highest: Event | None) -> list[str]:
    """Why an accepted write is stale (nothing: it is not)."""
    why: list[str] = []
    if held is None or held.token != write.token:
        why.append(f"{write.node} held no leadership of token {write.token}")
    else:
        since = (held.acquired or held.start).named()
        ends = []
        if held.until <= write.at:
            ends.append((held.until, f"expired at {seconds(held.until)}"))
        for cause in (held.lost, held.rival):
            if cause is not None and cause.at <= write.at:
                ends.append((cause.at, f"ended with {cause.named()}"))
        if ends:
            said = ", and ".join(words for _, words in sorted(ends, key=lambda e: e[0]))
            why.append(f"{write.node}'s leadership from {since} {said}")
    if highest is not None and write.token is not None and write.token < (highest.token or 0):
        why.append(f"the storage had accepted token {highest.token} at {highest.named()}")
    return why


def _single_leader(overlaps: list[tuple[_Holding, Event]]) -> Finding:
    if not overlaps:
        return Finding(SINGLE_LEADER, HOLDS, "no two nodes hold the lease at one instant")
    held, second = overlaps[0]
    first = held.start
    reason = (
        f"{first.node} holds the lease from {first.named()} until {seconds(held.until)}, "
        f"and {second.named()} makes {second.node} a second holder at {seconds(second.at)}"
    )
    return Finding(
        SINGLE_LEADER,
        VIOLATED,
        reason,
        (first.number, second.number),
        second.number,
        len(overlaps),
    )


def _no_stale_write(stale: list[tuple[Event, list[str]]]) -> Finding:
    if not stale:
        return Finding(NO_STALE_WRITE, HOLDS, "every accepted write came from a live leadership")
    write, why = stale[0]
    reason = f"{write.named()} is stale: {'; '.join(why)}"
    return Finding(NO_STALE_WRITE, VIOLATED, reason, (write.number,), write.number, len(stale))
