"""Every argument checked before any work: strict numbers, options given once, -p pairs.

click parses; this layer makes its types strict where Python's are lenient (`int()` takes
"1_000" and other scripts' digits, `float()` takes "nan" and "inf"), refuses a single-value
option given twice instead of keeping the last, and turns `-p NAME=VALUE` into a mapping.
The paths are checked by `checker/io/files.py` through `output_dir`/`output_file` here, before
the first search.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.io import files

_COUNT = re.compile(r"[0-9]{1,18}")
_DIGITS = re.compile(r"[0-9]+")
_DECIMAL = re.compile(r"[0-9]{1,12}(\.[0-9]{1,9})?|\.[0-9]{1,9}")


class Count(click.ParamType):
    """A whole number written in ASCII digits, at least `low` (and at most `high`)."""

    name = "integer"

    def __init__(self, low: int = 0, high: int | None = None) -> None:
        self.low, self.high = low, high

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            number = value
        elif _DIGITS.fullmatch(str(value)) and not _COUNT.fullmatch(str(value)):
            self.fail(f"{str(value)[:30]}{'...' if len(str(value)) > 30 else ''}: too large "
                      f"(at most 18 digits)", param, ctx)  # fmt: skip
        elif not _COUNT.fullmatch(str(value)):
            self.fail(f"{str(value)[:30]}: give a whole number in digits 0-9", param, ctx)
        else:
            number = int(value)
        if number < self.low or (self.high is not None and number > self.high):
            wanted = (
                f"{self.low} to {self.high}" if self.high is not None else f"{self.low} or more"
            )
            self.fail(f"{number}: give {wanted}", param, ctx)
        return number


class Seconds(click.ParamType):
    """A non-negative decimal number of seconds (or a factor), finite, in ASCII digits."""

    name = "seconds"

    def __init__(self, positive: bool = False) -> None:
        self.positive = positive

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        if isinstance(value, float | int):
            number = float(value)
        elif not _DECIMAL.fullmatch(str(value)):
            self.fail(f"{value}: give a decimal number such as 1.5", param, ctx)
        else:
            number = float(value)
        if not math.isfinite(number) or (self.positive and number <= 0):
            self.fail(
                f"{value}: give a number {'above 0' if self.positive else ''}".strip(), param, ctx
            )
        return number


class Described(click.Argument):
    """A positional argument that says what it is: click's arguments take no help text, and
    a missing one is told as `missing TRACE.json: the trace file to replay`."""

    def __init__(self, decls: Sequence[str], what: str, **kwargs: Any) -> None:
        super().__init__(decls, **kwargs)
        self.what = what


class Once(click.Option):
    """A single-value option that refuses to be given twice (click would keep the last,
    so `--protocol raft --protocol bully` would silently check bully)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.single_default = kwargs.pop("default", None)
        if kwargs.pop("show_default", False) and self.single_default is not None:
            kwargs["help"] = f"{kwargs.get('help', '')}  [default: {self.single_default}]"
        kwargs["multiple"] = True
        super().__init__(*args, **kwargs)

    def process_value(self, ctx: click.Context, value: Any) -> Any:
        values = super().process_value(ctx, value)
        if len(values) > 1:
            shown = " and ".join(str(v) for v in values)
            raise click.BadParameter(
                f"given {len(values)} times ({shown}): give it once", ctx, self
            )
        return values[0] if values else self.single_default


def parse_params(raw: Sequence[str]) -> dict[str, str]:
    """`-p NAME=VALUE` pairs as a mapping; a name given twice is refused."""
    given: dict[str, str] = {}
    for item in raw:
        name, sep, value = item.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not name or not value:
            raise LeadercheckError(f"-p expects NAME=VALUE, got {item!r}")
        if name in given:
            raise LeadercheckError(f"-p {name} given twice ({given[name]} and {value})")
        given[name] = value
    return given


def given_params(raw: Sequence[str], nodes: int | None) -> dict[str, str]:
    """The parameters given with -p, and --nodes as `nodes` (never both)."""
    given = parse_params(raw)
    if nodes is not None:
        if "nodes" in given:
            raise LeadercheckError(
                f"--nodes {nodes} and -p nodes={given['nodes']} both set nodes; give one"
            )
        given["nodes"] = str(nodes)
    return given


def output_dir(path: Path, option: str | None = None) -> None:
    """A directory the command will write into: creatable and writable, checked now."""
    files.check_output_dir(path, option)


def output_file(path: Path, option: str) -> None:
    """A file the command will write: a new path or a regular file, checked now."""
    files.check_output_file(path, option)
