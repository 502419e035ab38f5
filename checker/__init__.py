"""The protocol-agnostic engine: models in, verdicts and traces out.

Nothing in this package knows about leader election; it sees a `Model`, a list of
`Property` objects and returns a `CheckResult`. What a user's own model needs is
exported here: the model interface and the kinds of action, every kind of claim,
`check`, and `write_counterexamples` to write a result's traces as `verify` does.
"""

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
from leadercheck.checker.search import check
from leadercheck.checker.trace import Step, Trace

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
