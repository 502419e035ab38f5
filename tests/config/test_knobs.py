"""Real configuration files, read into their systems' knobs; every bad input one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from leadercheck.checker.config.durations import seconds
from leadercheck.checker.config.environment import Environment
from leadercheck.checker.config.knobs import load_configuration, read_configuration
from leadercheck.checker.config.rules import broken_rules
from leadercheck.checker.errors import LeadercheckError

FILES = Path(__file__).parent / "files"


@pytest.mark.parametrize(
    ("name", "system", "knobs"),
    [
        ("postgres0.yml", "patroni", {"ttl": 30, "loop_wait": 10, "retry_timeout": 10}),
        ("kube-controller-manager.yaml", "k8s",
         {"lease_duration": 15, "renew_deadline": 10, "retry_period": 2}),
        ("controller-flags.txt", "k8s",
         {"lease_duration": 15, "renew_deadline": 10, "retry_period": 2}),
        ("etcd.conf.yml", "etcd", {"heartbeat_interval": 0.1, "election_timeout": 1.0}),
        ("zoo.cfg", "zookeeper",
         {"tick_time": 2.0, "min_session_timeout": 4.0, "max_session_timeout": 40.0}),
        ("redlock.yml", "redlock",
         {"drift_factor": 0.01, "retry_count": 10, "retry_delay": 0.2, "ttl": 10.0, "masters": 5}),
    ],
)  # fmt: skip
def test_shipped_defaults_are_read_and_break_no_rule(
    name: str, system: str, knobs: dict[str, float]
) -> None:
    config = load_configuration(FILES / name)
    assert config.system == system
    for knob, value in knobs.items():
        assert config.knobs[knob] == pytest.approx(value), knob
    assert broken_rules(config) == []
    assert config.environment == Environment()


def test_what_the_file_leaves_out_takes_the_documented_default() -> None:
    config = read_configuration("bootstrap:\n  dcs:\n    ttl: 40\n", "p.yml")
    assert config.system == "patroni"
    assert config.knobs["loop_wait"] == 10 and config.knobs["retry_timeout"] == 10
    assert "loop_wait" in config.defaulted and "ttl" not in config.defaulted


@pytest.mark.parametrize(
    ("text", "system", "rule"),
    [
        ("bootstrap:\n  dcs:\n    ttl: 20\n    loop_wait: 10\n    retry_timeout: 10\n", None,
         "Patroni: loop_wait + 2 * retry_timeout <= ttl is broken: 10 + 2 * 10 = 30 s > ttl 20 s"),
        ("ttl: 10\nloop_wait: 1\nretry_timeout: 3\n", "patroni",
         "Patroni: ttl is 10 s, below its minimum of 20 s"),
        ("leaderElection:\n  leaseDuration: 10s\n  renewDeadline: 10s\n", None,
         "client-go: leaseDuration must be greater than renewDeadline (10 s <= 10 s)"),
        ("--leader-elect-renew-deadline=2s\n--leader-elect-retry-period=2s\n", None,
         "client-go: renewDeadline must be greater than 1.2 * retryPeriod (2 s <= 2.4 s)"),
        ("heartbeat-interval: 300\nelection-timeout: 1000\n", None,
         "etcd: election-timeout must be at least 5 times heartbeat-interval"),
        ("tickTime=2000\nminSessionTimeout=50000\nmaxSessionTimeout=40000\n", None,
         "ZooKeeper: minSessionTimeout (50000 ms) is above maxSessionTimeout (40000 ms)"),
        ("driftFactor: 0.01\nservers: [redis://a, redis://b]\n", None,
         "Redlock: 2 master(s); a majority of independent masters needs 3"),
    ],
)  # fmt: skip
def test_a_broken_system_rule_is_named_with_its_numbers(
    text: str, system: str | None, rule: str
) -> None:
    config = read_configuration(text, "c", system)
    assert any(line.startswith(rule) for line in broken_rules(config)), broken_rules(config)


def test_the_environment_comes_from_the_file_s_leadercheck_section() -> None:
    yml = read_configuration(
        "ttl: 30\nloop_wait: 10\nleadercheck:\n  environment:\n    pause: 19s\n"
        "    clock_drift: 0.02\n",
        "p.yml",
    )
    assert yml.environment.pause == 19 and yml.environment.clock_drift == 0.02
    cfg = read_configuration(
        "tickTime=2000\n# leadercheck.pause=2.5s\nleadercheck.client.session_timeout=6s\n",
        "zoo.cfg",
    )
    assert cfg.environment.pause == 2.5 and cfg.knobs["session_timeout"] == 6


@pytest.mark.parametrize(
    ("text", "system", "message"),
    [
        ("ttl: [30\n", "patroni", "c: does not parse as YAML (line 2)"),
        ("ttl: thirty\nloop_wait: 10\n", None, "c: ttl: 'thirty' is not a duration"),
        ("ttl: -5\nloop_wait: 10\n", None, "c: ttl: -5 must be a non-negative duration"),
        ("ttl: true\nloop_wait: 10\n", None, "c: ttl: expected a duration, got True"),
        ("- a list\n", None, "c: the file must be a mapping, not list"),
        ("name: x\n", None, "c: cannot tell which system this configures"),
        ("ttl: 30\nloop_wait: 1\nleadercheck:\n  environment:\n    gc: 3s\n", None,
         "c: unknown environment key 'gc'"),
        ("driftFactor: 2\n", None, "c: driftFactor: 2.0 must be below 1"),
        ("tickTime=٢٠٠٠\n", None, "c: tickTime: '٢٠٠٠' is not a duration"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line(text: str, system: str | None, message: str) -> None:
    with pytest.raises(LeadercheckError) as caught:
        read_configuration(text, "c", system)
    assert str(caught.value).startswith(message), str(caught.value)
    assert "\n" not in str(caught.value)


def test_an_unknown_system_and_a_huge_or_special_file_are_refused(tmp_path: Path) -> None:
    with pytest.raises(LeadercheckError, match="unknown system 'consul'"):
        load_configuration(FILES / "zoo.cfg", "consul")
    huge = tmp_path / "huge.yml"
    huge.write_bytes(b"ttl: 30\n" + b"#" * (100 << 20))
    with pytest.raises(LeadercheckError, match="larger than"):
        load_configuration(huge)
    with pytest.raises(LeadercheckError, match="not a regular file"):
        load_configuration(Path("/dev/zero"))


@given(st.integers(0, 10**6), st.sampled_from([("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]))
def test_a_go_duration_is_read_exactly(number: int, unit: tuple[str, float]) -> None:
    suffix, scale = unit
    assert seconds(f"{number}{suffix}", "k") == pytest.approx(number * scale)
    assert seconds(f"1m{number}s", "k") == pytest.approx(60 + number)
