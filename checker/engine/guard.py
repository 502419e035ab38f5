"""Guard rails: a user's model is checked, not trusted.

The engine relies on three things a model promises and cannot enforce by types: states
are values (immutable, hashable, equal when they look equal), `successors` gives the same
actions in the same order every time it is asked, and it never changes the state it is
given. A broken promise does not crash the search; it gives a wrong answer: identity
hashing counts two equal states as two (too few states found, a false HOLDS), a mutated
state is lost, and a counterexample rebuilt from stored action positions under a changed
order ends somewhere else. So this module checks the promises and turns a broken one into
a `ModelError` naming the model, the state and what is wrong:

- `check_value` and `check_initial`: states are hashable and keep their value when copied;
- `check_shadowing`: a node record's field does not hide a property that claims read;
- `GuardedModel`: wraps a model and checks a deterministic sample of its expansions
  (no mutation, the same order twice, `next_states` agreeing with `successors`, value
  successors; duplicate successors are warnings); while its code runs, `os._exit` raises
  OsExit, a ModelError, instead of ending the process (`refusing_exit`; swapped back after
  each call, so a forked worker still ends by it), and `watch_properties` does the same
  for the claims checked on it;
- `preflight`: every check on every state of a small breadth-first search, before the real
  one, and each property evaluated on those states;
- `order_digest`: the action labels of a breadth-first search as plain text, which another
  process (another hash seed) can compare;
- `symmetry_audit`: one representative per orbit on the states of a small breadth-first
  search, for a model that declares symmetry (checker/engine/reductions/symmetry.py's
  `check_orbits`).

Traces are verified where they are rebuilt (checker/engine/successors.py), since a model can
change its order after the sample was taken.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NoReturn, TypeVar

from leadercheck.checker.engine.interrupts import OsExit, escape_text, from_model, model_error
from leadercheck.checker.engine.values import (
    ATOMS,
    FIND_DEPTH,
    article,
    check_value,
    mutated,
    parts_of,
    short,
    value_copy,
)
from leadercheck.checker.errors import ModelError
from leadercheck.checker.model import Action, Model, Wrapper, model_name
from leadercheck.checker.properties import Property, bind
from leadercheck.checker.result import EndReason

__all__ = [
    "GuardedModel",
    "check_initial",
    "check_shadowing",
    "check_value",
    "model_name",
    "order_digest",
    "preflight",
    "refusing_exit",
    "symmetry_audit",
    "watch_properties",
]

S = TypeVar("S")
R = TypeVar("R")

SAMPLE_ALL = 256  # the first expansions are all checked: a broken model shows at once
SAMPLE_EVERY = 512  # then one in this many: the checks cost two expansions and a deep copy

_PLAIN = frozenset({bool, int, float, str, bytes, type(None)})  # the common atoms, by type


def call_model(fn: Callable[[], R], what: str) -> R:
    """Run model code outside a search's loop: what it raises (SystemExit and a
    KeyboardInterrupt that is not the user's Ctrl-C included) is a ModelError naming `what`
    (one the guard raised itself passes as it is)."""
    try:
        return fn()
    except ModelError:
        raise
    except BaseException as exc:  # user code
        if not from_model(exc):
            raise
        raise model_error(exc, what) from exc


def refusing_exit(fn: Callable[..., R], hook: str, *args: Any) -> R:
    """`fn(*args)` (model code, `hook`) with `os._exit` raising OsExit while it runs.

    Swapped in for the call and back after it, never for longer: the engine's own
    processes (a forked worker ends by os._exit) keep the real one.
    """
    saved = os._exit

    def refuse(status: int) -> NoReturn:
        raise OsExit(status, hook)

    os._exit = refuse
    try:
        return fn(*args)
    finally:
        os._exit = saved


def watch_properties(model: Model[Any], properties: Sequence[Property]) -> tuple[Property, ...]:
    """The properties as checked on `model`: bound to it where a claim reads its model
    (`Property.on`); on a guarded model (a user's) their predicates, triggers and
    explanations also run with os._exit refused, as the model's own code does."""
    if not isinstance(model, GuardedModel):
        return bind(properties, model)
    return tuple(_watched(prop) for prop in bind(properties, model.inner))


def _watched(prop: Property) -> Property:
    name = prop.name
    return dataclasses.replace(
        prop,
        predicate=_Refusing.of(prop.predicate, name),
        trigger=_Refusing.maybe(prop.trigger, f"the trigger of {name}"),
        explain=_Refusing.maybe(prop.explain, f"the explanation of {name}"),
    )


class _Refusing:
    """A claim's function, run with os._exit refused (a class: it pickles for Ray)."""

    def __init__(self, fn: Callable[[Any], Any], hook: str) -> None:
        self.fn, self.hook = fn, hook

    def __call__(self, state: Any) -> Any:
        return refusing_exit(self.fn, self.hook, state)

    @classmethod
    def of(cls, fn: Callable[[Any], Any], hook: str) -> _Refusing:
        return fn if isinstance(fn, _Refusing) else cls(fn, hook)

    @classmethod
    def maybe(cls, fn: Callable[[Any], Any] | None, hook: str) -> _Refusing | None:
        return None if fn is None else cls.of(fn, hook)


def check_initial(model: Model[S]) -> list[S]:
    """The initial states of `model` as a list, each checked with `check_value`.

    `initial_states()` must give a sequence of states (a generator is fine); one state
    returned bare (a NamedTuple or a dataclass, which are iterable or not) is refused, and
    so is a set, whose order is not fixed.
    """
    name = type(model).__name__
    initial: Any = model.initial_states()
    bare = (isinstance(initial, tuple) and hasattr(initial, "_fields")) or (
        dataclasses.is_dataclass(initial) and not isinstance(initial, type)
    )
    if bare or isinstance(initial, str | bytes | Mapping) or not isinstance(initial, Iterable):
        raise ModelError(
            f"{name}.initial_states() must return a sequence of states; got "
            f"{article(type(initial))}: {short(initial)} (return [state] for one initial state)"
        )
    if isinstance(initial, set | frozenset):
        raise ModelError(
            f"{name}.initial_states() must return a sequence of states; got "
            f"{article(type(initial))}, whose order is not fixed: return a list"
        )
    states = list(initial)
    if not states:
        raise ModelError(f"{name}.initial_states() returned no states: a model needs one")
    for state in states:
        check_value(state, name)
    return states


# -- records: a field must not hide a property -----------------------------------

_SHADOWS: dict[type, str | None] = {}  # record class -> its shadowing message, or None


def check_shadowing(state: object) -> None:
    """Raise ModelError if a record class reachable in `state` has a data field named like
    a property defined further along its MRO.

    A node record is often `class Node(_Fields, Mixin)`: the NamedTuple `_Fields` comes
    first in the MRO, so its field `tenure` wins over the mixin's property `tenure`, and
    every claim that reads `node.tenure` silently reads the field instead.
    """
    shadows, plain = _SHADOWS, _PLAIN
    stack: list[tuple[object, int]] = [(state, 0)]
    while stack:  # (a preflight walks every state it visits: kept lean)
        value, depth = stack.pop()
        cls = type(value)
        if cls in plain:
            continue
        message = shadows[cls] if cls in shadows else _shadowing(cls)
        if message is not None:
            raise ModelError(message)
        if depth >= FIND_DEPTH:
            continue
        if isinstance(value, tuple):
            stack.extend([(part, depth + 1) for part in value])
        elif not isinstance(value, ATOMS):
            stack.extend([(part, depth + 1) for _, part in parts_of(value)])


def _record_fields(cls: type) -> tuple[str, ...]:
    if dataclasses.is_dataclass(cls):
        return tuple(f.name for f in dataclasses.fields(cls))
    fields = getattr(cls, "_fields", None)
    if issubclass(cls, tuple) and isinstance(fields, tuple):
        return tuple(name for name in fields if isinstance(name, str))
    return ()


def _shadowing(cls: type) -> str | None:
    """The message for the first field of `cls` that hides a later property (cached)."""
    message = None
    mro = cls.__mro__
    for name in _record_fields(cls):
        owner = next((k for k, base in enumerate(mro) if _declares(base, name)), None)
        if owner is None:
            continue
        hidden = next((b for b in mro[owner + 1 :] if _readable(vars(b).get(name))), None)
        if hidden is not None:
            message = (
                f"field {name!r} of {cls.__name__} shadows the property {name!r} of "
                f"{hidden.__name__}, which claims read; rename the field"
            )
            break
    _SHADOWS[cls] = message
    return message


def _readable(attribute: object) -> bool:
    """A property with a body of its own; an abstract one is there to be supplied by a
    field, which is no shadowing."""
    return isinstance(attribute, property) and not attribute.__isabstractmethod__


def _declares(cls: type, name: str) -> bool:
    """Whether `cls` itself declares the data field `name` (not a property of its own)."""
    own = vars(cls)
    if name in own:
        return not isinstance(own[name], property)
    fields = own.get("__dataclass_fields__")
    return isinstance(fields, dict) and name in fields


# -- the wrapper -------------------------------------------------------------


class GuardedModel(Wrapper[S]):
    """A model whose expansions are checked on a deterministic sample.

    Every expansion of the first SAMPLE_ALL calls of `successors` or `next_states`, then
    one call in SAMPLE_EVERY (a counter, no randomness, so a run is repeatable), is
    checked: the state is not mutated, a second expansion gives the same actions in the
    same order, `next_states` (if overridden) agrees with `successors`, the successors are
    values; duplicate (action, next state) pairs are warnings in `warnings`. Outside the
    sample a call costs one counter increment, the swap of os._exit (`refusing_exit`) and
    the model's own call, its successors made a list (a generator would run after the
    swap). Everything else is the wrapped model's, under the same swap. It pickles (forked
    workers, Ray actors); each process keeps its own counter and warnings.
    """

    def __init__(self, inner: Model[S]) -> None:
        self.inner = inner
        self.calls = 0
        self.warnings: list[str] = []
        self._bind()

    def _bind(self) -> None:
        inner = self.inner
        self.name = type(inner).__name__
        self._successors = inner.successors
        self._next_states = inner.next_states
        self._overrides_next = type(inner).next_states is not Model.next_states
        self._types: set[type] = set()  # successor types given the full check already
        self._warned: set[str] = set()  # action names warned about

    def __getstate__(self) -> dict[str, Any]:
        return {"inner": self.inner, "calls": self.calls, "warnings": self.warnings}

    def __setstate__(self, saved: dict[str, Any]) -> None:
        self.__dict__.update(saved)
        self._bind()

    def __getattr__(self, name: str) -> Any:
        """Anything else a model offers (a protocol's own attributes) is the inner one's."""
        if name.startswith("__") or name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    def __repr__(self) -> str:
        return f"GuardedModel({self.inner!r})"

    # -- the checked calls -----------------------------------------------------

    def initial_states(self) -> Sequence[S]:
        states: list[S] = refusing_exit(check_initial, "initial_states", self.inner)
        for state in states:
            check_shadowing(state)
        return states

    def successors(self, state: S) -> Iterable[tuple[Action, S]]:
        self.calls = n = self.calls + 1
        if n > SAMPLE_ALL and n % SAMPLE_EVERY:
            return refusing_exit(_listed, "successors", self._successors, state)
        return self.inspect(state)[0]

    def next_states(self, state: S) -> Iterable[S]:
        self.calls = n = self.calls + 1
        if n > SAMPLE_ALL and n % SAMPLE_EVERY:
            return refusing_exit(_listed, "next_states", self._next_states, state)
        return self.inspect(state)[1]

    def inspect(self, state: S) -> tuple[list[tuple[Action, S]], list[S]]:
        """Expand `state` with every check: its (action, next state) pairs, next states."""
        return refusing_exit(self._inspect, "successors", state)

    def _inspect(self, state: S) -> tuple[list[tuple[Action, S]], list[S]]:
        name = self.name
        snapshot = value_copy(state, name)
        first = list(self._successors(state))
        self._unchanged(state, snapshot, "successors")
        for _, succ in first:
            self._check_successor(succ)
        second = list(self._successors(state))
        self._unchanged(state, snapshot, "successors")
        self._same(state, first, second)
        nexts = [succ for _, succ in first]
        if self._overrides_next:
            given = list(self._next_states(state))
            self._unchanged(state, snapshot, "next_states")
            if given != nexts:
                k = _first_difference(given, nexts)
                raise ModelError(
                    f"{name}.next_states(state) disagrees with its successors(state): it must "
                    f"give their next states in the same order; state {short(state)}, first "
                    f"difference at position {k}: {_entry(given, k)} vs {_entry(nexts, k)}"
                )
            nexts = given
        self._duplicates(state, first)
        return first, nexts

    def _check_successor(self, succ: S) -> None:
        """The full value check the first time a type is seen; a hash afterwards (the
        successor gets the full check itself when its own expansion is sampled)."""
        cls = type(succ)
        if cls in self._types:
            try:
                hash(succ)
                return
            except TypeError:
                pass
        check_value(succ, self.name)
        check_shadowing(succ)
        self._types.add(cls)

    def _unchanged(self, state: S, snapshot: S, method: str) -> None:
        try:
            same = bool(state == snapshot) and hash(state) == hash(snapshot)
        except Exception:  # mutated into something unhashable
            same = False
        if not same:
            raise ModelError(mutated(self.name, method, snapshot))

    def _same(
        self, state: S, first: list[tuple[Action, S]], second: list[tuple[Action, S]]
    ) -> None:
        labels_1 = [(action.label(), succ) for action, succ in first]
        labels_2 = [(action.label(), succ) for action, succ in second]
        if labels_1 == labels_2:
            return
        k = _first_difference(labels_1, labels_2)
        for pairs in (first, second):  # a successor that is no value compares unequal
            if k < len(pairs):
                check_value(pairs[k][1], self.name)
        raise ModelError(
            f"{self.name}.successors(state) gave its actions in a different order (or "
            f"different actions) on a second call: the order must be fixed (do not iterate "
            f"sets of strings or use random); state {short(state)}, first difference at "
            f"position {k}: {_pair(first, k)} vs {_pair(second, k)}"
        )

    def _duplicates(self, state: S, pairs: list[tuple[Action, S]]) -> None:
        seen: set[tuple[Any, S]] = set()
        for action, succ in pairs:
            key = (action.label(), succ)
            if key not in seen:
                seen.add(key)
                continue
            if action.name in self._warned:
                continue
            self._warned.add(action.name)
            to = f" to {action.target}" if action.target else ""
            self.warnings.append(
                f"{self.name}: state {short(state)} yields {action.name!r} by "
                f"{action.actor}{to} twice with the same next state (a duplicate successor)"
            )

    # -- everything else is the inner model's, os._exit refused ---------------------

    def fairness(self, action: Action) -> str | None:
        return refusing_exit(self.inner.fairness, "fairness", action)

    def step_class(self, action: Action) -> str:
        return refusing_exit(self.inner.step_class, "step_class", action)

    def local_moves(self, state: S) -> Sequence[int]:
        return refusing_exit(self.inner.local_moves, "local_moves", state)

    def symmetry_groups(self) -> Sequence[Sequence[int]]:
        return refusing_exit(self.inner.symmetry_groups, "symmetry_groups")

    def permute(self, state: S, perm: Sequence[int]) -> S:
        return refusing_exit(self.inner.permute, "permute", state, perm)

    def order_key(self, state: S) -> Any:
        return refusing_exit(self.inner.order_key, "order_key", state)

    def node_keys(self, state: S) -> Sequence[Any]:
        return refusing_exit(self.inner.node_keys, "node_keys", state)

    def describe(self, state: S) -> Mapping[str, Mapping[str, object]]:
        return refusing_exit(self.inner.describe, "describe", state)

    def summary(self, state: S) -> Mapping[str, str]:
        return refusing_exit(self.inner.summary, "summary", state)


def _listed(fn: Callable[[Any], Iterable[R]], state: Any) -> list[R]:
    """`fn(state)` as a list: a generator's code runs now, while os._exit is refused."""
    out = fn(state)
    return out if type(out) is list else list(out)


def _first_difference(a: Sequence[Any], b: Sequence[Any]) -> int:
    return next(
        (k for k, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )


def _entry(values: Sequence[Any], k: int) -> str:
    return short(values[k], 60) if k < len(values) else f"nothing ({len(values)} in all)"


def _pair(pairs: Sequence[tuple[Action, Any]], k: int) -> str:
    if k >= len(pairs):
        return f"nothing ({len(pairs)} actions in all)"
    action, succ = pairs[k]
    text = " ".join(str(action).split())
    text = text if len(text) <= 60 else text[:57] + "..."
    return f"{text} -> {short(succ, 60)}"


# -- before the search -------------------------------------------------------


def preflight(
    model: Model[Any], properties: Sequence[Property], max_states: int = 300
) -> list[str]:
    """Check `model` thoroughly on a small breadth-first search before the real one.

    The initial states (a sequence of values, no shadowed property), then every check of
    GuardedModel on every state the exploration expands until it has met `max_states`
    states, with each property (and a leads-to trigger) evaluated on each of them. Returns
    the warnings; raises ModelError on the first broken promise. A state whose expansion
    raises is left to the real search, which reports it with the trace that reaches it.
    """
    guard = model if isinstance(model, GuardedModel) else GuardedModel(model)
    name = guard.name
    watched = watch_properties(guard, properties)

    def expand(state: Any) -> tuple[int, list[tuple[int, Any]]]:
        check_shadowing(state)
        _evaluate(name, watched, state)
        try:
            pairs, _ = guard.inspect(state)
        except OsExit:  # the model's own failure: the search reports it with its trace
            return 0, []
        except ModelError:
            raise
        except BaseException as exc:  # the same, SystemExit and the like included
            if not from_model(exc):
                raise
            return 0, []
        return len(pairs), [(move, succ) for move, (_, succ) in enumerate(pairs)]

    _explore(guard.inner, expand, max_states)
    return list(guard.warnings)


def symmetry_audit(model: Model[Any], max_states: int = 1000) -> int:
    """For `verify --lint`: on each state of a breadth-first exploration until it has met
    `max_states` states, the model's symmetry gives one representative per orbit
    (checker/engine/reductions/symmetry.py's `check_orbits`: a total order, node keys that move
    with the nodes). Returns how many states it checked, 0 when the model declares no symmetry;
    raises ModelError on the first failure, or what the model's hooks raise as one."""
    from leadercheck.checker.engine.observers import Observer  # noqa: PLC0415 (a cycle)
    from leadercheck.checker.engine.reductions.symmetry import canonicalizer, check_orbits  # noqa: PLC0415

    guard = model if isinstance(model, GuardedModel) else GuardedModel(model)
    if canonicalizer(guard) is None:
        return 0
    states: list[Any] = []

    class Record(Observer):
        edges = True  # the exploration then expands by the model itself

        def visit(self, state: Any, index: int, initial: bool) -> bool:
            states.append(state)
            return False

    _explore(guard.inner, None, max_states, [Record()])
    try:
        return check_orbits(guard, states)
    except ModelError:  # os._exit (OsExit) included
        raise
    except BaseException as exc:  # the model's symmetry hooks: anything but the user's Ctrl-C
        if not from_model(exc):
            raise
        raise ModelError(
            f"{guard.name}: its symmetry (permute, node_keys or order_key) raised "
            f"{type(exc).__name__}: {escape_text(exc)}"
        ) from exc


def _explore(model: Model[Any], expand: Any, max_states: int, observers: Sequence[Any] = ()) -> Any:
    """The engine's exploration (checker/engine/explore.py) of `model`, full states as
    keys, until it has met `max_states` states: the small searches beside the real one
    (preflight, --lint's order digest) walk through the same loop. Returns the explorer."""
    from leadercheck.checker.engine.explore import Explorer  # noqa: PLC0415 (a cycle)
    from leadercheck.checker.engine.settings import unbounded  # noqa: PLC0415
    from leadercheck.checker.engine.store import IndexedStore, Store  # noqa: PLC0415

    initial: list[Any] = call_model(
        lambda: refusing_exit(check_initial, "initial_states", model), "initial_states"
    )
    store = IndexedStore(exact=True) if observers else Store(exact=True)
    explorer = Explorer(model, initial, store, expand, observers, unbounded(max_states=max_states))
    if explorer.run() is EndReason.INTERRUPTED:  # Ctrl-C: it ends the command, not this walk
        raise KeyboardInterrupt
    return explorer


def _evaluate(name: str, properties: Sequence[Property], state: Any) -> None:
    for prop in properties:
        for predicate in (prop.predicate, prop.trigger):
            if predicate is None:
                continue
            try:
                bool(predicate(state))
            except OsExit:
                raise
            except BaseException as exc:  # user code: anything but the user's Ctrl-C
                if not from_model(exc):
                    raise
                raise ModelError(
                    f"{name}: the property {prop.name!r} raised {type(exc).__name__} on state "
                    f"{short(state)}: {escape_text(exc)}"
                ) from exc


def order_digest(model: Model[Any], max_states: int = 2000) -> list[str]:
    """Per state expanded by a breadth-first exploration until it has met `max_states`
    states, in order, its action labels as one line of text.

    No hash or address is in the text, so two processes (two hash seeds) that expand in
    the same order give identical lists; a difference shows a successor order that
    depends on the process, such as iterating a set of strings.
    """
    from leadercheck.checker.engine.observers import Observer  # noqa: PLC0415 (a cycle)

    lines: list[str] = []

    class Labels(Observer):
        edges = True

        def expanded(self, index: int, targets: list[int], actions: list[Any]) -> None:
            lines.append("|".join(repr(action.label()) for action in actions))

    _explore(model, None, max_states, [Labels()])
    return lines
