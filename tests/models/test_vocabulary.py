"""The shared cluster building blocks, one behaviour at a time."""

from __future__ import annotations

from leadercheck.models.cluster import Faults, Message, Network, Storage, Store, countdown
from leadercheck.models.cluster.network import islands


def test_countdown_stops_at_zero() -> None:
    assert [countdown(x) for x in (3, 1, 0)] == [2, 0, 0]


def test_store_grants_a_free_lease_with_a_new_token_and_revision() -> None:
    store = Store().acquire(2, ttl=3)
    assert store == Store(holder=2, token=1, ttl_left=3, revision=1)
    assert store.acquire(1, ttl=3) is None  # held and unexpired: the CAS fails


def test_store_lease_can_be_taken_again_once_expired() -> None:
    store = Store().acquire(1, ttl=1)
    assert store is not None
    expired = store.tick()
    assert expired.lease_free()
    again = expired.acquire(3, ttl=2)
    assert again == Store(holder=3, token=2, ttl_left=2, revision=2)


def test_renew_needs_the_current_unexpired_lease_and_keeps_the_revision() -> None:
    store = Store().acquire(1, ttl=2)
    assert store is not None
    renewed = store.tick().renew(1, token=1, ttl=2)
    assert renewed == Store(1, 1, 2, 1)
    assert store.renew(2, token=1, ttl=2) is None
    assert store.renew(1, token=0, ttl=2) is None
    assert store.tick().tick().renew(1, token=1, ttl=2) is None


def test_storage_with_fencing_rejects_an_older_token() -> None:
    storage, ok = Storage().write(2, fencing=True)
    assert ok and storage == Storage(2, False, 2)
    after, ok = storage.write(1, fencing=True)
    assert not ok and after == storage
    after, ok = storage.write(2, fencing=True)
    assert ok and after == storage


def test_storage_without_fencing_accepts_and_marks_the_stale_write() -> None:
    storage, _ = Storage().write(2, fencing=False)
    after, ok = storage.write(1, fencing=False)
    assert ok and after == Storage(2, True, 2)


def test_the_claim_reads_the_leadership_and_fencing_reads_the_token() -> None:
    """Token 1 handed out twice: leadership 2's write, then leadership 1's under the same
    token. Fencing accepts it (1 is not below 1); the ghost marks it stale all the same.
    A later leadership's write under a lower token is refused by fencing and is no stale
    write when accepted without it."""
    newer, _ = Storage().write(1, fencing=True, tenure=2)
    late, ok = newer.write(1, fencing=True, tenure=1)
    assert ok and late == Storage(1, True, 2)
    assert late.describe()["latest_leadership_written"] == 2
    refused, ok = newer.write(0, fencing=True, tenure=3)
    assert not ok and refused == newer
    lower, ok = newer.write(0, fencing=False, tenure=3)
    assert ok and lower == Storage(1, False, 3)
    assert "latest_leadership_written" not in Storage(1, False, 1).describe()


def test_faults_spend_one_unit_of_one_kind() -> None:
    assert Faults(1, 2, 0, 1).spend("partitions") == Faults(1, 1, 0, 1)


def test_partition_sides_are_named_once() -> None:
    assert list(islands(3)) == [frozenset({1}), frozenset({2}), frozenset({3})]
    four = list(islands(4))
    assert len(four) == 4 + 3  # four singletons, three 2/2 splits named by node 1's side
    assert all(1 in side for side in four if len(side) == 2)


def test_partition_drops_messages_across_the_cut_and_heal_restores_links() -> None:
    net = Network().send(Message("hb", 1, 2), Message("hb", 2, 3))
    cut = net.split(frozenset({1}))
    assert cut.msgs == (Message("hb", 2, 3),)
    assert not cut.connected(1, 2) and cut.connected(2, 3)
    assert cut.heal() == Network(msgs=cut.msgs)


def test_messages_are_a_set_in_a_fixed_order() -> None:
    a, b = Message("hb", 2, 1), Message("hb", 1, 2)
    assert Network().send(a, b) == Network().send(b, a).send(a)
    assert Network().send(a, b).msgs == (b, a)


def test_a_choice_parameter_takes_a_name_or_its_position() -> None:
    from leadercheck.checker import LeadercheckError
    from leadercheck.models.params import choice

    variant = choice("variant", "correct", ("correct", "noquorum", "forgetvote"), "which")
    assert variant.default == 0
    assert variant.parse("p", "forgetvote") == 2 and variant.parse("p", "1") == 1
    import pytest

    with pytest.raises(LeadercheckError, match="one of correct, noquorum, forgetvote"):
        variant.parse("p", "quorum")
