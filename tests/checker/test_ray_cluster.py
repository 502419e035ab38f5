"""--engine ray --address against a cluster a user starts with `ray start --head` on loopback:
with Ray's token authentication and without it; a wrong address fails in one line, in time.

The head runs in the foreground (`--block`) in its own process group, so the test stops
exactly its own cluster (never `ray stop`, which would stop every Ray on the machine)."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

RAY = shutil.which("ray", path=str(Path(sys.executable).parent)) or shutil.which("ray")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(RAY is None and not os.environ.get("CI"), reason="ray is not installed"),
]
ARGS = ["--protocol", "raft-election", "--json"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def head(tmp: Path, env: dict[str, str]) -> Iterator[str]:
    """A Ray head on loopback for the duration of the block; its address."""
    assert RAY is not None, "ray is not installed"
    port = _free_port()
    command = [RAY, "start", "--head", "--block", "--port", str(port), "--num-cpus", "2"]
    command += ["--include-dashboard", "false", "--disable-usage-stats"]
    # Ray's socket paths must stay under 108 bytes: a short directory of its own.
    short = Path(tempfile.mkdtemp(prefix="lcray-", dir="/tmp"))
    command += ["--node-ip-address", "127.0.0.1", "--temp-dir", str(short)]
    log = tmp / "ray-head.log"  # a file, not a pipe: an unread pipe fills and stalls the head
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            command, env=env, start_new_session=True, stdout=sink, stderr=subprocess.STDOUT
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, log.read_text()[-2000:]
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the Ray head did not start in 60 s"
                time.sleep(0.5)
        time.sleep(2)  # the GCS listens before the head's raylet has registered
        yield f"127.0.0.1:{port}"
    finally:
        # Ctrl-C, as a user stops `ray start --block`; then the whole group, whatever it does.
        for sig, wait in ((signal.SIGINT, 15), (signal.SIGKILL, 10)):
            try:
                os.killpg(proc.pid, sig)
                proc.wait(timeout=wait)
                break
            except (ProcessLookupError, subprocess.TimeoutExpired):
                continue
        shutil.rmtree(short, ignore_errors=True)


def verify(
    *args: str, env: dict[str, str], timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "leadercheck.checker.app", *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)


def _clean_env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env["HOME"] = str(tmp / "home")  # no ~/.ray/auth_token unless the test writes one
    (tmp / "home").mkdir(exist_ok=True)
    return env


@pytest.mark.parametrize("auth", ["token", "none"])
def test_a_search_on_a_cluster_started_on_loopback(tmp_path: Path, auth: str) -> None:
    env = _clean_env(tmp_path)
    if auth == "token":  # as `ray get-auth-token --generate` does: the default token file
        token = tmp_path / "home" / ".ray" / "auth_token"
        token.parent.mkdir()
        token.write_text(secrets.token_hex(32))
        head_env = {**env, "RAY_AUTH_MODE": "token"}
    else:
        head_env = env
    plain = json.loads(verify(*ARGS, "--out", str(tmp_path / "a"), env=env).stdout)
    with head(tmp_path, head_env) as address:
        joined = verify(
            *ARGS,
            "--engine",
            "ray",
            "--workers",
            "2",
            "--address",
            address,
            "--out",
            str(tmp_path / "b"),
            env=env,
        )
    assert joined.returncode == 0, joined.stderr[-2000:]
    doc = json.loads(joined.stdout)
    assert doc["search"] == "ray, 2 worker(s)"
    assert doc["stats"]["distinct_states"] == plain["stats"]["distinct_states"] == 71_329


def test_a_wrong_address_is_one_line_and_quick(tmp_path: Path) -> None:
    env = _clean_env(tmp_path)
    for address, message in (
        (f"127.0.0.1:{_free_port()}", "no Ray cluster at"),
        ("nonsense", "expected HOST:PORT"),
    ):
        start = time.monotonic()
        result = verify(*ARGS, "--engine", "ray", "--address", address, env=env, timeout=90)
        assert time.monotonic() - start < 30
        assert result.returncode == 2
        assert result.stderr.strip().count("\n") == 0 and message in result.stderr
