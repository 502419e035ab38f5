"""`verify explore`: its JSON API on a server in a thread (states by path, bad links, one
browser at a time, a model that raises, the jump to a violation), the command line (a port
in use, Ctrl-C), and the page in headless Chromium, walked to a violation by hand."""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.cookiejar import CookieJar
from pathlib import Path
from typing import Any
from urllib.error import HTTPError
from urllib.request import HTTPCookieProcessor, ProxyHandler, Request, build_opener

import pytest
from click.testing import CliRunner

from leadercheck.checker import check
from leadercheck.checker.app.explore import (
    BUSY,
    IDLE_SECONDS,
    MAX_BODY,
    MAX_STEPS,
    Exploration,
    ExploreServer,
    exploration_of,
)
from leadercheck.checker.app.main import main
from leadercheck.checker.engine.guard import GuardedModel
from leadercheck.models.catalogue import lookup
from leadercheck.specs.claims import PROPERTIES
from tests.conftest import ARTIFACTS
from tests.helpers import run_interrupted
from tests.user_models.escaping import Escaping, claims

PROTOCOL = "lease-no-fencing"
CLAIM = "no-stale-write"
VERIFY = [sys.executable, "-c", "from leadercheck.checker.app.main import main; main()"]


class Client:
    """One browser's worth of HTTP: its own cookies, no proxy."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.opener = build_opener(ProxyHandler({}), HTTPCookieProcessor(CookieJar()))

    def request(
        self, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
    ) -> tuple[int, str]:
        req = Request(self.url + path.lstrip("/"), data=body, headers=headers or {})
        try:
            with self.opener.open(req, timeout=60) as response:
                return response.status, response.read().decode("utf-8")
        except HTTPError as exc:
            return exc.code, exc.read().decode("utf-8")

    def state(self, path: str = "", init: int = 0) -> dict[str, Any]:
        status, text = self.request(f"/state?init={init}&path={path}")
        assert status == 200, text
        data: dict[str, Any] = json.loads(text)
        return data

    def jump(self, claim: str) -> dict[str, Any]:
        status, text = self.request("/jump", json.dumps({"claim": claim}).encode())
        assert status == 200, text
        data: dict[str, Any] = json.loads(text)
        return data


@contextmanager
def serving(exploration: Exploration, **options: Any) -> Iterator[ExploreServer]:
    server = ExploreServer(exploration, 0, **options)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield server
    finally:
        exploration.stop()
        server.shutdown()
        server.server_close()
        thread.join(10)


@pytest.fixture(scope="module")
def served() -> Iterator[ExploreServer]:
    with serving(exploration_of(PROTOCOL, None, ())) as server:
        yield server


@pytest.fixture(scope="module")
def client(served: ExploreServer) -> Client:
    """The first browser: it loads the page, so the session is its."""
    first = Client(served.url)
    status, page = first.request("/")
    assert status == 200 and "<title>explore lease-no-fencing</title>" in page
    return first


def model_successors(path: list[int]) -> list[str]:
    """The enabled actions' words after `path`, from a model of our own."""
    entry = lookup(PROTOCOL)
    model = entry.build(entry.resolve({}))
    state = model.initial_states()[0]
    for move in path:
        state = list(model.successors(state))[move][1]
    return [str(action) for action, _ in model.successors(state)]


def test_the_initial_states_actions_are_the_models_successors(client: Client) -> None:
    data = client.state()
    assert [a["index"] for a in data["actions"]] == list(range(len(data["actions"])))
    assert [a["text"] for a in data["actions"]] == model_successors([])
    assert [s["text"] for s in data["steps"]] == ["initial state"]
    assert data["steps"][0]["summary"]["n1"] == "follower"
    assert data["broken"] == [] and data["path"] == [] and data["init"] == 0
    assert data["chart"].startswith("<svg")


def test_actions_taken_by_index_and_taken_back(client: Client) -> None:
    first = client.state()
    one = client.state("0")
    assert one["steps"][1]["text"] == first["actions"][0]["text"]
    two = client.state("0.3")
    assert two["path"] == [0, 3]
    assert [s["text"] for s in two["steps"][1:]] == [
        first["actions"][0]["text"],
        one["actions"][3]["text"],
    ]
    assert [a["text"] for a in two["actions"]] == model_successors([0, 3])
    assert client.state("0") == one  # back: the same state, the same chart
    assert client.state() == first


@pytest.mark.parametrize(
    "query, status",
    [
        ("init=1", 404),
        ("path=99", 404),
        ("path=0.0.99", 404),
        ("init=x", 400),
        ("path=abc", 400),
        ("path=0..1", 400),
        ("path=-1", 400),
        ("path=1e3", 400),
        ("init=0&init=0", 400),
        ("path=" + ".".join(["0"] * (MAX_STEPS + 1)), 400),
    ],
)
def test_a_bad_link_is_one_line_of_json_and_the_server_goes_on(
    client: Client, query: str, status: int
) -> None:
    got, text = client.request(f"/state?{query}")
    assert got == status
    body = json.loads(text)
    assert list(body) == ["error"] and "\n" not in body["error"] and body["error"]
    assert client.state("0")["path"] == [0]


@pytest.mark.parametrize(
    "path, body, headers, status",
    [
        ("/nowhere", None, {}, 404),
        ("/jump", None, {}, 405),  # a GET
        ("/jump", b"{not json", {}, 400),
        ("/jump", b'{"claim": 3}', {}, 400),
        ("/jump", b'{"claim": "no-such-claim"}', {}, 404),
        ("/jump", b"x" * (MAX_BODY + 1), {}, 413),
        ("/state?path=" + "1" * 70_000, None, {}, 414),  # http.server's own limit
    ],
)
def test_a_bad_request_is_refused_in_one_line(
    client: Client, path: str, body: bytes | None, headers: dict[str, str], status: int
) -> None:
    got, text = client.request(path, body, headers)
    assert got == status
    assert "\n" not in json.loads(text)["error"]
    assert client.state()["path"] == []


def test_a_second_browser_is_refused_and_a_reload_is_not(client: Client) -> None:
    other = Client(client.url)
    for path, body in (("/", None), ("/state?init=0&path=0", None), ("/jump", b"{}")):
        status, text = other.request(path, body)
        assert status == 409 and text.startswith(BUSY), text
        assert "let go when that tab closes" in text and f"reload this page ({client.url})" in text
    status, page = client.request("/?init=0&path=0.1")  # the first browser reloads
    assert status == 200 and "explore lease-no-fencing" in page
    foreign = Client(client.url)
    req_status, text = foreign.request("/state", headers={"Host": "evil.example:80"})
    assert req_status == 403


def test_loading_the_page_claims_nothing_and_a_quiet_session_is_let_go() -> None:
    """A `curl` of the page locks nobody out: the session is the first page's that calls
    back. Its holder keeps it while heard from; gone quiet for the idle time (a fake clock
    here), or gone with a goodbye, the next browser takes it, and the one before is told."""
    now = [0.0]
    with serving(exploration_of(PROTOCOL, None, ()), clock=lambda: now[0]) as server:
        curl = Client(server.url)
        assert curl.request("/")[0] == 200  # the page only: no session taken
        first, second = Client(server.url), Client(server.url)
        assert first.request("/")[0] == 200 and first.state()["path"] == []
        assert second.request("/")[0] == 409  # first's session is live
        now[0] += IDLE_SECONDS - 1
        assert first.request("/alive", b"")[0] == 200  # heard from: its session goes on
        now[0] += IDLE_SECONDS - 1
        status, text = second.request("/state?init=0&path=")
        assert status == 409 and "last called in 29 s ago" in text
        now[0] += 2  # quiet for longer than the idle time: let go
        assert second.request("/")[0] == 200 and second.state()["path"] == []
        status, text = first.request("/state?init=0&path=")
        assert status == 409 and text.startswith(BUSY)
        assert second.request("/bye", b"")[0] == 200  # its tab closes: let go at once
        assert first.state()["path"] == []


def test_jump_to_a_violation_is_verifys_shortest_counterexample(client: Client) -> None:
    found = client.jump(CLAIM)
    assert found["found"] and found["init"] == 0 and found["verdict"] == "VIOLATED"
    state = client.state(".".join(map(str, found["path"])))
    assert state["broken"] == [CLAIM]
    assert [c["status"] for c in state["claims"] if c["name"] == CLAIM] == ["broken"]
    before = client.state(".".join(map(str, found["path"][:-1])))
    assert before["broken"] == []
    entry = lookup(PROTOCOL)  # the engine verify runs, without its files and charts
    shortest = check(entry.build(entry.resolve({})), [PROPERTIES[CLAIM]]).result(CLAIM).trace
    assert shortest is not None
    assert found["length"] == len(found["path"]) == len(shortest)
    witness = client.jump("write-accepted")  # a `sometimes` claim: its witness
    assert witness["found"] and witness["verdict"] == "HOLDS"
    reached = client.state(".".join(map(str, witness["path"])))
    assert [c["status"] for c in reached["claims"] if c["name"] == "write-accepted"] == ["met"]


@pytest.mark.parametrize("how, where", [("exit1", "successors"), ("boom", "claim")])
def test_a_model_that_raises_is_a_500_in_one_line_and_the_server_goes_on(
    how: str, where: str
) -> None:
    model = GuardedModel(Escaping(how, where))
    exploration = Exploration(model, claims(how, where), "escaping", {"limit": 12}, "escaping.py")
    with serving(exploration) as server:
        user = Client(server.url)
        assert user.request("/")[0] == 200
        assert user.state("1.1.1")["steps"][-1]["summary"] == {}  # state 6
        status, text = user.request("/state?init=0&path=1.1.1.0")  # state 7 raises
        assert status == 500
        error = json.loads(text)["error"]
        assert "\n" not in error
        assert ("SystemExit" if how == "exit1" else "no escape 'boom'") in error
        assert user.state("1")["path"] == [1]


def test_a_port_in_use_is_one_line_and_exit_2() -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        result = CliRunner().invoke(main, ["explore", "--protocol", PROTOCOL, "--port", str(port)])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        f"error: port {port} is in use (another `verify explore`?): give --port N, or "
        "--port 0 for any free port"
    ]


@pytest.mark.parametrize(
    "args, words",
    [
        (["--protocol", "lease-no-fenzing"], "unknown protocol 'lease-no-fenzing'"),
        (["--protocol", PROTOCOL, "-p", "nodes=99"], "nodes"),
        (["--protocol", PROTOCOL, "-p", "nodes"], "-p expects NAME=VALUE"),
        (["--protocol", PROTOCOL, "--port", "70000"], "--port"),
        ([], "--protocol"),
    ],
)
def test_bad_arguments_are_one_line_and_exit_2(args: list[str], words: str) -> None:
    result = CliRunner().invoke(main, ["explore", *args])
    assert result.exit_code == 2
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: ") and words in line


def test_ctrl_c_twice_stops_it_with_exit_3(tmp_path: Path) -> None:
    """Ctrl-C is its only end; it judged nothing, so the contract's 3, never 0 or 1."""
    done = run_interrupted(
        [*VERIFY, "explore", "--protocol", PROTOCOL, "--port", "0"],
        tmp_path,
        ready="explore: http",
        again=0.2,
    )
    assert done.returncode == 3, done.stderr
    url, stopped = done.stdout.splitlines()
    assert url.startswith("explore: http://127.0.0.1:") and url.endswith("/ (Ctrl-C stops)")
    assert stopped == "explore: stopped"
    assert done.stderr == ""


# -- the page in headless Chromium ------------------------------------------------------


def _at_step(tab: Any, n: int) -> None:
    tab.wait_for_function(
        "n => document.getElementById('step-no').textContent === String(n) && "
        "document.querySelectorAll('#steps li').length === n + 1",
        arg=n,
    )


def _broken(tab: Any) -> list[str]:
    names: list[str] = tab.eval_on_selector_all(
        "#claims li.broken", "lis => lis.map(li => li.dataset.claim)"
    )
    return names


@pytest.mark.slow  # 3.8 s in Chromium; the jump to the violation stays
def test_the_page_walks_to_the_violation_by_hand_and_jumps_back_to_it(tab: Any) -> None:
    path = exploration_of(PROTOCOL, None, ()).jump(CLAIM)["path"]
    assert isinstance(path, list)
    with serving(exploration_of(PROTOCOL, None, ())) as server:
        tab.goto(server.url)
        _at_step(tab, 0)
        assert tab.url == server.url + "?init=0&path="
        for n, move in enumerate(path, start=1):
            tab.click(f"#actions button[data-index='{move}']")
            _at_step(tab, n)
        last = len(path)
        link = server.url + "?init=0&path=" + ".".join(map(str, path))
        assert tab.url == link
        assert _broken(tab) == [CLAIM]
        colour = tab.eval_on_selector(
            f"#claims li[data-claim='{CLAIM}']", "li => getComputedStyle(li).color"
        )
        assert colour == "rgb(192, 57, 43)"
        assert f"{CLAIM} broken" in tab.inner_text("#chart")  # the chart's verdict box
        tab.screenshot(path=str(ARTIFACTS / "explore-violation.png"))

        tab.click("#back")
        _at_step(tab, last - 1)
        assert _broken(tab) == []
        assert tab.url == server.url + "?init=0&path=" + ".".join(map(str, path[:-1]))

        tab.select_option("#claim-select", CLAIM)
        assert tab.inner_text("#jump") == "Jump to violation"
        tab.click("#jump")
        _at_step(tab, last)
        assert _broken(tab) == [CLAIM] and tab.url == link
        assert f"{last} steps" in tab.inner_text("#status")
        steps = tab.inner_text("#steps")

        tab.reload()
        _at_step(tab, last)
        assert tab.url == link and _broken(tab) == [CLAIM]
        assert tab.inner_text("#steps") == steps

        tab.go_back()  # the address's history: the state before the jump
        _at_step(tab, last - 1)
        assert _broken(tab) == []


def test_a_closed_tab_lets_the_next_browser_in_at_once(browser: Any) -> None:
    """Chromium: the page holds the session while open (its calls keep it), says goodbye as
    its tab closes, and the next browser is let in without waiting for the idle time."""
    with serving(exploration_of(PROTOCOL, None, ())) as server:
        page = browser.new_context().new_page()
        page.goto(server.url)
        _at_step(page, 0)
        other = Client(server.url)
        status, text = other.request("/")
        assert status == 409 and "reload this page" in text
        page.context.close()  # the tab (and its browser window) closes
        deadline = time.monotonic() + 20  # the goodbye arrives; not the 30 s idle time
        while other.request("/")[0] != 200:
            assert time.monotonic() < deadline, "the closed tab still holds the session"
            time.sleep(0.05)
        assert other.state()["path"] == []


TEXT_PX = """() => {  // the median size of the chart's text as drawn, in CSS px
  const svg = document.querySelector('#chart svg');
  const per = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  const sizes = [...svg.querySelectorAll('text')].map(t => Number(t.getAttribute('font-size')))
    .sort((a, b) => a - b);
  return sizes[Math.floor(sizes.length / 2)] * per;
}"""


@pytest.mark.parametrize("width", [1000, 1280])
def test_the_explorers_chart_is_legible_and_zooms(browser: Any, width: int) -> None:
    """The chart is drawn at 80% of its own size whatever its column (it scrolls), its
    text 11 pt and up, so about 12 px; + and - zoom it, the level shown beside them."""
    path = exploration_of(PROTOCOL, None, ()).jump(CLAIM)["path"]
    assert isinstance(path, list)
    with serving(exploration_of(PROTOCOL, None, ())) as server:
        page = browser.new_context(viewport={"width": width, "height": 900}).new_page()
        try:
            page.goto(server.url + "?init=0&path=" + ".".join(map(str, path)))
            _at_step(page, len(path))
            drawn = page.evaluate(TEXT_PX)
            assert drawn >= 11, drawn
            assert page.inner_text("#zoom-level") == "80%"
            page.click("#zoom-in")
            assert page.inner_text("#zoom-level") == "90%"
            assert page.evaluate(TEXT_PX) > drawn
            page.keyboard.press("-")
            page.keyboard.press("-")
            assert page.inner_text("#zoom-level") == "70%"
            assert page.evaluate(TEXT_PX) < drawn
            assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
        finally:
            page.context.close()
