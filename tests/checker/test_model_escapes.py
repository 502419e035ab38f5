"""Model code that leaves the way no model may (sys.exit(0), sys.exit(1), a KeyboardInterrupt
of its own, GeneratorExit, os._exit(0)), at import or in any hook, is a model error with
the trace that led there, under every strategy: never a verdict, never the process ended,
never a search "interrupted" (checker/engine/interrupts.py tells the user's Ctrl-C apart).

The model is wrapped in a GuardedModel, as the command line wraps a --model (it refuses
os._exit while the model's code runs); SystemExit and the like are turned into model
errors by the engine whatever the model. KeyboardInterrupt is the model's only under the
application's SIGINT handler: without it, the engine takes it for Ctrl-C, as Python does.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from leadercheck.checker.engine.guard import GuardedModel, preflight
from leadercheck.checker.engine.interrupts import interrupt_handler, real_interrupt
from leadercheck.checker.engine.settings import BITSTATE, SIMULATE, Sampling, unbounded
from leadercheck.checker.engine.strategies.bfs import breadth_first
from leadercheck.checker.engine.strategies.processes.partitioned import partitioned
from leadercheck.checker.engine.strategies.sampling.run import check_sampled
from leadercheck.checker.errors import LeadercheckError, ModelError
from leadercheck.checker.protocols.catalogue import import_model, load_catalogue
from leadercheck.checker.result import CheckResult, EndReason
from tests.user_models.escaping import DEPTH, HOWS, WHERES, Escaping, claims

ROOT = Path(__file__).resolve().parents[2]
MODEL_FILE = ROOT / "tests" / "user_models" / "escaping.py"
TEXT = {
    "exit0": "model raised SystemExit in {where}{after}: sys.exit(0)",
    "exit1": "model raised SystemExit in {where}{after}: sys.exit(1)",
    "interrupt": "model raised KeyboardInterrupt in {where}{after}: raised by the model's code",
    "generator-exit": "model raised GeneratorExit in {where}{after}",
    "os-exit": "model called os._exit(0) in {where}{after}",
}


@pytest.fixture
def handler() -> Iterator[None]:
    """The application's SIGINT handler, as `verify` installs it."""
    with interrupt_handler(keep_ignoring=False):
        yield


def search(strategy: str, model: Any, properties: Any) -> CheckResult:
    settings = unbounded()
    if strategy == "bfs":
        return breadth_first(model, properties, settings)
    if strategy == "workers-2":
        return partitioned(model, properties, settings.but(workers=2))
    sampling = Sampling.of(seed=1, walks=200, depth=30)
    if strategy == "simulate":
        return check_sampled(model, properties, settings.but(sampling=sampling), SIMULATE)
    if strategy == "swarm-2":
        swarm = settings.but(workers=2, sampling=sampling)
        return check_sampled(model, properties, swarm, SIMULATE)
    return check_sampled(model, properties, settings.but(sampling=Sampling.of()), BITSTATE)


def where_named(where: str, how: str) -> str:
    """Where a message says the model escaped."""
    if where == "claim":
        return "within-limit"
    if where == "liveness":
        return "a liveness property"
    if where == "fairness":
        return "fairness" if how == "os-exit" else "successors"
    return "initial_states" if where == "initial_states" else "successors"


STRATEGIES = ("bfs", "workers-2", "simulate", "swarm-2", "bitstate")


@pytest.mark.usefixtures("handler")
@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize(
    ("strategy", "where"),
    [
        (strategy, where)
        for strategy in STRATEGIES
        for where in WHERES
        # a sampled search judges no liveness claim: fairness is never asked there
        if strategy in ("bfs", "workers-2") or where not in ("fairness", "liveness")
    ],
)
def test_an_escape_in_any_hook_is_a_model_error_with_its_trace(
    strategy: str, where: str, how: str
) -> None:
    model = GuardedModel(Escaping(how, where))
    with pytest.raises(ModelError) as raised:
        search(strategy, model, claims(how, where))
    error = raised.value
    message = str(error)
    assert "\n" not in message
    if where == "initial_states":
        assert error.trace is None
        assert message.startswith(TEXT[how].format(where="initial_states", after="")), message
        return
    assert error.trace is not None and error.trace.last.state == DEPTH, message
    if strategy in ("bfs", "workers-2"):  # the shortest trace: 2, 4, 6, 7
        assert len(error.trace) == 4
    after = f" after {len(error.trace)} steps"
    assert message.startswith(TEXT[how].format(where=where_named(where, how), after=after)), message


@pytest.mark.usefixtures("handler")
@pytest.mark.parametrize("how", ["exit0", "exit1", "generator-exit"])
@pytest.mark.parametrize(
    ("strategy", "where"),
    [
        *[(s, w) for s in ("bfs", "workers-2") for w in ("successors", "claim", "liveness")],
        *[("simulate", w) for w in ("successors", "next_states", "claim")],
    ],
)
def test_the_engine_turns_an_escape_into_a_model_error_without_the_guard(
    strategy: str, where: str, how: str
) -> None:
    with pytest.raises(ModelError, match=r"model raised (SystemExit|GeneratorExit) in "):
        search(strategy, Escaping(how, where), claims(how, where))


def test_without_the_handler_a_keyboard_interrupt_is_the_users() -> None:
    """The engine as a library: a KeyboardInterrupt is Ctrl-C, as Python has it."""
    with interrupt_handler(keep_ignoring=False):
        assert not real_interrupt()
    assert real_interrupt()
    result = breadth_first(Escaping("interrupt", "successors"), claims("none", "x"), unbounded())
    assert result.end is EndReason.INTERRUPTED


@pytest.mark.usefixtures("handler")
@pytest.mark.parametrize("how", HOWS)
def test_preflight_leaves_an_escaping_expansion_to_the_search(how: str) -> None:
    """The command line's preflight before the search: what escapes in an expansion is
    left to the search, which reports it with its trace."""
    model = GuardedModel(Escaping(how, "successors"))
    assert preflight(model, claims(how, "successors")) == []
    with pytest.raises(ModelError, match="after 4 steps"):
        breadth_first(model, claims(how, "successors"), unbounded())


@pytest.mark.usefixtures("handler")
@pytest.mark.parametrize("how", HOWS)
def test_preflight_reports_an_escaping_claim_or_initial_states(how: str) -> None:
    with pytest.raises(ModelError):
        preflight(GuardedModel(Escaping(how, "claim")), claims(how, "claim"))
    with pytest.raises(ModelError, match="initial_states"):
        preflight(GuardedModel(Escaping(how, "initial_states")), claims(how, "initial_states"))


IMPORT_TEXT = {
    "exit0": "the module called sys.exit(0) at import",
    "exit1": "the module called sys.exit(1) at import",
    "interrupt": "the module raised KeyboardInterrupt at import (not Ctrl-C)",
    "generator-exit": "importing it raised GeneratorExit",
    "os-exit": "the module called os._exit(0) at import",
}


@pytest.mark.usefixtures("handler")
@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("spelled", ["file", "dotted"])
def test_an_escape_at_import_is_one_line(
    how: str, spelled: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LEADERCHECK_ESCAPE", f"{how}@import")
    spec = str(MODEL_FILE) if spelled == "file" else "tests.user_models.escaping"
    if spelled == "dotted":
        monkeypatch.chdir(ROOT)
        monkeypatch.delitem(sys.modules, spec, raising=False)
    with pytest.raises(LeadercheckError) as raised:
        import_model(spec)
    message = str(raised.value)
    assert message.startswith(f"--model {spec}: {IMPORT_TEXT[how]}"), message
    assert "\n" not in message
    with pytest.raises(LeadercheckError, match=re.escape(IMPORT_TEXT[how])):
        load_catalogue(spec)


def test_the_module_loads_and_holds_when_nothing_escapes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LEADERCHECK_ESCAPE", raising=False)
    catalogue = load_catalogue(str(MODEL_FILE))
    entry = catalogue.lookup("escaping")
    model = GuardedModel(catalogue.build(entry, entry.resolve({})))
    result = breadth_first(model, catalogue.expectations.properties("escaping"), unbounded())
    assert result.end is EndReason.EXHAUSTED
    assert {r.verdict.name for r in result.results} == {"HOLDS"}


def test_os_exit_is_the_real_one_again_after_each_call() -> None:
    real = os._exit
    model = GuardedModel(Escaping("os-exit", "successors"))
    with pytest.raises(ModelError):
        breadth_first(model, claims("os-exit", "successors"), unbounded())
    assert os._exit is real
    list(model.successors(1))
    assert os._exit is real


SCRIPT = """
import os, signal, sys, time
from leadercheck.checker.engine.interrupts import interrupt_handler
from leadercheck.checker.engine.settings import unbounded
from leadercheck.checker.engine.strategies.bfs import breadth_first
from tests.toys import Counter
from leadercheck.checker import always

def slow(state):
    time.sleep(0.01)
    return True

with interrupt_handler():
    print("ready", flush=True)
    result = breadth_first(Counter(10**6), [always("slow", slow)], unbounded())
    print(result.end.name, flush=True)
    time.sleep(1.0)  # winding down: a second Ctrl-C must not end the process
    print("wound down", flush=True)
sys.exit(3)
"""


def test_a_second_ctrl_c_during_the_wind_down_is_ignored() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-c", SCRIPT],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 3, err
    assert out.split() == ["INTERRUPTED", "wound", "down"], (out, err)
