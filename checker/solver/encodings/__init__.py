"""Protocols stated in z3, for bounded model checking, by catalogue name.

Each encoding is built from the explicit model instance the catalogue builds
(`models.catalogue.lookup(name).build(params)`), reads its parameters from it, and decodes
z3 models into that model's own states; its transition relation allows exactly the
explicit model's successors, which `checker.solver.crosscheck` tests.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.model import Model
from leadercheck.checker.solver.bmc import SymbolicModel
from leadercheck.checker.solver.encodings.lease_bench import LeaseBenchSymbolic
from leadercheck.checker.solver.encodings.raft_election import RaftElectionSymbolic
from leadercheck.models.lease_bench import LeaseBenchModel
from leadercheck.models.raft_election import RaftElectionModel


def _raft_election(model: Model[Any]) -> SymbolicModel[Any]:
    if not isinstance(model, RaftElectionModel):
        raise LeadercheckError(f"raft-election: cannot encode a {type(model).__name__}")
    return RaftElectionSymbolic(model)


def _lease_bench(model: Model[Any]) -> SymbolicModel[Any]:
    if not isinstance(model, LeaseBenchModel):
        raise LeadercheckError(f"lease-bench: cannot encode a {type(model).__name__}")
    return LeaseBenchSymbolic(model)


# catalogue name -> the symbolic model of an explicit instance (bounded model checking)
SYMBOLIC: dict[str, Callable[[Model[Any]], SymbolicModel[Any]]] = {
    "raft-election": _raft_election,
    "lease-bench": _lease_bench,
}


def symbolic_for(name: str, model: Model[Any]) -> SymbolicModel[Any]:
    """The symbolic model of `model`, an instance of the protocol called `name`."""
    build = SYMBOLIC.get(name)
    if build is None:
        raise LeadercheckError(
            f"no symbolic encoding of {name!r}; protocols with one: {', '.join(SYMBOLIC)}"
        )
    return build(model)
