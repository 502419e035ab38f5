"""A store member's fault outside the model, on the real 3-member etcd cluster: killed
(`verify conform --kill-member`) or cut off from its peers (`--cut-member`: the members
talk through one proxy each, which tells which member made each connection). A
follower's death is invisible to the clients (their proxies go on to the next member) and
the counterexample still conforms, its stale write landing for real. A leader's death or
isolation is waited out until the others elect a new one, and said; the cut has its
effect (the cut member commits nothing and the majority elects another leader), and with
the cut a no-op the old leader stays. In random schedules each schedule has its member
fault (before a step it draws, or the one named), and the next schedule's start brings
the member back (`make_whole`), so every schedule starts from a whole cluster."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from leadercheck.checker.conform import servers
from leadercheck.checker.conform.clients.etcd import etcd_client
from leadercheck.checker.conform.proxy import FaultProxy
from tests.conform.helpers import verify

pytestmark = [
    pytest.mark.conform,
    pytest.mark.skipif(
        servers.available("etcd") is not None, reason=str(servers.available("etcd"))
    ),
]
LEASE = Path(__file__).resolve().parents[2] / "counterexamples" / "lease-no-fencing.json"


def test_a_followers_death_changes_nothing_the_clients_see(tmp_path: Path) -> None:
    timeline = tmp_path / "run.json"
    result = verify(
        "conform", str(LEASE), "--against", "etcd", "--kill-member", "follower",
        "--timeline", str(timeline),
    )  # fmt: skip
    assert result.exit_code == 1, result.output  # the stale write lands, as without the fault
    rows = json.loads(timeline.read_text())["timeline"]
    assert rows[1]["real"].startswith("[etcd member m")
    assert "its Raft follower, SIGKILLed outside the model" in rows[1]["real"]
    assert rows[10]["observed"]["storage"] == "highest token 2, a stale write accepted"


def test_a_leaders_death_or_isolation_is_waited_out_and_said(tmp_path: Path) -> None:
    """The run goes on once the members left elect a new leader (etcd refuses requests
    meanwhile, which is the election, not a finding); the timeline says how long it took.
    The verdict at the expiry tick depends on that election's timing (the new leader
    renews every lease), so only the run's course is asserted here. A tick of 3 s leaves
    the election room; an election that still outlasts it (a busy machine), or a client's
    request to the cut member that times out (etcd3gw does not fail over on a timeout),
    leaves the run behind the time mapping, which the run says (3)."""
    for option in ("--kill-member", "--cut-member"):
        timeline = tmp_path / f"{option}.json"
        result = verify(
            "conform", str(LEASE), "--against", "etcd", option, "leader@4",
            "--tick", "3", "--timeline", str(timeline),
        )  # fmt: skip
        # the stale write lands as without the fault (1), or the expiry tick diverges (4)
        assert result.exit_code in (1, 3, 4), result.output
        if result.exit_code == 3:  # a request to the cut member may time out, as it does
            assert "fell behind the time mapping at step" in result.output, result.output
        row = json.loads(timeline.read_text())["timeline"][4]
        assert "its Raft leader" in row["real"], row
        assert "the others elected a new leader in " in row["real"], row


def test_a_member_cut_off_from_its_peers_serves_nothing_and_loses_leadership() -> None:
    """The cut has its effect: the majority elects another leader, and a lease grant
    through the cut member does not commit, while one through the majority does."""
    with servers.EtcdCluster(peer_proxies=True) as cluster:
        k = cluster.member_names.index(cluster.isolate_member("leader").name)
        statuses = [
            servers.etcd_status(port) for j, (_, port) in enumerate(cluster.endpoints) if j != k
        ]
        leaders = {s[1] for s in statuses if s is not None}
        assert len(leaders) == 1 and leaders <= {s[0] for s in statuses if s is not None}
        cut_off = etcd_client(list(cluster.endpoints[k]), 2.0)
        with pytest.raises(Exception):  # noqa: B017, PT011 (a timeout or a 503, as etcd says)
            cut_off.lease(2)
        majority = etcd_client(list(cluster.endpoints[(k + 1) % 3]), 2.0)
        assert majority.lease(2).id


def test_with_the_cut_a_no_op_the_leader_stays(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(FaultProxy, "cut", lambda self, silent=False: 0)
    monkeypatch.setattr(FaultProxy, "shun", lambda self, dialer: 0)
    with servers.EtcdCluster(peer_proxies=True) as cluster:
        with pytest.raises(servers.ServerError, match="elected no leader within 10 s"):
            cluster.isolate_member("leader")


@pytest.mark.parametrize("kind", ["kill", "cut"])
def test_a_faulted_member_is_brought_back_whole(kind: str) -> None:
    """Killed: started again on its data directory, it rejoins; cut: its peer links heal.
    Either way every member answers and names the same leader, and the next fault can be
    made; a second fault before that is refused (the cluster keeps its majority)."""
    with servers.EtcdCluster(peer_proxies=True) as cluster:
        fault = getattr(cluster, f"{kind}_member" if kind == "kill" else "isolate_member")
        for _ in range(2):
            first = fault("leader")
            assert first.kind == kind and cluster.fault == first
            with pytest.raises(servers.ServerError, match="is down or cut off already"):
                fault("follower")
            took = cluster.make_whole()
            assert took is not None and took < 30
            assert cluster.fault is None and cluster.make_whole() is None
            statuses = [servers.etcd_status(port) for _, port in cluster.endpoints]
            assert all(s is not None for s in statuses), statuses
            assert len({s[1] for s in statuses if s is not None}) == 1, statuses
        alive = [p for p in cluster._resources.procs if p.poll() is None]
        assert len(alive) == 3  # the killed ones are reaped, each member runs once


@pytest.mark.parametrize("option", ["--kill-member", "--cut-member"])
def test_random_schedules_each_fault_a_follower_and_conform(option: str, tmp_path: Path) -> None:
    """Each schedule kills (or cuts) a follower before a step it draws; the schedules
    after it start from a whole cluster (else the next fault is refused: exit 2). A
    follower's fault is invisible to the clients: every schedule conforms, and each kept
    schedule names the option that replays it."""
    timeline, kept = tmp_path / "run.json", tmp_path / "kept"
    result = verify(
        "conform", "--against", "etcd", "--random", "3", "-p", "nodes=2", "--steps", "4",
        "--seed", "3", option, "follower", "--timeline", str(timeline), "--keep", str(kept),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "store member: the Raft follower " in result.output
    record = json.loads(timeline.read_text())
    assert record["verdict"] == "CONFORMS" and record["schedules_run"] == 3
    name = option.removeprefix("--")
    assert record["coverage"]["faults_with_effect"][f"{name} follower"] == 3
    replays = record["kept_member_faults"]
    assert sorted(replays) == sorted(p.name for p in kept.iterdir()) and len(replays) == 3
    assert all(r is not None and r.startswith(f"{option} follower@") for r in replays.values())


def test_each_schedule_starts_whole_and_says_so(tmp_path: Path) -> None:
    """Two schedules on one cluster, each killing the leader before its first step: the
    second finds the first's member brought back, and its timeline's start says so."""
    from leadercheck.checker.conform.bindings import binding_for  # noqa: PLC0415
    from leadercheck.checker.conform.random_walks import walk  # noqa: PLC0415
    from leadercheck.checker.conform.run import running_servers, world_for  # noqa: PLC0415
    from leadercheck.checker.conform.world import Timing  # noqa: PLC0415
    from leadercheck.checker.protocols.catalogue import built_in  # noqa: PLC0415

    entry = built_in().lookup("lease-no-fencing")
    params = dict(entry.resolve({"nodes": "2"}))
    binding = binding_for(entry.name, "etcd", params)
    binding.member_fault = ("kill", "leader", None)
    timing = binding.settled(Timing())
    runs = []
    with running_servers("etcd", None) as running:
        for _ in range(2):
            world = world_for(binding, running, timing, tmp_path)
            runs.append(walk(entry.build(params), binding, world, lambda w: 0, 1, None, 1))
        assert running.server.fault is not None  # the second's member, down to the stop
    first, second = (run.entries[0].real_event for run in runs)
    assert first == "servers and clients started"
    assert second.startswith("servers and clients started (the store member faulted before")
    assert all(run.member_fault == "--kill-member leader@1" for run in runs)
    assert all("its Raft leader, SIGKILLed" in run.entries[1].real_event for run in runs)
