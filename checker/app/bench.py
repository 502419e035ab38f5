"""`verify bench` and `verify message-cost`: timings and measured costs, not verdicts.

`bench` times the benchmark models (raft-election and lease-bench, whose state counts match
TLC's and Spin's on the same transition systems), each run in a fresh process; `--sampled`
measures the sampled strategies; `--spin` times `verify --symmetry` against Spin's pan.
`message-cost` measures messages per election for bully and raft.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from leadercheck.checker.app.args import Count, Once, output_file
from leadercheck.checker.app.benchmarks.timed import (
    CASES,
    DEFAULT_SEARCHES,
    bench_lines,
    run_case,
    searches,
    with_reductions,
)
from leadercheck.checker.app.check import measures
from leadercheck.checker.app.output import reporting, say, warn
from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.render.cost_plot import write_cost_plot
from leadercheck.checker.render.report import MeasureTable
from leadercheck.models.catalogue import PROTOCOLS, lookup

COST_PROTOCOLS = ("bully", "raft")  # the message-passing elections `message-cost` compares


@click.command("message-cost")
@click.option(
    "--plot",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Also draw worst, mean and best messages per election against N (SVG).",
)
@reporting
def message_cost_command(plot: Path | None) -> int:
    """Messages per election for bully and raft, N = 3..7: Bully's quadratic cost."""
    if plot is not None:
        output_file(plot, "--plot")
    tables: dict[str, MeasureTable] = {name: cost_tables(name)[0] for name in COST_PROTOCOLS}
    for name, table in tables.items():
        say(f"{name}: " + "\n".join(table.lines()) + "\n")
    if plot is not None:
        written = write_cost_plot(tables, plot, "messages per election")
        say(f"wrote {written}")
    return 0


def cost_tables(name: str) -> list[MeasureTable]:
    """The measures of a message-passing election (a seam for tests)."""
    return measures(PROTOCOLS[name])


@click.command("bench")
@click.option("--repeat", cls=Once, type=Count(1, 20), default=3, show_default=True)
@click.option("--large", is_flag=True, help="Also run the long, memory-hungry sizes.")
@click.option("--only", cls=Once, metavar="MODEL", help="Only the benchmarks of this model.")
@click.option(
    "--search",
    "chosen",
    multiple=True,
    type=click.Choice(list(searches())),
    help="How to search each model: a registered engine (parallel ones with 2 workers), "
    f"alone or +symmetry or +por (repeatable; default {', '.join(DEFAULT_SEARCHES)}).",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object, for tracking over time.")
@click.option(
    "--sampled",
    is_flag=True,
    help="Measure the sampled strategies instead: time to a five-node violation (simulate "
    "against a swarm of 2), shortened against shortest traces, bitstate's coverage.",
)
@click.option(
    "--seeds",
    type=Count(1, 50),
    default=5,
    show_default=True,
    help="With --sampled: seeds 1..N per protocol and search.",
)
@click.option(
    "--spin",
    is_flag=True,
    help="Time `verify --symmetry` and `verify` against Spin's pan on raft-election N=3 NC=3 "
    "MaxTerm=3, N=4 NC=4 MaxTerm=2 and N=5 NC=3 MaxTerm=2, in turn (needs spin and cc).",
)
@click.option(
    "--user-model",
    is_flag=True,
    help="Time `verify --model` on Paxos Commit (1,321,761 states) against the same "
    "breadth-first loop over the same successors with no checker, as a user's states and as "
    "one int a state: the checker's cost a state.",
)
@click.option(
    "--interpreted",
    is_flag=True,
    help="Time the searches of the models' Python code, not their compiled kernels.",
)
@reporting
def bench_command(
    repeat: int,
    large: bool,
    only: str | None,
    chosen: tuple[str, ...],
    as_json: bool,
    sampled: bool,
    seeds: int,
    spin: bool,
    user_model: bool,
    interpreted: bool,
) -> int:
    """Time the benchmark models, each run in a fresh process: raft-election and
    lease-bench (see --list), whose state counts match TLC's and Spin's."""
    if user_model:
        if only is not None or chosen or sampled or large or spin or interpreted:
            raise LeadercheckError(
                "--user-model runs its own model and searches: drop "
                "--only/--search/--large/--sampled/--spin/--interpreted"
            )
        return _bench_user_model(repeat, as_json)
    if spin:
        if only is not None or chosen or sampled or large:
            raise LeadercheckError(
                "--spin runs its own models and searches: drop --only/--search/--large/--sampled"
            )
        return _bench_spin(repeat, as_json, interpreted)
    if sampled:
        if only is not None or chosen:
            raise LeadercheckError(
                "--sampled runs its own models and searches: drop --only/--search"
            )
        if interpreted:
            raise LeadercheckError("--sampled runs no compiled kernel: drop --interpreted")
        return _bench_sampled(seeds, large, as_json)
    cases = [c for c in CASES if (large or not c.large) and (only is None or c.protocol == only)]
    for case in cases:
        lookup(case.protocol)
    if not cases:
        raise LeadercheckError(f"no benchmark of model {only!r}")
    rows = []
    for case in cases:
        for search in chosen or DEFAULT_SEARCHES:
            rows.append(run_case(case, repeat, search, interpreted))
            if not as_json:
                warn(f"  done: {case.label} ({search})")
    rows = with_reductions(rows)
    if as_json:
        say(json.dumps({"repeat": repeat, "benchmarks": [r.to_json() for r in rows]}))
    else:
        say("\n".join(bench_lines(rows)))
    return 0


def _bench_spin(repeat: int, as_json: bool, interpreted: bool) -> int:
    from leadercheck.checker.app.benchmarks import spin as bench_spin  # noqa: PLC0415 (only when asked for)

    rows = bench_spin.side_by_side(repeat=repeat, interpreted=interpreted)
    if as_json:
        say(json.dumps({"repeat": repeat, "spin": [r.to_json() for r in rows]}))
    else:
        say("\n".join(bench_spin.spin_lines(rows)))
    return 0


def _bench_user_model(repeat: int, as_json: bool) -> int:
    from leadercheck.checker.app.benchmarks import user_model  # noqa: PLC0415 (only when asked for)

    pairs = user_model.side_by_side(repeat=repeat)
    if as_json:
        say(json.dumps({"repeat": repeat, "user_model": [p.to_json() for p in pairs]}))
    else:
        say("\n".join(user_model.user_model_lines(pairs)))
    return 0


def _bench_sampled(seeds: int, large: bool, as_json: bool) -> int:
    from leadercheck.checker.app.benchmarks import sampled as b  # noqa: PLC0415 (only when asked for)

    numbers = list(range(1, seeds + 1))
    finds = b.time_to_violation(numbers)
    shorts = b.shortening(numbers)
    coverage = b.bitstate_coverage(large)
    if as_json:
        doc = {
            "seeds": numbers,
            "time_to_violation": [r.to_json() for r in finds],
            "shortening": [r.to_json() for r in shorts],
            "bitstate": coverage.to_json(),
        }
        say(json.dumps(doc))
    else:
        say("\n".join(b.sampled_lines(finds, shorts, coverage)))
    return 0
