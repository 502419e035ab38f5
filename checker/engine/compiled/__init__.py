"""The compiled search: models that offer a kernel (checker/kernel.py) searched in batches.

`compiled_kernel` says whether a search can go this way: numba is installed (the `fast`
extra), the model offers a kernel for these reductions, the claims are all judged on
states (liveness needs the fairness graph of the one-process search), and nothing asks for
what only that search does (checkpoints, partial-order reduction, --interpreted).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from leadercheck.checker.engine.settings import SearchSettings
from leadercheck.checker.kernel import Kernel
from leadercheck.checker.model import Model
from leadercheck.checker.properties import Kind, Property

STATE_KINDS = frozenset({Kind.ALWAYS, Kind.SOMETIMES})
# what a result searched by a kernel notes (checker/engine/compiled/search.py)
NOTE = "compiled: the model's kernel searched packed states (--interpreted: its Python code)"


def compiled_kernel(
    model: Model[Any], properties: Sequence[Property], settings: SearchSettings
) -> Kernel[Any] | None:
    """The model's kernel, if this search can run on it; None: the one-process search."""
    reductions = settings.reductions
    if not settings.compiled or settings.checkpoints is not None or reductions.por:
        return None
    if any(p.kind not in STATE_KINDS for p in properties):
        return None
    return model.kernel(reductions.symmetry)
