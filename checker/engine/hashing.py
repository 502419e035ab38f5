"""Hashes that agree between processes, for fingerprints that outlive one (Ray actors,
checkpoints).

A fingerprint is `hash(state)` masked: Python salts str hashes per process, and before 3.12
`hash(None)` is None's address, which address-space randomisation changes from one
interpreter to the next. A process started with PYTHONHASHSEED=HASH_SEED under
`setarch -R` (where it runs) hashes like every other one started so.
"""

from __future__ import annotations

import os
import platform
import shutil
import signal
import subprocess
import sys

HASH_SEED = "0"
PINNED = "LEADERCHECK_PINNED_HASH"  # set in a process re-executed by `pin_hashing`


def no_aslr_prefix() -> list[str]:
    """`setarch <machine> -R` if it runs here and is needed (Python < 3.12), else []."""
    if sys.version_info >= (3, 12) or not sys.platform.startswith("linux"):
        return []
    setarch = shutil.which("setarch")
    if setarch is None:
        return []
    prefix = [setarch, platform.machine(), "-R"]
    try:
        ok = subprocess.run([*prefix, "true"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return []
    return prefix if ok else []


def pin_hashing(argv: list[str]) -> None:
    """Re-execute `verify argv` with pinned hashing, unless this process already is one."""
    if os.environ.get(PINNED):
        return
    env = {**os.environ, "PYTHONHASHSEED": HASH_SEED, PINNED: "1"}
    command = [*no_aslr_prefix(), sys.executable, "-m", "leadercheck.checker.app", *argv]
    sys.stdout.flush()
    sys.stderr.flush()
    # blocked across the exec: a caught signal would fall back to its default and kill the
    # new process while Python starts, and an ignored one would be lost (a Ctrl-C then
    # runs the whole search); a blocked one stays pending, the mask and the pending set
    # survive exec, and the launcher takes them again and unblocks them (launch.py)
    signal.pthread_sigmask(signal.SIG_BLOCK, (signal.SIGINT, signal.SIGTERM, signal.SIGHUP))
    os.execvpe(command[0], command, env)
