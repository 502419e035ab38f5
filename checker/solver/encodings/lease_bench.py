"""lease-bench in z3: the lease-fencing benchmark's transition relation, one copy per step.

The reference is models/lease_bench.py (the lease-fencing benchmark's semantics): from
any state, the relation allows exactly the explicit model's successors, so bounded model
checking finds the same shortest counterexamples and witnesses as breadth-first search.

One copy of the state: `now`, `holder`, `expiresAt`, `token`, `hiEpoch` (Ints), `stale`
(Bool) and, per node i, `myTok[i]`, `myExp[i]` (Ints) and `paused[i]` (Bool): the nine
components of the reference state, nothing else. The step is the disjunction of
Acquire(i), Renew(i), Write(i), Pause(i), Resume(i) and Tick, as the explicit model
computes them: Acquire needs `now >= expiresAt` (a free lease has expiresAt = 0), Renew
the current, valid lease (`now < expiresAt`, holder i, `token = myTok[i]`), and a Tick
takes every running believer whose expiry the new time reaches back to `myTok = myExp = 0`.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

import z3

from leadercheck.checker.solver.bmc import SymbolicModel
from leadercheck.models.lease_bench import BenchState, LeaseBenchModel


@dataclass(frozen=True)
class LeaseVars:
    """One copy of the state variables (node i at index i - 1)."""

    now: Any
    holder: Any
    expires_at: Any
    token: Any
    my_tok: tuple[Any, ...]
    my_exp: tuple[Any, ...]
    paused: tuple[Any, ...]
    hi_epoch: Any
    stale: Any

    def flat(self) -> dict[Hashable, Any]:
        """Every variable under a key that names it, for stating what an action keeps."""
        out: dict[Hashable, Any] = {
            "now": self.now,
            "holder": self.holder,
            "expires_at": self.expires_at,
            "token": self.token,
            "hi_epoch": self.hi_epoch,
            "stale": self.stale,
        }
        for k in range(len(self.my_tok)):
            out["my_tok", k] = self.my_tok[k]
            out["my_exp", k] = self.my_exp[k]
            out["paused", k] = self.paused[k]
        return out


def _step(
    before: dict[Hashable, Any],
    after: dict[Hashable, Any],
    guard: Any,
    changes: dict[Hashable, Any],
) -> Any:
    """guard, the changed variables' new values, every other variable unchanged."""
    return z3.And(guard, *(after[key] == changes.get(key, old) for key, old in before.items()))


class LeaseBenchSymbolic(SymbolicModel[LeaseVars]):
    """LeaseBenchModel(n, ttl, max_time, fencing) in z3."""

    def __init__(self, model: LeaseBenchModel) -> None:
        self.model = model
        self.n = model.n
        self.ttl = model.ttl
        self.max_time = model.max_time
        self.fencing = model.fencing

    def variables(self, step: int) -> LeaseVars:
        nodes = range(1, self.n + 1)
        return LeaseVars(
            now=z3.Int(f"now@{step}"),
            holder=z3.Int(f"holder@{step}"),
            expires_at=z3.Int(f"expiresAt@{step}"),
            token=z3.Int(f"token@{step}"),
            my_tok=tuple(z3.Int(f"myTok{i}@{step}") for i in nodes),
            my_exp=tuple(z3.Int(f"myExp{i}@{step}") for i in nodes),
            paused=tuple(z3.Bool(f"paused{i}@{step}") for i in nodes),
            hi_epoch=z3.Int(f"hiEpoch@{step}"),
            stale=z3.Bool(f"stale@{step}"),
        )

    def domain(self, v: LeaseVars) -> Any:
        """The variables' types (not needed from the initial state; for induction)."""
        return z3.And(
            0 <= v.now,
            v.now <= self.max_time,
            0 <= v.holder,
            v.holder <= self.n,
            v.expires_at >= 0,
            v.token >= 0,
            v.hi_epoch >= 0,
            *(tok >= 0 for tok in v.my_tok),
            *(exp >= 0 for exp in v.my_exp),
        )

    def init(self, v: LeaseVars) -> Any:
        return z3.And(
            v.now == 0,
            v.holder == 0,
            v.expires_at == 0,
            v.token == 0,
            v.hi_epoch == 0,
            z3.Not(v.stale),
            *(tok == 0 for tok in v.my_tok),
            *(exp == 0 for exp in v.my_exp),
            *(z3.Not(p) for p in v.paused),
        )

    # -- the transition relation -----------------------------------------------------

    def transition(self, v: LeaseVars, w: LeaseVars) -> Any:
        before, after = v.flat(), w.flat()
        steps = [_step(before, after, guard, changes) for guard, changes in self.actions(v)]
        return z3.Or(*steps)

    def actions(self, v: LeaseVars) -> list[tuple[Any, dict[Hashable, Any]]]:
        """Every action instance as (guard, {variable key: new value})."""
        out: list[tuple[Any, dict[Hashable, Any]]] = []
        new_exp = v.now + self.ttl
        running = [z3.Not(p) for p in v.paused]
        for k in range(self.n):  # Acquire(i): the lease is free or expired
            guard = z3.And(v.now >= v.expires_at, running[k], v.my_tok[k] == 0)
            changes: dict[Hashable, Any] = {
                "holder": z3.IntVal(k + 1),
                "expires_at": new_exp,
                "token": v.token + 1,
                ("my_tok", k): v.token + 1,
                ("my_exp", k): new_exp,
            }
            out.append((guard, changes))
        for k in range(self.n):  # Renew(i): the holder of the current, valid lease
            guard = z3.And(
                v.now < v.expires_at, v.holder == k + 1, v.token == v.my_tok[k], running[k]
            )
            out.append((guard, {"expires_at": new_exp, ("my_exp", k): new_exp}))
        for k in range(self.n):  # Write(i) with its token e = myTok[i]
            e = v.my_tok[k]
            guard = z3.And(e != 0, running[k])
            accepted = e >= v.hi_epoch
            changes = {"hi_epoch": z3.If(accepted, e, v.hi_epoch)}
            if not self.fencing:  # accepted out of order
                changes["stale"] = z3.Or(v.stale, z3.Not(accepted))
            out.append((guard, changes))
        for k in range(self.n):
            out.append((running[k], {("paused", k): z3.BoolVal(True)}))  # Pause(i)
            out.append((v.paused[k], {("paused", k): z3.BoolVal(False)}))  # Resume(i)
        t = v.now + 1  # Tick: running believers whose expiry the new time reaches let go
        changes = {"now": t}
        for k in range(self.n):
            drop = z3.And(v.my_tok[k] != 0, running[k], t >= v.my_exp[k])
            changes["my_tok", k] = z3.If(drop, 0, v.my_tok[k])
            changes["my_exp", k] = z3.If(drop, 0, v.my_exp[k])
        out.append((v.now < self.max_time, changes))
        return out

    # -- claims and decoding ----------------------------------------------------------

    def claim(self, name: str, v: LeaseVars) -> Any:
        """The claims of specs/claims.py on these states: node i leads (with epoch and
        tenure myTok[i]) while myTok[i] != 0; nodes are always up; the storage is
        Storage(hiEpoch, stale)."""
        n = self.n
        leads = [tok != 0 for tok in v.my_tok]
        if name == "no-stale-write":
            return z3.Not(v.stale)
        if name == "write-accepted":
            return v.hi_epoch > 0
        if name == "single-leader":
            return z3.And(
                *(
                    z3.Not(z3.And(leads[a], v.my_tok[a] == v.my_tok[b]))
                    for a in range(n)
                    for b in range(a + 1, n)
                )
            )
        if name == "leader-elected":
            return z3.Or(*leads)
        if name == "failover":
            return z3.Or(*(tok >= 2 for tok in v.my_tok))
        return None

    def is_state(self, v: LeaseVars, state: BenchState) -> Any:
        """`v` is the explicit `state` (the inverse of `decode`)."""
        return z3.And(
            v.now == state.now,
            v.holder == state.holder,
            v.expires_at == state.expires_at,
            v.token == state.token,
            *(a == b for a, b in zip(v.my_tok, state.my_tok, strict=True)),
            *(a == b for a, b in zip(v.my_exp, state.my_exp, strict=True)),
            *(a == b for a, b in zip(v.paused, state.paused, strict=True)),
            v.hi_epoch == state.hi_epoch,
            v.stale == state.stale,
        )

    def decode(self, m: z3.ModelRef, v: LeaseVars) -> BenchState:
        def num(x: Any) -> int:
            return int(m.eval(x, model_completion=True).as_long())

        def true(b: Any) -> bool:
            return bool(z3.is_true(m.eval(b, model_completion=True)))

        return BenchState(
            num(v.now),
            num(v.holder),
            num(v.expires_at),
            num(v.token),
            tuple(num(tok) for tok in v.my_tok),
            tuple(num(exp) for exp in v.my_exp),
            tuple(true(p) for p in v.paused),
            num(v.hi_epoch),
            true(v.stale),
        )
