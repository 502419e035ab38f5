"""The lease with fencing tokens for any number of nodes, any TTL and any timing: stated
over an uninterpreted sort of nodes, with the invariant that makes its claims inductive.

The symbolic protocol is models/lease.py's lease with every timing decision left free, so
it has more behaviour than the explicit model at any TTL, clock drift or pause: the
store's lease may expire at any moment, a node's own copy may run out at any moment (or
never, while it is paused), a reply to an acquire may be lost (the store moved on, the
node does not know), a node may crash (forgetting its lease and its checked write), and
a leader checks its lease and sends its write with the token as two separate steps,
arbitrarily far apart. Tokens are unbounded integers. Renewals change no token and no
claim, so they are left out; partitions only stop steps.

`fencing=False` is lease-no-fencing: the storage accepts every write, and the same proof
fails with a counterexample to induction at the late write.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import z3

from leadercheck.checker.model import Action
from leadercheck.checker.solver.encodings.finite import Quantifiers, enum_sort, node_names, universe
from leadercheck.checker.solver.induction import Conjunct, InductiveModel
from leadercheck.models.cluster.nodes import STORAGE, STORE

TOKEN_BITS = 3  # tokens of a finite instance: 0..7


class LeaseVars(NamedTuple):
    token: z3.ExprRef  # the store: token of the last lease granted
    free: z3.BoolRef  # the store: the lease is free (never taken, or expired)
    tok: z3.ArrayRef  # Node -> token of the lease it believes it holds; 0: none
    pending: z3.ArrayRef  # Node -> token of the write it checked and will send; 0: none
    hi: z3.ExprRef  # the storage: highest token of an accepted write
    stale: z3.BoolRef  # ghost: a write below an accepted one was accepted


class LeaseFencingProof(InductiveModel[LeaseVars]):
    def __init__(
        self, name: str = "lease-fencing", *, fencing: bool = True, size: int | None = None
    ) -> None:
        self.name = name
        self.fencing = fencing
        self.size = size
        self.summary = (
            "lease by compare-and-swap for any number of nodes, any TTL and any timing: "
            "acquire (reply may be lost), expiry, crash, check then write with the token; "
            + ("the storage rejects stale tokens" if fencing else "the storage checks nothing")
        )
        if size is None:
            self.node = z3.DeclareSort("LeaseNode")
            self.elements: list[z3.ExprRef] = []
            self.num: z3.SortRef = z3.IntSort()
            self.q_ = Quantifiers()
        else:
            self.node, self.elements = enum_sort(f"LeaseNode{size}", "n", size)
            self.num = z3.BitVecSort(TOKEN_BITS)
            self.q_ = Quantifiers({self.node: self.elements})
        self.i = z3.Const("i", self.node)

    def instance(self, size: int) -> LeaseFencingProof:
        """`size` nodes and 3-bit tokens, no acquisition past token 7 (never wraps): every
        state and step of it is one of the unbounded model's."""
        return type(self)(self.name, fencing=self.fencing, size=size)

    # -- numbers ---------------------------------------------------------------------

    def _val(self, k: int) -> z3.ExprRef:
        return z3.IntVal(k) if self.size is None else z3.BitVecVal(k, TOKEN_BITS)

    def _le(self, a: z3.ExprRef, b: z3.ExprRef) -> z3.BoolRef:
        return a <= b if self.size is None else z3.ULE(a, b)  # type: ignore[operator]

    # -- state -----------------------------------------------------------------------

    def state(self, tag: str) -> LeaseVars:
        return LeaseVars(
            z3.Const(f"token_{tag}", self.num),
            z3.Bool(f"free_{tag}"),
            z3.Array(f"tok_{tag}", self.node, self.num),
            z3.Array(f"pending_{tag}", self.node, self.num),
            z3.Const(f"hi_{tag}", self.num),
            z3.Bool(f"stale_{tag}"),
        )

    def axioms(self) -> Sequence[z3.BoolRef]:
        return []

    def init(self, v: LeaseVars) -> z3.BoolRef:
        zero = self._val(0)
        return z3.And(
            v.token == zero,
            v.free,
            v.tok == z3.K(self.node, zero),
            v.pending == z3.K(self.node, zero),
            v.hi == zero,
            z3.Not(v.stale),
        )

    # -- actions -----------------------------------------------------------------------

    def _same(self, v: LeaseVars, w: LeaseVars, *changed: str) -> z3.BoolRef:
        return z3.And(*(getattr(w, f) == getattr(v, f) for f in v._fields if f not in changed))

    def actions(self, v: LeaseVars, w: LeaseVars) -> Sequence[tuple[str, z3.BoolRef]]:
        i, zero = self.i, self._val(0)
        new = v.token + 1
        can_grant = z3.BoolVal(True) if self.size is None else z3.ULT(v.token, 7)
        grant = z3.And(v.free, v.tok[i] == zero, can_grant, w.token == new, z3.Not(w.free))
        e = v.pending[i]
        accepted = self._le(v.hi, e)
        late = z3.And(z3.Not(accepted), z3.BoolVal(not self.fencing))
        return [
            (
                "acquire",
                z3.And(
                    grant,
                    w.tok == z3.Store(v.tok, i, new),
                    self._same(v, w, "token", "free", "tok"),
                ),
            ),
            ("acquire, reply lost", z3.And(grant, self._same(v, w, "token", "free"))),
            ("lease expires", z3.And(w.free, self._same(v, w, "free"))),
            (
                "own lease runs out",
                z3.And(w.tok == z3.Store(v.tok, i, zero), self._same(v, w, "tok")),
            ),
            (
                "crash",
                z3.And(
                    w.tok == z3.Store(v.tok, i, zero),
                    w.pending == z3.Store(v.pending, i, zero),
                    self._same(v, w, "tok", "pending"),
                ),
            ),
            (
                "check",
                z3.And(
                    v.tok[i] != zero,
                    v.pending[i] == zero,
                    w.pending == z3.Store(v.pending, i, v.tok[i]),
                    self._same(v, w, "pending"),
                ),
            ),
            (
                "write",
                z3.And(
                    e != zero,
                    w.hi == z3.If(accepted, e, v.hi),
                    w.stale == z3.Or(v.stale, late),
                    w.pending == z3.Store(v.pending, i, zero),
                    self._same(v, w, "hi", "stale", "pending"),
                ),
            ),
        ]

    # -- the invariant -----------------------------------------------------------------

    def conjuncts(self) -> Sequence[Conjunct]:
        a, b = z3.Consts("a b", self.node)
        zero = self._val(0)

        def single_leader(v: LeaseVars) -> z3.BoolRef:
            same = z3.And(v.tok[a] != zero, v.tok[a] == v.tok[b])
            return self.q_.all([a, b], z3.Implies(same, a == b))

        def no_stale_write(v: LeaseVars) -> z3.BoolRef:
            return z3.Not(v.stale)

        def tokens_issued(v: LeaseVars) -> z3.BoolRef:
            return self.q_.all([a], self._le(v.tok[a], v.token))

        def tokens_counted(v: LeaseVars) -> z3.BoolRef:
            return self._le(zero, v.token)

        return [
            Conjunct("single-leader", single_leader, "no two nodes hold one token", claim=True),
            Conjunct(
                "no-stale-write",
                no_stale_write,
                "no write below an accepted one is accepted",
                claim=True,
            ),
            Conjunct(
                "tokens-issued",
                tokens_issued,
                "every token a node holds was granted: at most the store's",
            ),
            Conjunct("tokens-counted", tokens_counted, "the store's token is not negative"),
        ]

    # -- showing a CTI -------------------------------------------------------------------

    def preferences(
        self, pre: LeaseVars, post: LeaseVars
    ) -> Sequence[tuple[z3.ExprRef, Sequence[z3.ExprRef]]]:
        """Small tokens, no leader and no pending write unless needed, then the actor."""
        values = [z3.BitVecVal(k, TOKEN_BITS) for k in range(1 << TOKEN_BITS)]
        no, yes = z3.BoolVal(False), z3.BoolVal(True)
        prefs: list[tuple[z3.ExprRef, Sequence[z3.ExprRef]]] = [
            (pre.token, values),
            (pre.free, [no, yes]),
            (pre.hi, values),
            (pre.stale, [no, yes]),
        ]
        for a in self.elements:
            prefs += [(pre.tok[a], values), (pre.pending[a], values)]
        return [*prefs, (self.i, self.elements), (post.free, [no, yes])]

    def _universe(self, m: z3.ModelRef) -> list[z3.ExprRef]:
        return universe(m, self.node, self.elements)

    def _names(self, m: z3.ModelRef) -> dict[str, str]:
        return node_names(m, self.node, self.elements)

    def view(
        self, m: z3.ModelRef, v: LeaseVars
    ) -> tuple[Mapping[str, Mapping[str, object]], Mapping[str, str]]:
        def num(x: z3.ExprRef) -> int:
            return int(m.eval(x, model_completion=True).as_long())  # type: ignore[attr-defined]

        names = self._names(m)
        view: dict[str, Mapping[str, object]] = {}
        summary: dict[str, str] = {}
        for e in self._universe(m):
            tok, pending = num(v.tok[e]), num(v.pending[e])
            name = names[str(e)]
            view[name] = {"lease_token": tok, "pending_write_token": pending}
            text = f"leader t{tok}" if tok else "follower"
            if pending:
                text += f", write t{pending} pending"
            summary[name] = text
        free = z3.is_true(m.eval(v.free, model_completion=True))
        token, hi = num(v.token), num(v.hi)
        stale = z3.is_true(m.eval(v.stale, model_completion=True))
        view[STORE] = {"token": token, "lease_free": free}
        summary[STORE] = f"lease t{token} " + ("free" if free else "held")
        view[STORAGE] = {"hi_epoch": hi, "stale_write_accepted": stale}
        summary[STORAGE] = (f"highest epoch {hi}" if hi else "no writes") + (
            ", STALE WRITE" if stale else ""
        )
        return view, summary

    def label(self, m: z3.ModelRef, action: str) -> Action:
        if action == "lease expires":
            return Action(action, STORE)
        who = self._names(m).get(str(m.eval(self.i, model_completion=True)), "?")
        if action.startswith("acquire"):
            return Action(action, who, STORE)
        if action == "write":
            return Action(action, who, STORAGE)
        return Action(action, who)
