"""`verify --model FILE.py --lint`: check a user's model itself, and search nothing.

Each protocol's model is checked as the guard checks it before a search (checker/engine/guard.py's
preflight, on more states), a declared symmetry gives one representative per orbit
(`symmetry_audit`: a total order_key and node_keys), and its successor order is compared
under two hash seeds, each in a child process (checker/protocols/order_probe.py). Exit 0 or 2.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping

import click

from leadercheck.checker.app import common
from leadercheck.checker.app.args import given_params
from leadercheck.checker.app.modes import Call, Mode
from leadercheck.checker.app.output import say, warn
from leadercheck.checker.errors import LeadercheckError, ModelError
from leadercheck.checker.render.lanes import chart_gaps

LINT_STATES = 2000  # states whose successor order is compared under two hash seeds
LINT_SEEDS = ("1", "2")
LINT_ORBIT_STATES = 1000  # states whose renamings must share a representative (each tries up
# to every renaming of its nodes: 24 for four nodes without node keys)
LINT_SECONDS = 300
PROBE_OUTPUT = 64 << 20  # a digest line per state; more is not a probe's

OPTIONS = (
    click.Option(
        ["--lint"],
        is_flag=True,
        help="With --model: check the model itself (value semantics, fixed successor order, "
        "also under another hash seed, one representative per orbit of a declared symmetry) "
        "and search nothing.",
    ),
)


def run(call: Call) -> int:
    if call["model_spec"] is None:
        raise LeadercheckError("--lint needs --model FILE.py")
    protocol_name = call["protocol_name"]
    given = given_params(call["params"], call["nodes"])
    if given and protocol_name is None:
        raise LeadercheckError("-p and --nodes go with --protocol NAME")
    catalogue = common.catalogue_of(call["model_spec"])
    assert catalogue.model is not None
    from leadercheck.checker.engine.guard import preflight, symmetry_audit  # noqa: PLC0415 (a user's model)

    names = [catalogue.lookup(protocol_name).name] if protocol_name else list(catalogue.protocols)
    for name in names:
        protocol = catalogue.protocols[name]
        values = protocol.resolve(given)
        model = catalogue.build(protocol, values)
        warnings = preflight(model, catalogue.expectations.properties(name), LINT_STATES)
        for warning in warnings:
            warn(f"warning: {warning}")
        orbits = symmetry_audit(model, LINT_ORBIT_STATES)
        digests = [_order_in_child(catalogue.model, name, values, seed) for seed in LINT_SEEDS]
        _same_order(name, digests)
        for gap in chart_gaps([model.describe(s) for s in model.initial_states()]):
            warn(f"note: {name}'s chart: {gap}")  # only once the model passed: errors are one line
        states = len(digests[0])
        say(
            f"{name}: ok: value semantics, immutability and a fixed successor order on "
            f"{min(states, LINT_STATES)} states; the same order under PYTHONHASHSEED "
            f"{' and '.join(LINT_SEEDS)}"
            + (f"; one representative per orbit (--symmetry) on {orbits} states" if orbits else "")
            + (f"; {len(warnings)} warning(s)" if warnings else "")
        )
    return 0


def _order_in_child(spec: str, name: str, values: Mapping[str, int], seed: str) -> list[str]:
    """The successor order of the first LINT_STATES states, from a process hashing with `seed`."""
    command = [
        sys.executable,
        "-m",
        "leadercheck.checker.protocols.order_probe",
        spec,
        name,
        json.dumps(dict(values)),
        str(LINT_STATES),
    ]
    env = {**os.environ, "PYTHONHASHSEED": seed}
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, env=env, timeout=LINT_SECONDS, check=False
        )
    except subprocess.TimeoutExpired:
        raise LeadercheckError(
            f"{name}: --lint's probe under PYTHONHASHSEED={seed} took over {LINT_SECONDS} s"
        ) from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise ModelError(f"{name}: under PYTHONHASHSEED={seed} the model fails: {last}")
    lines = done.stdout.strip().splitlines()
    try:
        digest = json.loads(lines[-1]) if lines and len(done.stdout) <= PROBE_OUTPUT else None
    except ValueError:
        digest = None
    if not isinstance(digest, list) or not all(isinstance(d, str) for d in digest):
        raise ModelError(
            f"{name}: under PYTHONHASHSEED={seed} the probe's last line is not its digest "
            "(does the model print on stdout?)"
        )
    return digest


def _same_order(name: str, digests: list[list[str]]) -> None:
    first, second = digests
    for k, (a, b) in enumerate(zip(first, second, strict=False)):
        if a != b:
            raise ModelError(
                f"{name}: the successor order depends on the hash seed (it iterates a set "
                f"or dict of strings?): state {k} in breadth-first order gives "
                f"{_clip(a)} under PYTHONHASHSEED={LINT_SEEDS[0]} and {_clip(b)} under "
                f"{LINT_SEEDS[1]}; yield successors in a fixed order (sort them)"
            )
    if len(first) != len(second):
        raise ModelError(
            f"{name}: the successor order depends on the hash seed: {len(first)} states "
            f"under PYTHONHASHSEED={LINT_SEEDS[0]}, {len(second)} under {LINT_SEEDS[1]}"
        )


def _clip(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


MODE = Mode(
    label="--lint",
    flags=("lint",),
    options=OPTIONS,
    shared=frozenset({"model_spec", "protocol_name", "params", "nodes", "debug"}),
    run=run,
)
