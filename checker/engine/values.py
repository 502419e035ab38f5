"""Every state a search stores is a value: checked on each one, not on a sample.

The store remembers a state by its hash (or by the state itself with --exact), so a state
that is not a value gives a wrong answer where it first appears, however deep: a part
compared by identity makes two equal states count as two (too many states, or a
counterexample that cannot be rebuilt), a state mutated in place by `successors` is
remembered under a hash it no longer has (a state lost, a false HOLDS). So every search
strategy asks this module, on every state it stores and every state it expands:

- `ValueCheck.stored(state, parent)`: a walk over the state's parts that are not its
  parent's, each judged once per type: plain atoms, tuples, frozensets and records of
  values are values; a part whose class compares or hashes by identity is a `Misuse`. 2 to
  5 us a distinct state (unhashable parts raise at the hash a search needs anyway). The
  built-in catalogue's tests prove its states are values, so the command line trusts it
  (`SearchSettings.trust_values`) and skips this walk; a user's model is always walked;
- `ValueCheck.unchanged(state, before)`: after an expansion, the state hashes as it did
  before it (a hash: about 0.2 us), and a state taken from the frontier still hashes to
  what the store holds for it (the loop's own membership test).

A nondeterministic successor order needs a second expansion to be seen, which would double
the search; it cannot change which states are reachable (nor a count or a HOLDS), only
which positions a trace records, and every trace is rebuilt and verified before it is
written (checker/engine/successors.py), so it stays a sampled check (checker/engine/guard.py) and a
`--lint`.
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import re
import types
from collections.abc import Callable, Iterator, Mapping
from itertools import chain, compress
from operator import not_
from typing import Any

from leadercheck.checker.errors import ModelError
from leadercheck.checker.model import model_name

__all__ = ["Misuse", "ValueCheck", "check_value", "describe_unhashable", "short"]

SHORT = 80  # characters of a state shown in a message
FIND_DEPTH = 8  # how deep the error path looks for an offending component
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")  # object.__repr__'s memory address
IMMUTABLE_KINDS = "tuples, NamedTuples, frozen dataclasses"

# How a part of a state is judged, by its exact type (cached per type).
_ATOM, _TUPLE, _SET, _RECORD, _TRUSTED, _IDENTITY = range(6)
# Values that compare by identity on purpose, or are their own only copy.
ATOMS: tuple[type, ...] = (
    bool,
    int,
    float,
    complex,
    str,
    bytes,
    range,
    enum.Enum,
    type,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    types.ModuleType,
    type(None),
    type(Ellipsis),
    type(NotImplemented),
)


ALIAS = (1 << 61) - 1  # Python hashes ints modulo this: |v| >= ALIAS hashes like a smaller one


def _hashes_apart(v: int) -> bool:
    """Whether no other int of this range hashes like `v` (each hashes as itself, but -1,
    which hashes as -2, and -2 is left out)."""
    return -ALIAS < v < ALIAS and v != -2


def short(value: object, limit: int = SHORT) -> str:
    """A repr cut to `limit` characters, for a one-line message."""
    try:
        text = repr(value)
    except Exception:  # a broken __repr__ must not hide the error being reported
        text = f"<{type(value).__name__} object>"
    text = _ADDRESS.sub("", " ".join(text.split()))  # the same message in every run
    return text if len(text) <= limit else text[: limit - 3] + "..."


def article(cls: type) -> str:
    name = cls.__name__
    return f"an {name}" if name[:1].lower() in "aeiou" else f"a {name}"


def check_value(state: object, where: str) -> None:
    """Raise ModelError unless `state` is a value: hashable, and equal (with an equal hash)
    to its deep copy, which is what identity hashing anywhere inside it breaks.

    `where` names the model (its class name) in the message.
    """
    value_copy(state, where)


def value_copy(state: Any, where: str) -> Any:
    """check_value, returning the deep copy (the snapshot a mutation check compares to)."""
    try:
        hashed = hash(state)
    except TypeError:
        path, part = _find(state, _unhashable) or ("state", state)
        at = "" if path == "state" else f", at {path}"
        raise ModelError(
            f"{where}: a state is unhashable ({article(type(part))}{at}): {short(state)}; states "
            f"must be immutable and hashable: {IMMUTABLE_KINDS}"
        ) from None
    try:
        twin = copy.deepcopy(state)
    except Exception as exc:
        raise ModelError(
            f"{where}: a state cannot be copied ({type(exc).__name__}: {exc}): {short(state)}; "
            f"states must be plain values: {IMMUTABLE_KINDS}"
        ) from None
    try:
        same = bool(twin == state) and hash(twin) == hashed
    except Exception:  # an __eq__ that raises (an array inside a state, say) is no value
        same = False
    if same:
        return twin
    found = _find(state, _by_identity)
    if found is None:
        raise ModelError(
            f"states of {where} do not keep their value when copied (copy.deepcopy(state) "
            f"differs from the state, or its hash does): two equal states would count as "
            f"two; state {short(state)}"
        )
    path, part = found
    cls = type(part)
    at = "" if path == "state" else f", at {path},"
    missing = "/".join(
        name
        for name, mine in (("__eq__", cls.__eq__), ("__hash__", cls.__hash__))
        if mine is getattr(object, name)
    )
    raise ModelError(
        f"states of {where} compare by identity (the class {cls.__name__}{at} defines no "
        f"{missing}): two equal states would count as two; state {short(state)}"
    )


def _unhashable(value: object) -> bool:
    return type(value).__hash__ is None


def _by_identity(value: object) -> bool:
    return _classify(type(value)) is _IDENTITY


def parts_of(value: object) -> Iterator[tuple[str, object]]:
    """The components of a record or collection, each with the path that reaches it."""
    if isinstance(value, ATOMS):
        return
    if isinstance(value, tuple):
        fields = getattr(type(value), "_fields", None)
        if isinstance(fields, tuple) and len(fields) == len(value):
            yield from ((f".{name}", item) for name, item in zip(fields, value, strict=True))
        else:
            yield from ((f"[{k}]", item) for k, item in enumerate(value))
    elif isinstance(value, list):
        yield from ((f"[{k}]", item) for k, item in enumerate(value))
    elif isinstance(value, set | frozenset):
        yield from (("{...}", item) for item in sorted(value, key=short))
    elif isinstance(value, Mapping):
        yield from ((f"[{key!r}]", item) for key, item in value.items())
    elif dataclasses.is_dataclass(value):
        yield from ((f".{f.name}", getattr(value, f.name, None)) for f in dataclasses.fields(value))
    elif isinstance(getattr(value, "__dict__", None), dict):
        yield from ((f".{name}", item) for name, item in vars(value).items())


def _find(
    value: object, bad: Callable[[object], bool], path: str = "state", depth: int = 0
) -> tuple[str, object] | None:
    """The first component (path, value), depth first, that is `bad`; None if none is."""
    if bad(value):
        return path, value
    if depth >= FIND_DEPTH:
        return None
    for suffix, part in parts_of(value):
        found = _find(part, bad, path + suffix, depth + 1)
        if found is not None:
            return found
    return None


def mutated(name: str, method: str, state: object) -> str:
    """The message for a model whose `method` changed the state it was given."""
    return (
        f"{name}.{method} mutated the state it was given in place (state {short(state)}); "
        f"states must be immutable: {IMMUTABLE_KINDS}"
    )


def _no_walk(state: Any, parent: Any = None) -> None:
    """The walk of a model whose own tests prove its states are values."""


class Misuse(ModelError):
    """A state that is no value, found by the search; the search attaches the trace."""


def reached(error: object, trace: Any) -> str:
    """An error's message with how far the search went: '... (reached in 3 steps)'."""
    n = len(trace)
    return f"{error} (reached in {n} step{'s' * (n != 1)})"


def _classify(cls: type) -> int:
    if issubclass(cls, ATOMS):
        return _ATOM
    identity = cls.__eq__ is object.__eq__ or cls.__hash__ is object.__hash__
    if issubclass(cls, tuple):
        # a tuple subclass keeps tuple's value semantics unless it replaces them
        return _IDENTITY if identity else _TUPLE
    if issubclass(cls, frozenset):
        return _IDENTITY if identity else _SET
    if identity:
        return _IDENTITY
    if dataclasses.is_dataclass(cls):
        return _RECORD  # its generated __eq__/__hash__ compare its fields: walk them
    return _TRUSTED  # a class with its own __eq__ and __hash__ says what equal means


class ValueCheck:
    """The value checks one search makes, with the per-type judgements it has made.

    The walk is the hot path of every search (once per distinct state), so it stays in
    C as far as it can (`stored`): about 2 us on a raft state, where a walk part by part
    in Python took 4 to 8.
    """

    def __init__(self, model_name: str, walk: bool = True, fingerprints: bool = True) -> None:
        self.name = model_name
        if not walk:  # a trusted model (SearchSettings.trust_values): mutation checks only
            self.stored = _no_walk  # type: ignore[method-assign]
        # a search that keeps fingerprints (not --exact) needs ints Python hashes apart
        self.fingerprints = fingerprints
        self._kinds: dict[type, int] = {cls: _ATOM for cls in (int, str, bool, type(None))}
        self._kinds[tuple] = _TUPLE
        self._kinds[frozenset] = _SET
        self._plain: set[type] = {int, str, bool, type(None)}  # the atom types met so far
        # the atoms and the containers whose parts a chain reaches (tuples, frozensets)
        self._walkable: set[type] = {*self._plain, tuple, frozenset}

    def stored(self, state: Any, parent: Any = None) -> None:
        """Raise Misuse if a part of `state` compares or hashes by identity; `parent`, if
        given, is a checked state of the same type whose parts `state` may share (a
        successor shares what its action did not change: they are not walked again).

        Level by level, in C: the types of a level's parts as one set; if they are all
        plain atoms the state is a value; if all are atoms or known containers (tuples,
        NamedTuples, frozensets), the next level is the containers' parts, chained. Only a
        type not met before, or a record to take apart (a dataclass), takes the walk in
        Python (`_walk`)."""
        plain, walkable = self._plain, self._walkable
        is_plain = plain.__contains__
        cls = type(state)
        if type(parent) is cls and cls in walkable and cls not in plain:
            level = self._new_parts(state, parent)
        else:
            level = [state]
        while level:
            types = set(map(type, level))
            if int in types and self.fingerprints:
                self._ints(level, state)
            if types <= plain:
                return
            if not types <= walkable and not self._learned(types - walkable, level, state):
                self._walk(level, state)
                return
            level = list(
                chain.from_iterable(compress(level, map(not_, map(is_plain, map(type, level)))))
            )

    def _new_parts(self, state: Any, parent: Any) -> list[Any]:
        """The parts of `state` that its checked `parent` does not hold, to be walked.

        Where a part and the parent's part in its place are tuples of one type, only
        their parts that differ (by identity) are looked into, and so on down; of a
        frozenset, only the elements the parent's does not hold (equal elements were
        walked in the parent). A successor that changes one field of one node, or adds
        one message to a set of ten, walks that field or that message: Paxos Commit's
        walk went from 14 to 4 us a state."""
        plain, kinds = self._plain, self._kinds
        fresh: list[Any] = []
        pairs = [(state, parent)]
        while pairs:
            part, was = pairs.pop()
            if type(part) is frozenset:
                fresh.extend(part - was)
                continue
            if len(part) != len(was):
                fresh.append(part)
                continue
            for mine, theirs in zip(part, was, strict=True):
                if mine is theirs:
                    continue
                kind = type(mine)
                if kind in plain:
                    if kind is int and not _hashes_apart(mine):
                        self._ints([mine], state)
                    continue  # an atom: nothing inside
                if kind is type(theirs) and (kind is frozenset or kinds.get(kind) is _TUPLE):
                    pairs.append((mine, theirs))
                else:
                    fresh.append(mine)
        return fresh

    def _ints(self, level: list[Any], state: Any) -> None:
        """Raise Misuse if an int of `level` (parts of `state`) hashes like another int.

        A fingerprint is the state's hash, and Python hashes an int modulo 2^61 - 1 (and
        -1 as -2): a state that differs from another only by such ints, 2^61 apart or -1
        against -2, hashes to the same fingerprint wherever they sit in it (tuples and
        frozensets combine their parts' hashes), and one of the two would be taken for
        the other: a state lost, and a HOLDS that no collision estimate warns of. With
        --exact states are compared whole, so any int is fine."""
        if not self.fingerprints:
            return
        bad = next((v for v in level if type(v) is int and not _hashes_apart(v)), None)
        if bad is None:
            return
        at = _find(state, lambda value: type(value) is int and value == bad)
        where = "" if at is None or at[0] == "state" else f", at {at[0]}"
        what = "-2 (Python hashes -1 as -2)" if bad == -2 else "an int of 61 bits or more"
        raise Misuse(
            f"{self.name}: a state holds {what}{where}: Python hashes ints modulo 2^61 - 1, "
            f"so two states that differ only there can share a fingerprint and one go "
            f"unexplored; keep ints within +-(2^61 - 2) and do not use -2, or check with "
            f"--exact (full states, compared whole); state {short(state)}"
        )

    def _learned(self, new: set[type], level: list[Any], state: Any) -> bool:
        """Judge the types met for the first time; a type that compares by identity is a
        Misuse (naming the first such part of `level`); True if all are atoms or
        containers the level-by-level walk can open."""
        for cls in new:
            if self._learn(cls) is _IDENTITY:
                raise self._identity(state, next(v for v in level if type(v) is cls))
        return new <= self._walkable

    def _walk(self, level: list[Any], state: Any) -> None:
        """The parts of `level` (parts of `state`) judged one by one: records included."""
        kinds, plain = self._kinds, self._plain
        stack = list(level)
        pop, extend = stack.pop, stack.extend
        while stack:
            value = pop()
            cls = type(value)
            kind = kinds.get(cls)
            if kind is None:
                kind = self._learn(cls)
            if kind is _TUPLE or kind is _SET:
                extend(value)
            elif kind is _RECORD:
                extend([getattr(value, f.name, None) for f in dataclasses.fields(value)])
            elif kind is _IDENTITY:
                raise self._identity(state, value)
            elif cls not in plain:
                continue  # a class that defines its own equality says what equal means

    def _learn(self, cls: type) -> int:
        kind = self._kinds[cls] = _classify(cls)
        if kind is _ATOM:
            self._plain.add(cls)
            self._walkable.add(cls)
        elif kind is _TUPLE or kind is _SET:
            self._walkable.add(cls)
        return kind

    def unchanged(self, state: Any, before: int, what: str = "successors") -> None:
        """Raise Misuse unless `state` still hashes to `before` (taken before `what` ran)."""
        try:
            same = hash(state) == before
        except TypeError:  # mutated into something unhashable
            same = False
        if not same:
            raise Misuse(mutated(self.name, what, state))

    def hashes_alike(self, succ: Any, state: Any) -> Misuse:
        """The error for a successor that differs from its state but hashes like it: the
        ints of `_ints` (-1 against -2, say) where the walk never sees them, since the
        successor is taken for its parent and never stored."""
        return Misuse(
            f"{self.name}: a successor differs from the state it came from but hashes like "
            f"it, so it would be taken for it and never explored (Python hashes -1 as -2 "
            f"and ints modulo 2^61 - 1: keep ints within +-(2^61 - 2) and do not use -2; or "
            f"a __hash__ of the model's own); check with --exact (full states, compared "
            f"whole); state {short(state)}, successor {short(succ)}"
        )

    def changed_in_store(self, state: Any) -> Misuse:
        """The error for a state whose hash changed between being stored and expanded."""
        return Misuse(
            f"{self.name}: a state changed after it was stored (its hash is no longer the "
            f"one it was stored under: something mutated it in place, such as a later "
            f"successors call changing an object two states share); state {short(state)}; "
            f"states must be immutable: {IMMUTABLE_KINDS}"
        )

    def _identity(self, state: Any, part: Any) -> Misuse:
        cls = type(part)
        missing = "/".join(
            name
            for name, mine in (("__eq__", cls.__eq__), ("__hash__", cls.__hash__))
            if mine is getattr(object, name)
        )
        at = _find(state, lambda value: value is part)
        where = "" if at is None or at[0] == "state" else f", at {at[0]},"
        return Misuse(
            f"states of {self.name} compare by identity (the class {cls.__name__}{where} "
            f"defines no {missing}): two equal states would count as two; state "
            f"{short(state)}"
        )


def describe_unhashable(
    model_name: str, successors: Callable[[], Any]
) -> tuple[int, Misuse] | None:
    """After a TypeError in a search's loop: the position of the first successor that
    `successors()` gives again and that is unhashable, with the guard's message for it;
    None if none is (the error was the model's own). Only on the error path, so it may
    expand again."""
    try:
        pairs = list(successors())
    except Exception:
        return None
    for move, pair in enumerate(pairs):
        succ = pair[1] if isinstance(pair, tuple) and len(pair) == 2 else pair
        try:
            hash(succ)
        except TypeError:
            try:
                check_value(succ, model_name)
            except ModelError as exc:
                return move, Misuse(str(exc))
    return None


def unhashable_in(model: Any, trace: Any) -> ModelError | None:
    """After a TypeError reported from another process, with the trace to where it was
    raised: the error naming the unhashable state if that state, or one of its
    successors, is unhashable (the trace then takes that step too); None otherwise."""
    from leadercheck.checker.engine.successors import extend_trace  # noqa: PLC0415 (error path)

    name = model_name(model)
    state = trace.last.state
    try:
        check_value(state, name)
    except ModelError as exc:
        return ModelError(reached(exc, trace), trace)
    found = describe_unhashable(name, lambda: model.successors(state))
    if found is None:
        return None
    move, misuse = found
    try:
        trace = extend_trace(model, trace, move)
    except ModelError:
        pass
    return ModelError(reached(misuse, trace), trace)
