"""Time as remaining-ticks counters: a countdown stops at zero, so states stay finite."""


def countdown(ticks: int) -> int:
    """One tick later: one fewer tick remains, never fewer than none."""
    return ticks - 1 if ticks > 0 else 0
