"""FaultProxy against tiny servers on threads: bytes pass unchanged, cut/heal, a lost reply."""

from __future__ import annotations

import contextlib
import os
import random
import socket
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from leadercheck.checker.conform.proxy import FaultProxy, request_words
from leadercheck.checker.conform.servers import dialer_pid

Handler = Callable[[socket.socket, "TinyServer"], None]


class TinyServer:
    """A loopback server on a thread, one thread per connection, every wait bounded."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.requests = 0  # requests that took effect (the counting server's)
        self.ended = 0  # connections whose client side went away
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.1)
        self.address: tuple[str, int] = self.listener.getsockname()[:2]
        self.threads = [threading.Thread(target=self._accept, daemon=True)]
        self.threads[0].start()

    def _accept(self) -> None:
        with self.listener:
            while not self.stopping.is_set():
                try:
                    conn, _ = self.listener.accept()
                except TimeoutError:
                    continue
                conn.settimeout(0.1)
                thread = threading.Thread(target=self._serve, args=(conn,), daemon=True)
                self.threads.append(thread)
                thread.start()

    def _serve(self, conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):
            self.handler(conn, self)
        with self.lock:
            self.ended += 1

    def recv(self, conn: socket.socket) -> bytes:
        """The next bytes, b"" at EOF; raises OSError on reset or when the server stops."""
        while not self.stopping.is_set():
            try:
                return conn.recv(65536)
            except TimeoutError:
                continue
        raise OSError("server stopping")

    def stop(self) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join(2)


def echo(conn: socket.socket, server: TinyServer) -> None:
    while data := server.recv(conn):
        conn.sendall(data)


def counter(conn: socket.socket, server: TinyServer) -> None:
    """Each line `INC` increments the count (the request takes effect), then replies it."""
    buffer = b""
    while data := server.recv(conn):
        buffer += data
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            assert line == b"INC"
            with server.lock:
                server.requests += 1
                count = server.requests
            conn.sendall(b"%d\n" % count)


def reply_then_close(conn: socket.socket, server: TinyServer) -> None:
    if server.recv(conn):
        conn.sendall(b"bye\n")


@pytest.fixture
def echo_server() -> Iterator[TinyServer]:
    server = TinyServer(echo)
    yield server
    server.stop()


@pytest.fixture
def counting_server() -> Iterator[TinyServer]:
    server = TinyServer(counter)
    yield server
    server.stop()


@pytest.fixture
def proxy(echo_server: TinyServer) -> Iterator[FaultProxy]:
    with FaultProxy(echo_server.address, name="test") as p:
        yield p


def connect(proxy: FaultProxy) -> socket.socket:
    sock = socket.create_connection(proxy.address, timeout=1)
    sock.settimeout(1)
    return sock


def recv_exactly(sock: socket.socket, size: int) -> bytes:
    chunks, got = [], 0
    while got < size:
        chunk = sock.recv(min(65536, size - got))
        assert chunk, f"EOF after {got} of {size} bytes"
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def roundtrip(sock: socket.socket, data: bytes = b"ping\n") -> bytes:
    sock.sendall(data)
    return recv_exactly(sock, len(data))


def closed_within(sock: socket.socket, seconds: float) -> bool:
    """The peer closed or reset the connection within `seconds` (no data arrived either)."""
    sock.settimeout(seconds)
    try:
        return sock.recv(1) == b""
    except (ConnectionResetError, BrokenPipeError):
        return True
    except TimeoutError:
        return False


def refused_or_closed(proxy: FaultProxy) -> bool:
    """A new connection fails, or is closed at once (the proxy accepts, then resets it)."""
    try:
        sock = connect(proxy)
    except ConnectionError:  # the reset can beat connect() on loopback: it fails instead
        return True
    with sock:
        return closed_within(sock, 1)


def wait_until(condition: Callable[[], bool], seconds: float = 1.0) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def proxy_threads(proxy: FaultProxy) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if f":{proxy.port} " in t.name]


def test_bytes_pass_both_ways_unchanged(proxy: FaultProxy) -> None:
    with connect(proxy) as sock:
        assert roundtrip(sock, bytes(range(256))) == bytes(range(256))
        payload = random.Random(7).randbytes(1 << 20)
        sender = threading.Thread(target=sock.sendall, args=(payload,), daemon=True)
        sender.start()  # while this thread reads the echo, so neither side's buffers stall
        assert recv_exactly(sock, len(payload)) == payload
        sender.join(1)
        assert roundtrip(sock) == b"ping\n"  # the same connection goes on working
    assert proxy.events == []  # passing bytes is not an event


def test_a_side_that_closes_closes_the_other() -> None:
    server = TinyServer(reply_then_close)
    try:
        with FaultProxy(server.address) as proxy, connect(proxy) as sock:
            sock.sendall(b"hello\n")
            assert recv_exactly(sock, 4) == b"bye\n"
            assert closed_within(sock, 1)  # the server closed: so is the client's side
        with FaultProxy(server.address) as proxy:
            with connect(proxy) as sock:
                sock.sendall(b"hello\n")
                assert recv_exactly(sock, 4) == b"bye\n"
            assert wait_until(lambda: server.ended == 2)
    finally:
        server.stop()


def test_cut_closes_open_connections_and_refuses_new_ones(proxy: FaultProxy) -> None:
    with connect(proxy) as first, connect(proxy) as second:
        roundtrip(first)
        roundtrip(second)
        started = time.monotonic()
        proxy.cut()
        assert proxy.is_cut
        assert closed_within(first, 1) and closed_within(second, 1)
        assert time.monotonic() - started < 1
    assert refused_or_closed(proxy)
    assert wait_until(lambda: "refused a connection while cut" in proxy.event_texts())
    assert proxy.event_texts()[0] == "cut: 2 connections closed"


def test_heal_lets_a_new_connection_through(proxy: FaultProxy) -> None:
    proxy.cut()
    proxy.heal()
    assert not proxy.is_cut
    with connect(proxy) as sock:
        assert roundtrip(sock) == b"ping\n"
    assert proxy.event_texts() == ["cut: 0 connections closed", "healed"]


def test_a_lost_reply_took_effect_but_never_arrives(counting_server: TinyServer) -> None:
    with FaultProxy(counting_server.address) as proxy:
        with connect(proxy) as sock:
            sock.sendall(b"INC\n")
            assert recv_exactly(sock, 2) == b"1\n"
            proxy.lose_next_reply()
            sock.sendall(b"INC\n")
            assert closed_within(sock, 1)  # no reply: the connection is gone instead
        assert proxy.wait_reply_lost(1)
        assert counting_server.requests == 2  # the request reached the server
        assert wait_until(lambda: counting_server.ended == 1)  # closed on its side too
        with connect(proxy) as sock:
            sock.sendall(b"INC\n")
            assert recv_exactly(sock, 2) == b"3\n"  # the next connection works normally
            sock.sendall(b"INC\n")
            assert recv_exactly(sock, 2) == b"4\n"  # and only one reply was lost
        assert proxy.event_texts() == [
            "armed: the next reply will be lost",
            "reply lost: 2 bytes dropped, connection closed",
        ]


def per_request(conn: socket.socket, server: TinyServer) -> None:
    """Each request (ended by a blank line) takes effect, then its count is the reply."""
    buffer = b""
    while data := server.recv(conn):
        buffer += data
        while b"\r\n\r\n" in buffer:
            _, buffer = buffer.split(b"\r\n\r\n", 1)
            with server.lock:
                server.requests += 1
                count = server.requests
            conn.sendall(b"%d\n" % count)


@pytest.fixture
def http_server() -> Iterator[TinyServer]:
    server = TinyServer(per_request)
    yield server
    server.stop()


def test_a_loss_meant_for_one_request_lets_the_others_replies_through(
    http_server: TinyServer,
) -> None:
    """An operation that makes two requests (a lease grant, then the transaction) loses
    the reply to the one the model means, named in the record, not the first reply."""
    counting_server = http_server
    with FaultProxy(counting_server.address) as proxy:
        with connect(proxy) as sock:
            proxy.lose_next_reply(matching=b"kv/txn")
            sock.sendall(b"POST /v3/lease/grant HTTP/1.1\r\n\r\n")
            assert recv_exactly(sock, 2) == b"1\n"  # the grant's reply passes
            sock.sendall(b"POST /v3/kv/txn HTTP/1.1\r\n\r\n")
            assert closed_within(sock, 1)  # the transaction's is lost
        assert proxy.wait_reply_lost(1)
        assert counting_server.requests == 2
        assert proxy.lost_request == "POST /v3/kv/txn"
        assert proxy.event_texts()[0] == "armed: the next reply to a request holding b'kv/txn'" \
            " will be lost"  # fmt: skip


def test_a_loss_that_found_nothing_to_take_is_disarmed(http_server: TinyServer) -> None:
    with FaultProxy(http_server.address) as proxy:
        proxy.lose_next_reply(matching=b"kv/txn")
        assert not proxy.wait_reply_lost(0.1)
        proxy.disarm()
        with connect(proxy) as sock:
            sock.sendall(b"POST /v3/kv/txn HTTP/1.1\r\n\r\n")
            assert recv_exactly(sock, 2) == b"1\n"  # a later reply is not taken
        assert proxy.event_texts()[-1] == "disarmed: no reply was lost"


@pytest.mark.parametrize(
    ("head", "words"),
    [
        (b"POST /v3/kv/txn HTTP/1.1\r\nHost: x\r\n\r\n{}", "POST /v3/kv/txn"),
        (b"*3\r\n$3\r\nSET\r\n$4\r\nlock\r\n$6\r\nn1:abc\r\n", "SET lock n1:abc"),
        (b"Q\x00\x00\x00\x1fUPDATE leader", "a request of 18 bytes"),
        (b"x" * 256, "a request of 256 bytes or more"),
    ],
)
def test_a_request_is_named_by_what_its_first_bytes_say(head: bytes, words: str) -> None:
    assert request_words(head) == words


def test_wait_reply_lost_is_bounded(proxy: FaultProxy) -> None:
    proxy.lose_next_reply()
    started = time.monotonic()
    assert not proxy.wait_reply_lost(0.2)
    assert time.monotonic() - started < 1


def test_events_are_recorded_in_order(proxy: FaultProxy) -> None:
    with connect(proxy) as sock:
        roundtrip(sock)
        proxy.cut()
    proxy.heal()
    proxy.lose_next_reply()
    with connect(proxy) as sock:
        sock.sendall(b"12345")
        assert closed_within(sock, 1)
    assert proxy.wait_reply_lost(1)
    proxy.cut()
    proxy.heal()
    assert proxy.event_texts() == [
        "cut: 1 connection closed",
        "healed",
        "armed: the next reply will be lost",
        "reply lost: 5 bytes dropped, connection closed",
        "cut: 0 connections closed",
        "healed",
    ]
    times = [t for t, _ in proxy.events]
    assert times == sorted(times)


def test_a_silent_cut_holds_bytes_until_heal(proxy: FaultProxy) -> None:
    with connect(proxy) as sock:
        roundtrip(sock)
        proxy.cut(silent=True)
        sock.sendall(b"held\n")
        sock.settimeout(0.3)
        with pytest.raises(TimeoutError):
            sock.recv(16)  # nothing comes back, and nothing is closed
        proxy.heal()
        sock.settimeout(1)
        assert recv_exactly(sock, 5) == b"held\n"
    assert proxy.event_texts() == ["cut (silent): 1 connection held", "healed"]


def test_the_first_target_that_accepts_gets_the_connection(echo_server: TinyServer) -> None:
    with socket.socket() as unused:  # a port nobody listens on: the connect is refused
        unused.bind(("127.0.0.1", 0))
        down = unused.getsockname()[:2]
    with FaultProxy([down, echo_server.address]) as proxy, connect(proxy) as sock:
        assert roundtrip(sock) == b"ping\n"
    with FaultProxy([down]) as proxy:
        assert refused_or_closed(proxy)
        assert wait_until(lambda: len(proxy.events) == 1)
        assert proxy.event_texts()[0].startswith("connection 1: no target accepted")


def test_stop_ends_every_thread_and_frees_the_port(echo_server: TinyServer) -> None:
    proxy = FaultProxy(echo_server.address).start()
    held = [connect(proxy) for _ in range(3)]
    for sock in held:
        roundtrip(sock)
    assert len(proxy_threads(proxy)) == 1 + 2 * len(held)
    proxy.stop()
    assert proxy_threads(proxy) == []
    for sock in held:
        assert closed_within(sock, 1)
        sock.close()
    with socket.socket() as again:  # no SO_REUSEADDR: nothing of the proxy's is left on it
        again.bind(("127.0.0.1", proxy.port))
    proxy.stop()  # harmless
    with pytest.raises(RuntimeError):
        proxy.start()


def test_a_proxy_never_started_stops_cleanly(echo_server: TinyServer) -> None:
    proxy = FaultProxy(echo_server.address)
    proxy.stop()
    proxy.stop()
    with socket.socket() as again:
        again.bind(("127.0.0.1", proxy.port))


def test_shun_cuts_only_what_one_dialer_made_and_refuses_its_new_ones(
    echo_server: TinyServer,
) -> None:
    """A member cut off from its peers: the proxy tells who made each connection (here,
    by the connecting socket's owner, this process) and resets only that one's."""
    me = os.getpid()

    def dialer_of(sock: socket.socket) -> str | None:
        return "me" if dialer_pid(sock, [me]) == me else None

    with FaultProxy(echo_server.address, name="peers", dialer_of=dialer_of) as peers:
        with connect(peers) as sock:
            assert roundtrip(sock) == b"ping\n"
            assert peers.shun("someone else") == 0
            assert roundtrip(sock) == b"ping\n"  # not the shunned dialer's: it passes
            assert peers.shun("me") == 1
            assert closed_within(sock, 1.0)
        try:
            again = connect(peers)
        except ConnectionResetError:
            pass  # reset before the client's connect returned: refused all the same
        else:
            with again:
                assert closed_within(again, 1.0)  # refused while shunned
        peers.heal()
        with connect(peers) as healed:
            assert roundtrip(healed) == b"ping\n"
    assert "refused me's connection" in peers.event_texts()


def test_avoid_resets_what_went_to_one_target_and_sends_new_ones_on() -> None:
    first, second = TinyServer(echo), TinyServer(echo)
    try:
        with FaultProxy([first.address, second.address], name="storage") as link:
            with connect(link) as sock:
                assert roundtrip(sock) == b"ping\n"  # to the first
                assert link.avoid(first.address) == 1
                assert closed_within(sock, 1.0)
            with connect(link) as again:
                assert roundtrip(again) == b"ping\n"
            assert link.targets == [second.address]
    finally:
        first.stop()
        second.stop()
