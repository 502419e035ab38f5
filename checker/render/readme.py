"""Rewrites the generated block of a Markdown file between `<!-- NAME:begin/end -->` markers.

The file is read through the file layer (`checker/io/files.py`): a regular file of at most
`README_LIMIT` bytes (`--readme /dev/zero` once read until the kernel killed the process),
and written back whole, in place of a regular file only.
"""

from __future__ import annotations

from pathlib import Path

from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.io import files

OPTION = "--readme"


def markers(name: str) -> tuple[str, str]:
    return f"<!-- {name}:begin -->", f"<!-- {name}:end -->"


def read_block(path: Path, name: str) -> list[str]:
    """The lines currently between the markers."""
    text = _read(path)
    begin, end = markers(name)
    start, stop = _span(path, text, begin, end)
    return text[start + len(begin) : stop].strip("\n").splitlines()


def replace_block(path: Path, name: str, lines: list[str]) -> None:
    text = _read(path)
    begin, end = markers(name)
    start, stop = _span(path, text, begin, end)
    new = text[: start + len(begin)] + "\n" + "\n".join(lines) + "\n" + text[stop:]
    files.write_text(path, new, OPTION)


def check_block(path: Path, name: str) -> None:
    """Fail early (before the gate runs) unless `path` is UTF-8 text with the `name` block
    and can be rewritten."""
    files.check_output_file(path, OPTION)  # first: a FIFO or a device is never opened
    _span(path, _read(path), *markers(name))


def _read(path: Path) -> str:
    return files.read_text(path, files.README_LIMIT, OPTION)


def _span(path: Path, text: str, begin: str, end: str) -> tuple[int, int]:
    start, stop = text.find(begin), text.find(end)
    if start < 0 or stop < start:
        raise LeadercheckError(f"{path} has no {begin} ... {end} block to rewrite")
    return start, stop
