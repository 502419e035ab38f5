"""The protocol-agnostic engine: models in, verdicts and traces out.

Nothing in this package knows about leader election; it sees a `Model`, a list of
`Property` objects and returns a `CheckResult`.
"""

from checker.errors import LeadercheckError, ModelError
from checker.model import Action, Model
from checker.properties import Kind, Property, always, sometimes
from checker.result import CheckResult, EndReason, Progress, PropertyResult, Stats, Verdict
from checker.search import check
from checker.trace import Step, Trace

__all__ = [
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
    "sometimes",
]
