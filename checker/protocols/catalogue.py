"""Which protocols a command runs: the built-in catalogue, or the ones a user's module exports.

A user's module (`verify --model FILE.py` or `--model package.module`) presents itself
exactly as a built-in protocol module does, plus its claims and expectations:

- `PROTOCOLS`: a tuple of `models.params.ProtocolEntry` (name, summary, parameters, builder);
- `PROPERTIES` (optional): its own claims, `checker.properties` objects; the names in
  `EXPECTED` are looked up there first, then among the built-in claims of `specs/`;
- `EXPECTED`: for each protocol, the claims to check and the verdict expected of each, as
  a dict in specs/expected.toml's shape, or the path of such a TOML file (relative to the
  module's file).

Everything is checked when the module is loaded, so a malformed module is one line and
exit 2 before any search. The catalogue remembers how it was loaded (`model`), so a trace
it writes can say how to load its model again.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from leadercheck.checker.engine.guard import refusing_exit
from leadercheck.checker.engine.interrupts import OsExit, escape_text, from_model
from leadercheck.checker.engine.loaded_modules import remember, remember_folder
from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.model import Model
from leadercheck.checker.properties import Property
from leadercheck.models.catalogue import PROTOCOLS
from leadercheck.models.params import Param, ProtocolEntry, did_you_mean
from leadercheck.specs.claims import PROPERTIES
from leadercheck.specs.expectations import Expectations, expectations_from, load_expectations

BUILT_IN_EXPECTED = "specs/expected.toml"
# Protocol and property names become file names (<protocol>.<property>.json).
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,79}")
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


@dataclass(frozen=True)
class Catalogue:
    """The protocols a command can run, the claims they are judged on, and the verdicts
    expected of them; `model` is the --model argument it was loaded from (None: built in)."""

    protocols: Mapping[str, ProtocolEntry]
    claims: Mapping[str, Property]
    expectations: Expectations
    model: str | None = None
    expected_source: str = BUILT_IN_EXPECTED

    def lookup(self, name: str) -> ProtocolEntry:
        """The protocol called `name`, or one line with a did-you-mean."""
        try:
            return self.protocols[name]
        except KeyError:
            hint = did_you_mean(name, self.protocols)
            where = f" in {self.model}" if self.model else ""
            listing = f"verify --list --model {self.model}" if self.model else "verify --list"
            raise LeadercheckError(
                f"unknown protocol {name!r}{where}{hint}; run `{listing}` to see them"
            ) from None

    def build(self, protocol: ProtocolEntry, values: Mapping[str, int]) -> Model[Any]:
        """The protocol's model at `values`; a builder that returns no Model is refused."""
        try:
            model = refusing_exit(protocol.build, f"{protocol.name}'s builder", values)
        except LeadercheckError:  # OsExit is a ModelError: it passes as it is
            raise
        except BaseException as exc:  # the user's builder: its failure is theirs, in one line
            if not from_model(exc):
                raise
            raise LeadercheckError(
                f"{protocol.name}: building the model raised {type(exc).__name__}: "
                f"{escape_text(exc)}"
            ) from exc
        if not isinstance(model, Model):
            raise LeadercheckError(
                f"{protocol.name}: its builder returned {type(model).__name__}, not a checker.Model"
            )
        return model


def built_in(expectations: Expectations | None = None) -> Catalogue:
    """The catalogue of models/ with specs/expected.toml (or `expectations`)."""
    found = load_expectations() if expectations is None else expectations
    return Catalogue(PROTOCOLS, PROPERTIES, found)


def load_catalogue(spec: str) -> Catalogue:
    """The protocols, claims and expectations of the user's module `spec` (a file or a
    dotted module name), every export checked."""
    module, recorded = import_model(spec)
    where = f"--model {recorded}"
    protocols = _protocols(module, where)
    own = _claims(module, where)
    claims = {**PROPERTIES, **own}
    expected = getattr(module, "EXPECTED", None)
    if expected is None:
        raise LeadercheckError(
            f"{where} defines no EXPECTED: for each protocol, the claims to check and the "
            "verdict expected of each (a dict, or the path of a TOML file)"
        )
    if isinstance(expected, str | os.PathLike):
        base = Path(module.__file__ or ".").parent
        path = base / Path(expected)
        expectations = load_expectations(path, claims)
        source = (
            os.path.normpath(Path(recorded).parent / Path(expected))
            if _is_file(spec)
            else str(path)
        )
    else:
        source = f"{recorded} EXPECTED"
        expectations = expectations_from(expected, source, claims)
    return Catalogue(protocols, claims, expectations, recorded, source)


def import_model(spec: str) -> tuple[ModuleType, str]:
    """Import the user's module; what to record to load it again (a normalized path, or the
    dotted name). Its folder goes on sys.path, so it may import modules beside it.

    Whatever the module does at import is one line: an exception, and also sys.exit(),
    os._exit() (refused while it runs: checker/engine/guard.py) and a KeyboardInterrupt it raises
    itself, none of which may end the command as if it had passed or been interrupted."""
    if _is_file(spec):
        return refusing_exit(_import_file, "the module's import", spec)
    if not _DOTTED.fullmatch(spec):
        raise LeadercheckError(
            f"--model {spec!r}: give a Python file (FILE.py) or a dotted module name"
        )
    here = os.getcwd()
    if here not in sys.path:
        sys.path.insert(0, here)
    remember_folder(here)
    try:
        module = refusing_exit(importlib.import_module, "the module's import", spec)
    except ModuleNotFoundError as exc:
        if exc.name and (spec == exc.name or spec.startswith(exc.name + ".")):
            raise LeadercheckError(
                f"--model {spec}: no module named {exc.name!r} here (give a file path "
                "ending in .py, or a module importable from this directory)"
            ) from exc
        raise _import_failed(spec, exc) from exc
    except BaseException as exc:
        if not from_model(exc):
            raise  # the user's Ctrl-C
        raise _import_failed(spec, exc) from exc
    return module, spec


def _is_file(spec: str) -> bool:
    return spec.endswith(".py") or os.sep in spec or Path(spec).is_file()


def _import_file(spec: str) -> tuple[ModuleType, str]:
    path = Path(spec)
    recorded = os.path.normpath(spec)
    if not path.exists():
        raise LeadercheckError(f"--model {spec}: no such file")
    if not path.is_file():
        raise LeadercheckError(f"--model {spec}: not a file")
    name = "leadercheck_model_" + re.sub(r"\W", "_", path.stem)
    loaded = sys.modules.get(name)
    if loaded is not None and Path(loaded.__file__ or "").resolve() == path.resolve():
        return loaded, recorded  # the same file, loaded before by this process
    folder = str(path.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    found = importlib.util.spec_from_file_location(name, path)
    if found is None or found.loader is None:
        raise LeadercheckError(f"--model {spec}: not a Python module")
    module = importlib.util.module_from_spec(found)
    sys.modules[name] = module  # found by name: worker processes' pickles, checkpoints' records
    try:
        found.loader.exec_module(module)
    except BaseException as exc:
        del sys.modules[name]
        if not from_model(exc):
            raise  # the user's Ctrl-C
        raise _import_failed(spec, exc) from exc
    remember(name, str(path.resolve()), folder)
    return module, recorded


def _import_failed(spec: str, exc: BaseException) -> LeadercheckError:
    if isinstance(exc, SyntaxError):
        where = f" (line {exc.lineno})" if exc.lineno else ""
        return LeadercheckError(f"--model {spec}: syntax error{where}: {exc.msg}")
    if isinstance(exc, OsExit):
        return LeadercheckError(
            f"--model {spec}: the module called os._exit({exc.status!r}) at import"
        )
    if isinstance(exc, SystemExit):
        return LeadercheckError(
            f"--model {spec}: the module called sys.exit({exc.code!r}) at import"
        )
    if isinstance(exc, KeyboardInterrupt):
        return LeadercheckError(
            f"--model {spec}: the module raised KeyboardInterrupt at import (not Ctrl-C)"
        )
    return LeadercheckError(
        f"--model {spec}: importing it raised {type(exc).__name__}: {escape_text(exc)} "
        "(--debug shows the traceback)"
    )


def _protocols(module: ModuleType, where: str) -> dict[str, ProtocolEntry]:
    exported = getattr(module, "PROTOCOLS", None)
    if exported is None:
        raise LeadercheckError(
            f"{where} defines no PROTOCOLS (a tuple of models.params.ProtocolEntry)"
        )
    entries = _sequence(exported, where, "PROTOCOLS")
    protocols: dict[str, ProtocolEntry] = {}
    for k, entry in enumerate(entries):
        if not isinstance(entry, ProtocolEntry):
            raise LeadercheckError(_not_a(entry, ProtocolEntry, f"{where}: PROTOCOLS[{k}]"))
        _name(entry.name, where, f"PROTOCOLS[{k}]", "protocol")
        if entry.name in protocols:
            raise LeadercheckError(f"{where}: two protocols are named {entry.name!r}")
        if not callable(entry.factory):
            raise LeadercheckError(f"{where}: {entry.name}: its builder is not callable")
        _params(entry, where)
        protocols[entry.name] = entry
    if not protocols:
        raise LeadercheckError(f"{where}: PROTOCOLS is empty")
    return protocols


def _params(entry: ProtocolEntry, where: str) -> None:
    seen: set[str] = set()
    for k, p in enumerate(_sequence(entry.params, where, f"{entry.name}: params")):
        if not isinstance(p, Param):
            raise LeadercheckError(
                f"{where}: {entry.name}: params[{k}] is {type(p).__name__}, not a Param"
            )
        if p.name in seen:
            raise LeadercheckError(f"{where}: {entry.name}: two parameters are named {p.name!r}")
        seen.add(p.name)
        if not p.low <= p.default <= p.high:
            raise LeadercheckError(
                f"{where}: {entry.name}: parameter {p.name}'s default {p.default} is outside "
                f"its range {p.low}..{p.high}"
            )


def _claims(module: ModuleType, where: str) -> dict[str, Property]:
    exported = getattr(module, "PROPERTIES", ())
    own: dict[str, Property] = {}
    for k, prop in enumerate(_sequence(exported, where, "PROPERTIES")):
        if not isinstance(prop, Property):
            raise LeadercheckError(
                _not_a(prop, Property, f"{where}: PROPERTIES[{k}]")
                + " (make one with leadercheck.checker.always, sometimes, eventually, ...)"
            )
        _name(prop.name, where, f"PROPERTIES[{k}]", "property")
        if prop.name in own:
            raise LeadercheckError(f"{where}: two properties are named {prop.name!r}")
        if prop.name in PROPERTIES and PROPERTIES[prop.name] is not prop:
            raise LeadercheckError(
                f"{where}: property {prop.name!r} has the name of a built-in claim; rename it "
                "(or name the built-in one in EXPECTED without redefining it)"
            )
        if not callable(prop.predicate):
            raise LeadercheckError(
                f"{where}: property {prop.name!r}: its predicate is not callable"
            )
        own[prop.name] = prop
    return own


def _not_a(value: Any, expected: type, at: str) -> str:
    """Why `value` is refused; a class of the expected name from another module (leadercheck
    imported under another name: `models` instead of `leadercheck.models`) is named as such."""
    cls = type(value)
    if cls.__name__ != expected.__name__:
        return f"{at} is {cls.__name__}, not a {expected.__name__}"
    return (
        f"{at} is the {expected.__name__} of another module ({cls.__module__}); import it "
        f"from {expected.__module__}"
    )


def _sequence(value: Any, where: str, what: str) -> Sequence[Any]:
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Sequence):
        raise LeadercheckError(
            f"{where}: {what} must be a tuple or list, not {type(value).__name__}"
        )
    return value


def _name(name: Any, where: str, at: str, what: str) -> None:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise LeadercheckError(
            f"{where}: {at}: {what} name {name!r} must be letters, digits and . _ + - "
            "(it names files)"
        )
