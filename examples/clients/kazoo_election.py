#!/usr/bin/env python3
"""A leader on kazoo's `Election` recipe, used as its users use it, for `verify conform
--client` on the ZooKeeper election protocols (`zookeeper`; fenced: `zookeeper-multi`).

`zk.Election(path, identifier).run(leader_function)` blocks until this contender wins, then
calls the leader function, which runs the service's leader work for as long as it leads:
here, until a state listener hears the session was lost. The election is kazoo's Lock
underneath (`election.lock`, its znodes `<uuid>__lock__<seq>`), so everything else is the
Lock adapter's (kazoo_lock.py): the node believes it leads while its leader function runs.

- `--variant fenced`: each write is one multi with a `check` of the leader's own znode.
- `--variant unfenced` (the bug): it writes because its leader function is running.
"""

from __future__ import annotations

import threading

from jsonlines import run
from kazoo.recipe.lock import Lock
from kazoo_lock import LockLeader


class ElectionLeader(LockLeader):
    """One node contending through an Election, its leader function running while it leads."""

    def _contend(self) -> Lock:
        election = self.zk.Election(self.path, identifier=self.name)
        self.elected = elected = threading.Event()  # this election's, not a later one's
        threading.Thread(target=election.run, args=(self._lead, elected), daemon=True).start()
        lock: Lock = election.lock
        return lock

    def _lead(self, elected: threading.Event) -> None:
        """The leader function: it leads until its session is lost."""
        elected.set()
        self.lost.wait()

    def _leads(self) -> bool:
        elected = getattr(self, "elected", None)
        return elected is not None and elected.is_set() and not self.lost.is_set()


def main() -> None:
    run(
        __doc__ or "",
        ElectionLeader,
        lambda leader: {"background": "session heartbeat thread (kazoo's)"},
    )


if __name__ == "__main__":
    main()
