"""`verify conform`: a trace, or random schedules, on a real system, compared with the model.

The options are checked here before any server starts; the runs themselves are in
conform_runs.py, imported when the command runs (the client libraries load then).
"""

from __future__ import annotations

from pathlib import Path

import click

from leadercheck.checker.app.args import Count, Once, Seconds, parse_params
from leadercheck.checker.app.output import reporting
from leadercheck.checker.app.traces import TRACE, model_option
from leadercheck.checker.errors import LeadercheckError


@click.command(
    "conform",
    params=[
        click.Argument(["trace_file"], metavar="[TRACE.json]", required=False, type=TRACE),
        Once(
            ["--against", "system"], required=True, metavar="SYSTEM",
            help="The real system: etcd, postgres, zookeeper or redis (started on loopback "
            "unless --endpoint names running servers).",
        ),
        Once(
            ["--protocol", "protocol_name"], metavar="NAME",
            help="With a trace: run its schedule as this protocol instead (the fenced variant "
            "of an unfenced counterexample); with --random: the protocol (default: the first "
            "one the system runs).",
        ),
        model_option(),
        Once(
            ["--client"], metavar="CMD",
            help="Your own client program, one process per model node, driven over the JSON "
            "lines protocol in the README (split like a shell command line, run without a "
            "shell); default: this project's client.",
        ),
        Once(
            ["--partition", "partition_style"], type=click.Choice(["reset", "silent"]),
            default="reset", show_default=True,
            help="How a partition cuts a node's link to the store: reset (every connection "
            "reset at once, new ones too: the client's library hears at once) or silent "
            "(every byte held until the heal: nobody hears until its own timeouts fire).",
        ),
        Once(
            ["--kill-member"], metavar="ROLE[@STEP]",
            help="On etcd: SIGKILL one member of the 3-member cluster, its Raft leader or a "
            "follower, before step STEP (a trace's default 1; with --random, a step each "
            "schedule draws), a fault outside the model, whose store is the majority left; "
            "the member stays down to the run's end (--random: the next schedule's start).",
        ),
        Once(
            ["--cut-member"], metavar="ROLE[@STEP]",
            help="On etcd: cut one member, its Raft leader or a follower, off from its peers "
            "before step STEP (as --kill-member), while it still serves its clients; a fault "
            "outside the model, lasting as --kill-member's does.",
        ),
        Once(
            ["--endpoint"], metavar="HOST:PORT[,...]",
            help="Servers already running (left running); default: fresh ones on loopback.",
        ),
        Once(
            ["--tick"], type=Seconds(), default=1.0, show_default=True,
            metavar="SECONDS",
            help="Real seconds per model tick (a TTL of k ticks is granted as k * SECONDS).",
        ),
        Once(
            ["--settle"], type=Seconds(), default=None, metavar="SECONDS",
            help="How long a step's effect may take to show (default: half a tick, or the "
            "system's own expiry lag and 0.1 s if longer: etcd revokes an expired lease up to "
            "0.5 s late; the report states the window).",
        ),
        Once(
            ["--ttl-scale"], type=Seconds(), default=1.0, show_default=True,
            metavar="X",
            help="Grant real TTLs X times the model's: a deliberately wrong mapping, to see the "
            "comparison catch it (it diverges where a lease's real end is further from the "
            "model's than the settle window: X = 1.5 on a TTL of 2 ticks is a tick late).",
        ),
        Once(
            ["--random", "schedules"], type=Count(1), metavar="N",
            help="Run N random schedules instead of a trace; every observation is checked "
            "against the model, and a divergent history is shrunk.",
        ),
        click.Option(["-p", "params"], multiple=True, metavar="NAME=VALUE", help="With --random."),
        Once(["--seed"], type=Count(0), default=0, show_default=True, help="With --random."),
        Once(
            ["--steps", "max_steps"], type=Count(1), default=None,
            help="With --random: the most steps of one schedule. Default: 12, or more when"
            " the nearest step where safety rests on the client is further from the start"
            " (it is then reached with 4 to spare).",
        ),
        Once(
            ["--budget"], type=Seconds(positive=True), default=600.0, show_default=True,
            metavar="SECONDS",
            help="With --random: wall-clock limit for all schedules, shrinking included.",
        ),
        Once(
            ["--keep", "keep_dir"], type=click.Path(path_type=Path, file_okay=False),
            metavar="DIR",
            help="With --random: keep every schedule that ran as a trace file in DIR "
            "(schedule-0001.json, ...), for `verify replay` and `verify conform`.",
        ),
        click.Option(["--json", "as_json"], is_flag=True, help="Print only the JSON record."),
        Once(
            ["--timeline"], type=click.Path(path_type=Path, dir_okay=False), metavar="FILE.json",
            help="Also write the record (the timeline) to FILE.json.",
        ),
        Once(
            ["--html", "html_dir"], type=click.Path(path_type=Path, file_okay=False),
            metavar="DIR",
            help="With a trace: write DIR/<trace>.html, the trace's page with the real run "
            "below it.",
        ),
    ],
)  # fmt: skip
@reporting
def conform_command(
    trace_file: Path | None,
    system: str,
    protocol_name: str | None,
    model_spec: str | None,
    client: str | None,
    partition_style: str,
    kill_member: str | None,
    cut_member: str | None,
    endpoint: str | None,
    tick: float,
    settle: float | None,
    ttl_scale: float,
    schedules: int | None,
    params: tuple[str, ...],
    seed: int,
    max_steps: int | None,
    budget: float,
    keep_dir: Path | None,
    as_json: bool,
    timeline: Path | None,
    html_dir: Path | None,
) -> int:
    """Run a trace (or random schedules) on a real system and compare it with the model:
    exit 1 if a claim broke on the real system (whatever the model expected), else 0 if it
    did what the model predicts, 4 where it diverges; 2 on bad input, 3 if incomplete."""
    from leadercheck.checker.app import conform_runs  # noqa: PLC0415 (client libraries load then)

    timing = conform_runs.timing_of(tick, settle, ttl_scale)
    command = None if client is None else conform_runs.client_command(client)
    if kill_member is not None and cut_member is not None:
        raise LeadercheckError("give --kill-member or --cut-member, not both")
    member_fault = (
        ("--kill-member", kill_member) if kill_member is not None
        else ("--cut-member", cut_member) if cut_member is not None
        else None
    )  # fmt: skip
    if schedules is None:
        if trace_file is None:
            raise LeadercheckError("conform needs a TRACE.json, or --random N")
        if params:
            raise LeadercheckError("-p is for --random; a trace carries its parameters")
        if keep_dir is not None:
            raise LeadercheckError("--keep is for --random: a trace is already a file")
        return conform_runs.trace_run(
            trace_file, protocol_name, model_spec, system, endpoint, timing, as_json,
            timeline, html_dir, command, partition_style == "silent", member_fault,
        )  # fmt: skip
    if trace_file is not None:
        raise LeadercheckError("give a TRACE.json or --random N, not both")
    if html_dir is not None:
        raise LeadercheckError("--html is for a trace; --random writes --timeline")
    return conform_runs.random_run(
        protocol_name, model_spec, parse_params(params), system, endpoint, timing, schedules,
        seed, max_steps, budget, as_json, timeline, command, keep_dir,
        partition_style == "silent", member_fault,
    )  # fmt: skip
