"""`verify --prove`, `--synthesize` and `--bmc K`: the symbolic mode's options and dispatch.

z3 loads only when this mode runs: the commands themselves are in solver_commands.py,
imported inside `run`.
"""

from __future__ import annotations

import click

from leadercheck.checker.app.args import Count, Once, Seconds, given_params
from leadercheck.checker.app.common import catalogue_of
from leadercheck.checker.app.modes import Call, Mode
from leadercheck.checker.errors import LeadercheckError

OPTIONS = (
    click.Option(
        ["--prove"],
        is_flag=True,
        help="z3: prove the claims for any number of nodes by an inductive invariant, or show "
        "a counterexample to induction.",
    ),
    click.Option(
        ["--without"],
        metavar="CONJUNCT",
        multiple=True,
        help="With --prove: leave this strengthening conjunct out (repeatable).",
    ),
    click.Option(
        ["--synthesize"],
        is_flag=True,
        help="z3: the timing parameters (lease, TTL, drift, pause) that keep the protocol safe.",
    ),
    Once(
        ["--bmc", "bmc_bound"],
        type=Count(0),
        metavar="K",
        help="z3: bounded model checking to K steps, cross-checked by explicit search.",
    ),
    Once(
        ["--solver-timeout"],
        type=Seconds(positive=True),
        default=120.0,
        show_default=True,
        metavar="SECONDS",
        help="Give z3 this long in all; past it the answer is UNKNOWN (exit 3).",
    ),
)


def run(call: Call) -> int:
    """--prove, --synthesize or --bmc K; only --bmc takes -p."""
    chosen = [call.labels[flag] for flag in MODE.flags if flag in call.given]
    if len(chosen) > 1:
        raise LeadercheckError(f"{chosen[0]} and {chosen[1]} exclude each other")
    if call["without"] and not call["prove"]:
        raise LeadercheckError("--without needs --prove")
    if call["protocol_name"] is None:
        raise LeadercheckError(f"{chosen[0]} needs --protocol NAME")
    from leadercheck.checker.app import solver_commands as z3  # noqa: PLC0415 (z3 loads here)

    catalogue = catalogue_of(None)
    protocol = catalogue.lookup(call["protocol_name"])
    given = given_params(call["params"], call["nodes"])
    timeout, out = call["solver_timeout"], call["out"]
    if call["bmc_bound"] is not None:
        values = protocol.resolve(given)
        return z3.bmc_command(
            protocol, values, catalogue.expectations, call["bmc_bound"], timeout, out
        )
    if call["prove"]:
        z3.refuse_params("--prove", given)
        return z3.prove_command(protocol, call["without"], timeout, out)
    z3.refuse_params("--synthesize", given)
    return z3.synthesize_command(protocol, timeout)


MODE = Mode(
    label="--prove/--bmc/--synthesize",
    flags=("prove", "synthesize", "bmc_bound"),
    options=OPTIONS,
    shared=frozenset({"protocol_name", "params", "nodes", "out", "debug"}),
    run=run,
    why="z3 works on the built-in protocols' encodings, and prints no search report",
)
