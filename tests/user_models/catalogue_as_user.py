"""The built-in catalogue, loaded as a user's module is (`verify --model`): what the
catalogue does, a user may do.

Each catalogue protocol comes twice: under its own name, built by the catalogue's own
factory, and as `user-NAME`, whose model is a trivial user subclass of the catalogue's model
class (declared here, at module level, so that worker processes find it by name). Both
pass through the guard, the value checks and the expectation checks a `--model` gets,
which built-in protocols are trusted to skip; the expected verdicts are the catalogue's
own (specs/expected.toml), for both names.
"""

from __future__ import annotations

import dataclasses
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from leadercheck import specs
from leadercheck.checker import Model
from leadercheck.models.catalogue import PROTOCOLS as CATALOGUE
from leadercheck.models.params import ProtocolEntry
from leadercheck.specs.claims import PROPERTIES as CLAIMS

PREFIX = "user-"
_SUBCLASSES: dict[type, type] = {}


def _user_class(cls: type) -> type:
    """`class UserX(X): pass`, bound here under its own name (it pickles by reference)."""
    if cls not in _SUBCLASSES:
        name = f"User{cls.__name__}"
        sub = type(name, (cls,), {"__module__": __name__, "__qualname__": name})
        globals()[name] = _SUBCLASSES[cls] = sub
    return _SUBCLASSES[cls]


def _as_user(factory: Callable[..., Model[Any]]) -> Callable[..., Model[Any]]:
    def build(*args: Any, **params: Any) -> Model[Any]:
        model = factory(*args, **params)
        model.__class__ = _user_class(type(model))
        return model

    return build


def _user_entry(entry: ProtocolEntry) -> ProtocolEntry:
    measures = tuple(dataclasses.replace(m, build=_as_user(m.build)) for m in entry.measures)
    return dataclasses.replace(
        entry, name=PREFIX + entry.name, factory=_as_user(entry.factory), measures=measures
    )


for _entry in CATALOGUE.values():  # every class declared now, before any worker starts
    _user_class(type(_entry.factory(**_entry.resolve({}))))

PROTOCOLS = (*CATALOGUE.values(), *(_user_entry(e) for e in CATALOGUE.values()))
PROPERTIES = tuple(CLAIMS.values())
_EXPECTED = tomllib.loads((Path(specs.__file__).parent / "expected.toml").read_text())
EXPECTED = {**_EXPECTED, **{PREFIX + case: claims for case, claims in _EXPECTED.items()}}
