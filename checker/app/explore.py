"""`verify explore`: walk a protocol's states by hand in a local web page.

A state is named by its link: the index of an initial state (`init`) and the position of
each action taken among the successors of the state before it (`path`, in the model's fixed
order, as a search stores its trace), so `/?init=0&path=3.0.2` is a link that a reload, or
anyone with the same model and parameters, opens again. The server is the
standard library's and listens on 127.0.0.1 only; it serves one browser at a time: the
page gives each browser a cookie, and the first whose page calls back (a `curl` of the page
never does) holds the session while it is heard from; the page calls in every
KEEPALIVE_SECONDS and says goodbye when its tab closes, and a session not heard from for
IDLE_SECONDS is let go, so a closed or crashed browser never locks the next one out (any
other browser meanwhile gets 409 and a page that says when to reload), logs nothing
(stdout carries only the URL line), bounds what it reads (64 KiB, 10,000 steps) and answers
a bad link, a bad request or a model that raises with one line of JSON, never a traceback,
and goes on serving. Model code runs under one lock: one request at a time. Routes:

- `GET /` (any query): the page (checker/render/explore_page.py), which reads its state
  from the query;
- `GET /state?init=K&path=P`: that state as JSON: the trace so far, the enabled actions,
  each claim on this state, the chart;
- `POST /jump` with `{"claim": NAME}`: the ordinary search for that claim alone (at most
  JUMP_STATES states, stopped by Ctrl-C), answered with the link of its shortest
  counterexample (`always`) or witness (`sometimes`), or why there is none;
- `POST /alive`: the page is still open (its session goes on); `POST /bye`: its tab closes
  (its session is let go at once).

Ctrl-C stops the server (and a search under way) and the command exits 3: it judged
nothing, and the exit-code contract keeps 0 and 1 for verdicts.
"""

from __future__ import annotations

import errno
import json
import re
import secrets
import socketserver
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from http import HTTPStatus
from http.cookies import CookieError, SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import click

from leadercheck.checker.app.args import Count, Once, parse_params
from leadercheck.checker.app.common import catalogue_of, checked_model
from leadercheck.checker.app.output import reporting, say
from leadercheck.checker.engine.guard import call_model, model_name, watch_properties
from leadercheck.checker.engine.interrupts import real_interrupt
from leadercheck.checker.engine.strategies.bfs import check
from leadercheck.checker.engine.successors import decides, extend_trace, rebuild_trace
from leadercheck.checker.errors import LeadercheckError, ModelError
from leadercheck.checker.model import Action, Model
from leadercheck.checker.properties import Kind, Property
from leadercheck.checker.render.explore_page import (
    Chart,
    ClaimState,
    explore_page,
    state_data,
    trace_chart,
)
from leadercheck.checker.result import EndReason, Progress, Verdict
from leadercheck.checker.trace import Step, Trace

HOST = "127.0.0.1"
DEFAULT_PORT = 8765
MAX_STEPS = 10_000  # the most steps a link may name
MAX_BODY = 64 * 1024  # the largest request body read (the request line: http.server's 64 KiB)
JUMP_STATES = 2_000_000  # the jump's search stops INCOMPLETE beyond this many states
SHOWN_INITIAL = 1_000  # initial states offered by Restart
CHARTS_KEPT = 32  # charts drawn lately, kept for Back and reloads
BUSY = "another browser is exploring; one at a time"
IDLE_SECONDS = 30.0  # a session not heard from this long is let go
KEEPALIVE_SECONDS = 10.0  # how often an open page calls in
PER_STATE = (Kind.ALWAYS, Kind.SOMETIMES)  # the claims a single state decides
_INDEX = re.compile(r"[0-9]{1,9}")


class Refused(Exception):
    """A request the server answers with `status` and one line, the server unharmed."""

    def __init__(self, status: HTTPStatus, message: str, text: bool = False) -> None:
        super().__init__(message)
        self.status, self.text = status, text


def one_line(text: str) -> str:
    return " ".join(str(text).split())


class Exploration:
    """One model explored by hand: a state by its link, the claims on it, the jump's search.

    Every call into model code holds `lock` (a model is no thread-safe object, and a
    user's model swaps os._exit while it runs); the last trace served is kept, so a step
    forward or back re-executes nothing but the new step."""

    def __init__(
        self,
        model: Model[Any],
        claims: Sequence[Property],
        protocol: str,
        params: Mapping[str, int],
        model_spec: str | None = None,
    ) -> None:
        self.model = model
        self.claims = tuple(p for p in watch_properties(model, claims) if p.kind in PER_STATE)
        self.protocol, self.params, self.model_spec = protocol, dict(params), model_spec
        self.initial: list[Any] = call_model(lambda: list(model.initial_states()), "initial_states")
        if not self.initial:
            raise LeadercheckError(f"{protocol}: the model has no initial state to explore")
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self._last: tuple[int, tuple[int, ...], Trace] | None = None
        self._charts: OrderedDict[tuple[int, tuple[int, ...]], Chart] = OrderedDict()
        self._jumps: dict[str, dict[str, object]] = {}
        with self.lock:
            self.summaries = [
                "; ".join(f"{k} {v}" for k, v in self._initial_step(index).summary.items())
                for index in range(min(len(self.initial), SHOWN_INITIAL))
            ]

    def meta(self) -> dict[str, object]:
        """What the page needs before any state: names, parameters, initial states, claims."""
        return {
            "protocol": self.protocol,
            "params": self.params,
            "model": self.model_spec,
            "initial": self.summaries,
            "initial_count": len(self.initial),
            "claims": [
                {"name": p.name, "kind": p.kind.value, "description": p.description}
                for p in self.claims
            ],
            "max_steps": MAX_STEPS,
        }

    # -- a state by its link ---------------------------------------------------------

    def state(self, init: int, moves: tuple[int, ...]) -> dict[str, object]:
        """The state `moves` leads to from initial state `init`, as `GET /state` answers."""
        with self.lock:
            trace = self._trace(init, moves)
            last = trace.last.state
            enabled = [self._shown(action) for action, _ in self._successors(last)]
            claims = [self._judged(prop, last) for prop in self.claims]
            chart = self._charts.get((init, moves))
            if chart is None:
                chart = trace_chart(self.protocol, self.params, trace, claims, self.model_spec)
                self._charts[(init, moves)] = chart
                if len(self._charts) > CHARTS_KEPT:
                    self._charts.popitem(last=False)
            else:
                self._charts.move_to_end((init, moves))
        return state_data(init, moves, trace, enabled, claims, chart)

    def _trace(self, init: int, moves: tuple[int, ...]) -> Trace:
        """The trace along `moves`, extended from the last one served where they agree."""
        count = len(self.initial)
        if init >= count:
            raise Refused(
                HTTPStatus.NOT_FOUND, f"no initial state {init}: the model has {count} (0 to "
                f"{count - 1})"
            )  # fmt: skip
        trace, done = self._known(init, moves)
        for number, move in enumerate(moves[done:], start=done + 1):
            longer = call_model(partial(extend_trace, self.model, trace, move), "successors")
            if len(longer) == len(trace):  # the move is not among the successors
                enabled = len(self._successors(trace.last.state))
                raise Refused(
                    HTTPStatus.NOT_FOUND,
                    f"step {number} takes action {move}, but the state after step {number - 1} "
                    f"has {enabled} enabled" + (f" (0 to {enabled - 1})" if enabled else ""),
                )
            trace = longer
        self._last = (init, moves, trace)
        return trace

    def _known(self, init: int, moves: tuple[int, ...]) -> tuple[Trace, int]:
        """The longest start of `moves` the last trace served already took, and its length."""
        if self._last is None or self._last[0] != init:
            return Trace((self._initial_step(init),)), 0
        _, taken, trace = self._last
        same = 0
        for a, b in zip(taken, moves, strict=False):
            if a != b:
                break
            same += 1
        return Trace(trace.steps[: same + 1]), same

    def _initial_step(self, init: int) -> Step:
        rebuilt = call_model(
            partial(rebuild_trace, self.model, self.initial, [init]), "describe or summary"
        )
        return rebuilt.steps[0]

    def _successors(self, state: Any) -> list[tuple[Action, Any]]:
        return call_model(lambda: list(self.model.successors(state)), "successors")

    def _shown(self, action: Action) -> Action:
        return call_model(action.shown, f"the note of {action.name}")

    def _judged(self, prop: Property, state: Any) -> ClaimState:
        decided = call_model(partial(decides, prop, state), f"the claim {prop.name}")
        if not decided:
            return ClaimState(prop, False)
        why = call_model(partial(prop.why, state), f"the explanation of {prop.name}")
        return ClaimState(prop, True, str(why))

    # -- jumping to a violation or a witness ----------------------------------------

    def jump(self, name: str) -> dict[str, object]:
        """The shortest counterexample (witness) of claim `name` as a link, or why none:
        the search `verify` runs, for this claim alone; answers kept unless interrupted."""
        prop = next((p for p in self.claims if p.name == name), None)
        if prop is None:
            known = ", ".join(p.name for p in self.claims) or "none"
            raise Refused(HTTPStatus.NOT_FOUND, f"no claim {name!r} to jump to (claims: {known})")
        with self.lock:
            answer = self._jumps.get(name)
            if answer is None:
                answer = self._search(prop)
        return answer

    def _search(self, prop: Property) -> dict[str, object]:
        result = check(self.model, [prop], max_states=JUMP_STATES, progress=self._watch)
        found = result.result(prop.name)
        states = result.stats.distinct_states
        what = "counterexample" if prop.kind is Kind.ALWAYS else "witness"
        answer: dict[str, object] = {
            "claim": prop.name,
            "kind": prop.kind.value,
            "verdict": found.verdict.value,
            "states": states,
        }
        if found.trace is None:
            if result.end is EndReason.INTERRUPTED:
                answer.update(found=False, message=f"the search for {prop.name} was stopped")
                return answer  # not kept: another jump searches again
            why = (
                f"no {what} within {states:,} states ({found.reason})"
                if found.verdict is Verdict.INCOMPLETE
                else f"{found.reason} ({states:,} states)"
            )
            answer.update(found=False, message=f"{prop.name} {found.verdict.value}: {why}")
        else:
            init, moves = self._moves_of(found.trace)
            n = len(moves)
            answer.update(
                found=True,
                init=init,
                path=moves,
                length=n,
                message=f"the shortest {what} of {prop.name}: {n} step{'s' * (n != 1)} "
                f"({states:,} states searched)",
            )
        self._jumps[prop.name] = answer
        return answer

    def _watch(self, progress: Progress) -> None:
        """The search's progress callback: Ctrl-C, which the main thread received, stops
        it here (as the engine takes the user's Ctrl-C: a KeyboardInterrupt)."""
        if self.stopping.is_set():
            raise KeyboardInterrupt

    def _moves_of(self, trace: Trace) -> tuple[int, list[int]]:
        """The link of a search's trace: its initial state's index, then each step's
        position among the successors of the state before (its action and state matched,
        else its action alone)."""
        first = trace.steps[0].state
        init = next((k for k, s in enumerate(self.initial) if s == first), None)
        if init is None:
            raise ModelError(
                f"{model_name(self.model)}: the search's trace starts from a state that is "
                "not among initial_states() now (a nondeterministic model?)"
            )
        state, moves = self.initial[init], []
        for step in trace.steps[1:]:
            pairs = self._successors(state)
            move = next(
                (k for k, (a, s) in enumerate(pairs) if a == step.action and s == step.state),
                next((k for k, (a, _) in enumerate(pairs) if a == step.action), None),
            )
            if move is None:
                raise ModelError(
                    f"{model_name(self.model)}: step {step.index} of the search's trace "
                    f"({step.action}) is not among the successors now (a nondeterministic "
                    "model?)"
                )
            moves.append(move)
            state = pairs[move][1]
        return init, moves

    def stop(self, wait: float = 5.0) -> None:
        """Stop a search under way and wait (a while) for the request running it."""
        self.stopping.set()
        if self.lock.acquire(timeout=wait):
            self.lock.release()


def state_link(query: str) -> tuple[int, tuple[int, ...]]:
    """`init=K&path=3.0.2` as (K, moves); a malformed or too long one is refused (400)."""
    fields = parse_qs(query, keep_blank_values=True)
    for name, values in fields.items():
        if len(values) > 1:
            raise Refused(HTTPStatus.BAD_REQUEST, f"{name} is given {len(values)} times")
    init = fields.get("init", ["0"])[0]
    if not _INDEX.fullmatch(init):
        raise Refused(HTTPStatus.BAD_REQUEST, "init: give an initial state's index, such as 0")
    text = fields.get("path", [""])[0]
    parts = text.split(".") if text else []
    if len(parts) > MAX_STEPS:
        raise Refused(HTTPStatus.BAD_REQUEST, f"path: at most {MAX_STEPS:,} steps")
    if not all(_INDEX.fullmatch(part) for part in parts):
        raise Refused(
            HTTPStatus.BAD_REQUEST,
            "path: give the actions' positions separated by dots, such as 3.0.2",
        )
    return int(init), tuple(int(part) for part in parts)


class ExploreServer(ThreadingHTTPServer):
    """The explorer's HTTP server on 127.0.0.1: one exploration, one browser's session."""

    daemon_threads = True  # a request still running never holds the process at exit
    allow_reuse_address = True  # a port in TIME_WAIT; a listening one still refuses
    allow_reuse_port = False  # never share a port with another explorer

    def __init__(
        self,
        exploration: Exploration,
        port: int,
        clock: Callable[[], float] = time.monotonic,
        idle: float = IDLE_SECONDS,
    ) -> None:
        self.exploration = exploration
        self.token: str | None = None  # the session's holder, while it is heard from
        self.heard = 0.0  # when the holder last called in, by `clock`
        self.clock, self.idle = clock, idle
        self.session_lock = threading.Lock()
        super().__init__((HOST, port), _Handler)

    def holder(self) -> str | None:
        """The session's token, or None if nobody holds it or its holder went quiet
        (call with session_lock held)."""
        if self.token is not None and self.clock() - self.heard > self.idle:
            self.token = None
        return self.token

    def held_by_another(self, given: str | None) -> bool:
        """Whether a live session is held, and not with the token `given` (call with
        session_lock held)."""
        holder = self.holder()
        return holder is not None and (given is None or not secrets.compare_digest(given, holder))

    def busy_words(self) -> str:
        """What a refused browser is told: who holds the session and when to come back."""
        quiet = max(0.0, self.clock() - self.heard)
        return (
            f"{BUSY}: its page last called in {quiet:.0f} s ago. It is let go when that tab "
            f"closes, or {self.idle:.0f} s after its last call; then reload this page "
            f"({self.url})."
        )

    def server_bind(self) -> None:
        socketserver.TCPServer.server_bind(self)  # not HTTPServer's: no reverse DNS lookup
        self.server_name, self.server_port = HOST, self.port

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}/"

    @property
    def cookie(self) -> str:
        return f"leadercheck-explore-{self.port}"  # cookies ignore ports: one name per port

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Nothing: a client gone in the middle of an answer has nobody to tell."""


class _Handler(BaseHTTPRequestHandler):
    server: ExploreServer
    server_version = "leadercheck-explore"
    timeout = 30  # a client that stops sending holds its thread no longer

    def version_string(self) -> str:
        return self.server_version  # no Python version beside it

    def log_message(self, format: str, *args: Any) -> None:
        """Nothing: stdout carries the URL line only, stderr is the model's."""

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's own refusals (a request line over 64 KiB, a malformed request, a
        method it has no handler for) as one line of JSON too."""
        self.close_connection = True
        short = self.responses.get(code, ("error",))[0]
        self._json(HTTPStatus(code), {"error": one_line(message or short)})

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self._answer("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._answer("POST")

    def _answer(self, method: str) -> None:
        try:
            self._route(method)
        except Refused as exc:
            if exc.text:
                self._send(exc.status, str(exc) + "\n", "text/plain; charset=utf-8")
            else:
                self._json(exc.status, {"error": one_line(str(exc))})
        except LeadercheckError as exc:  # a ModelError above all: the user's model raised
            self._json(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": one_line(str(exc))})
        except Exception as exc:  # a bug of ours: one line, and the server goes on
            message = one_line(f"internal error: {type(exc).__name__}: {exc}")
            self._json(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": message})

    def _route(self, method: str) -> None:
        host = self.headers.get("Host", "")
        if host not in (f"{HOST}:{self.server.port}", f"localhost:{self.server.port}"):
            raise Refused(HTTPStatus.FORBIDDEN, f"open {self.server.url}", text=True)
        url = urlsplit(self.path)
        routes = {"/": "GET", "/state": "GET", "/jump": "POST", "/alive": "POST", "/bye": "POST"}
        if url.path not in routes:
            raise Refused(HTTPStatus.NOT_FOUND, f"no such page: {url.path[:80]}")
        if routes[url.path] != method:
            raise Refused(HTTPStatus.METHOD_NOT_ALLOWED, f"{url.path} takes {routes[url.path]}")
        if url.path == "/bye":
            self._bye()
            return
        if url.path != "/":
            self._session()
        exploration = self.server.exploration
        if url.path == "/":
            new = self._page_token()
            page = explore_page(exploration.meta(), KEEPALIVE_SECONDS)
            self._send(HTTPStatus.OK, page, "text/html; charset=utf-8", new)
        elif url.path == "/alive":
            self._json(HTTPStatus.OK, {"alive": True})
        elif url.path == "/state":
            init, moves = state_link(url.query)
            self._json(HTTPStatus.OK, exploration.state(init, moves))
        else:
            self._json(HTTPStatus.OK, exploration.jump(self._claim()))

    def _page_token(self) -> str | None:
        """Loading the page claims nothing (a `curl` of it must not lock anyone out): it
        is refused only while another browser's session is live, and gives a browser
        without a cookie one (returned, to set)."""
        server, given = self.server, self._token()
        with server.session_lock:
            if server.held_by_another(given):
                raise Refused(HTTPStatus.CONFLICT, server.busy_words(), text=True)
        return None if given else secrets.token_urlsafe(24)

    def _session(self) -> None:
        """A call from a page: its browser holds the session, or takes it if nobody does
        (or its holder went quiet); any other is refused, told when to come back."""
        server, given = self.server, self._token()
        with server.session_lock:
            if server.held_by_another(given):
                raise Refused(HTTPStatus.CONFLICT, server.busy_words(), text=True)
            if given is None:
                raise Refused(HTTPStatus.CONFLICT, f"open {server.url} first", text=True)
            server.token, server.heard = given, server.clock()

    def _bye(self) -> None:
        """The page's tab closes: its session is let go (anyone else's stays)."""
        server, given = self.server, self._token()
        with server.session_lock:
            if given is not None and not server.held_by_another(given):
                server.token = None  # its own session, or none left to hold
        self._json(HTTPStatus.OK, {"bye": True})

    def _token(self) -> str | None:
        try:
            cookies = SimpleCookie(self.headers.get("Cookie", ""))
        except CookieError:
            return None
        found = cookies.get(self.server.cookie)
        return None if found is None else found.value

    def _claim(self) -> str:
        """The claim a jump names: `{"claim": NAME}`, a body of at most MAX_BODY bytes."""
        length = self.headers.get("Content-Length", "0")
        if not _INDEX.fullmatch(length):
            raise Refused(HTTPStatus.BAD_REQUEST, "Content-Length: give a number of bytes")
        if int(length) > MAX_BODY:
            self.close_connection = True
            raise Refused(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"a request body of at most {MAX_BODY} bytes"
            )
        body = self.rfile.read(int(length))
        try:
            claim = json.loads(body.decode("utf-8")).get("claim")
        except (ValueError, AttributeError):
            claim = None
        if not isinstance(claim, str):
            raise Refused(HTTPStatus.BAD_REQUEST, 'give {"claim": NAME} as JSON')
        return claim

    def _json(self, status: HTTPStatus, data: Mapping[str, object]) -> None:
        text = json.dumps(data, ensure_ascii=False, default=str)
        self._send(status, text, "application/json; charset=utf-8")

    def _send(
        self, status: HTTPStatus, text: str, content_type: str, token: str | None = None
    ) -> None:
        body = text.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header(
            "Content-Security-Policy",
            "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
            "connect-src 'self'; img-src data:; frame-ancestors 'none'",
        )
        if token is not None:
            self.send_header(
                "Set-Cookie", f"{self.server.cookie}={token}; Path=/; HttpOnly; SameSite=Strict"
            )
        self.end_headers()
        self.wfile.write(body)


def open_server(exploration: Exploration, port: int) -> ExploreServer:
    """The server listening on 127.0.0.1:`port` (0: any free port); a port in use, or one
    this user may not take, is one line."""
    try:
        return ExploreServer(exploration, port)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise LeadercheckError(
                f"port {port} is in use (another `verify explore`?): give --port N, or "
                "--port 0 for any free port"
            ) from None
        raise LeadercheckError(f"cannot listen on {HOST}:{port}: {exc.strerror or exc}") from None


def exploration_of(
    protocol_name: str, model_spec: str | None, params: Sequence[str]
) -> Exploration:
    """The protocol's model at its parameters, with its claims, as `verify` checks them."""
    catalogue = catalogue_of(model_spec)
    protocol = catalogue.lookup(protocol_name)
    values = protocol.resolve(parse_params(params))
    claims = catalogue.expectations.properties(protocol.name)
    model = checked_model(catalogue, protocol, values, claims)
    return Exploration(model, claims, protocol.name, values, catalogue.model)


@click.command(
    "explore",
    params=[
        Once(["--protocol", "protocol_name"], metavar="NAME",
             help="Protocol to explore (required; see verify --list)."),
        Once(["--model", "model_spec"], metavar="FILE.py|MODULE",
             help="Explore a protocol of your own module (as verify --model)."),
        click.Option(["-p", "--param", "params"], multiple=True, metavar="NAME=VALUE",
                     help="Set a model parameter (repeatable)."),
        Once(["--port"], type=Count(0, 65535), default=DEFAULT_PORT, show_default=True,
             metavar="N",
             help="The port on 127.0.0.1 (0: any free port)."),
    ],
)  # fmt: skip
@reporting
def explore_command(
    protocol_name: str | None, model_spec: str | None, params: tuple[str, ...], port: int
) -> int:
    """Walk a protocol's states by hand in a local web page; Ctrl-C stops."""
    if protocol_name is None:
        raise LeadercheckError("explore needs --protocol NAME (`verify --list` names them)")
    exploration = exploration_of(protocol_name, model_spec, params)
    server = open_server(exploration, port)
    try:
        say(f"explore: {server.url} (Ctrl-C stops)")
        server.serve_forever(poll_interval=0.25)
    except KeyboardInterrupt:
        if not real_interrupt():
            raise
        exploration.stop()
    finally:
        server.server_close()
    say("explore: stopped")
    return 3  # ended by Ctrl-C, its only end: incomplete, never a verdict
