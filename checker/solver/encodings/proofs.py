"""Which protocols `verify --prove` and `verify --synthesize` speak for, by catalogue name."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.solver.encodings.lease_proof import LeaseFencingProof
from leadercheck.checker.solver.encodings.lease_timing import lease_timing_problem
from leadercheck.checker.solver.encodings.raft_proof import RaftElectionProof
from leadercheck.checker.solver.induction import InductiveModel
from leadercheck.checker.solver.problem import TimingProblem

# catalogue name -> its protocol for any number of nodes, with the invariant to prove
PROOFS: dict[str, Callable[[], InductiveModel[Any]]] = {
    "raft": lambda: RaftElectionProof("raft"),
    "raft-election": lambda: RaftElectionProof("raft-election"),
    "raft-volatile-vote": lambda: RaftElectionProof("raft-volatile-vote", durable_vote=False),
    "raft-no-quorum": lambda: RaftElectionProof("raft-no-quorum", quorums_intersect=False),
    "lease-fencing": lambda: LeaseFencingProof("lease-fencing"),
    "lease-no-fencing": lambda: LeaseFencingProof("lease-no-fencing", fencing=False),
}

# catalogue name -> the timing problem whose safe parameters `--synthesize` finds
SYNTHESIS: dict[str, Callable[[], TimingProblem]] = {
    "lease-no-fencing": lease_timing_problem,
    "lease-timing": lease_timing_problem,
}


def proof_for(name: str) -> InductiveModel[Any]:
    build = PROOFS.get(name)
    if build is None:
        raise LeadercheckError(
            f"no inductive proof for {name!r}; protocols with one: {', '.join(PROOFS)}"
        )
    return build()


def problem_for(name: str) -> TimingProblem:
    build = SYNTHESIS.get(name)
    if build is None:
        raise LeadercheckError(
            f"no timing synthesis for {name!r}; protocols with one: {', '.join(SYNTHESIS)}"
        )
    return build()
