"""A client under test that breaks the protocol in the way its first argument names, for
the tests of `verify conform --client` (each must end in one line and exit 2, nothing
left running). Every other argument is ignored (the tests pass a marker to find leftovers).

- exits: exits at once, before its ready line;
- garbage: prints a line that is not JSON;
- hangs: says it is ready, then never answers;
- mute-after-resume: answers like the example's elector until it is stopped and
  continued (SIGSTOP, SIGCONT), then never again;
- orphan: at its first request, starts a child in a session of its own that keeps its
  stdout open (the marker in its command line), and exits without answering;
- nested: answers with 200,000 nested brackets;
- wrong-kind: answers every request with fields of the wrong kind (`"leader": "yes"`).
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import sys
import time
from pathlib import Path

MODE = sys.argv[1]
if MODE == "exits":
    sys.exit(3)
if MODE == "garbage":
    print("hello, harness", flush=True)
    time.sleep(60)
print(json.dumps({"ok": True, "result": {"ready": os.getpid(), "background": None}}), flush=True)
if MODE == "hangs":
    time.sleep(60)
if MODE in ("orphan", "nested", "wrong-kind"):
    sys.stdin.readline()
    if MODE == "orphan":
        import subprocess

        sleeper = [sys.executable, "-c", "import time; time.sleep(600)", *sys.argv[2:]]
        subprocess.Popen(sleeper, start_new_session=True)  # inherits stdout
        os._exit(0)
    if MODE == "nested":
        print("[" * 200_000, flush=True)
    else:
        print(json.dumps({"ok": True, "result": {"leader": "yes", "token": 1}}), flush=True)
    time.sleep(60)

resumed = False


def _continued(signum: int, frame: object) -> None:
    global resumed
    resumed = True


signal.signal(signal.SIGCONT, _continued)
EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "clients" / "etcd_elector.py"
sys.path.insert(0, str(EXAMPLE.parent))  # its sibling modules, as when run as a script
spec = importlib.util.spec_from_file_location("etcd_elector", EXAMPLE)
assert spec is not None and spec.loader is not None
example = importlib.util.module_from_spec(spec)
spec.loader.exec_module(example)
elector = example.Elector(json.loads(os.environ["LEADERCHECK_CONFIG"]), fenced=True)
for line in sys.stdin:
    if resumed:
        time.sleep(60)
    request = json.loads(line)
    result = getattr(elector, "op_" + request["op"])(**request.get("args", {}))
    print(json.dumps({"ok": True, "result": result}), flush=True)
