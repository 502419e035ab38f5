"""A user's module whose grid models misuse states first at depth `depth` (planted.py)."""

from __future__ import annotations

from planted import HOWS, Planted  # beside this file: its folder is on sys.path

from leadercheck.checker import always, sometimes
from leadercheck.models.params import Param, ProtocolEntry

DEPTH = Param("depth", 30, 0, 40, "the depth where the misuse first shows")
PROTOCOLS = tuple(
    ProtocolEntry(
        f"planted-{how}",
        f"a grid whose states {how} at a depth",
        (DEPTH,),
        lambda depth, how=how: Planted(how, depth),
    )
    for how in HOWS
)
PROPERTIES = (
    always("fine", lambda s: True, "nothing to break"),
    sometimes("corner", lambda s: s.a == s.b == 19, "both counters reach the top"),
)
EXPECTED = {f"planted-{how}": {"fine": "HOLDS", "corner": "HOLDS"} for how in HOWS}
