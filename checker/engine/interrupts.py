"""The user's Ctrl-C, told apart from what model code raises.

A search runs model code (a user's, loaded with --model) that may raise anything a
Python function can: `SystemExit` (sys.exit), `GeneratorExit`, even `KeyboardInterrupt`.
None of that may end a check as if the user had stopped it, or end the process as if the
check had passed: it is the model's failure, a ModelError with the trace that led there
(`from_model` says which escapes those are). Only the user's Ctrl-C ends a search
INTERRUPTED, and Python raises it as the same `KeyboardInterrupt` a model can raise.

So the application installs `interrupt_handler()` around its work: the first SIGINT (or
SIGTERM, SIGHUP) is recorded, then raised as KeyboardInterrupt; later ones are ignored,
so the wind-down (statistics so far, a checkpoint, servers stopped) finishes and the
process ends with its exit code, never by the signal. The engine asks `real_interrupt()`
about a KeyboardInterrupt it caught. Without the handler (the engine used as a library,
tests) every KeyboardInterrupt is taken for the user's, as Python takes it. A forked
worker ignores SIGINT (its coordinator is the one interrupted): `worker_process()` says
so, and there every KeyboardInterrupt is code's.

What escapes model code is written in one line by `escape_text` and `model_error`;
`model_escapes` turns an escape that is no Exception into a ModelError where model code
runs outside a loop that reports failures with their traces (trace rebuilding, judging).
`OsExit` is what os._exit raises while a guarded model's code runs (checker/engine/guard.py).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from leadercheck.checker.errors import ModelError

_watching = False  # a handler records SIGINT (or SIGINT is ignored): not every KI is real
_arrived = False  # a real SIGINT arrived while watching


def real_interrupt() -> bool:
    """Whether a KeyboardInterrupt caught now is the user's Ctrl-C: always, unless this
    process watches SIGINT (`interrupt_handler`, `worker_process`); then only once one came."""
    return _arrived or not _watching


def ctrl_c_arrived() -> bool:
    """Whether the user's Ctrl-C arrived in the watched block: the first one ends the search
    it interrupts and SIGINT is ignored after it, so a command that runs one search after
    another asks here whether to go on."""
    return _arrived


def raise_if_lost() -> None:
    """Raise the user's Ctrl-C again if its KeyboardInterrupt was lost on the way. Python
    runs a signal's handler in whatever code runs next, and where that is a `__del__` or a
    weakref callback (the garbage collector runs them anywhere), what the handler raises
    is printed and ignored: the search would go on as if nothing had come. The searches
    call this between levels (rounds, for sampling), so Ctrl-C ends them all the same."""
    if _arrived:
        raise KeyboardInterrupt


def from_model(exc: BaseException) -> bool:
    """Whether `exc`, escaping model code, is the model's failure (reported as a ModelError
    with its trace): anything but the user's Ctrl-C."""
    return not isinstance(exc, KeyboardInterrupt) or not real_interrupt()


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    global _arrived  # noqa: PLW0603 (the handler's one record)
    if _arrived:
        return  # the search is winding down: a second Ctrl-C changes nothing
    _arrived = True
    raise KeyboardInterrupt


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)  # Ctrl-C, kill, a closed terminal


@contextmanager
def interrupt_handler(keep_ignoring: bool = True) -> Iterator[None]:
    """Within the block, SIGINT is the user's Ctrl-C: recorded, raised once as
    KeyboardInterrupt, ignored after that. SIGTERM and SIGHUP are taken as the same
    request to stop, so a run ended by `kill`, a CI timeout or a closed terminal winds
    down as Ctrl-C does (exit 3, servers and workers stopped), never dies mid-write.

    At the end the previous handlers come back, unless a signal arrived and
    `keep_ignoring`: then they stay ignored, since the process is only winding down
    and a second one must not end it by the signal (a test passes False). Outside the
    main thread, where no handler can be installed, it does nothing.
    """
    global _watching, _arrived  # noqa: PLW0603 (the process's SIGINT disposition)
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = (_watching, _arrived)
    previous = {signum: signal.signal(signum, _on_sigint) for signum in STOP_SIGNALS}
    _watching, _arrived = True, False
    try:
        yield
    finally:
        stays_ignored = _arrived and keep_ignoring
        for signum, before in previous.items():
            signal.signal(signum, signal.SIG_IGN if stays_ignored else before)
        _watching, _arrived = saved


def worker_process(ignore_sigint: bool = True) -> None:
    """This process is a search's worker, never the one the user interrupts: it ignores
    SIGINT (a forked worker; a Ray actor keeps Ray's handling), and every
    KeyboardInterrupt in it is code's."""
    global _watching, _arrived  # noqa: PLW0603
    if ignore_sigint:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        for signum in STOP_SIGNALS[1:]:  # the coordinator's handler, inherited by the fork:
            signal.signal(signum, signal.SIG_DFL)  # its SIGTERM is how it ends a busy worker
    _watching, _arrived = True, False


class OsExit(ModelError):
    """What `os._exit` raises while a guarded model's code runs (checker/engine/guard.py): a
    ModelError, so that nothing on the way reads it as a verdict; the exploration gives it
    the trace to the state whose expansion called it."""

    def __init__(self, status: object, hook: str) -> None:
        super().__init__(exited(status, hook))
        self.status, self.hook = status, hook

    def __reduce__(self) -> tuple[type[OsExit], tuple[object, str]]:
        return OsExit, (self.status, self.hook)  # it crosses a worker's pipe whole


def exited(status: object, where: str) -> str:
    """The message for a model that called os._exit(`status`) in `where`."""
    return f"model called os._exit({status!r}) in {where}: a model must return, not end the process"


def escape_text(exc: BaseException) -> str:
    """The text of what model code raised, for a one-line message: an exception's own, or
    what an escape that is no Exception did."""
    if isinstance(exc, SystemExit):
        return f"sys.exit({exc.code!r}): a model must return, not end the process"
    if isinstance(exc, KeyboardInterrupt):
        return "raised by the model's code, not by Ctrl-C"
    if isinstance(exc, GeneratorExit):
        return str(exc) or "a model must return, not close its caller"
    return str(exc)


def model_error(exc: BaseException, what: str) -> ModelError:
    """What model code raised in `what`, as a ModelError (without a trace)."""
    if isinstance(exc, ModelError):
        return exc
    return ModelError(f"model raised {type(exc).__name__} in {what}: {escape_text(exc)}")


@contextmanager
def model_escapes(what: str) -> Iterator[None]:
    """Run model code (`what`) outside a loop that reports failures with their traces:
    an escape that is no Exception (SystemExit, GeneratorExit, a KeyboardInterrupt that is
    not the user's) becomes a ModelError; Exceptions pass as they are, for their callers."""
    try:
        yield
    except Exception:
        raise
    except BaseException as exc:
        if not from_model(exc):
            raise
        raise model_error(exc, what) from exc
