"""`check=store`: a leader's check asks the store (etcd3gw's `Lock.is_acquired()`), so a
node cut off from the store checks nothing; the pause between check and write still lets
a stale write through without fencing, and fencing still refuses it."""

from __future__ import annotations

from collections import deque
from typing import Any

from leadercheck.checker import Verdict, check
from leadercheck.models.lease import PROTOCOLS
from leadercheck.specs.claims import PROPERTIES

ENTRIES = {entry.name: entry for entry in PROTOCOLS}


def build(name: str, **params: str) -> Any:
    entry = ENTRIES[name]
    return entry.build(entry.resolve(params))


def checks_while_cut(model: Any) -> tuple[int, int]:
    """(checks by a node cut off from the store, checks) over every reachable state."""
    start = list(model.initial_states())
    seen, queue = set(start), deque(start)
    cut = total = 0
    while queue:
        state = queue.popleft()
        for action, after in model.successors(state):
            if action.name == "check":
                total += 1
                i = int(action.actor[1:])
                cut += not state.net.reaches_store(i)
            if after not in seen:
                seen.add(after)
                queue.append(after)
    return cut, total


def test_a_node_cut_off_from_the_store_checks_only_with_its_own_copy() -> None:
    local = checks_while_cut(build("lease-no-fencing", nodes="2", tokens="2"))
    store = checks_while_cut(build("lease-no-fencing", nodes="2", tokens="2", check="store"))
    assert local[0] > 0 and local[1] > local[0]  # a local check goes on under a partition
    assert store[0] == 0 and store[1] > 0  # a store's check does not


def test_the_paused_writer_still_breaks_no_stale_write_and_fencing_still_refuses_it() -> None:
    claim = PROPERTIES["no-stale-write"]
    unfenced = check(build("lease-no-fencing", nodes="2", check="store"), [claim]).results[0]
    assert unfenced.verdict is Verdict.VIOLATED and unfenced.trace is not None
    names = [a.name for a in unfenced.trace.actions]
    assert "pause" in names and names[-1] == "write"
    assert "partition" not in names
    fenced = check(build("lease-fencing", nodes="2", tokens="2", check="store"), [claim])
    fenced = fenced.results[0]
    assert fenced.verdict is Verdict.HOLDS


def test_the_check_is_named_by_its_choice() -> None:
    entry = ENTRIES["lease-no-fencing"]
    assert entry.resolve({"check": "store"})["check"] == 1
    assert entry.resolve({})["check"] == 0
