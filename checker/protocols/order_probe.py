"""The successor order of a user's protocol, printed by a child process for `verify --lint`.

Iterating a set of strings gives an order that depends on the process's hash seed, so it
looks fixed within one process and differs in the next: a trace rebuilt in another
process (a resumed checkpoint, a worker) would then be wrong. `verify --lint` runs this
module under two hash seeds and compares what it prints:
`python -m leadercheck.checker.protocols.order_probe MODEL PROTOCOL PARAMS_JSON MAX_STATES`.
"""

from __future__ import annotations

import json
import sys

from leadercheck.checker.engine.guard import order_digest
from leadercheck.checker.protocols.catalogue import load_catalogue


def main(argv: list[str]) -> int:
    spec, name, params, max_states = argv
    catalogue = load_catalogue(spec)
    protocol = catalogue.lookup(name)
    model = catalogue.build(protocol, json.loads(params))
    digest = order_digest(model, int(max_states))
    sys.stdout.write("\n" + json.dumps(digest) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
