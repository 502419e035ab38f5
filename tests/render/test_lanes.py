"""The per-step facts a chart draws, read off real counterexamples and small made-up traces."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from leadercheck.checker.model import FAULT, TICK, Action
from leadercheck.checker.render.lanes import (
    DELIVERED,
    IN_FLIGHT,
    LOST,
    UNREACHED,
    Interval,
    Leadership,
    data_changes,
    lanes,
    parse_message,
    trace_from_saved,
)
from leadercheck.checker.render.trace_file import load_trace
from leadercheck.checker.trace import Step, Trace
from tests.render.live_traces import context

COUNTEREXAMPLES = Path(__file__).resolve().parents[2] / "counterexamples"


def test_heartbeat_without_quorum_has_two_overlapping_leaderships() -> None:
    ln = lanes(context("heartbeat-no-quorum", "single-leader").trace)
    assert ln.leaderships == (
        Leadership("n1", 0, 7, epoch=1, word="epoch"),
        Leadership("n2", 6, 7, epoch=2, word="epoch"),
    )
    assert ln.split_brains() == [ln.leaderships]
    assert ln.nodes == ("n1", "n2", "n3") and ln.others == ()  # the storage is never used
    assert ln.times == (0, 0, 0, 1, 1, 2, 2) and ln.ticks[3] and ln.ticks[5]


def test_the_old_lease_holder_pauses_its_lease_runs_out_and_its_write_stays_pending() -> None:
    ln = lanes(context("lease-no-fencing", "no-stale-write").trace)
    (pause,) = ln.pauses
    assert (pause.who, pause.start, pause.stop) == ("n1", 3, 9)
    assert pause.belief == "leader (token 1)" and ln.facts[pause.start]["n1"].leads
    assert pause.meanwhile == "its lease ran out at t=2"
    old, new = ln.leaderships
    assert (old.who, old.epoch, old.word) == ("n1", 1, "token")
    # its own lease timer runs out at step 5, paused or not: the view says follower
    assert (old.start, old.stop) == (1, 5) and not ln.facts[6]["n1"].leads
    assert ln.facts[6]["n1"].paused and ln.facts[6]["n1"].role == "follower"
    assert (new.who, new.epoch, new.start) == ("n2", 2, 6) and not old.overlaps(new)
    # what carries the bug: the write n1 decided at step 2, under token 1, made at step 10
    assert [(p.who, p.start, p.stop, p.title) for p in ln.pendings] == [
        ("n1", 2, 10, "write pending (token 1)"),
        ("n2", 7, 8, "write pending (token 2)"),
    ]
    assert [(f.step, f.name, f.who) for f in ln.faults] == [(3, "pause", "n1"), (9, "resume", "n1")]
    assert ln.others == ("store", "storage")


def test_a_lost_renewal_is_a_fault_and_the_store_lets_the_lease_go_by_time() -> None:
    ln = lanes(context("lease-no-confirmation", "no-stale-write").trace)
    (lost,) = ln.faults
    assert (lost.step, lost.name, lost.who, lost.target, lost.recovery) == (
        3,
        "renew",
        "n1",
        "store",
        False,
    )
    assert [(e.step, e.who, e.words) for e in ln.expiries] == [(4, "store", "lease t1 expired")]


def test_even_quorum_is_partitioned_two_and_two_from_the_initial_state() -> None:
    ctx = context("even-quorum", "leader-eventually")
    ln = lanes(ctx.trace)
    (part,) = ln.partitions
    assert (part.start, part.stop) == (0, len(ctx.trace.steps))
    assert part.island == ("n1", "n2") and part.rest == ("n3", "n4")
    assert part.title == "{n1, n2} | {n3, n4}"
    assert ln.facts[0]["n1"].island and ln.facts[0]["n4"].rest
    assert ctx.trace.loop_from is not None and not ln.leaderships
    assert ln.times == (0, 0, 1)  # stabilize is of kind TICK, but no tick of the clock


def test_raft_without_quorum_loses_a_request_vote_to_the_partition() -> None:
    ln = lanes(context("raft-no-quorum", "single-leader").trace)
    by_text = {m.text: m for m in ln.messages}
    lost = by_text["RequestVote(n1->n3)"]
    assert (lost.sent, lost.ended, lost.fate) == (1, 4, LOST)
    assert lost.cause == "cut off by the partition"
    delivered = by_text["RequestVote(n1->n2)"]
    assert (delivered.sender, delivered.receiver, delivered.sent, delivered.ended) == (
        "n1",
        "n2",
        1,
        2,
    )
    reply = by_text["VoteGranted(n2->n1)"]
    assert (reply.sent, reply.ended, reply.fate) == (2, 3, DELIVERED)
    assert [(x.who, x.start) for x in ln.leaderships] == [("n1", 3), ("n3", 5)]


def test_a_trace_file_gives_the_same_facts_as_the_live_trace() -> None:
    """A saved trace keeps no action kinds: ticks and faults are known by name there."""
    for stem, protocol, prop in (
        ("heartbeat-no-quorum", "heartbeat-no-quorum", "single-leader"),
        ("raft-no-quorum", "raft-no-quorum", "single-leader"),
        ("even-quorum", "even-quorum", "leader-eventually"),
        ("bully-flapping", "bully-flapping", "leadership-settles"),
    ):
        saved = lanes(trace_from_saved(load_trace(COUNTEREXAMPLES / f"{stem}.json")))
        assert saved == lanes(context(protocol, prop).trace), stem


def _step(i: int, action: Action | None, **view: Mapping[str, object]) -> Step:
    summary = {name: repr(v) for name, v in view.items() if name != "network"}
    return Step(i, action, view, summary, None)


def test_messages_by_their_text_resent_lost_and_still_in_flight() -> None:
    node = {"up": True, "role": "follower"}

    def net(*msgs: str) -> dict[str, Mapping[str, object]]:
        return {"network": {"in_flight": list(msgs), "island": []}}

    trace = Trace(
        (
            _step(0, None, n1=node, n2=node, **net()),
            _step(1, Action("ping", "n1"), n1=node, n2=node, **net("Ping(n1->n2)", "junk")),
            _step(2, Action("Ping", "n1", "n2"), n1=node, n2=node, **net("junk")),
            _step(3, Action("ping", "n1"), n1=node, n2=node, **net("Ping(n1->n2)")),
            _step(4, Action("lose", "network", None, "", FAULT), n1=node, n2=node, **net()),
            _step(5, Action("ping", "n1"), n1=node, n2=node, **net("Ping(n1->n2)")),
        )
    )
    got = [(m.sent, m.ended, m.fate, m.cause) for m in lanes(trace).messages]
    assert got == [
        (1, 2, DELIVERED, ""),
        (3, 4, LOST, "lost by the network"),
        (5, None, IN_FLIGHT, ""),
    ]
    assert parse_message("junk") is None
    assert parse_message("VoteGranted(n2->n1)") == ("VoteGranted", "n2", "n1")


def test_a_send_that_could_not_leave_is_a_message_with_its_cause() -> None:
    """An action's `unreached` messages are never in any state: the lanes still have them,
    ending where they were sent, each with why it could not leave as things stood."""
    up, down = {"up": True, "role": "leader"}, {"up": False, "role": "follower"}
    sides = {"network": {"in_flight": [], "island": ["n3"]}}
    sent = Action("beat", "n1", unreached=("Beat(n1->n2)", "Beat(n1->n3)", "junk"))
    trace = Trace(
        (
            _step(0, None, n1=up, n2=down, n3=up, **sides),
            _step(1, sent, n1=up, n2=down, n3=up, **sides),
        )
    )
    got = [(m.receiver, m.sent, m.ended, m.fate, m.cause) for m in lanes(trace).messages]
    assert got == [
        ("n2", 1, 1, UNREACHED, "n2 is down"),
        ("n3", 1, 1, UNREACHED, "across the partition"),
    ]


def test_a_value_set_after_a_crash_wiped_another_says_what_it_was() -> None:
    def node(vote: str | None, up: bool = True) -> dict[str, object]:
        return {"up": up, "role": "follower", "voted_for": vote}

    views = [node("n1"), node(None, up=False), node(None), node("n3"), node("n1")]
    trace = Trace(
        tuple(_step(i, Action("x", "n2") if i else None, n2=v) for i, v in enumerate(views))
    )
    data = data_changes(trace, ["n2"], ["voted_for"])
    assert [(d.step, d.words) for d in data] == [
        (1, ["voted_for none"]),
        (3, ["voted_for n3", "(n1 before the crash)"]),
        (4, ["voted_for n1"]),  # no crash between n3 and n1: a change, not a forgotten vote
    ]


def test_crashes_restarts_and_a_store_that_is_down() -> None:
    up, down = {"up": True, "role": "leader", "term": 3}, {"up": False, "role": "follower"}
    tick = Action("tick", "clock", None, "", TICK)
    trace = Trace(
        (
            _step(0, None, n1=up, store={"holder": "n1"}),
            _step(1, Action("crash", "n1", None, "", FAULT), n1=down, store={"down": True}),
            _step(2, tick, n1=down, store={"down": True}),
            _step(3, Action("restart", "n1"), n1={**up, "role": "follower"}, store={}),
        )
    )
    ln = lanes(trace)
    assert ln.nodes == ("n1",) and ln.others == ("store",)  # its summary changes
    assert ln.crashes == (Interval("n1", 1, 3), Interval("store", 1, 3))
    assert ln.leaderships == (Leadership("n1", 0, 1, epoch=3, word="term"),)
    assert ln.times == (0, 0, 1, 1)
    assert ln.facts[3]["n1"].title() == "follower (term 3)"


def test_a_view_without_the_vocabulary_has_no_facts() -> None:
    trace = Trace((Step(0, None, {"state": {"value": "(0, 1)"}}, {}, None),))
    ln = lanes(trace)
    assert ln.columns == () and not ln.messages and not ln.partitions and not ln.leaderships
