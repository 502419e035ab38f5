"""`verify --list`: the protocols, their parameters and the verdicts expected of them.

With --json, one object: each protocol's name, summary, expected verdicts and parameters
(default, range or choices), for scripts that pick protocols to check.
"""

from __future__ import annotations

import json
from typing import Any

import click

from leadercheck.checker.app import common
from leadercheck.checker.app.modes import Call, Mode
from leadercheck.checker.app.output import say
from leadercheck.checker.protocols.catalogue import Catalogue

OPTIONS = (
    click.Option(
        ["--list", "list_protocols"],
        is_flag=True,
        help="List protocols, parameters, expected verdicts.",
    ),
)


def run(call: Call) -> int:
    catalogue = common.catalogue_of(call["model_spec"])
    if call["as_json"]:
        say(json.dumps(catalogue_json(catalogue)))
    else:
        say("\n".join(catalogue_lines(catalogue)))
    return 0


def catalogue_lines(catalogue: Catalogue) -> list[str]:
    expectations = catalogue.expectations
    lines = [f"from {catalogue.model}:"] if catalogue.model else []
    for name, protocol in catalogue.protocols.items():
        lines.append(f"{name}: {protocol.summary}")
        verdicts = ", ".join(f"{p} {v.value}" for p, v in expectations.expected(name).items())
        lines.append(f"    expected: {verdicts or 'none recorded'}")
        for p in protocol.params:
            setting = f"-p {p.name}={p.choices[p.default] if p.choices else p.default}"
            values = "|".join(p.choices) if p.choices else f"range {p.low}..{p.high}"
            lines.append(f"    {setting:<16} {values}  {p.help}")
    return lines


def catalogue_json(catalogue: Catalogue) -> dict[str, Any]:
    expectations = catalogue.expectations
    protocols = []
    for name, protocol in catalogue.protocols.items():
        params = []
        for p in protocol.params:
            param: dict[str, Any] = {"name": p.name, "help": p.help}
            if p.choices:
                param |= {"default": p.choices[p.default], "choices": list(p.choices)}
            else:
                param |= {"default": p.default, "low": p.low, "high": p.high}
            params.append(param)
        expected = {p: v.value for p, v in expectations.expected(name).items()}
        protocols.append(
            {"name": name, "summary": protocol.summary, "expected": expected, "params": params}
        )
    return {"model": catalogue.model, "protocols": protocols}


MODE = Mode(
    label="--list",
    flags=("list_protocols",),
    options=OPTIONS,
    shared=frozenset({"model_spec", "as_json", "debug"}),
    run=run,
)
