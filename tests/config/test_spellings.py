"""The same knob values in every spelling a system's files use give the same verdicts: a
verdict follows from the values, never from how the file happens to write them."""

from __future__ import annotations

import json

import pytest

from leadercheck.checker.config.judge import judge
from leadercheck.checker.config.knobs import read_configurations

_JUDGED: dict[object, dict[str, str]] = {}


def verdicts(text: str) -> list[dict[str, str]]:
    """Each election's verdicts. A verdict is a function of what the judge reads (the values
    as the system runs them, the facts, the environment): elections that read the same are
    judged once, so every spelling is compared and each distinct one searched."""
    found = []
    for config in read_configurations(text, "spelled"):
        key = (
            tuple(sorted(config.values.items())),
            tuple(sorted(config.facts.items())),
            config.environment,
        )
        if key not in _JUDGED:
            _JUDGED[key] = {f.claim: f.verdict for f in judge(config).findings}
        found.append(_JUDGED[key])
    return found


def k8s_spellings(lease: str, renew: str, retry: str) -> dict[str, str]:
    flags = [
        f"--leader-elect-lease-duration={lease}",
        f"--leader-elect-renew-deadline={renew}",
        f"--leader-elect-retry-period={retry}",
    ]
    csi = [f.replace("--leader-elect-", "--leader-election-") for f in flags]
    command = "\n".join(
        f"    - {f}" for f in ["kube-controller-manager", "--leader-elect=true", *flags]
    )
    return {
        "flags file": "\n".join(f"{f}  # a comment" for f in flags) + "\n",
        "flags with values apart": "\n".join(f.replace("=", " ") for f in flags) + "\n",
        "static Pod": f"apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: kcm\n"
        f"    command:\n{command}\n",
        "csi sidecar args": "kind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n"
        "      - name: csi-provisioner\n        image: csi-provisioner:v5\n"
        "        args: [--leader-election, " + ", ".join(csi) + "]\n",
        "kubeadm v1beta3": "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\n"
        "controllerManager:\n  extraArgs:\n"
        + "".join(f"    {f[2:].split('=')[0]}: {f.split('=')[1]}\n" for f in flags),
        "kubeadm v1beta4": "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\n"
        "controllerManager:\n  extraArgs:\n"
        + "".join(
            f"  - name: {f[2:].split('=')[0]}\n    value: {f.split('=')[1]}\n" for f in flags
        ),
        "KubeSchedulerConfiguration": "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\nleaderElection:\n"
        f"  leaderElect: true\n  leaseDuration: {lease}\n"
        f"  renewDeadline: {renew}\n  retryPeriod: {retry}\n",
        "KubeControllerManagerConfiguration": "kind: KubeControllerManagerConfiguration\n"
        "Generic:\n  LeaderElection:\n"
        f"    leaseDuration: {lease}\n"
        f"    renewDeadline: {renew}\n"
        f"    retryPeriod: {retry}\n",
        "JSON with tabs": json.dumps(
            {
                "kind": "KubeSchedulerConfiguration",
                "leaderElection": {
                    "leaseDuration": lease,
                    "renewDeadline": renew,
                    "retryPeriod": retry,
                },
            },
            indent="\t",
        ),
        "cert-manager chart": "global:\n  leaderElection:\n"
        f"    leaseDuration: {lease}\n    renewDeadline: {renew}\n"
        f"    retryPeriod: {retry}\nwebhook: {{}}\ncainjector: {{}}\n",
        "cert-manager configuration": "apiVersion: controller.config.cert-manager.io/v1alpha1\n"
        "kind: ControllerConfiguration\nleaderElectionConfig:\n"
        f"  leaseDuration: {lease}\n  renewDeadline: {renew}\n"
        f"  retryPeriod: {retry}\n",
        "a component's leaderElection block": "apiVersion: example.io/v1\nkind: Config\n"
        "leaderElection:\n"
        f"  leaseDuration: {lease}\n"
        f"  renewDeadline: {renew}\n"
        f"  retryPeriod: {retry}\n",
    }


@pytest.mark.parametrize(
    ("lease", "renew", "retry"), [("15s", "10s", "2s"), ("1m", "25s", "5000ms")]
)
def test_kubernetes_durations_in_every_spelling(lease: str, renew: str, retry: str) -> None:
    spelled = {name: verdicts(text) for name, text in k8s_spellings(lease, renew, retry).items()}
    first = spelled["flags file"][0]
    for name, found in spelled.items():  # kubeadm's scheduler, at its defaults, comes second
        assert found[0] == first, (name, found, first)
    assert spelled["cert-manager chart"] == [first, first]  # the controller and the cainjector


def patroni_spellings(ttl: int, loop: int, retry: int, sync: str) -> dict[str, str]:
    dcs = (
        f"ttl: {ttl}\n    loop_wait: {loop}\n    retry_timeout: {retry}\n"
        f"    synchronous_mode: {sync}\n"
    )
    spilo = {
        "bootstrap": {
            "dcs": {
                "ttl": ttl,
                "loop_wait": loop,
                "retry_timeout": retry,
                "synchronous_mode": sync == "true",
            }
        }
    }
    embedded = f"bootstrap:\n  dcs:\n    {dcs}".replace("\n", "\n          ")
    return {
        "Patroni YAML": f"scope: s\netcd3: {{host: 'h:2379'}}\nbootstrap:\n  dcs:\n    {dcs}",
        "Patroni JSON": json.dumps({"scope": "s", **spilo}, indent="\t"),
        "zalando manifest": "apiVersion: acid.zalan.do/v1\nkind: postgresql\nspec:\n  patroni:\n"
        f"    {dcs}",
        "Spilo in Compose": "services:\n  pg:\n    image: spilo\n    environment:\n"
        f"      SPILO_CONFIGURATION: |\n          {embedded}\n",
        "Spilo in a Pod": "kind: Pod\nspec:\n  containers:\n  - name: pg\n    image: spilo\n"
        "    env:\n    - name: SPILO_CONFIGURATION\n"
        f"      value: '{json.dumps(spilo)}'\n",
        "CrunchyData": "apiVersion: postgres-operator.crunchydata.com/v1beta1\n"
        "kind: PostgresCluster\nspec:\n  patroni:\n"
        f"    leaderLeaseDurationSeconds: {ttl}\n    syncPeriodSeconds: {loop}\n"
        f"    dynamicConfiguration:\n      retry_timeout: {retry}\n"
        f"      synchronous_mode: {sync}\n",
    }


@pytest.mark.parametrize(
    ("ttl", "loop", "retry", "sync"),
    [(30, 10, 10, "false"), pytest.param(40, 5, 5, "true", marks=pytest.mark.slow)],  # 6 s
)
def test_patroni_timings_in_every_spelling(ttl: int, loop: int, retry: int, sync: str) -> None:
    spelled = {n: verdicts(t) for n, t in patroni_spellings(ttl, loop, retry, sync).items()}
    first = spelled["Patroni YAML"]
    for name, found in spelled.items():
        assert found == first, (name, found, first)


def test_etcd_zookeeper_and_redlock_in_every_spelling() -> None:
    client = "leadercheck:\n  client:\n    lease_ttl: 20s\n"
    etcd = [
        "heartbeat-interval: 200\nelection-timeout: 2000\n" + client,
        '{"heartbeat-interval": 200, "election-timeout": 2000, "leadercheck": '
        '{"client": {"lease_ttl": "20s"}}}',
        "--heartbeat-interval=200\n--election-timeout=2000\n# leadercheck.client.lease_ttl=20s\n",
        'ETCD_HEARTBEAT_INTERVAL="200"\nETCD_ELECTION_TIMEOUT=2000\n'
        "# leadercheck.client.lease_ttl=20s\n",
        "kind: Pod\nspec:\n  containers:\n  - name: etcd\n    command: [etcd,\n"
        "      --heartbeat-interval=200]\n    env: [{name: ETCD_ELECTION_TIMEOUT, value: '2000'}]\n"
        + client,
    ]
    zookeeper = [
        "tickTime=2000\nmaxSessionTimeout=30000\n# leadercheck.client.session_timeout=30s\n",
        "tickTime: 2000\nmaxSessionTimeout: 30000\n"
        "leadercheck:\n  client:\n    session_timeout: 30s\n",
        "tickTime: 3000\nconfiguration: |\n  tickTime=2000\n  maxSessionTimeout=30000\n"
        "leadercheck:\n  client:\n    session_timeout: 30s\n",
    ]
    redlock = [
        "driftFactor: 0.01\nretryDelay: 200\nservers: [a, b, c]\n"
        "leadercheck:\n  client:\n    duration: 30s\n",
        '{"driftFactor": 0.01, "retryDelay": 200, "servers": ["a", "b", "c"], '
        '"leadercheck": {"client": {"duration": "30s"}}}',
    ]
    for group in (etcd, zookeeper, redlock):
        found = [verdicts(text) for text in group]
        assert all(f == found[0] for f in found), found
