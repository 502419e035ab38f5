"""The sampled strategies by name, and how many workers a swarm may have (their options are
`Sampling`, in checker/engine/settings.py)."""

from __future__ import annotations

SIMULATE, BITSTATE = "simulate", "bitstate"  # the sampled strategies, by their names
MAX_SWARM = 64  # workers of a swarm: beyond the cores they only share them
