"""Which options each flag-selected mode of `verify` takes, and which mode a command is.

`verify --protocol`, `--all`, `--list`, `--lint` and `--prove/--bmc/--synthesize` share one
command line. Each mode declares its own options and names the shared ones it takes; an
option given that the chosen mode does not take is refused in one line that says where
it belongs, before any work (one rule instead of a hand-written exclusion per pair).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import click

from leadercheck.checker.errors import LeadercheckError


@dataclass(frozen=True)
class Call:
    """The parsed command line: every option's value, and which were given on it."""

    values: Mapping[str, Any]
    given: frozenset[str]
    labels: Mapping[str, str]  # option name -> how the user spells it (--max-states)

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    @property
    def debug(self) -> bool:
        return bool(self.values.get("debug"))


@dataclass(frozen=True)
class Mode:
    """One kind of command: the flags that select it, its options, how it runs."""

    label: str  # how messages name it: "--all"
    flags: tuple[str, ...]  # the option names that select it (none: the default mode)
    options: tuple[click.Option, ...]  # declared by this mode alone
    shared: frozenset[str]  # the shared options it takes
    run: Callable[[Call], int]
    why: str = ""  # said when an option it does not take is given

    @property
    def accepts(self) -> frozenset[str]:
        return self.shared | {o.name for o in self.options if o.name} | set(self.flags)


def label_of(option: click.Parameter) -> str:
    """The spelling a message uses: the first long name, else the short one."""
    long = [o for o in option.opts if o.startswith("--")]
    return (long or option.opts)[0]


def choose(call: Call, modes: Sequence[Mode], default: Mode) -> Mode:
    """The mode the given flags select, every given option checked to belong to it."""
    selected = [m for m in modes if any(f in call.given for f in m.flags)]
    if len(selected) > 1:
        raise LeadercheckError(f"{selected[0].label} and {selected[1].label} exclude each other")
    mode = selected[0] if selected else default
    order = sorted(call.given, key=list(call.values).index)
    for name in order:
        if name in mode.accepts:
            continue
        homes = [m.label for m in (*modes, default) if name in m.accepts]
        spelled = call.labels[name]
        if not selected and "protocol_name" not in call.given:
            raise LeadercheckError(f"{spelled} needs {' or '.join(homes)}")
        reason = f" ({mode.why})" if mode.why else ""
        raise LeadercheckError(
            f"{spelled} goes with {' or '.join(homes)}, not with {mode.label}{reason}"
        )
    if not selected and "protocol_name" not in call.given:
        raise LeadercheckError("give --protocol NAME, --all, or --list to see the protocols")
    return mode
