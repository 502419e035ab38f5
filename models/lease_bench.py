"""lease-bench: the lease-fencing benchmark, exactly as ../shared/benchmarks/lease-fencing.md.

The same transition system is written in TLA+ (TLC) and Promela (Spin); this model
enumerates the same action instances so that distinct states, generated states and
the diameter match the reference counts of that document.

A state is the tuple `(now, holder, expiresAt, token, myTok, myExp, paused, hiEpoch,
stale)` and nothing else; its nodes are interchangeable (`--symmetry`). The shared
claims read it through derived views only: `leaders()`, `nodes` (per-node views) and
`storage` (a `Storage(hiEpoch, stale)`).

Instances, in this fixed order: `Acquire(i)` for i = 1..N, then `Renew(i)`,
`Write(i)`, `Pause(i)`, `Resume(i)` likewise, then `Tick`. Each enabled instance
yields exactly one successor, self-loops included (a renew that changes nothing, a
rejected write), so generated states = 1 + the sum of enabled instances.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import NamedTuple

from leadercheck.checker.kernel import Kernel
from leadercheck.checker.model import FAULT, RECOVERY, Action, Model
from leadercheck.checker.model import TICK as CLOCK_TICK
from leadercheck.models.cluster import STORAGE, STORE, Storage, node_name
from leadercheck.models.cluster.nodes import CLOCK, LeadsWithToken, with_life
from leadercheck.models.params import Param, ProtocolEntry, choice


class _BenchFields(NamedTuple):
    tok: int  # myTok[i]: the lease token it believes it holds; 0: not leader
    exp: int  # myExp[i]: that lease's expiry as it knows it
    paused: bool
    up: bool = True  # the benchmark has no crashes


class BenchNode(_BenchFields, LeadsWithToken):
    """A read-only view of node i, derived from the state (not part of it)."""

    __slots__ = ()

    @property
    def lead_token(self) -> int:
        return self.tok


class BenchState(NamedTuple):
    """The nine components of the reference state; two states are equal iff these are."""

    now: int
    holder: int  # 0: the lease was never taken
    expires_at: int
    token: int
    my_tok: tuple[int, ...]
    my_exp: tuple[int, ...]
    paused: tuple[bool, ...]
    hi_epoch: int
    stale: bool

    def leaders(self) -> list[tuple[int, int | None]]:
        return [(i, t) for i, t in enumerate(self.my_tok, start=1) if t]

    @property
    def nodes(self) -> tuple[BenchNode, ...]:
        return tuple(BenchNode(*v) for v in zip(self.my_tok, self.my_exp, self.paused, strict=True))

    @property
    def storage(self) -> Storage:
        return Storage(self.hi_epoch, self.stale, self.hi_epoch)


TICK = Action("tick", CLOCK, kind=CLOCK_TICK)


class LeaseBenchModel(Model[BenchState]):
    """Lease with TTL in a store, GC pauses, storage with or without fencing tokens."""

    def __init__(self, n: int, ttl: int, max_time: int, fencing: bool) -> None:
        self.n = n
        self.ttl = ttl
        self.max_time = max_time
        self.fencing = fencing
        names = [node_name(i) for i in range(1, n + 1)]
        self._acquire = [Action("acquire", name, STORE) for name in names]
        self._renew = [Action("renew", name, STORE) for name in names]
        self._pause = [Action("pause", name, kind=FAULT) for name in names]
        self._resume = [Action("resume", name, kind=RECOVERY) for name in names]
        self._resume_local = [r._replace(local=True) for r in self._resume]
        self._names = names

    def initial_states(self) -> Sequence[BenchState]:
        zeros = (0,) * self.n
        return (BenchState(0, 0, 0, 0, zeros, zeros, (False,) * self.n, 0, False),)

    def successors(self, state: BenchState) -> Iterator[tuple[Action, BenchState]]:
        now, holder, expires_at, token, my_tok, my_exp, paused, hi_epoch, stale = state
        n = self.n
        new_exp = now + self.ttl
        # Acquire(i): the lease is free (never taken: expiresAt = 0) or expired.
        if now >= expires_at:
            k = token + 1
            for j in range(n):
                if not paused[j] and not my_tok[j]:
                    after = BenchState(
                        now,
                        j + 1,
                        new_exp,
                        k,
                        my_tok[:j] + (k,) + my_tok[j + 1 :],
                        my_exp[:j] + (new_exp,) + my_exp[j + 1 :],
                        paused,
                        hi_epoch,
                        stale,
                    )
                    yield self._acquire[j], after
        # Renew(i): only the holder of the current, valid lease (a self-loop if nothing moves).
        elif holder and token == my_tok[holder - 1] and not paused[holder - 1]:
            j = holder - 1
            exp = my_exp[:j] + (new_exp,) + my_exp[j + 1 :]
            yield self._renew[j], state._replace(expires_at=new_exp, my_exp=exp)
        # Write(i): every running node that believes it leads, with its token.
        for j in range(n):
            if my_tok[j] and not paused[j]:
                yield self._write(state, j, my_tok[j])
        # Pause(i), Resume(i), then Tick: the environment.
        for j in range(n):
            if not paused[j]:
                yield self._pause[j], state._replace(paused=paused[:j] + (True,) + paused[j + 1 :])
        for j in range(n):
            if paused[j]:
                yield (
                    self._resume_local[j] if self._quiet(state, j) else self._resume[j],
                    state._replace(paused=paused[:j] + (False,) + paused[j + 1 :]),
                )
        if now < self.max_time:
            yield TICK, self._tick(state)

    # -- symmetry: every node runs the same steps; ids occur only as `holder` -------

    def symmetry_groups(self) -> tuple[tuple[int, ...], ...]:
        return (tuple(range(self.n)),)

    def permute(self, state: BenchState, perm: Sequence[int]) -> BenchState:
        inverse = [0] * self.n
        for old, new in enumerate(perm):
            inverse[new] = old
        holder = perm[state.holder - 1] + 1 if state.holder else 0
        return state._replace(
            holder=holder,
            my_tok=tuple(state.my_tok[k] for k in inverse),
            my_exp=tuple(state.my_exp[k] for k in inverse),
            paused=tuple(state.paused[k] for k in inverse),
        )

    def node_keys(self, state: BenchState) -> list[tuple[int, int, bool, bool]]:
        return [
            (tok, exp, paused, state.holder == i)
            for i, (tok, exp, paused) in enumerate(
                zip(state.my_tok, state.my_exp, state.paused, strict=True), start=1
            )
        ]

    # -- the compiled twin ---------------------------------------------------------

    def kernel(self, symmetric: bool) -> Kernel[BenchState] | None:
        """models/kernels/lease_bench.py, for this class only, where numba is installed."""
        if type(self) is not LeaseBenchModel or self.n > 4 or self.max_time + self.ttl > 255:
            return None  # a subclass may change what the kernel would not know
        try:
            from leadercheck.models.kernels.lease_bench import (  # noqa: PLC0415 (numba)
                LeaseBenchKernel,
            )
        except ImportError:
            return None
        return LeaseBenchKernel(
            self.n, self.ttl, self.max_time, self.fencing, symmetric, BenchState
        )

    def _quiet(self, state: BenchState, j: int) -> bool:
        """Whether Resume(j+1), enabled in `state`, is local (declared on the action):
        the node holds no lease, or time is at MaxTime.

        (1) No claim reads `paused`. (3) Only Resume(i) clears paused[i]. (2) While node i
        is paused, myTok[i] stays 0 (only its own Acquire sets it, and a paused node does
        not acquire), so a Tick neither reads paused[i] nor changes myExp[i]: Tick and
        Resume(i) commute. Acquire, Renew, Write and Pause of other nodes never read
        paused[i]; node i's own Acquire, Renew, Write and Pause are disabled until it
        resumes, and Renew(i) and Write(i) stay disabled after it too (myTok[i] = 0). At
        MaxTime no Tick is ever enabled again, so any Resume commutes with every move
        (it only enables node i's own). Pause(i) is not declared: it disables node i's
        Acquire, Renew or Write wherever one can still come, and a Tick treats a paused
        lease holder differently. Acquire, Write and Tick change what the claims read
        (myTok, the storage), and Renew races with Tick (it moves the expiry the Tick
        compares with).
        """
        return state.now >= self.max_time or not state.my_tok[j]

    def _tick(self, state: BenchState) -> BenchState:
        t = state.now + 1
        my_tok, my_exp, paused = state.my_tok, state.my_exp, state.paused
        # A running believer drops its lease at the tick whose new time reaches its expiry.
        if any(tok and not p and t >= e for tok, e, p in zip(my_tok, my_exp, paused, strict=True)):
            keep = [
                bool(p or not tok or t < e)
                for tok, e, p in zip(my_tok, my_exp, paused, strict=True)
            ]
            my_tok = tuple(v if k else 0 for v, k in zip(my_tok, keep, strict=True))
            my_exp = tuple(v if k else 0 for v, k in zip(my_exp, keep, strict=True))
            return state._replace(now=t, my_tok=my_tok, my_exp=my_exp)
        return state._replace(now=t)

    def _write(self, state: BenchState, j: int, e: int) -> tuple[Action, BenchState]:
        name = self._names[j]
        if e >= state.hi_epoch:
            return (
                Action("write", name, STORAGE, f"token {e} accepted"),
                state._replace(hi_epoch=e),
            )
        if self.fencing:
            return Action("write", name, STORAGE, f"token {e} rejected"), state
        return (
            Action("write", name, STORAGE, f"token {e} accepted out of order"),
            state._replace(stale=True),
        )

    def describe(self, state: BenchState) -> Mapping[str, Mapping[str, object]]:
        out: dict[str, Mapping[str, object]] = {}
        for i, node in enumerate(state.nodes, start=1):
            out[node_name(i)] = {
                "paused": node.paused,
                "role": node.role,
                "lease_token": node.tok,
                "lease_expires_at": node.exp,
            }
        out[STORE] = {
            "now": state.now,
            "holder": node_name(state.holder) if state.holder else None,
            "expires_at": state.expires_at,
            "token": state.token,
        }
        out[STORAGE] = {**state.storage.describe(), "fencing": self.fencing}
        return out

    def summary(self, state: BenchState) -> Mapping[str, str]:
        out: dict[str, str] = {}
        for i, node in enumerate(state.nodes, start=1):
            role = f"leader t{node.tok} until {node.exp}" if node.tok else "follower"
            out[node_name(i)] = with_life(True, node.paused, role)
        if state.holder:
            lease = f"t{state.token} to {node_name(state.holder)} until {state.expires_at}"
        else:
            lease = "free"
        out[STORE] = f"now {state.now}, lease {lease}"
        out[STORAGE] = state.storage.summary()
        return out


PARAMS = (
    Param("N", 2, 2, 4, "number of nodes"),
    Param("TTL", 2, 1, 5, "lease duration in ticks"),
    Param("MaxTime", 4, 1, 20, "the clock runs from 0 to MaxTime"),
    choice("fencing", "true", ("false", "true"), "storage rejects tokens below the highest seen"),
)


def build(N: int, TTL: int, MaxTime: int, fencing: int) -> LeaseBenchModel:
    return LeaseBenchModel(N, TTL, MaxTime, bool(fencing))


PROTOCOLS = (
    ProtocolEntry(
        "lease-bench",
        "the lease-fencing benchmark (TLC/Spin reference counts): lease with TTL, GC pauses",
        PARAMS,
        build,
    ),
)
