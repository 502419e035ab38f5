"""The options and steps most modes share: the protocol, the model, its parameters, output.

`catalogue_of` is the one place a command gets its protocols: the built-in catalogue,
or a user's module (`--model`), imported only when the user names it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import click

from leadercheck.checker.app.args import Count, Once
from leadercheck.checker.app.output import warn
from leadercheck.checker.model import Model
from leadercheck.checker.properties import Property
from leadercheck.checker.protocols.catalogue import Catalogue, built_in, load_catalogue
from leadercheck.models.params import ProtocolEntry
from leadercheck.specs.expectations import load_expectations

OPTIONS = (
    Once(["--protocol", "protocol_name"], metavar="NAME", help="Protocol to verify (see --list)."),
    Once(
        ["--model", "model_spec"],
        metavar="FILE.py|MODULE",
        help="Check the protocols your own module exports (PROTOCOLS, PROPERTIES, EXPECTED) "
        "instead of the built-in ones.",
    ),
    click.Option(
        ["-p", "--param", "params"],
        multiple=True,
        metavar="NAME=VALUE",
        help="Set a model parameter (repeatable).",
    ),
    Once(["--nodes"], type=Count(1), help="Shorthand for -p nodes=N."),
    Once(
        ["--out"],
        type=click.Path(path_type=Path),
        default=Path("counterexamples"),
        show_default=True,
        help="Directory for counterexample files (with --all: the golden directory).",
    ),
    click.Option(
        ["--json", "as_json"],
        is_flag=True,
        help="Print one JSON object on stdout and nothing else.",
    ),
    Once(
        ["--html", "html_dir"],
        is_flag=False,
        flag_value="",
        default=None,
        metavar="[DIR]",
        help="Also write an offline HTML page per trace (to DIR, else --out); "
        "with --all, plus index.html linking every protocol.",
    ),
    click.Option(["--debug"], is_flag=True, help="Show tracebacks for errors."),
)
NAMES = frozenset(o.name for o in OPTIONS if o.name)


def catalogue_of(model_spec: str | None) -> Catalogue:
    """The built-in protocols, or those of the user's module."""
    if model_spec is None:
        return built_in(load_expectations())
    return load_catalogue(model_spec)


def checked_model(
    catalogue: Catalogue,
    protocol: ProtocolEntry,
    values: Mapping[str, int],
    properties: Sequence[Property],
) -> Model[Any]:
    """The protocol's model; a user's is checked before the search (checker/engine/guard.py) and
    watched during it, its warnings printed on stderr."""
    model = catalogue.build(protocol, values)
    if catalogue.model is None:
        return model
    from leadercheck.checker.engine.guard import GuardedModel, preflight  # noqa: PLC0415 (only a user's model)

    for warning in preflight(model, properties):
        warn(f"warning: {warning}")
    return GuardedModel(model)


def html_target(values: Mapping[str, Any]) -> tuple[bool, Path]:
    """Whether --html was given, and the directory pages go to (DIR, else --out)."""
    html = values["html_dir"]
    return html is not None, Path(html) if html else values["out"]
