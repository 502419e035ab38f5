"""`verify`: the command line, and the exit-code contract around everything it runs.

0 holds, 1 violated, 2 usage, model or internal error (one line on stderr; the traceback
with --debug), 3 incomplete (a bound, or Ctrl-C: a second Ctrl-C during the wind-down is
absorbed, not an exit by the signal). Only a verdict may exit 1: click's own errors,
an unexpected exception, and a `SystemExit` that user code raised all exit 2.

The flag-selected modes (`--protocol`, `--all`, `--list`, `--lint`, `--prove/--bmc/
--synthesize`) share the top-level options, each mode declaring its own (modes.py); the
subcommands (replay, explain, conform, config, message-cost, bench, explore) are click
commands of their own.
"""

from __future__ import annotations

import importlib
import sys
import traceback
from collections.abc import Sequence
from typing import Any

import click
from click.core import ParameterSource

from leadercheck.checker.app import check, common, gate, lint, listing, search_options, symbolic
from leadercheck.checker.app.modes import Call, Mode, choose, label_of
from leadercheck.checker.app.output import report_channel
from leadercheck.checker.engine.hashing import pin_hashing
from leadercheck.checker.engine.interrupts import interrupt_handler, real_interrupt
from leadercheck.checker.errors import LeadercheckError

USAGE_ERROR = 2
INCOMPLETE = 3
CHECKPOINT_FLAGS = frozenset({"--checkpoint", "--resume"})
SELECTED = (gate.MODE, listing.MODE, lint.MODE, symbolic.MODE)  # by a flag; else check.MODE
MODES: tuple[Mode, ...] = (*SELECTED, check.MODE)
GIVEN = (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT)
# The subcommands, by name: (module of checker/app, its click command). Each is imported
# when its name is given (or --help lists them), so `verify --protocol` does not load what
# config, history, explore or conform need (a third of the start-up).
SUBCOMMANDS = {
    "replay": ("traces", "replay_command"),
    "explain": ("traces", "explain_command"),
    "conform": ("conform", "conform_command"),
    "config": ("config", "config_command"),
    "message-cost": ("bench", "message_cost_command"),
    "bench": ("bench", "bench_command"),
    "explore": ("explore", "explore_command"),
    "history": ("history", "history_command"),
}


def one_line(text: str) -> str:
    return " ".join(str(text).split())


class VerifyGroup(click.Group):
    """The `verify` command with the exit-code contract enforced around everything it runs."""

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        argv = list(sys.argv[1:] if args is None else args)
        debug = "--debug" in argv
        argv = self._debug_everywhere(argv)
        if args is None and CHECKPOINT_FLAGS & {a.partition("=")[0] for a in argv}:
            pin_hashing(argv)  # a checkpoint's fingerprints must mean the same when resumed
        with interrupt_handler():  # Ctrl-C told apart from a model's KeyboardInterrupt
            code = self._contract(argv, prog_name, complete_var, debug, **extra)
        if standalone_mode:
            sys.exit(code)
        return code

    def _debug_everywhere(self, argv: list[str]) -> list[str]:
        """`--debug` works with every command: a subcommand that does not declare it never
        sees it (the contract below reads it), so it is never refused as unknown."""
        command = self.get_command(None, argv[0]) if argv else None  # type: ignore[arg-type]
        if command is None or any("--debug" in p.opts for p in command.params):
            return argv
        cut = argv.index("--") if "--" in argv else len(argv)
        return [a for a in argv[:cut] if a != "--debug"] + argv[cut:]

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(SUBCOMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        where = SUBCOMMANDS.get(cmd_name)
        if where is None:
            return None
        module, name = where
        command: click.Command = getattr(
            importlib.import_module(f"leadercheck.checker.app.{module}"), name
        )
        return command

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt as exc:  # past click's handler, which would print a blank line
            raise _Interrupted() from exc

    def _contract(
        self,
        argv: list[str],
        prog_name: str | None,
        complete_var: str | None,
        debug: bool,
        **extra: Any,
    ) -> int:
        """Run the command; whatever escapes becomes an exit code and at most one line."""
        try:
            code = super().main(argv, prog_name, complete_var, standalone_mode=False, **extra)
            code = code if isinstance(code, int) else 0
        except (click.exceptions.Abort, KeyboardInterrupt, _Interrupted) as exc:
            if real_interrupt():
                code = _failed(exc, debug, "interrupted", INCOMPLETE)
            else:
                code = _failed(
                    exc, debug,
                    "error: something the run imported raised KeyboardInterrupt without a "
                    "Ctrl-C (a model module?); a model must not raise it",
                )  # fmt: skip
        except click.MissingParameter as exc:  # a BadParameter, told apart: what is missing
            code = _failed(exc, debug, f"error: {one_line(_missing(exc))}")
        except click.BadParameter as exc:
            code = _failed(exc, debug, f"error: {one_line(_bad_parameter(exc))}")
        except click.ClickException as exc:
            code = _failed(exc, debug, f"error: {one_line(exc.format_message())}")
        except LeadercheckError as exc:  # the user's mistake or their model's: one line
            code = _failed(exc, debug, f"error: {one_line(str(exc))}")
        except SystemExit as exc:  # not ours (click's exits are returned): user code exited
            code = _failed(
                exc, debug,
                f"error: something the run imported called sys.exit({exc.code!r}) (a model "
                "module?); a model must not exit the process",
            )  # fmt: skip
        except Exception as exc:  # a bug of ours or a library's: never read as a verdict
            hint = "" if debug else " (--debug shows the traceback)"
            message = one_line(f"{type(exc).__name__}: {exc}")
            code = _failed(exc, debug, f"internal error: {message}{hint}")
        except BaseException as exc:  # GeneratorExit and the like, raised by user code
            code = _failed(
                exc, debug,
                f"error: something the run imported raised {type(exc).__name__} (a model "
                "module?); a model must not raise it",
            )  # fmt: skip
        return code


class _Interrupted(Exception):
    """A KeyboardInterrupt on its way to the exit-code contract (a Ctrl-C, or user code's)."""


def _bad_parameter(exc: click.BadParameter) -> str:
    """`--nodes ３: give a whole number in digits 0-9`: the option as the user spelled it."""
    param = exc.param
    if param is None or not param.opts:
        return exc.format_message()
    name = label_of(param) if isinstance(param, click.Option) else param.human_readable_name
    return f"{name} {exc.message}"


def _missing(exc: click.MissingParameter) -> str:
    """`missing TRACE.json: the trace file to replay (...); usage: verify replay [OPTIONS]
    TRACE.json`: what is missing, what it is for, and the command's usage, for every
    command's arguments and required options alike."""
    param = exc.param
    if param is None:
        return exc.format_message()
    if isinstance(param, click.Option):
        name = f"{label_of(param)} {param.metavar}" if param.metavar else label_of(param)
        what = (param.help or "").split(". ")[0].rstrip(".")
        if what[1:2].islower():  # "The real system: ..." reads on as "the real system: ..."
            what = what[0].lower() + what[1:]
    else:
        name, what = param.human_readable_name, getattr(param, "what", "")
    line = f"missing {name}: {what}" if what else f"missing {name}"
    if exc.ctx is not None:
        usage = exc.ctx.command.get_usage(exc.ctx).removeprefix("Usage: ")
        line += f"; usage: {usage}"
    return line


def _failed(exc: BaseException, debug: bool, line: str, code: int = USAGE_ERROR) -> int:
    if debug:
        traceback.print_exception(exc, file=sys.stderr)
    click.echo(line, err=True)
    return code


ROOT_OPTIONS: list[click.Parameter] = [*common.OPTIONS, *search_options.OPTIONS]
for _mode in MODES:
    ROOT_OPTIONS += _mode.options


@click.group(
    cls=VerifyGroup,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    params=ROOT_OPTIONS,
)
@click.pass_context
def main(ctx: click.Context, **values: Any) -> int | None:
    """Exhaustively check a leader-election protocol for two leaders and stale writes."""
    given = frozenset(name for name in values if ctx.get_parameter_source(name) in GIVEN)
    if ctx.invoked_subcommand is not None:
        extra = sorted(given - {"debug"})
        if extra:
            raise LeadercheckError(
                f"give {_labels(ctx)[extra[0]]} after `{ctx.invoked_subcommand}`, not before it"
            )
        return None
    call = Call(values, given, _labels(ctx))
    mode = choose(call, SELECTED, check.MODE)
    with report_channel():
        return mode.run(call)


def _labels(ctx: click.Context) -> dict[str, str]:
    return {p.name: label_of(p) for p in ctx.command.params if p.name}


if __name__ == "__main__":
    main()
