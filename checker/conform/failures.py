"""A real system that cannot be reached, or stops answering, told in one line.

The four client libraries fail in four ways (etcd3gw's ConnectionFailedError has no
text at all, its cause three exceptions down; psycopg's message is two lines with the
address in it; kazoo only says "Connection time-out"; redis-py says "Error 111 ..."),
so `reason` digs out what happened in a few words (connection refused, host not found,
timed out, or the server's own message), and `talking_to` turns any exception the real
side raises into a `SystemFailure` naming the system, where it is and what was being
done. `probe` is the first phase: before a run, every --endpoint is connected to once,
so a closed port is "etcd at 127.0.0.1:1: connection refused" before anything starts.

A server that stops answering mid-run is a `SystemFailure` too (exit 2), not a verdict:
no model here has the store itself go away, so nothing the model predicts can be
compared with it. A call a node makes through its proxy that fails is a different thing
(the harness compares it as "no reply", which a cut or a lost reply predicts); it is the
harness's own read of the facts, straight to the server, that fails here.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import socket
from collections.abc import Iterator, Sequence

from leadercheck.checker.conform.agent import AgentError, ClientError
from leadercheck.checker.errors import LeadercheckError

Address = tuple[str, int]

#: errno values worth naming as they are (os.strerror, lower case)
_NAMED_ERRNOS = frozenset(
    {
        errno.ECONNREFUSED,
        errno.ECONNRESET,
        errno.ECONNABORTED,
        errno.EHOSTUNREACH,
        errno.ENETUNREACH,
        errno.ETIMEDOUT,
        errno.EPIPE,
        errno.EADDRNOTAVAIL,
    }
)
_ERRNO_TEXT = re.compile(r"\[Errno (-?\d+)\] ([^'\")\]]+)")
_PSYCOPG_PREFIX = re.compile(  # psycopg's address, which the line names already
    r'^connection failed: connection to server at "[^"]*", port \d+ failed: '
)
_HOST_NOT_FOUND = ("name or service not known", "nodename nor servname", "name resolution")


class SystemFailure(LeadercheckError):
    """The real system could not be reached or stopped answering: one line, exit 2."""


def where_of(addresses: Sequence[Address]) -> str:
    return ",".join(f"{host}:{port}" for host, port in addresses)


def _chain(exc: BaseException) -> list[BaseException]:
    """The exception and what caused it, outermost first (bounded, no cycles)."""
    found: list[BaseException] = []
    at: BaseException | None = exc
    while at is not None and at not in found and len(found) < 12:
        found.append(at)
        at = at.__cause__ or at.__context__
    return found


def _text(exc: BaseException) -> str:
    """What an exception says, on one line; etcd3gw keeps its text in `detail_text`."""
    text = str(exc)
    detail = getattr(exc, "detail_text", None)
    if not text.strip() and isinstance(detail, str):
        text = detail
    return " ".join(text.split())


def reason(exc: BaseException) -> str:
    """A few words for why a call to a real system failed."""
    chain = _chain(exc)
    for link in chain:
        if isinstance(link, socket.gaierror):
            return "host not found"
        if isinstance(link, OSError) and link.errno in _NAMED_ERRNOS:
            return os.strerror(link.errno).lower()
    texts = [_text(link) for link in chain]
    for text in texts:
        lowered = text.lower()
        if any(words in lowered for words in _HOST_NOT_FOUND):
            return "host not found"
        match = _ERRNO_TEXT.search(text)
        if match is not None:
            return match.group(2).strip().rstrip(".").lower()
        if "connection refused" in lowered:
            return "connection refused"
    if any(isinstance(link, TimeoutError | socket.timeout) for link in chain) or any(
        "timeout" in type(link).__name__.lower() for link in chain
    ):
        return "timed out"
    for text in reversed(texts):  # the innermost cause says it plainest (requests wraps
        if text and not text.startswith("("):  # http.client's "Remote end closed ...")
            return _PSYCOPG_PREFIX.sub("", text).rstrip(".")[:200]
    return _words(type(exc).__name__)


def _words(name: str) -> str:
    """`ConnectionFailedError` as "connection failed" (for an exception with no text)."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name.removesuffix("Error")).strip()
    return spaced.lower() or "failed"


@contextlib.contextmanager
def talking_to(system: str, addresses: Sequence[Address], doing: str) -> Iterator[None]:
    """Any exception the real side raises in the block, as a one-line SystemFailure.

    A LeadercheckError passes as it is (it already is one line), except that a client
    process that died (agent.AgentError) is told with the system it talked to."""
    where = where_of(addresses)
    try:
        yield
    except ClientError as exc:
        raise SystemFailure(f"the client under test, {exc} ({doing})") from exc
    except AgentError as exc:
        raise SystemFailure(f"{system} at {where}: {exc} ({doing})") from exc
    except LeadercheckError:
        raise
    except Exception as exc:
        raise SystemFailure(f"{system} at {where}: {reason(exc)} ({doing})") from exc


def probe(system: str, addresses: Sequence[Address], timeout: float = 3.0) -> None:
    """Connect to each address once (a plain TCP connect, closed at once): a closed port or
    an unknown host is refused before anything starts."""
    for host, port in addresses:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                pass
        except OSError as exc:
            told = "timed out" if isinstance(exc, TimeoutError) else reason(exc)
            raise SystemFailure(f"{system} at {host}:{port}: {told}") from None
