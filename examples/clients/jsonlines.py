"""The harness's JSON-lines protocol, served for a client object, shared by the library
adapters here (`etcd3gw_lock.py`, `kazoo_lock.py`): one ready line, then one answer per
request line. A client in another language does the same in its own few lines.

A method `op_NAME(**args)` answers the operation NAME with its result. It raises
`Refused` when the system said no as an exception (a write a dead session may not make):
the answer then says `"refused": true`, and the harness compares it as the operation's
refusal. Any other exception is a failed call, compared as no reply.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from typing import Any


class Refused(Exception):
    """The system refused the operation, as the library tells it: by raising."""


def config() -> dict[str, Any]:
    """The harness's configuration for this node (LEADERCHECK_CONFIG)."""
    found = json.loads(os.environ["LEADERCHECK_CONFIG"])
    if not isinstance(found, dict):
        raise SystemExit("LEADERCHECK_CONFIG is not a JSON object")
    return found


def serve(client: object, ready: dict[str, Any]) -> None:
    """Say ready, then answer every request line on stdin until it closes."""
    print(json.dumps({"ok": True, "result": {"ready": os.getpid(), **ready}}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        handler = getattr(client, "op_" + request["op"], None)
        try:
            if handler is None:
                raise NotImplementedError(f"no operation {request['op']!r}")
            reply: dict[str, Any] = {"ok": True, "result": handler(**request.get("args", {}))}
        except Refused as exc:
            reply = {"ok": False, "error": str(exc)[:300], "refused": True}
        except Exception as exc:  # a failed call: the harness compares it as no reply
            reply = {"ok": False, "error": f"{type(exc).__name__}: {exc!r}"[:300]}
        print(json.dumps(reply), flush=True)


def run(
    description: str,
    make: Callable[[dict[str, Any], bool], Any],
    ready: Callable[[Any], dict[str, Any]] = lambda client: {"background": None},
) -> None:
    """An adapter's main: `--variant fenced` (the default) or `unfenced`, the client made
    from the configuration, then served with the ready line `ready(client)` says."""
    parser = argparse.ArgumentParser(description=description.splitlines()[0])
    parser.add_argument("--variant", choices=("fenced", "unfenced"), default="fenced")
    client = make(config(), parser.parse_args().variant == "fenced")
    serve(client, ready(client))


def lock_belief(token: int, fenced: bool) -> dict[str, Any]:
    """`belief` of a holder that leads while it has a token: an unfenced lock has no token
    to lead under (null), so any two holders at once are two leaders."""
    leads = bool(token)
    return {"leader": leads, "token": (token if fenced else None) if leads else None}
