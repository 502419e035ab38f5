"""Configuration files read as their systems read them: each knob with its origin (the
file's place, a named program's default) or named as unreadable; never a silent default."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from leadercheck.checker.config.durations import seconds
from leadercheck.checker.config.environment import Environment
from leadercheck.checker.config.knobs import (
    Configuration,
    load_configurations,
    read_configurations,
)
from leadercheck.checker.config.systems.kubernetes import go_duration
from leadercheck.checker.errors import LeadercheckError

FILES = Path(__file__).parent / "files"


def one(text: str, system: str | None = None, source: str = "c") -> Configuration:
    (config,) = read_configurations(text, source, system)
    return config


def value(config: Configuration, knob: str) -> float | None:
    return config.knobs[knob].value


@pytest.mark.parametrize(
    ("name", "system", "knobs"),
    [
        ("postgres0.yml", "patroni", {"ttl": 30, "loop_wait": 10, "retry_timeout": 10}),
        (
            "kube-controller-manager.yaml",
            "k8s",
            {"lease_duration": 15, "renew_deadline": 10, "retry_period": 2},
        ),
        (
            "controller-flags.txt",
            "k8s",
            {"lease_duration": 15, "renew_deadline": 10, "retry_period": 2},
        ),
        ("etcd.conf.yml", "etcd", {"heartbeat_interval": 0.1, "election_timeout": 1.0}),
        (
            "zoo.cfg",
            "zookeeper",
            {"tick_time": 2.0, "min_session_timeout": 4.0, "max_session_timeout": 40.0},
        ),
        (
            "redlock.yml",
            "redlock",
            {"drift_factor": 0.01, "retry_count": 10, "retry_delay": 0.2, "masters": 5},
        ),
    ],
)
def test_shipped_files_are_read(name: str, system: str, knobs: dict[str, float]) -> None:
    (config,) = load_configurations(FILES / name)
    assert config.system == system
    for knob, expected in knobs.items():
        assert value(config, knob) == pytest.approx(expected), knob
    assert config.environment == Environment()


# -- Patroni ---------------------------------------------------------------------------------


def test_patroni_reads_timings_from_bootstrap_dcs_and_says_whose_default() -> None:
    config = one("bootstrap:\n  dcs:\n    ttl: 40\n")
    assert value(config, "ttl") == 40 and config.knobs["ttl"].origin == "bootstrap.dcs.ttl (line 3)"
    assert config.knobs["loop_wait"].default and config.knobs["loop_wait"].origin == (
        "Patroni's default"
    )
    assert config.facts == {"dcs": "unknown", "watchdog": "automatic"}


def test_a_top_level_or_dcs_section_ttl_is_named_as_not_used() -> None:
    """Patroni's config.py copies only keys absent from its dynamic defaults, and the DCS
    section's ttl is overwritten: neither place sets the ttl Patroni runs with."""
    config = one("ttl: 60\nloop_wait: 10\netcd3:\n  ttl: 90\n  host: h:2379\n", "patroni")
    assert value(config, "ttl") == 30 and config.knobs["ttl"].default
    notes = " | ".join(config.notes)
    assert "ttl (line 1) is not used: Patroni reads ttl only as dynamic configuration" in notes
    assert "etcd3.ttl (line 4) is not used: the etcd3 section's ttl is overwritten" in notes
    assert config.facts["dcs"] == "etcd3"


def test_patroni_takes_whole_seconds_and_names_what_it_cannot_read() -> None:
    config = one("bootstrap:\n  dcs:\n    ttl: 30s\n    loop_wait: 10.9\n")
    assert value(config, "loop_wait") == 10  # int(10.9)
    assert value(config, "ttl") is None
    assert "Patroni's int() fails on it" in config.knobs["ttl"].problem


def test_patroni_watchdog_is_local_and_its_mode_named() -> None:
    config = one(
        "bootstrap:\n  dcs:\n    watchdog: {mode: required}\n"
        "watchdog:\n  mode: require\n  safety_margin: -1\n"
    )
    assert config.facts["watchdog"] == "required" and value(config, "safety_margin") == -1
    assert any("bootstrap.dcs.watchdog is not used" in n for n in config.notes)


def test_zalando_manifest_takes_spilo_s_template_for_what_it_leaves_out() -> None:
    text = (
        "apiVersion: acid.zalan.do/v1\nkind: postgresql\nmetadata: {name: x}\n"
        "spec:\n  patroni:\n    ttl: 40\n    failsafe_mode: true\n"
    )
    config = one(text)
    assert config.program == "postgres-operator (zalando)"
    assert value(config, "ttl") == 40 and config.knobs["ttl"].origin.startswith("spec.patroni.ttl")
    assert config.knobs["maximum_lag_on_failover"].value == 33554432
    assert config.knobs["maximum_lag_on_failover"].origin == "Spilo's template default"
    assert value(config, "failsafe_mode") == 1 and config.facts["dcs"] == "kubernetes"


def test_crunchy_sets_ttl_from_its_own_fields_whatever_dynamic_configuration_says() -> None:
    text = (
        "apiVersion: postgres-operator.crunchydata.com/v1beta1\nkind: PostgresCluster\n"
        "spec:\n  patroni:\n    leaderLeaseDurationSeconds: 45\n    dynamicConfiguration:\n"
        "      ttl: 99\n      retry_timeout: 12\n"
    )
    config = one(text)
    assert value(config, "ttl") == 45 and value(config, "retry_timeout") == 12
    assert value(config, "loop_wait") == 10 and "CrunchyData PGO's default" in (
        config.knobs["loop_wait"].origin
    )
    assert any(
        "dynamicConfiguration.ttl (line 7) is not used: the operator sets ttl from "
        "leaderLeaseDurationSeconds" in n
        for n in config.notes
    )
    assert config.facts["watchdog"] == "off"


def test_spilo_configuration_in_a_compose_environment_is_read_whole() -> None:
    text = (
        "services:\n  spilo1:\n    image: spilo\n    environment:\n      ETCD_HOST: etcd:2379\n"
        "      SPILO_CONFIGURATION: |\n        bootstrap:\n          dcs:\n"
        "            loop_wait: 2\n"
    )
    config = one(text)
    assert config.program == "Spilo" and config.facts["dcs"] == "etcd3"
    assert value(config, "loop_wait") == 2 and value(config, "ttl") == 30
    assert config.knobs["ttl"].origin == "Spilo's template default"


def test_patroni_set_by_its_environment_alone_cannot_say_its_timings() -> None:
    text = (
        "services:\n  p1:\n    image: patroni\n    environment:\n"
        "      PATRONI_ZOOKEEPER_HOSTS: zk1:2181\n      PATRONI_SCOPE: demo\n"
    )
    config = one(text)
    assert config.facts["dcs"] == "zookeeper"
    assert value(config, "ttl") is None and "PATRONI_* variables set no timing" in (
        config.knobs["ttl"].problem
    )


# -- Kubernetes ------------------------------------------------------------------------------


def test_each_program_s_own_defaults_are_taken_and_named() -> None:
    csi = one(
        "spec:\n  containers:\n  - name: csi-provisioner\n"
        "    image: registry.k8s.io/sig-storage/csi-provisioner:v5.0.0\n"
        "    args: [--leader-election]\n"
    )
    assert [value(csi, k) for k in ("lease_duration", "renew_deadline", "retry_period")] == [
        15,
        10,
        5,
    ]
    assert csi.knobs["retry_period"].origin == "the kubernetes-csi sidecars' default"
    cert, _ = read_configurations(
        "global:\n  leaderElection:\n    namespace: kube-system\n"
        "installCRDs: false\nwebhook: {}\ncainjector: {}\n",
        "v",
    )
    assert value(cert, "lease_duration") == 60 and value(cert, "retry_period") == 15


def test_the_chart_s_global_leader_election_reaches_controller_and_cainjector() -> None:
    text = (
        "global:\n  leaderElection:\n    leaseDuration: 90s\ncainjector:\n  extraArgs:\n"
        "  - --leader-election-retry-period=20s\nwebhook: {}\n"
    )
    controller, cainjector = read_configurations(text, "values.yaml")
    assert controller.program == "cert-manager-controller"
    assert value(controller, "lease_duration") == 90 and value(controller, "retry_period") == 15
    assert value(cainjector, "retry_period") == 20 and value(cainjector, "lease_duration") == 90


def test_an_unknown_program_s_missing_duration_is_not_guessed() -> None:
    config = one("--leader-election=true\n--leader-election-lease-duration=30s\n")
    assert value(config, "lease_duration") == 30 and value(config, "retry_period") is None
    assert "its default is unknown" in config.knobs["retry_period"].problem
    named = one("--leader-election-lease-duration=30s\n# leadercheck.program=csi-attacher\n")
    assert value(named, "retry_period") == 5


def test_kubeadm_extra_args_as_a_map_or_a_list() -> None:
    v1beta3 = (
        "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\n"
        "controllerManager:\n  extraArgs:\n    leader-elect-lease-duration: 30s\n"
    )
    v1beta4 = (
        "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\n"
        "scheduler:\n  extraArgs:\n  - name: leader-elect-renew-deadline\n    value: 7s\n"
    )
    manager, _ = read_configurations(v1beta3, "k")
    assert manager.program == "kube-controller-manager" and value(manager, "lease_duration") == 30
    _, scheduler = read_configurations(v1beta4, "k")
    assert scheduler.program == "kube-scheduler" and value(scheduler, "renew_deadline") == 7


def test_a_controller_manager_configuration_block_is_where_its_type_puts_it() -> None:
    """KubeControllerManagerConfiguration holds the block under Generic.LeaderElection (no
    JSON tags: Go matches keys whatever their case); a top-level one is not read, and the
    defaults it might override are then not taken."""
    good = one(
        "kind: KubeControllerManagerConfiguration\nGeneric:\n  LeaderElection:\n"
        "    leaseDuration: 20s\n"
    )
    assert value(good, "lease_duration") == 20
    assert any("reads no configuration file" in n for n in good.notes)
    wrong = one("kind: KubeControllerManagerConfiguration\nleaderElection:\n  leaseDuration: 20s\n")
    assert value(wrong, "lease_duration") is None
    assert "in a place leadercheck does not read" in wrong.knobs["lease_duration"].problem


def test_flags_override_a_configuration_file_and_are_named_when_set_twice() -> None:
    text = (
        "kind: Pod\nspec:\n  containers:\n  - name: s\n    command: [kube-scheduler,\n"
        "      --leader-elect-lease-duration=20s, --leader-elect-lease-duration=30s]\n"
    )
    with pytest.raises(LeadercheckError, match="--leader-elect-lease-duration is given twice"):
        one(text)
    same = text.replace("30s", "20s")
    assert value(one(same), "lease_duration") == 20  # the same value twice is harmless


def test_go_durations_need_a_unit_and_cert_manager_reads_bare_nanoseconds() -> None:
    config = one("kind: KubeSchedulerConfiguration\nleaderElection:\n  leaseDuration: 15\n")
    assert value(config, "lease_duration") is None
    assert "has no unit" in config.knobs["lease_duration"].problem
    cert = one('{"leaderElectionConfig": {"leaseDuration": 60000000000, "retryPeriod": "15s"}}')
    assert value(cert, "lease_duration") == pytest.approx(60)
    assert go_duration("1h30m", "k") == 5400 and go_duration(".5s", "k") == 0.5


def test_leader_election_turned_off_everywhere_is_one_line() -> None:
    with pytest.raises(LeadercheckError, match="leader election is off in every program"):
        one("kind: KubeSchedulerConfiguration\nleaderElection:\n  leaderElect: false\n")


# -- etcd, ZooKeeper, Redlock -------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "heartbeat-interval: 250\nelection-timeout: 5000\n",
        "--heartbeat-interval=250\n--election-timeout=5000\n",
        'ETCD_HEARTBEAT_INTERVAL="250"\nETCD_ELECTION_TIMEOUT=5000\n',
        "etcd_heartbeat_interval: '250'\netcd_election_timeout: '5000'\n",
        "kind: Pod\nspec:\n  containers:\n  - name: etcd\n"
        "    command: [etcd, --heartbeat-interval=250]\n"
        "    env: [{name: ETCD_ELECTION_TIMEOUT, value: '5000'}]\n",
    ],
)
def test_etcd_in_every_spelling(text: str) -> None:
    config = one(text)
    assert config.system == "etcd"
    assert value(config, "heartbeat_interval") == 0.25 and value(config, "election_timeout") == 5


def test_etcd_refuses_text_in_its_yaml_and_names_it() -> None:
    config = one("heartbeat-interval: '100'\nelection-timeout: 1000\n")
    assert "etcd decodes this key into a number" in config.knobs["heartbeat_interval"].problem


def test_zookeeper_reads_whole_milliseconds_without_inline_comments() -> None:
    config = one("tickTime=2000 # ms\nmaxSessionTimeout=-1\n")
    assert value(config, "tick_time") is None
    assert "Integer.parseInt" in config.knobs["tick_time"].problem
    assert config.knobs["max_session_timeout"].problem == config.knobs["tick_time"].problem
    minus = one("tickTime=3000\nmaxSessionTimeout=-1\n")
    assert value(minus, "max_session_timeout") == 60 and minus.knobs["max_session_timeout"].default


def test_a_chart_s_configuration_is_the_zoo_cfg_it_renders() -> None:
    config = one("tickTime: 2000\nconfiguration: |\n  tickTime=3000\n  maxSessionTimeout=9000\n")
    assert value(config, "tick_time") == 3 and value(config, "max_session_timeout") == 9


def test_node_redlock_as_its_readme_writes_it() -> None:
    text = (
        "var redlock = new Redlock(\n\t// one client for each node\n"
        "\t[client1, client2, client3],\n"
        "\t{\n\t\tdriftFactor: 0.01, // time in ms\n\t\tretryCount:  10,\n\t}\n);\n"
    )
    config = one(text)
    assert config.system == "redlock" and value(config, "masters") == 3
    assert config.knobs["drift_factor"].origin == "driftFactor (line 5)"
    assert value(config, "duration") is None and "acquire()'s argument" in (
        config.knobs["duration"].problem
    )
    assert value(config, "retry_jitter") == 0.1  # the code's default, not the README's


# -- the leadercheck section and bad input -----------------------------------------------------


def test_the_environment_comes_from_the_file_s_leadercheck_section() -> None:
    yml = one(
        "bootstrap: {dcs: {ttl: 30}}\nleadercheck:\n  environment:\n    pause: 19s\n"
        "    clock_drift: 0.02\n"
    )
    assert yml.environment.pause == 19 and yml.environment.clock_drift == 0.02
    cfg = one("tickTime=2000\n# leadercheck.pause=2.5s\nleadercheck.client.session_timeout=6s\n")
    assert cfg.environment.pause == 2.5 and value(cfg, "session_timeout") == 6


@pytest.mark.parametrize(
    ("text", "system", "message"),
    [
        ("ttl: [30\n", "patroni", "c: line 2: does not parse as YAML"),
        ("bootstrap: {dcs: {ttl: -5}}\n", None, "c: bootstrap.dcs.ttl (line 1): -5 must not be"),
        ("bootstrap: {dcs: {ttl: 30, ttl: 5}}\n", None, "c: bootstrap.dcs.ttl is set twice"),
        ("name: x\n", None, "c: cannot tell which system this configures"),
        (
            "bootstrap: {}\nleadercheck:\n  environment:\n    gc: 3s\n",
            None,
            "c: unknown environment key 'gc'",
        ),
        ("driftFactor: 2\n", None, "c: driftFactor (line 1): 2 must be at least 0 and below 1"),
        (
            "bootstrap: {}\nleadercheck:\n  expect:\n    split-brain: SAFE\n",
            None,
            "c: leadercheck.expect names no claim 'split-brain'",
        ),
        (
            "heartbeat-interval: 100\nelection-timeout: 1000\nleadercheck:\n  client:\n"
            "    keepalive: 20s\n",
            None,
            "c: leadercheck.client.keepalive is not a setting",
        ),
        ("tickTime: 2000\ndriftFactor: 0.01\n", None, "c: this file configures zookeeper and"),
        (
            "bootstrap: {dcs: {ttl: 1.0e+300}}\n",
            None,
            "c: bootstrap.dcs.ttl (line 1): 1e+300 s is past any timeout",
        ),
    ],
)
def test_bad_input_is_one_line(text: str, system: str | None, message: str) -> None:
    with pytest.raises(LeadercheckError) as caught:
        read_configurations(text, "c", system)
    assert str(caught.value).startswith(message), str(caught.value)
    assert "\n" not in str(caught.value)


def test_an_unknown_system_and_a_huge_or_special_file_are_refused(tmp_path: Path) -> None:
    with pytest.raises(LeadercheckError, match="unknown system 'consul'"):
        load_configurations(FILES / "zoo.cfg", "consul")
    huge = tmp_path / "huge.yml"
    huge.write_bytes(b"ttl: 30\n" + b"#" * (100 << 20))
    with pytest.raises(LeadercheckError, match="larger than"):
        load_configurations(huge)
    with pytest.raises(LeadercheckError, match="not a regular file"):
        load_configurations(Path("/dev/zero"))


@given(st.integers(0, 10**5), st.sampled_from([("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]))
def test_a_go_duration_is_read_exactly(number: int, unit: tuple[str, float]) -> None:
    suffix, scale = unit
    if number * scale <= 1_000_000:
        assert seconds(f"{number}{suffix}", "k") == pytest.approx(number * scale)
        assert go_duration(f"{number}{suffix}", "k") == pytest.approx(number * scale)
    assert seconds(f"1m{number % 1000}s", "k") == pytest.approx(60 + number % 1000)
