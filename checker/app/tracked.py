"""Which files of a directory git does not track: the golden check tells a file never
committed (another command's output left in --out) from a stale one (committed, and no run
produces it any more).

git is asked, never required: outside a work tree, without git, or when git refuses the
repository, nothing is known and the gate words its findings as it always has.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

GIT_SECONDS = 30.0


def untracked_files(directory: Path) -> frozenset[str]:
    """The names of the files directly in `directory` that git does not track; empty when
    `directory` is in no git work tree (or git cannot say)."""
    if not directory.is_dir():
        return frozenset()
    try:
        done = subprocess.run(
            ["git", "-C", str(directory), "ls-files", "-z", "--", "."],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=GIT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):  # no git, or a git that hangs
        return frozenset()
    if done.returncode != 0:  # not a work tree (or one git will not read)
        return frozenset()
    tracked = {
        name.decode("utf-8", "surrogateescape")
        for name in done.stdout.split(b"\0")
        if name and b"/" not in name
    }
    present = {p.name for p in directory.iterdir() if p.is_file() or p.is_symlink()}
    return frozenset(present - tracked)
