"""Real configuration files from public repositories, judged as each entry of corpus.toml
says from its system's documentation: every election's every claim, or the reason a file
cannot be judged."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from leadercheck.checker.config.judge import judge
from leadercheck.checker.config.knobs import load_configurations
from leadercheck.checker.errors import LeadercheckError

CORPUS = Path(__file__).parent / "corpus"
ENTRIES: list[dict[str, Any]] = tomllib.loads((CORPUS / "corpus.toml").read_text())["file"]
PERMISSIVE = {"MIT", "Apache-2.0", "BSD-2-Clause", "BSD-3-Clause"}
CLAIMS = ("rules", "stale-leader", "false-failover", "lost-ack-write")


def test_the_corpus_is_real_files_with_their_sources() -> None:
    """At least 30 files, every one listed with where it comes from and under what license,
    and every listed one present."""
    listed = {e["file"] for e in ENTRIES}
    present = {str(p.relative_to(CORPUS)) for p in CORPUS.rglob("*") if p.is_file()} - {
        "corpus.toml"
    }
    assert listed == present
    assert len(listed) >= 30
    for e in ENTRIES:
        assert re.fullmatch(r"[\w.-]+/[\w.-]+", e["repo"]), e
        assert re.fullmatch(r"[0-9a-f]{40}", e["commit"]), e
        assert e["license"] in PERMISSIVE and e["path"], e
        if "cannot" in e:
            assert len(e["why"]) > 20, e
        for election in e.get("election", []):
            for claim in CLAIMS:
                if claim in election:
                    verdict, _, reason = election[claim].partition(": ")
                    assert verdict in ("SAFE", "UNSAFE", "UNDECIDED") and len(reason) > 20, e


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["file"] for e in ENTRIES])
def test_each_file_is_judged_as_its_reasoning_says(entry: dict[str, Any]) -> None:
    path = CORPUS / entry["file"]
    if "cannot" in entry:
        with pytest.raises(LeadercheckError) as caught:
            load_configurations(path)
        assert entry["cannot"] in str(caught.value), str(caught.value)
        return
    configs = load_configurations(path)
    assert [c.name for c in configs] == [e["name"] for e in entry["election"]]
    for config, expected in zip(configs, entry["election"], strict=True):
        assert config.program == expected["program"]
        found = {f.claim: f.verdict for f in judge(config).findings}
        wanted = {c: expected[c].split(":", 1)[0] for c in CLAIMS if c in expected}
        assert found == wanted, (config.name, found, wanted)


def test_the_variations_an_operator_would_try_on_real_files(tmp_path: Path) -> None:
    """On patroni/patroni's postgres0.yml and vSphere's sidecars: a knob set twice is refused
    with both lines, a templated knob or one without its unit is named and what rests on it
    is UNDECIDED, the timings moved to the top level are named as not used."""
    text = (CORPUS / "patroni" / "patroni-postgres0.yml").read_text()
    assert "    ttl: 30\n" in text

    def judged(name: str, body: str) -> dict[str, str]:
        path = tmp_path / name
        path.write_text(body)
        (config,) = load_configurations(path)
        return {f.claim: f.verdict for f in judge(config).findings}

    twice = tmp_path / "twice.yml"
    twice.write_text(text.replace("    ttl: 30\n", "    ttl: 30\n    ttl: 5\n"))
    with pytest.raises(
        LeadercheckError,
        match=r"bootstrap.dcs.ttl is set twice \(line 54 and "
        r"line 55\)",
    ):
        load_configurations(twice)
    templated = judged("templated.yml", text.replace("    ttl: 30\n", "    ttl: {{ pg_ttl }}\n"))
    assert templated["stale-leader"] == "UNDECIDED" and templated["lost-ack-write"] == "UNSAFE"
    moved = tmp_path / "moved.yml"
    moved.write_text("ttl: 30\n" + text.replace("    ttl: 30\n", ""))
    (config,) = load_configurations(moved)
    assert config.knobs["ttl"].default
    assert any(n.startswith("ttl (line 1) is not used") for n in config.notes)
    sidecars = (CORPUS / "k8s" / "vsphere-csi-driver-sidecars-explicit-durations.yaml").read_text()
    bare = tmp_path / "bare.yaml"
    bare.write_text(
        sidecars.replace(
            "--leader-election-lease-duration=120s", "--leader-election-lease-duration=120", 1
        )
    )
    first = load_configurations(bare)[0]
    assert "has no unit" in first.knobs["lease_duration"].problem
    assert {f.claim: f.verdict for f in judge(first).findings}["stale-leader"] == "UNDECIDED"
