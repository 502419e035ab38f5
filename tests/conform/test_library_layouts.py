"""What a library's client tells the harness, read as what it is (no server needed): a
refusal the library raises is the operation's refusal, not "no reply"; a lock stored
under the library's own id is read as the node that said so; ZooKeeper children named by
any recipe are read by their sequence numbers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from leadercheck.checker.conform.agent import ClientError
from leadercheck.checker.conform.bindings.base import NO_REPLY
from leadercheck.checker.conform.bindings.etcd import EtcdLease
from leadercheck.checker.conform.bindings.zookeeper import SEQUENTIAL, ZooKeeperElection
from leadercheck.checker.conform.clients.etcd import LOCK_PREFIX, Keys
from leadercheck.checker.conform.clients.zookeeper import seq_of
from leadercheck.checker.conform.harness import call_outcome
from tests.conform.test_hostile_clients import _agent, _client, _kill_within

PARAMS = {"nodes": 3, "ttl": 2, "tokens": 3}


@pytest.mark.parametrize(
    ("binding", "op", "said"),
    [
        (EtcdLease("lease-fencing", PARAMS), "write", "rejected"),
        (EtcdLease("lease-fencing", PARAMS), "acquire", "refused"),
        (EtcdLease("lease-fencing", PARAMS), "renew", "refused"),
        (ZooKeeperElection("zookeeper-multi", {"nodes": 3, "timeout": 2}), "write", "rejected"),
        (ZooKeeperElection("zookeeper-multi", {"nodes": 3, "timeout": 2}), "create",
         "not created"),
    ],
)  # fmt: skip
def test_a_refusal_the_library_raises_is_the_operations_refusal(
    binding: EtcdLease | ZooKeeperElection, op: str, said: str
) -> None:
    """kazoo raises SessionExpiredError for a write the expired session may not make; the
    client says `"refused": true` and the run compares it as the write refused."""
    refused = {"ok": False, "error": "its session expired", "refused": True, "op": op}
    assert call_outcome(binding, refused) == said
    assert call_outcome(binding, {**refused, "refused": False}) == NO_REPLY
    assert call_outcome(binding, {"ok": False, "error": "timed out", "op": op}) == NO_REPLY
    assert "(refused)" in binding.describe_call("n1", op, refused)


def test_a_check_cannot_be_refused_only_fail() -> None:
    """A check is the client's own belief: a failure of it is no reply, whatever it says."""
    binding = EtcdLease("lease-fencing", PARAMS)
    refused = {"ok": False, "error": "x", "refused": True, "op": "check"}
    assert call_outcome(binding, refused) == NO_REPLY


def test_a_refused_flag_that_is_not_a_bool_is_the_clients_protocol_error(
    tmp_path: Path,
) -> None:
    answer = json.dumps({"ok": False, "error": "no", "refused": "yes"})
    agent = _agent(tmp_path, _client(tmp_path, f"print({answer!r}, flush=True)\ntime.sleep(60)"))
    with pytest.raises(ClientError, match='"refused" is not a bool'):
        agent.call("write", 30.0)
    _kill_within(agent, 20)


def test_the_leader_key_is_where_lock_libraries_keep_their_lock() -> None:
    """etcd3gw's and python-etcd3's `Lock(name)` keep the key `/locks/<name>`: a client
    given `lock_name` holds the very key the harness reads."""
    keys = Keys("/leadercheck/abc/")
    assert keys.leader == LOCK_PREFIX + keys.lock_name == "/locks/leadercheck/abc/leader"


def test_a_lock_stored_under_a_librarys_own_id_is_read_as_the_node_that_said_so() -> None:
    binding = EtcdLease("lease-no-fencing", PARAMS)
    assert binding.holder_of("n2") == "n2"  # this project's clients store the node's name
    binding.heard("n1", "ready", {"ok": True, "result": {"holds_as": "6dcc-uuid"}})
    binding.heard("n3", "acquire", {"ok": True, "result": {"granted": True, "holds_as": "b7"}})
    binding.heard("n2", "acquire", {"ok": False, "error": "x", "result": {"holds_as": "zz"}})
    assert binding.holder_of("6dcc-uuid") == "n1"
    assert binding.holder_of("b7") == "n3"
    assert binding.holder_of("zz") == "an unclaimed value 'zz'"  # a failed call claims nothing


@pytest.mark.parametrize(
    ("name", "seq"),
    [
        ("n_0000000007", 7),  # this project's clients
        ("4f2a9c0e1b7d4e6fa3c5b8d9e0f1a2b3__lock__0000000012", 12),  # kazoo Lock, Election
        ("_c_0f0e0d0c-0b0a-0908-0706-050403020100-latch-0000000003", 3),  # Curator LeaderLatch
    ],
)
def test_zookeeper_children_named_by_any_recipe_are_read_by_their_sequence(
    name: str, seq: int
) -> None:
    assert SEQUENTIAL.search(name) and seq_of(name) == seq


def test_a_child_without_a_sequence_is_no_contender() -> None:
    assert not SEQUENTIAL.search("hi") and not SEQUENTIAL.search("lock-12")
