"""A TCP proxy on loopback between one client process and a server, so that the model's
network faults happen for real: a partition between a node and the coordination store
(`cut` / `heal`) and a reply that is lost after the request took effect (`lose_next_reply`).

    with FaultProxy(("127.0.0.1", 2379), name="n1->etcd") as proxy:
        client = make_client(*proxy.address)   # the client talks to the proxy only
        proxy.lose_next_reply()
        client.put("k", "v")                    # reaches the server; the answer does not come
        assert proxy.wait_reply_lost(timeout=5)
        proxy.cut()                             # partition: every connection reset, new ones too
        proxy.heal()

Bytes pass through unchanged in both directions, whatever the protocol (HTTP/1.1 keep-alive,
HTTP/2, PostgreSQL's, ZooKeeper's or Redis's wire protocols): the proxy never parses them.
When either side closes, the other side is closed too (no half-open connections).

Targets: given a list, each new connection goes to the first target that accepts a connect,
in order, which is failover, not load balancing. `cut` acts on the whole proxy, so to
partition a client from one member of a cluster, give it one proxy per member.

Each connection is served by two daemon threads, one per direction, so a side that stops
reading never blocks the other direction; every blocking call wakes every `TICK` seconds to
look at the stop and close flags, and every wait and join is bounded. Sockets are closed only
by the last of a connection's threads, never under a thread that may still use them.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import Self

__all__ = ["FaultProxy"]

Address = tuple[str, int]

TICK = 0.1  # seconds: how often a blocked call looks at the stop and close flags
CONNECT_TIMEOUT = 1.0  # per target: loopback answers at once, or the target is down
JOIN_TIMEOUT = 2.0  # stop(): for all the proxy's threads together
CUT_TIMEOUT = 1.0  # cut(): for the connections it closes to be closed
CHUNK = 65536
# SO_LINGER on, 0 seconds: close() then sends RST at once rather than FIN, and leaves no
# TIME_WAIT behind on the proxy's port.
_LINGER_RESET = struct.pack("ii", 1, 0)


def _reset_close(sock: socket.socket) -> None:
    """Close with RST: the peer hears of it on its next read or write, not at a timeout."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _LINGER_RESET)
    sock.close()


def _tune(sock: socket.socket) -> None:
    """No Nagle delay (small request/reply protocols would wait for it) and a TICK timeout."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.settimeout(TICK)


REQUEST_HEAD = 256  # bytes of each request kept, to match a loss to it and to name it


def request_words(head: bytes) -> str:
    """A request named from its first bytes: an HTTP request line ("POST /v3/kv/txn"), a
    Redis command ("SET lock n1:..."), else its size ("a request of 52 bytes")."""
    line = head.split(b"\r\n", 1)[0]
    method, _, rest = line.partition(b" ")
    if method in (b"GET", b"POST", b"PUT", b"DELETE", b"PATCH") and rest.startswith(b"/"):
        return (method + b" " + rest.split(b" ", 1)[0]).decode("ascii", "replace")[:80]
    if head.startswith(b"*"):  # RESP: an array of bulk strings, each after its $length line
        words = [w for w in head.split(b"\r\n")[2::2] if w][:3]
        if words:
            return b" ".join(words).decode("utf-8", "replace")[:80]
    more = " or more" if len(head) >= REQUEST_HEAD else ""
    return f"a request of {len(head)} bytes{more}"


class _Connection:
    """One client connection and its server connection, pumped by two threads."""

    def __init__(self, proxy: FaultProxy, client: socket.socket, number: int) -> None:
        self.proxy = proxy
        self.client = client
        self.server: socket.socket | None = None
        self.number = number
        self.lock = threading.Lock()
        self.dead = threading.Event()  # either side closed, or the proxy closed it
        self.gone = threading.Event()  # both sockets closed
        self.users = 1  # threads that may still touch the sockets; the last one closes them
        self.closed = False
        self.reset = False  # close with RST (a fault) rather than FIN (a side closed)
        self.lost_bytes: int | None = None
        self.last_request = b""  # the start of the last request sent to the server
        self.replied = True  # the server answered since: the next bytes up begin a request
        self.dialer: str | None = None  # who made it, where the proxy was told (shun)
        self.target: Address | None = None  # the server it reached
        _tune(client)

    def start(self) -> None:
        self.proxy._spawn(self._run_upstream, f"#{self.number} up")

    def abort(self) -> None:
        """Close both sides with RST as soon as the pumping threads notice (within TICK)."""
        with self.lock:
            self.reset = True
            self.dead.set()
            if not self.closed:
                self._wake()

    def lose_reply(self, size: int) -> None:
        self.lost_bytes = size
        self.abort()

    def _wake(self) -> None:
        """Make a thread blocked in recv() return now (SHUT_RD sends nothing to the peer)."""
        for sock in (self.client, self.server):
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RD)

    def _note_request(self, data: bytes) -> None:
        """Keep the start of the request these bytes begin or continue: a request is what
        the client sends between two answers (a request and its body may come in pieces)."""
        if self.replied:
            self.last_request, self.replied = data[:REQUEST_HEAD], False
        elif len(self.last_request) < REQUEST_HEAD:
            self.last_request = (self.last_request + data)[:REQUEST_HEAD]

    def _run_upstream(self) -> None:
        try:
            server = self._connect()
            if server is None:
                return
            with self.lock:
                self.server = server
                if self.dead.is_set():  # cut or stopped while connecting
                    return
                self.users += 1
                self.proxy._spawn(self._run_downstream, f"#{self.number} down")
            self._pump(self.client, server, to_client=False)
        finally:
            self._finish()

    def _run_downstream(self) -> None:
        try:
            assert self.server is not None
            self._pump(self.server, self.client, to_client=True)
        finally:
            self._finish()

    def _connect(self) -> socket.socket | None:
        if not self._wait_flowing():  # a silent cut: the connect waits for heal()
            return None
        errors = []
        for target in self.proxy.targets:
            if self.dead.is_set():
                return None
            try:
                server = socket.create_connection(target, timeout=CONNECT_TIMEOUT)
            except OSError as error:
                errors.append(f"{target[0]}:{target[1]} {error.strerror or error}")
                continue
            _tune(server)
            self.target = target
            return server
        self.reset = True
        self.proxy._record(f"connection {self.number}: no target accepted ({'; '.join(errors)})")
        return None

    def _wait_flowing(self) -> bool:
        """Hold still while the proxy is cut silently; False once the connection is dead."""
        while not self.proxy._flowing.is_set():
            if self.dead.is_set():
                return False
            self.proxy._flowing.wait(TICK)
        return not self.dead.is_set()

    def _pump(self, source: socket.socket, sink: socket.socket, to_client: bool) -> None:
        while self._wait_flowing():
            try:
                data = source.recv(CHUNK)
            except TimeoutError:
                continue
            except OSError:
                return
            if not data or not self._wait_flowing():
                return
            if not to_client:
                self._note_request(data)
            else:
                self.replied = True
            if to_client and self.proxy._claim_reply_loss(self, len(data)):
                return
            if not self._send(sink, data):
                return

    def _send(self, sink: socket.socket, data: bytes) -> bool:
        view = memoryview(data)
        while view:
            if not self._wait_flowing():
                return False
            try:
                sent = sink.send(view)
            except TimeoutError:
                continue
            except OSError:
                return False
            view = view[sent:]
        return True

    def _finish(self) -> None:
        with self.lock:
            self.dead.set()
            self.users -= 1
            if self.users > 0:
                self._wake()  # the other direction's thread: stop, and close for us both
                return
            self.closed = True
        for sock in (self.client, self.server):
            if sock is None:
                continue
            if self.reset:
                _reset_close(sock)
            else:
                sock.close()
        self.proxy._forget(self)
        if self.lost_bytes is not None:
            self.proxy._record(f"reply lost: {self.lost_bytes} bytes dropped, connection closed")
            self.proxy._reply_lost.set()
        self.gone.set()


class FaultProxy:
    """Listens on 127.0.0.1 at a free port (`port`, `address`, bound at construction) and
    passes each connection through to the target; `start()` begins accepting.

    `events` is a list of (time.monotonic(), text) of what the proxy did, in order."""

    def __init__(
        self,
        target: Address | list[Address],
        name: str = "",
        dialer_of: Callable[[socket.socket], str | None] | None = None,
    ) -> None:
        targets = [target] if isinstance(target, tuple) else list(target)
        if not targets:
            raise ValueError("FaultProxy needs at least one target")
        self.targets: list[Address] = [(str(host), int(port)) for host, port in targets]
        self.name = name or ",".join(f"{host}:{port}" for host, port in self.targets)
        self.events: list[tuple[float, str]] = []
        self._events_lock = threading.Lock()
        self._lock = threading.Lock()  # never held while taking a connection's lock
        self._stop = threading.Event()
        self._flowing = threading.Event()  # cleared while cut: threads hold still
        self._flowing.set()
        self._cut = False
        self._silent = False
        self._armed = False
        self._reply_lost = threading.Event()
        self._armed_for: bytes | None = None
        #: the request whose reply the armed loss dropped, as `request_words` says it
        self.lost_request: str | None = None
        self._conns: set[_Connection] = set()
        #: who dialed each connection (a cluster member's name), for `shun`; None: not asked
        self._dialer_of = dialer_of
        self._shunned: set[str] = set()
        self._threads: list[threading.Thread] = []
        self._acceptor: threading.Thread | None = None
        self._accepted = 0
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            self._listener.bind(("127.0.0.1", 0))
            self._listener.listen(128)
            self._listener.settimeout(TICK)
        except OSError:
            self._listener.close()
            raise
        host, port = self._listener.getsockname()[:2]
        self.address: Address = (host, port)
        self.port: int = port

    def __repr__(self) -> str:
        state = "stopped" if self._stop.is_set() else "cut" if self._cut else "passing"
        return f"<FaultProxy {self.name} on {self.address[0]}:{self.port} {state}>"

    def start(self) -> Self:
        with self._lock:
            if self._stop.is_set():
                raise RuntimeError(f"{self!r} was stopped; make a new one")
            if self._acceptor is None:
                self._acceptor = self._spawn_locked(self._accept_loop, "accept")
        return self

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def stop(self) -> None:
        """Close the listener and every connection (RST) and join the threads, bounded.
        Harmless when called again."""
        with self._lock:
            self._stop.set()
            acceptor = self._acceptor
            conns = list(self._conns)
        deadline = time.monotonic() + JOIN_TIMEOUT
        if acceptor is None:
            self._listener.close()  # never started: no thread owns it
        else:
            acceptor.join(max(0.0, deadline - time.monotonic()))
        # The acceptor has stopped admitting, so the list of connections is complete, and a
        # connection that is aborted starts no thread afterwards.
        for conn in conns:
            conn.abort()
        self._flowing.set()  # a silent cut must not hold threads back from closing
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))

    def cut(self, silent: bool = False) -> int:
        """Partition the client from the server until heal().

        By default every open connection is closed at once with RST on both sides, and new
        connections are accepted and reset at once: the client's library notices on its next
        read or write, and so does the server (a PostgreSQL backend, say, ends its session).

        With `silent=True` the connections stay open but no byte passes either way, and new
        connections are accepted but not passed on: like a real partition, where nobody
        hears anything until timeouts fire. On heal() the held bytes flow again, as TCP's
        retransmissions would deliver them. Returns how many connections were open."""
        with self._lock:
            self._cut = True
            self._silent = silent
            self._flowing.clear()
            conns = list(self._conns)
        if silent:
            self._record(f"cut (silent): {_count(len(conns))} held")
            return len(conns)
        for conn in conns:
            conn.abort()
        deadline = time.monotonic() + CUT_TIMEOUT
        for conn in conns:
            conn.gone.wait(max(0.0, deadline - time.monotonic()))
        self._record(f"cut: {_count(len(conns))} closed")
        return len(conns)

    def shun(self, dialer: str) -> int:
        """Cut only the connections `dialer` made (reset at once) and refuse its new ones,
        until heal(); the others pass. Needs `dialer_of`. Returns how many were open."""
        with self._lock:
            self._shunned.add(dialer)
            unknown = [c for c in self._conns if c.dialer is None]
        for conn in unknown:  # admitted before its maker could be told: ask again
            if self._dialer_of is not None:
                conn.dialer = self._dialer_of(conn.client)
        with self._lock:
            conns = [c for c in self._conns if c.dialer == dialer]
        for conn in conns:
            conn.abort()
        self._record(f"shunned {dialer}: {_count(len(conns))} closed")
        return len(conns)

    def avoid(self, target: Address) -> int:
        """Stop using `target` (a server that accepts but cannot answer, say a member cut
        off from its cluster): new connections go to the others, and the ones open to it
        are reset, so their clients reconnect. Returns how many were reset."""
        with self._lock:
            if target in self.targets and len(self.targets) > 1:
                self.targets = [t for t in self.targets if t != target]
            conns = [c for c in self._conns if c.target == target]
        for conn in conns:
            conn.abort()
        self._record(f"avoids {target[0]}:{target[1]}: {_count(len(conns))} reset")
        return len(conns)

    def heal(self) -> None:
        """Let bytes and new connections pass again."""
        with self._lock:
            self._shunned.clear()
            self._cut = False
            self._silent = False
            self._flowing.set()
        self._record("healed")

    @property
    def is_cut(self) -> bool:
        return self._cut

    def lose_next_reply(self, matching: bytes | None = None) -> None:
        """Arm: the next bytes the server sends, on whichever connection receives some first,
        are dropped and that connection is reset on both sides. The request reached the
        server and took effect; the client never hears the answer. Arm just before the
        request, since a server's unsolicited bytes (a ping answer, a watch event) count too.

        With `matching`, only a reply to a request whose first bytes hold it is lost: an
        operation that makes several requests (a lease grant, then the transaction) loses
        the reply the model means, and the others pass.
        """
        with self._lock:
            self._armed = True
            self._armed_for = matching
            self.lost_request = None
            self._reply_lost.clear()
        which = "" if matching is None else f" to a request holding {matching!r}"
        self._record(f"armed: the next reply{which} will be lost")

    def disarm(self) -> None:
        """Forget an armed loss that has not happened (nothing if it has)."""
        with self._lock:
            if self._armed:
                self._armed = False
                self._record("disarmed: no reply was lost")

    def wait_reply_lost(self, timeout: float) -> bool:
        """True once an armed reply loss has happened and its connection is closed."""
        return self._reply_lost.wait(timeout)

    def event_texts(self) -> list[str]:
        with self._events_lock:
            return [text for _, text in self.events]

    # The machinery.

    def _record(self, text: str) -> None:
        with self._events_lock:
            self.events.append((time.monotonic(), text))

    def _spawn(self, target: Callable[[], None], role: str) -> threading.Thread:
        with self._lock:
            return self._spawn_locked(target, role)

    def _spawn_locked(self, target: Callable[[], None], role: str) -> threading.Thread:
        thread = threading.Thread(
            target=target, name=f"FaultProxy {self.name} :{self.port} {role}", daemon=True
        )
        thread.start()
        self._threads = [t for t in self._threads if t.is_alive()]
        self._threads.append(thread)
        return thread

    def _forget(self, conn: _Connection) -> None:
        with self._lock:
            self._conns.discard(conn)

    def _claim_reply_loss(self, conn: _Connection, size: int) -> bool:
        with self._lock:
            if not self._armed:
                return False
            if self._armed_for is not None and self._armed_for not in conn.last_request:
                return False
            self._armed = False
            self.lost_request = request_words(conn.last_request)
        conn.lose_reply(size)
        return True

    def _accept_loop(self) -> None:
        try:
            while not self._stop.is_set():
                try:
                    client, _ = self._listener.accept()
                except TimeoutError:
                    continue
                except OSError:  # out of descriptors, say: try again shortly
                    self._stop.wait(TICK)
                    continue
                self._admit(client)
        finally:
            self._listener.close()

    def _admit(self, client: socket.socket) -> None:
        dialer = None if self._dialer_of is None else self._dialer_of(client)
        with self._lock:
            refused = self._cut and not self._silent  # a silent cut holds new ones instead
            shunned = dialer is not None and dialer in self._shunned
            refused = refused or shunned
            admitted = not (refused or self._stop.is_set())
            if admitted:
                self._accepted += 1
                conn = _Connection(self, client, self._accepted)
                conn.dialer = dialer
                self._conns.add(conn)
        if not admitted:
            _reset_close(client)
            if refused:
                self._record(
                    f"refused {dialer}'s connection"
                    if shunned
                    else "refused a connection while cut"
                )
            return
        conn.start()


def _count(n: int) -> str:
    return f"{n} connection{'' if n == 1 else 's'}"
