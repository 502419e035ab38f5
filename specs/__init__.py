"""Specs are claims: what must hold of every protocol, and the verdict we expect of each."""

from leadercheck.specs.claims import PROPERTIES, no_stale_write, single_leader
from leadercheck.specs.expectations import Expectations, load_expectations

__all__ = ["PROPERTIES", "Expectations", "load_expectations", "no_stale_write", "single_leader"]
