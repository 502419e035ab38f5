"""The partitioned search as Ray actors, on a local Ray instance or a cluster (--address).

Ray starts once per command (the gate runs every protocol on the same instance) and is
shut down when the command ends, whatever happens. The search is that of `processes`
with Ray's transport (checker/engine/strategies/ray_actors/actors.py) in place of forked processes.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from leadercheck.checker.engine.settings import SearchSettings
from leadercheck.checker.engine.strategies import register
from leadercheck.checker.engine.strategies.processes import Processes
from leadercheck.checker.errors import LeadercheckError


class RayActors(Processes):
    name = "ray"
    summary = "the partitioned search as K Ray actors (a local Ray unless --address)"
    remote = True

    def validate(self, settings: SearchSettings) -> None:
        super().validate(settings)
        if importlib.util.find_spec("ray") is None:  # the `ray` extra, not a base dependency
            raise LeadercheckError(
                "--strategy ray needs Ray, which leadercheck's `ray` extra installs: "
                ".venv/bin/pip install -e '.[ray]'"
            )

    @contextmanager
    def session(self, settings: SearchSettings) -> Iterator[Any]:
        from leadercheck.checker.engine.strategies.ray_actors.actors import ray_transport  # noqa: PLC0415 (ray is heavy to import)

        transport = ray_transport(settings.workers, settings.address)
        try:
            yield transport
        finally:
            transport.close()

    def describe(self, workers: int) -> str:
        return f"ray, {workers} worker(s)"


register(RayActors())
