"""Raft's election safety for any number of nodes: the election of `raft`, stated over an
uninterpreted sort of nodes, with the invariant that makes it inductive.

The symbolic protocol is the election of models/raft.py and of the raft-election benchmark
(terms, one vote per term, RequestVote and its responses, a quorum to lead), with more
behaviour, never less, so a proof covers every behaviour of the explicit models at every
size: terms are unbounded integers; any node may time out at any moment (no PreVote, no
stabilization: those only remove behaviour); messages may be lost at any moment (which
also covers partitions, which only lose or delay them); a crash resets the volatile role
and received votes (term and vote are durable) and its downtime is a pause with no steps;
a candidate leads in a separate step once the votes it received cover a quorum. A quorum
is an element of a second sort with a membership relation; the only axiom is that any
two quorums share a node, which the strict majorities of every cluster size satisfy.

Variants show that the same proof fails where the claim is false: `durable_vote=False`
forgets the vote on a crash (raft-volatile-vote), `quorums_intersect=False` drops the
axiom (raft-no-quorum counts a majority of the nodes it can see).

The ghost relation `vote(voter, term, candidate)` records every vote ever cast; the
invariant is stated over it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from typing import NamedTuple

import z3

from leadercheck.checker.model import Action
from leadercheck.checker.solver.encodings.finite import (
    Quantifiers,
    bit_values,
    enum_sort,
    node_names,
    universe,
)
from leadercheck.checker.solver.induction import Conjunct, InductiveModel
from leadercheck.models.cluster.nodes import NETWORK

FOLLOWER, CANDIDATE, LEADER = "follower", "candidate", "leader"
TERM_BITS = 3  # terms of a finite instance: 0..7


@cache
def _roles() -> tuple[z3.SortRef, list[z3.ExprRef]]:
    sort, values = z3.EnumSort("Role", [FOLLOWER, CANDIDATE, LEADER])
    return sort, list(values)


class RaftVars(NamedTuple):
    term: z3.ArrayRef  # Node -> Int: currentTerm (durable)
    role: z3.ArrayRef  # Node -> Role (volatile)
    has_voted: z3.ArrayRef  # Node -> Bool: votedFor is set in the current term (durable)
    voted: z3.ArrayRef  # Node -> Node: whom it voted for, when has_voted
    granted: z3.ArrayRef  # Node x Node -> Bool: granted[i, j]: j's vote received by i
    req: z3.ArrayRef  # Int x Node x Node -> Bool: RequestVote(t, src, dst) in flight
    resp: z3.ArrayRef  # Int x Node x Node x Bool -> Bool: response (t, src, dst, granted)
    vote: z3.ArrayRef  # Node x Int x Node -> Bool: ghost, every vote ever cast


class RaftElectionProof(InductiveModel[RaftVars]):
    def __init__(
        self,
        name: str = "raft",
        *,
        durable_vote: bool = True,
        quorums_intersect: bool = True,
        size: int | None = None,
    ) -> None:
        self.name = name
        self.durable_vote = durable_vote
        self.quorums_intersect = quorums_intersect
        self.size = size
        self.summary = (
            "Raft election for any number of nodes and terms: timeouts, RequestVote, "
            "responses, quorum, crash (term and vote durable"
            + ("" if durable_vote else " -- here the vote is NOT")
            + "), message loss"
        )
        if size is None:  # any number of nodes, quorums and terms
            self.node = z3.DeclareSort("Node")
            self.quorum = z3.DeclareSort("Quorum")
            self.term_sort: z3.SortRef = z3.IntSort()
            self.elements: list[z3.ExprRef] = []
            self.quorums: list[z3.ExprRef] = []
            self.q_ = Quantifiers()
        else:  # a finite instance, only to find a small CTI (see `instance`)
            self.node, self.elements = enum_sort(f"Node{size}", "n", size)
            self.quorum, self.quorums = enum_sort(f"Quorum{size}", "q", size)
            self.term_sort = z3.BitVecSort(TERM_BITS)
            self.q_ = Quantifiers(
                {
                    self.node: self.elements,
                    self.quorum: self.quorums,
                    self.term_sort: bit_values(TERM_BITS),
                }
            )
        self.role_sort, (self.follower, self.candidate, self.leader) = _roles()
        self.member = z3.Function(f"member{size or ''}", self.node, self.quorum, z3.BoolSort())
        # action parameters: free constants, instantiated by the solver in a CTI
        self.i, self.j = z3.Consts("i j", self.node)
        self.t = self._term_var("t")
        self.g = z3.Bool("g")
        self.q = z3.Const("q", self.quorum)

    def instance(self, size: int) -> RaftElectionProof:
        """The same protocol over `size` nodes and quorums and 3-bit terms, where a term
        at 7 no longer times out (so it never wraps): each of its states and steps is one
        of the unbounded model's, so its CTIs are CTIs of the unbounded model."""
        return type(self)(
            self.name,
            durable_vote=self.durable_vote,
            quorums_intersect=self.quorums_intersect,
            size=size,
        )

    # -- terms: integers, or bit-vectors in a finite instance -------------------------

    def _term_var(self, name: str) -> z3.ExprRef:
        return z3.Const(name, self.term_sort)

    def _zero(self) -> z3.ExprRef:
        return z3.IntVal(0) if self.size is None else z3.BitVecVal(0, TERM_BITS)

    def _lt(self, a: z3.ExprRef, b: z3.ExprRef) -> z3.BoolRef:
        return a < b if self.size is None else z3.ULT(a, b)  # type: ignore[operator]

    def _le(self, a: z3.ExprRef, b: z3.ExprRef) -> z3.BoolRef:
        return a <= b if self.size is None else z3.ULE(a, b)  # type: ignore[operator]

    def _may_start(self, term: z3.ExprRef) -> z3.BoolRef:
        """A next term exists (always, unless a finite instance would wrap)."""
        return z3.BoolVal(True) if self.size is None else z3.ULT(term, (1 << TERM_BITS) - 1)

    # -- state ------------------------------------------------------------------

    def state(self, tag: str) -> RaftVars:
        n, b, i = self.node, z3.BoolSort(), self.term_sort
        return RaftVars(
            z3.Array(f"term_{tag}", n, i),
            z3.Array(f"role_{tag}", n, self.role_sort),
            z3.Array(f"has_voted_{tag}", n, b),
            z3.Array(f"voted_{tag}", n, n),
            z3.Array(f"granted_{tag}", n, n, b),
            z3.Array(f"req_{tag}", i, n, n, b),
            z3.Array(f"resp_{tag}", i, n, n, b, b),
            z3.Array(f"vote_{tag}", n, i, n, b),
        )

    def axioms(self) -> Sequence[z3.BoolRef]:
        if not self.quorums_intersect:
            return []
        q1, q2 = z3.Consts("q1 q2", self.quorum)
        n = z3.Const("n", self.node)
        both = z3.And(self.member(n, q1), self.member(n, q2))
        return [self.q_.all([q1, q2], self.q_.some([n], both))]

    def init(self, v: RaftVars) -> z3.BoolRef:
        n = self.node
        return z3.And(
            v.term == z3.K(n, self._zero()),
            v.role == z3.K(n, self.follower),
            v.has_voted == z3.K(n, z3.BoolVal(False)),
            v.granted == z3.Lambda([self.i, self.j], z3.BoolVal(False)),
            v.req == z3.Lambda([self.t, self.i, self.j], z3.BoolVal(False)),
            v.resp == z3.Lambda([self.t, self.i, self.j, self.g], z3.BoolVal(False)),
            v.vote == z3.Lambda([self.i, self.t, self.j], z3.BoolVal(False)),
        )

    # -- actions ----------------------------------------------------------------

    def actions(self, v: RaftVars, w: RaftVars) -> Sequence[tuple[str, z3.BoolRef]]:
        return [
            ("timeout", self._timeout(v, w)),
            ("handle-request-vote", self._request(v, w)),
            ("handle-vote-response", self._response(v, w)),
            ("become-leader", self._lead(v, w)),
            ("lose", self._lose(v, w)),
            ("crash", self._crash(v, w)),
        ]

    def _same(self, v: RaftVars, w: RaftVars, *changed: str) -> z3.BoolRef:
        return z3.And(*(getattr(w, f) == getattr(v, f) for f in v._fields if f not in changed))

    def _timeout(self, v: RaftVars, w: RaftVars) -> z3.BoolRef:
        i, n, d, t = (
            self.i,
            z3.Const("n", self.node),
            z3.Const("d", self.node),
            self._term_var("tt"),
        )
        new = v.term[i] + 1
        return z3.And(
            v.role[i] != self.leader,
            self._may_start(v.term[i]),
            w.term == z3.Store(v.term, i, new),
            w.role == z3.Store(v.role, i, self.candidate),
            w.has_voted == z3.Store(v.has_voted, i, True),
            w.voted == z3.Store(v.voted, i, i),
            w.granted == z3.Lambda([d, n], z3.If(d == i, n == i, v.granted[d, n])),
            w.req == z3.Lambda([t, d, n], z3.Or(v.req[t, d, n], z3.And(t == new, d == i, n != i))),
            w.vote
            == z3.Lambda([n, t, d], z3.Or(v.vote[n, t, d], z3.And(n == i, t == new, d == i))),
            self._same(v, w, "term", "role", "has_voted", "voted", "granted", "req", "vote"),
        )

    def _request(self, v: RaftVars, w: RaftVars) -> z3.BoolRef:
        """Node i handles RequestVote(t, j, i): adopts a higher term, grants if it may."""
        i, j, t = self.i, self.j, self.t
        n, d, tt, gg = (
            z3.Const("n", self.node),
            z3.Const("d", self.node),
            self._term_var("tt"),
            z3.Bool("gg"),
        )
        higher = self._lt(v.term[i], t)
        ti = z3.If(higher, t, v.term[i])
        voted_before = z3.And(z3.Not(higher), v.has_voted[i])
        grant = z3.And(t == ti, z3.Or(z3.Not(voted_before), v.voted[i] == j))
        return z3.And(
            v.req[t, j, i],
            w.term == z3.Store(v.term, i, ti),
            w.role == z3.Store(v.role, i, z3.If(higher, self.follower, v.role[i])),
            w.granted == z3.Lambda([d, n], z3.If(z3.And(d == i, higher), False, v.granted[d, n])),
            w.has_voted == z3.Store(v.has_voted, i, z3.Or(grant, voted_before)),
            w.voted == z3.Store(v.voted, i, z3.If(grant, j, v.voted[i])),
            w.req == z3.Store(v.req, t, j, i, False),
            w.resp
            == z3.Lambda(
                [tt, n, d, gg],
                z3.Or(v.resp[tt, n, d, gg], z3.And(tt == ti, n == i, d == j, gg == grant)),
            ),
            w.vote
            == z3.Lambda(
                [n, tt, d], z3.Or(v.vote[n, tt, d], z3.And(grant, n == i, tt == t, d == j))
            ),
            self._same(
                v, w, "term", "role", "granted", "has_voted", "voted", "req", "resp", "vote"
            ),
        )

    def _response(self, v: RaftVars, w: RaftVars) -> z3.BoolRef:
        """Node i handles response (t, j, i, g): adopts a higher term, or counts a vote."""
        i, j, t, g = self.i, self.j, self.t, self.g
        n, d = z3.Const("n", self.node), z3.Const("d", self.node)
        higher = self._lt(v.term[i], t)
        counts = z3.And(z3.Not(higher), t == v.term[i], v.role[i] == self.candidate, g)
        return z3.And(
            v.resp[t, j, i, g],
            w.term == z3.Store(v.term, i, z3.If(higher, t, v.term[i])),
            w.role == z3.Store(v.role, i, z3.If(higher, self.follower, v.role[i])),
            w.has_voted == z3.Store(v.has_voted, i, z3.And(z3.Not(higher), v.has_voted[i])),
            w.granted
            == z3.Lambda(
                [d, n],
                z3.If(
                    d == i,
                    z3.If(higher, False, z3.Or(v.granted[d, n], z3.And(counts, n == j))),
                    v.granted[d, n],
                ),
            ),
            w.resp == z3.Store(v.resp, t, j, i, g, False),
            self._same(v, w, "term", "role", "has_voted", "granted", "resp"),
        )

    def _lead(self, v: RaftVars, w: RaftVars) -> z3.BoolRef:
        i, q, n = self.i, self.q, z3.Const("n", self.node)
        return z3.And(
            v.role[i] == self.candidate,
            self.q_.all([n], z3.Implies(self.member(n, q), v.granted[i, n])),
            w.role == z3.Store(v.role, i, self.leader),
            self._same(v, w, "role"),
        )

    def _lose(self, v: RaftVars, w: RaftVars) -> z3.BoolRef:
        """Any messages are lost (a partition loses them too)."""
        t, n, d, g = (
            self._term_var("tt"),
            z3.Const("n", self.node),
            z3.Const("d", self.node),
            z3.Bool("gg"),
        )
        return z3.And(
            self.q_.all([t, n, d], z3.Implies(w.req[t, n, d], v.req[t, n, d])),
            self.q_.all([t, n, d, g], z3.Implies(w.resp[t, n, d, g], v.resp[t, n, d, g])),
            self._same(v, w, "req", "resp"),
        )

    def _crash(self, v: RaftVars, w: RaftVars) -> z3.BoolRef:
        """Node i crashes and restarts: role and received votes lost; term (and vote) kept."""
        i, n, d = self.i, z3.Const("n", self.node), z3.Const("d", self.node)
        kept = v.has_voted[i] if self.durable_vote else z3.BoolVal(False)
        return z3.And(
            w.role == z3.Store(v.role, i, self.follower),
            w.granted == z3.Lambda([d, n], z3.If(d == i, False, v.granted[d, n])),
            w.has_voted == z3.Store(v.has_voted, i, kept),
            self._same(v, w, "role", "granted", "has_voted"),
        )

    # -- the invariant ------------------------------------------------------------

    def conjuncts(self) -> Sequence[Conjunct]:
        a, b, c = z3.Consts("a b c", self.node)
        t = self._term_var("t0")
        q = z3.Const("q0", self.quorum)

        def single_leader(v: RaftVars) -> z3.BoolRef:
            both = z3.And(v.role[a] == self.leader, v.role[b] == self.leader)
            return self.q_.all([a, b], z3.Implies(z3.And(both, v.term[a] == v.term[b]), a == b))

        def one_vote_per_term(v: RaftVars) -> z3.BoolRef:
            twice = z3.And(v.vote[a, t, b], v.vote[a, t, c])
            return self.q_.all([a, t, b, c], z3.Implies(twice, b == c))

        def no_vote_ahead(v: RaftVars) -> z3.BoolRef:
            return self.q_.all([a, t, b], z3.Implies(v.vote[a, t, b], self._le(t, v.term[a])))

        def vote_remembered(v: RaftVars) -> z3.BoolRef:
            now = z3.And(v.vote[a, t, b], t == v.term[a])
            return self.q_.all([a, t, b], z3.Implies(now, z3.And(v.has_voted[a], v.voted[a] == b)))

        def granted_were_cast(v: RaftVars) -> z3.BoolRef:
            return self.q_.all([a, b], z3.Implies(v.granted[a, b], v.vote[b, v.term[a], a]))

        def grants_in_flight_were_cast(v: RaftVars) -> z3.BoolRef:
            return self.q_.all([t, a, b], z3.Implies(v.resp[t, a, b, True], v.vote[a, t, b]))

        def leader_has_quorum(v: RaftVars) -> z3.BoolRef:
            backed = self.q_.all([c], z3.Implies(self.member(c, q), v.vote[c, v.term[a], a]))
            return self.q_.all([a], z3.Implies(v.role[a] == self.leader, self.q_.some([q], backed)))

        return [
            Conjunct("single-leader", single_leader, "no two leaders share a term", claim=True),
            Conjunct("one-vote-per-term", one_vote_per_term, "a node votes once per term"),
            Conjunct("no-vote-ahead", no_vote_ahead, "no vote in a term above the voter's"),
            Conjunct(
                "vote-remembered",
                vote_remembered,
                "a vote in the voter's current term is its recorded votedFor",
            ),
            Conjunct(
                "granted-were-cast",
                granted_were_cast,
                "every vote a node counts was cast for it in its term",
            ),
            Conjunct(
                "grants-in-flight-were-cast",
                grants_in_flight_were_cast,
                "every granting response in flight reports a vote cast",
            ),
            Conjunct(
                "leader-has-quorum",
                leader_has_quorum,
                "a leader's term has a quorum of votes for it",
            ),
        ]

    # -- showing a CTI --------------------------------------------------------------

    def preferences(
        self, pre: RaftVars, post: RaftVars
    ) -> Sequence[tuple[z3.ExprRef, Sequence[z3.ExprRef]]]:
        """Followers in low terms that voted for nobody, nothing in flight, no ghost vote
        but what the CTI needs; then the action's parameters and what a loss keeps."""
        nodes = self.elements
        terms = bit_values(TERM_BITS)
        no, yes = z3.BoolVal(False), z3.BoolVal(True)
        prefs: list[tuple[z3.ExprRef, Sequence[z3.ExprRef]]] = []
        for a in nodes:
            prefs += [
                (pre.role[a], [self.follower, self.candidate, self.leader]),
                (pre.term[a], terms),
                (pre.has_voted[a], [no, yes]),
                (pre.voted[a], nodes),
            ]
            prefs += [(pre.granted[a, b], [no, yes]) for b in nodes]
        for t in terms:
            for a in nodes:
                for b in nodes:
                    prefs += [(pre.vote[a, t, b], [no, yes]), (pre.req[t, a, b], [no, yes])]
                    prefs += [(pre.resp[t, a, b, g], [no, yes]) for g in (no, yes)]
        prefs += [(self.i, nodes), (self.j, nodes), (self.t, terms), (self.g, [no, yes])]
        prefs += [(self.q, self.quorums)]
        prefs += [(self.member(a, q), [no, yes]) for q in self.quorums for a in nodes]
        for t in terms:
            for a in nodes:
                for b in nodes:
                    prefs.append((post.req[t, a, b], [yes, no]))
                    prefs += [(post.resp[t, a, b, g], [yes, no]) for g in (no, yes)]
        return prefs

    def _universe(self, m: z3.ModelRef) -> list[z3.ExprRef]:
        return universe(m, self.node, self.elements)

    def _names(self, m: z3.ModelRef) -> dict[str, str]:
        return node_names(m, self.node, self.elements)

    def view(
        self, m: z3.ModelRef, v: RaftVars
    ) -> tuple[Mapping[str, Mapping[str, object]], Mapping[str, str]]:
        universe = self._universe(m)
        names = self._names(m)
        terms = {e: _number(m.eval(v.term[e], model_completion=True)) for e in universe}
        shown = sorted(set(terms.values()) | {t + 1 for t in terms.values()})
        param = _number(m.eval(self.t, model_completion=True))
        shown = sorted(set(shown) | {param})
        view: dict[str, Mapping[str, object]] = {}
        summary: dict[str, str] = {}
        for e in universe:
            name = names[str(e)]
            role = str(m.eval(v.role[e], model_completion=True))
            has = z3.is_true(m.eval(v.has_voted[e], model_completion=True))
            voted = names[str(m.eval(v.voted[e], model_completion=True))] if has else None
            votes = [
                names[str(o)]
                for o in universe
                if z3.is_true(m.eval(v.granted[e, o], model_completion=True))
            ]
            history = [
                f"{names[str(o)]} in t{t}"
                for t in shown
                for o in universe
                if z3.is_true(m.eval(v.vote[e, t, o], model_completion=True))
            ]
            view[name] = {
                "role": role,
                "term": terms[e],
                "voted_for": voted,
                "votes_from": votes,
                "votes_cast (ghost)": history,
            }
            text = f"{role} t{terms[e]}"
            if voted:
                text += f", voted {voted}"
            if votes:
                text += f", votes from {'+'.join(votes)}"
            if history:
                text += f" (cast: {' and '.join(history)})"
            summary[name] = text
        flight = [
            f"RV(t{t},{names[str(s)]}->{names[str(d)]})"
            for t in shown
            for s in universe
            for d in universe
            if z3.is_true(m.eval(v.req[t, s, d], model_completion=True))
        ] + [
            f"RVR(t{t},{names[str(s)]}->{names[str(d)]},{'granted' if g else 'refused'})"
            for t in shown
            for s in universe
            for d in universe
            for g in (True, False)
            if z3.is_true(m.eval(v.resp[t, s, d, g], model_completion=True))
        ]
        view[NETWORK] = {"in_flight": flight}
        if flight:
            summary[NETWORK] = ", ".join(flight)
        return view, summary

    def label(self, m: z3.ModelRef, action: str) -> Action:
        names = self._names(m)

        def name(c: z3.ExprRef) -> str:
            return names.get(str(m.eval(c, model_completion=True)), "?")

        t = m.eval(self.t, model_completion=True)
        if action == "handle-request-vote":
            return Action(action, name(self.i), name(self.j), f"RequestVote t{t}")
        if action == "handle-vote-response":
            granted = z3.is_true(m.eval(self.g, model_completion=True))
            note = f"t{t} {'granted' if granted else 'refused'}"
            return Action(action, name(self.i), name(self.j), note)
        if action == "lose":
            return Action(action, NETWORK)
        return Action(action, name(self.i))


def _number(value: z3.ExprRef) -> int:
    return int(value.as_long())  # type: ignore[attr-defined]
