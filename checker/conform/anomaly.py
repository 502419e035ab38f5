"""Did the anomaly happen? What the real system showed of the claims a counterexample
breaks, read off the timeline, apart from whether the steps matched.

Two claims can be seen on a real system. no-stale-write: the storage's own log shows a
write accepted after a newer leadership's (every binding tells its storage as "..., a
stale write accepted", as the model does). single-leader: two clients believe they lead
at once under the same token (or, where a lock has no token, at all), as they answer
for themselves after every step (the `belief` operation; a paused client's belief is the
one it had when it stopped). A run states where the model breaks the trace's claim and
where the real system did, so a trace cut short of its violation, or a real system that
does not do what the model fears, reads as what it is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

STALE_WORDS = "a stale write accepted"
OBSERVABLE = ("single-leader", "no-stale-write")


@dataclass(frozen=True)
class Belief:
    """What one client says it believes: that it leads, and under which token (None: a
    lock without one). `said` stands for a client that could not say (down, or an answer
    without a belief)."""

    leader: bool
    token: str | None = None
    said: str = ""

    def words(self) -> str:
        if self.said:
            return self.said
        if not self.leader:
            return "does not lead"
        return "leads" + self.under()

    def under(self) -> str:
        """ " (token 7)", or nothing for a lock without tokens."""
        return f" (token {self.token})" if self.token is not None else ""


DOWN, UNKNOWN = Belief(False, said="down"), Belief(False, said="unknown")


def belief_of(result: Mapping[str, Any]) -> Belief:
    """A `belief` reply's result, as the harness keeps it."""
    token = result.get("token")
    return Belief(bool(result.get("leader")), None if token is None else str(token))


@dataclass(frozen=True)
class Broken:
    """Where a claim broke on one side of a run, and what showed it."""

    claim: str
    step: int
    evidence: str


def real_breaks(
    observed: Sequence[tuple[int, Mapping[str, str], Mapping[str, Belief]]],
) -> dict[str, Broken]:
    """The first step where each observable claim broke on the real system, from each
    step's (index, observed facts, each client's belief)."""
    found: dict[str, Broken] = {}
    for step, facts, beliefs in observed:
        if "no-stale-write" not in found:
            for key, value in sorted(facts.items()):
                if STALE_WORDS in value:
                    found["no-stale-write"] = Broken("no-stale-write", step, f"{key}: {value}")
                    break
        if "single-leader" not in found:
            twice = _two_leaders(beliefs)
            if twice is not None:
                found["single-leader"] = Broken("single-leader", step, twice)
    return found


def _two_leaders(beliefs: Mapping[str, Belief]) -> str | None:
    """ "n1 and n2 both believe they lead (token 1)", if two lead under one token."""
    by_token: dict[str, list[str]] = {}
    for node, belief in sorted(beliefs.items()):
        if belief.leader:
            by_token.setdefault(belief.under(), []).append(node)
    for under, nodes in sorted(by_token.items()):
        if len(nodes) > 1:
            return f"{', '.join(nodes[:-1])} and {nodes[-1]} both believe they lead{under}"
    return None


def anomaly_record(
    claim: str | None,
    model_step: int | None,
    breaks: Mapping[str, Broken],
    system: str,
    last_step: int,
    under_test: bool = False,
) -> dict[str, Any] | None:
    """What the report says of the trace's claim: where the model breaks it in this
    schedule, where the real system did, and that in one sentence. With a client under
    test, an anomaly the model does not allow is the client caught."""
    if claim is None:
        return None
    real = breaks.get(claim)
    record: dict[str, Any] = {
        "claim": claim,
        "model_step": model_step,
        "real_step": None if real is None else real.step,
        "evidence": None if real is None else real.evidence,
        "observable": claim in OBSERVABLE,
    }
    record["reproduced"], record["text"] = _said(
        claim, model_step, real, system, last_step, under_test
    )
    return record


def _said(
    claim: str,
    model_step: int | None,
    real: Broken | None,
    system: str,
    last_step: int,
    under_test: bool,
) -> tuple[bool | None, str]:
    """Whether the model's anomaly was reproduced (None: there was none to reproduce, or
    it cannot be seen), and the sentence that says it."""
    if claim not in OBSERVABLE:
        return None, f"{claim} cannot be observed on {system} here; only the steps are compared"
    if model_step is not None and real is not None:
        return True, (
            f"ANOMALY REPRODUCED: {claim} broken on {system} at step {real.step}"
            f" ({real.evidence}); the model breaks it at step {model_step}"
        )
    if model_step is not None:
        runs = f"{last_step} step{'s' * (last_step != 1)}"
        return False, (
            f"ANOMALY NOT REPRODUCED: the model breaks {claim} at step {model_step}; on"
            f" {system} it did not happen in the {runs} run"
        )
    if real is not None and under_test:
        return None, (
            f"CAUGHT: the client under test broke {claim} on {system} at step {real.step}"
            f" ({real.evidence}), which the model does not allow"
        )
    if real is not None:
        return None, (
            f"ANOMALY the model does not predict: {claim} broken on {system} at step"
            f" {real.step} ({real.evidence})"
        )
    return None, (
        f"no anomaly: the model breaks {claim} nowhere in this schedule, and {system} showed none"
    )
