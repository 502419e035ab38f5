"""Rewrites the generated block of a Markdown file between `<!-- NAME:begin/end -->` markers."""

from __future__ import annotations

from pathlib import Path

from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.render.files import check_writable_file


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
    path.write_text(new, encoding="utf-8")


def check_block(path: Path, name: str) -> None:
    """Fail early (before the gate runs) unless `path` is UTF-8 text with the `name` block
    and can be rewritten."""
    _span(path, _read(path), *markers(name))
    check_writable_file(path, "--readme")


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise LeadercheckError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise LeadercheckError(f"{path} is not UTF-8 text") from None


def _span(path: Path, text: str, begin: str, end: str) -> tuple[int, int]:
    start, stop = text.find(begin), text.find(end)
    if start < 0 or stop < start:
        raise LeadercheckError(f"{path} has no {begin} ... {end} block to rewrite")
    return start, stop
