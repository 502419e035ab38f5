"""The protocol-agnostic engine: models in, verdicts and traces out.

Nothing in this package knows about leader election; it sees a `Model`, a list of
`Property` objects and returns a `CheckResult`. What a user's own model needs is
exported here: the model interface and the kinds of action, every kind of claim,
`check`, and `write_counterexamples` to write a result's traces as `verify` does.

The exports load on first use (PEP 562), so importing a module of the package (the
`verify` launcher, which must take Ctrl-C before anything heavy loads) costs nothing more.
"""

from __future__ import annotations

from importlib import import_module

# `typing` is not imported at run time: every `verify` starts by loading this package, and
# the less it loads, the sooner the launcher takes Ctrl-C (checker/app/launch.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from leadercheck.checker.engine.strategies.bfs import check
    from leadercheck.checker.errors import LeadercheckError, ModelError
    from leadercheck.checker.model import FAULT, RECOVERY, STEP, TICK, Action, Model
    from leadercheck.checker.properties import (
        Kind,
        Property,
        always,
        eventually,
        eventually_always,
        leads_to,
        sometimes,
    )
    from leadercheck.checker.render.files import write_counterexamples
    from leadercheck.checker.result import (
        CheckResult,
        EndReason,
        Progress,
        PropertyResult,
        Stats,
        Verdict,
    )
    from leadercheck.checker.trace import Step, Trace

_WHERE = {
    "leadercheck.checker.errors": ("LeadercheckError", "ModelError"),
    "leadercheck.checker.model": ("FAULT", "RECOVERY", "STEP", "TICK", "Action", "Model"),
    "leadercheck.checker.properties": (
        "Kind", "Property", "always", "eventually", "eventually_always", "leads_to",
        "sometimes",
    ),
    "leadercheck.checker.render.files": ("write_counterexamples",),
    "leadercheck.checker.result": (
        "CheckResult", "EndReason", "Progress", "PropertyResult", "Stats", "Verdict",
    ),
    "leadercheck.checker.engine.strategies.bfs": ("check",),
    "leadercheck.checker.trace": ("Step", "Trace"),
}  # fmt: skip
_MODULE_OF = {name: module for module, names in _WHERE.items() for name in names}

__all__ = [
    "FAULT",
    "RECOVERY",
    "STEP",
    "TICK",
    "Action",
    "CheckResult",
    "EndReason",
    "Kind",
    "LeadercheckError",
    "Model",
    "ModelError",
    "Progress",
    "Property",
    "PropertyResult",
    "Stats",
    "Step",
    "Trace",
    "Verdict",
    "always",
    "check",
    "eventually",
    "eventually_always",
    "leads_to",
    "sometimes",
    "write_counterexamples",
]
assert sorted(__all__) == sorted(_MODULE_OF)


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'leadercheck.checker' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
