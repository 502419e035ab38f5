"""Is a history a behaviour the model permits: verdicts, the first event refused and what
the model could show instead, budgets (unbounded unless given), thousands of events, and
the search's reductions checked against a plain search on histories the model makes."""

from __future__ import annotations

import json
import random
from collections import deque
from typing import Any

import pytest

from leadercheck.checker.history.bench import leader_history
from leadercheck.checker.history.events import History
from leadercheck.checker.history.fit import fit, token_numbers
from leadercheck.checker.history.format import parse_history
from leadercheck.checker.history.observe import Observer
from leadercheck.checker.history.permits import Permission, permits, wants
from leadercheck.checker.history.safety import HOLDS, VIOLATED, judge
from leadercheck.checker.render.lanes import is_tick
from leadercheck.models.catalogue import lookup
from leadercheck.models.cluster import ClusterModel
from leadercheck.models.cluster.base import BUILT_IN_FAULTS
from tests.helpers import ROOT

SAMPLES = ROOT / "examples" / "histories"


def read(doc: dict[str, Any] | str) -> History:
    return parse_history(doc if isinstance(doc, str) else json.dumps(doc), "h.json")


def model_for(
    history: History, protocol: str | None = None, **given: int
) -> tuple[ClusterModel, Any]:
    entry = lookup(protocol or history.protocol or "lease-no-fencing")
    fitted = fit(entry, history, {k: str(v) for k, v in given.items()}, None, BUILT_IN_FAULTS)
    model = entry.build(fitted.values)
    assert isinstance(model, ClusterModel)
    return model, fitted


def permitted(history: History, protocol: str | None = None, **given: int) -> Permission:
    model, fitted = model_for(history, protocol, **given)
    return permits(model, history, fitted)


def sample(name: str) -> History:
    path = SAMPLES / name
    return parse_history(path.read_text(), str(path))


def test_the_stale_write_is_a_behaviour_of_the_lease_without_fencing() -> None:
    found = permitted(sample("stale-write.json"))
    assert found.permitted and found.taken == 5 and found.refusal is None
    names = [action.name for action, _ in found.steps]
    assert names.count("pause") == 1 and names.count("tick") == 2  # the GC pause it needs
    assert names[-2:] == ["resume", "write"]


def test_the_same_history_is_refused_by_fencing_at_the_late_write() -> None:
    found = permitted(sample("stale-write.json"), "lease-fencing")
    assert not found.permitted and found.taken == 4
    assert found.refusal is not None and found.refusal.event.number == 5
    assert "t=2: n1 -> storage: write (token 1 rejected: 1 < 2)" in found.refusal.could


def test_a_given_budget_is_kept_and_one_not_given_is_unbounded() -> None:
    history = sample("stale-write.json")
    assert not permitted(history, pauses=0).permitted  # the pause it needs is ruled out
    assert permitted(history, pauses=1).permitted
    twice = read(
        {
            "schema": "leadercheck.history/1",
            "tick_seconds": 1,
            "ttl_seconds": 2,
            "events": [
                {"at": 0.1, "node": "n1", "event": "acquire", "token": 1},
                {"at": 2.3, "node": "n2", "event": "acquire", "token": 2},
                {"at": 4.5, "node": "n3", "event": "acquire", "token": 3},
                {"at": 4.6, "node": "n3", "event": "write", "token": 3, "accepted": True},
                {"at": 4.7, "node": "n2", "event": "write", "token": 2, "accepted": True},
                {"at": 4.8, "node": "n1", "event": "write", "token": 1, "accepted": True},
            ],
        }
    )
    assert permitted(twice).permitted  # two paused old leaders: past the default budget
    refused = permitted(twice, pauses=1)
    assert refused.refusal is not None and refused.refusal.event.number == 6


def test_the_first_event_the_model_cannot_take_is_named_with_its_alternatives() -> None:
    found = permitted(sample("impossible.json"))
    refusal = found.refusal
    assert refusal is not None and refusal.event.named() == "event 4 (4.6 s, n1 renew token 4021)"
    assert (refusal.want.lo, refusal.want.hi) == (4, 5)
    assert "t=4: n1 -> store: acquire (CAS ok: token 2, ttl 2)" in refusal.could
    assert found.taken == 3 and found.steps[-1][0].name == "renew"  # the path to event 3


def test_two_holders_are_refused_where_the_second_one_acquires() -> None:
    found = permitted(sample("two-holders.json"))
    assert found.refusal is not None and found.refusal.event.number == 3
    assert "t=2: n1 -> store: renew (token 1, ttl 4)" in found.refusal.could


def test_a_lose_is_a_node_running_and_not_leading() -> None:
    rows = [
        {"at": 0.1, "node": "n1", "event": "acquire", "token": 5},
        {"at": 0.9, "node": "n1", "event": "lose"},  # its lease runs to 2.1 s
    ]
    doc = {"schema": "leadercheck.history/1", "tick_seconds": 1, "ttl_seconds": 2}
    assert permitted(read({**doc, "events": rows}), crashes=0).refusal is not None
    assert permitted(read({**doc, "events": rows})).permitted  # a crash and a restart
    rows[1]["at"] = 2.3  # after its lease ran out
    assert permitted(read({**doc, "events": rows}), crashes=0).permitted


def test_thousands_of_events_of_a_correct_leader_are_permitted_and_safe() -> None:
    """2,000 events (the benchmark times it: `python -m leadercheck.checker.history.bench`)."""
    history = read(leader_history(2000, nodes=3))
    found = permitted(history)
    assert found.permitted and found.taken == 2000
    model, fitted = model_for(history)
    assert [f.verdict for f in judge(history.events, fitted.ttl_seconds)] == [HOLDS, HOLDS]


def test_a_long_history_with_a_stale_write_or_a_second_holder_is_caught() -> None:
    doc = leader_history(600, nodes=3)
    events = doc["events"]
    at = next(k for k in range(300, 600) if events[k]["event"] == "acquire")
    old = next(e for e in reversed(events[:at]) if e["event"] == "acquire")
    late = {**old, "event": "write", "accepted": True, "at": events[at + 1]["at"]}
    stale = read({**doc, "events": [*events[: at + 2], late, *events[at + 2 :]]})
    model, fitted = model_for(stale)
    leader, stale_write = judge(stale.events, fitted.ttl_seconds)
    assert stale_write.verdict == VIOLATED and stale_write.events == (at + 3,)
    assert leader.verdict == HOLDS
    refused = permitted(stale, "lease-fencing")
    assert refused.refusal is not None and refused.refusal.event.number == at + 3
    assert refused.passes == 2  # the first pass left states behind; the second is exhaustive
    renew = next(k for k in range(at + 2, 600) if events[k]["event"] == "renew")
    rival = {"at": events[renew]["at"], "node": "n9", "event": "acquire", "token": 10**6}
    doc["nodes"] = [*doc["nodes"], "n9"]
    second = read({**doc, "events": [*events[: renew + 1], rival, *events[renew + 1 :]]})
    leader, _ = judge(second.events, fitted.ttl_seconds)
    assert leader.verdict == VIOLATED and leader.events[1] == renew + 2
    assert permitted(second).refusal is not None


# The reductions (unobserved.py: budgets filled up, faults that cannot help left out,
# recoveries made where they matter; permits.py: the first pass's beam) must not change
# what is permitted. A plain search (every successor, budgets filled up, nothing else)
# is the reference, on histories the model itself makes and on broken copies of them.


def plain_taken(model: ClusterModel, history: History, fitted: Any) -> int:
    observer, top = Observer(model), model.initial_states()[0].faults
    moves: dict[Any, list[tuple[Any, int, Any]]] = {}  # each state's successors, once

    def successors(state: Any) -> list[tuple[Any, int, Any]]:
        if state not in moves:
            moves[state] = [
                (after, is_tick(action), observer.seen(state, action, after))
                for action, after in (
                    (a, s._replace(faults=top)) for a, s in model.successors(state)
                )
            ]
        return moves[state]

    frontier = {(s, 0) for s in model.initial_states()}
    for number, want in enumerate(wants(history, token_numbers(history), fitted.tick)):
        seen, queue, taken = set(frontier), deque(frontier), set()
        while queue:
            state, ticks = queue.popleft()
            if want.seen is None and want.lo <= ticks and observer.may_lose(state, want.node):
                taken.add((state, ticks))
            for after, tick, shown in successors(state):
                later = ticks + tick
                if later > want.hi:
                    continue
                if shown:
                    if want.seen is not None and want.lo <= later and shown == (want.seen,):
                        taken.add((after, later))
                elif (after, later) not in seen:
                    seen.add((after, later))
                    queue.append((after, later))
        if not taken:
            return number
        frontier = taken
    return len(history.events)


def walked(protocol: str, seed: int, steps: int = 24) -> dict[str, Any]:
    """A history the model makes: a random walk (a fault one step in four), its observed
    events at random times within their ticks, a node's lose logged now and then; then,
    for most seeds, one event broken (a token, the storage's answer, a time, a node)."""
    pick = random.Random(seed)
    entry = lookup(protocol)
    model = entry.build({**entry.resolve({"nodes": "2"}), **dict.fromkeys(BUILT_IN_FAULTS, 1)})
    top = model.initial_states()[0].faults
    observer, state, ticks, rows = Observer(model), model.initial_states()[0], 0, []
    for _ in range(steps):
        moves = list(model.successors(state))
        own = [(a, s) for a, s in moves if a.kind in ("step", "tick")] or moves
        action, after = pick.choice(own if pick.random() < 0.75 else moves)
        after = after._replace(faults=top)
        ticks += is_tick(action)
        at = ticks + pick.choice([0, 0.25, 0.5, 0.75])
        for shown in observer.seen(state, action, after):
            row = {"at": at, "node": shown.node, "event": shown.kind, "token": 100 + shown.token}
            rows.append(row | ({"accepted": shown.accepted} if shown.kind == "write" else {}))
        for node, facts in observer.facts(after).items():
            if observer.facts(state)[node].leads and facts.running and not facts.leads:
                if pick.random() < 0.5:
                    rows.append({"at": at, "node": node, "event": "lose"})
        state = after
    for k in range(1, len(rows)):
        rows[k]["at"] = max(rows[k]["at"], rows[k - 1]["at"])
    if rows and pick.random() < 0.6:
        k = pick.randrange(len(rows))
        row = rows[k]
        change = pick.choice(["token", "accepted", "at", "node"])
        tokens = sorted({r["token"] for r in rows if "token" in r} - {row.get("token")})
        if change == "token" and "token" in row and tokens:
            row["token"] = pick.choice(tokens)
        elif change == "accepted" and "accepted" in row:
            row["accepted"] = not row["accepted"]
        elif change == "node":
            row["node"] = "n2" if row["node"] == "n1" else "n1"
        else:
            low = rows[k - 1]["at"] if k else 0
            high = rows[k + 1]["at"] if k + 1 < len(rows) else row["at"] + 2
            row["at"] = pick.choice([low, high])
    return {"schema": "leadercheck.history/1", "protocol": protocol, "tick_seconds": 1,
            "nodes": ["n1", "n2"], "events": rows}  # fmt: skip


@pytest.mark.parametrize(
    ("protocol", "seeds"),
    [
        ("lease-no-fencing", 12),
        ("lease-fencing", 12),
        pytest.param("lease-no-fencing", 200, marks=pytest.mark.slow),
        pytest.param("lease-cas", 40, marks=pytest.mark.slow),  # no cut is left out: slower
        pytest.param("zookeeper", 20, marks=pytest.mark.slow),  # nothing left out: slower
    ],
)
def test_the_reductions_take_what_a_plain_search_takes(protocol: str, seeds: int) -> None:
    outcomes = set()
    for seed in range(seeds):
        doc = walked(protocol, seed)
        if not doc["events"]:
            continue
        history = read(doc)
        model, fitted = model_for(history)
        found = permits(model, history, fitted)
        assert found.taken == plain_taken(model, history, fitted), (seed, doc)
        outcomes.add(found.permitted)
    assert outcomes == {True, False}  # both verdicts were put to the test
