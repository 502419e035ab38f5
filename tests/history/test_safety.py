"""Single-leader and no-stale-write on the events themselves: each verdict, the events it
names, and for every HOLDS the same code finding the violation in a broken variant."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from leadercheck.checker.history.events import Event
from leadercheck.checker.history.safety import HOLDS, VIOLATED, Finding, judge

TTL = Fraction(2)


def events(*rows: tuple[Any, ...]) -> list[Event]:
    """(at, node, kind, token[, accepted]) rows as events numbered from 1."""
    return [
        Event(k, Fraction(str(at)), node, kind, token, rest[0] if rest else None, k)
        for k, (at, node, kind, token, *rest) in enumerate(rows, start=1)
    ]


def verdicts(found: tuple[Finding, Finding]) -> dict[str, tuple[str, tuple[int, ...]]]:
    return {f.claim: (f.verdict, f.events) for f in found}


CLEAN = [
    (0.1, "n1", "acquire", 40),
    (0.5, "n1", "write", 40, True),
    (1.5, "n1", "renew", 40),
    (3.0, "n1", "write", 40, True),  # 1.5 s after the renewal: still live
    (3.5, "n1", "lose", None),
    (3.6, "n2", "acquire", 45),  # after n1 let go
    (3.7, "n2", "write", 45, True),
    (3.8, "n1", "write", 40, False),  # refused by the storage: never stale
]


def test_a_clean_history_breaks_neither_claim() -> None:
    assert verdicts(judge(events(*CLEAN), TTL)) == {
        "single-leader": (HOLDS, ()),
        "no-stale-write": (HOLDS, ()),
    }


def test_two_holders_at_one_instant_are_named_by_their_events() -> None:
    broken = [*CLEAN[:4], (3.2, "n2", "acquire", 45)]  # n1 renewed at 1.5: it holds to 3.5
    leader, _ = judge(events(*broken), TTL)
    assert (leader.verdict, leader.events, leader.breaking) == (VIOLATED, (3, 5), 5)
    assert leader.reason == (
        "n1 holds the lease from event 3 (1.5 s, n1 renew token 40) until 3.5 s, and event 5 "
        "(3.2 s, n2 acquire token 45) makes n2 a second holder at 3.2 s"
    )


def test_a_lose_ends_the_hold_and_a_lease_ends_at_its_ttl() -> None:
    lost = [(0, "n1", "acquire", 1), (1, "n1", "lose", None), (1.5, "n2", "acquire", 2)]
    expired = [(0, "n1", "acquire", 1), (2, "n2", "acquire", 2)]  # exactly at the end: free
    assert judge(events(*lost), TTL)[0].verdict == HOLDS
    assert judge(events(*expired), TTL)[0].verdict == HOLDS
    early = [(0, "n1", "acquire", 1), (1.999, "n2", "acquire", 2)]
    assert judge(events(*early), TTL)[0].verdict == VIOLATED


def test_a_write_after_the_lease_expired_is_stale() -> None:
    late = [(0.1, "n1", "acquire", 40), (2.2, "n1", "write", 40, True)]
    _, stale = judge(events(*late), TTL)
    assert (stale.verdict, stale.events) == (VIOLATED, (2,))
    assert "n1's leadership from event 1 (0.1 s, n1 acquire token 40) expired at 2.1 s" in (
        stale.reason
    )


def test_a_write_after_another_node_acquired_is_stale_and_below_the_storage() -> None:
    story = [
        (0.0, "n1", "acquire", 4021),
        (2.3, "n2", "acquire", 4027),
        (2.4, "n2", "write", 4027, True),
        (2.6, "n1", "write", 4021, True),
    ]
    _, stale = judge(events(*story), TTL)
    assert stale.events == (4,) and stale.count == 1
    assert "ended with event 2 (2.3 s, n2 acquire token 4027)" in stale.reason
    assert "the storage had accepted token 4027 at event 3" in stale.reason


def test_a_write_after_its_own_lose_is_stale_and_a_renewal_takes_the_lease_back() -> None:
    lost = [(0, "n1", "acquire", 9), (0.5, "n1", "lose", None), (0.7, "n1", "write", 9, True)]
    assert "ended with event 2 (0.5 s, n1 lose)" in judge(events(*lost), TTL)[1].reason
    back = [*lost[:2], (0.6, "n1", "renew", 9), (0.7, "n1", "write", 9, True)]
    assert judge(events(*back), TTL)[1].verdict == HOLDS


def test_a_write_with_a_token_it_never_held_is_stale() -> None:
    story = [(0, "n1", "acquire", 9), (0.5, "n2", "write", 9, True)]
    assert "n2 held no leadership of token 9" in judge(events(*story), TTL)[1].reason
