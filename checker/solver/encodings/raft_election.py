"""raft-election in z3: the benchmark's transition relation, one copy of the state per step.

The reference is models/raft_election.py (the raft-election benchmark's semantics): from
any state within the variables' ranges (`domain`), the relation allows exactly the explicit
model's successors, so bounded model checking finds the same shortest counterexamples and
witnesses as breadth-first search.

One copy of the state, for nodes i = 1..N:

- `term[i]` (1..MaxTerm), `role[i]` (0 follower, 1 candidate, 2 leader), `voted[i]`
  (0..N: 0 is nobody): unsigned bit-vectors wide enough that no reachable value, nor
  `term + 1` under Timeout's guard, wraps around (z3 decides them faster than Ints here);
- `granted[i][j]` (Bool): node j is in votesGranted[i] (bit j of the explicit bit set);
- one Bool per message that can ever be sent. A request RequestVote(t, s, d) is sent only by
  a Timeout of s <= NC, into a term t in 2..MaxTerm. A response RequestVoteResponse(t, s, d,
  g) answers such a request, so d <= NC, and carries the responder's term after handling it:
  the larger of the request's term (>= 2) and its own (<= MaxTerm), so t is in 2..MaxTerm
  too; g is either. Every other message is absent from every reachable state.

The step is the disjunction of the action instances Timeout(i), BecomeLeader(i),
HandleRequestVote(m), HandleRequestVoteResponse(m) and DropMessage(m), each a guard and
the new values of what it changes. It is stated with one fresh Bool per instance, exactly
one of them true: the taken instance's guard holds, and each variable's next value is
the taken instance's new value if that instance changes it, else its current value.
That is the disjunction of "guard, effect, everything else unchanged" (the selectors are
existential, so the formula must not be negated), and z3 decides it much faster.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import z3

from leadercheck.checker.solver.bmc import SymbolicModel
from leadercheck.models.raft_election import (
    CANDIDATE,
    FOLLOWER,
    FORGETVOTE,
    LEADER,
    REQUEST_VOTE,
    RESPONSE,
    ElectionState,
    RaftElectionModel,
)

Request = tuple[int, int, int]  # (t, s, d)
Response = tuple[int, int, int, int]  # (t, s, d, g)
Effect = tuple[Any, dict[Hashable, Any]]  # an action instance: guard, {variable: new value}


@dataclass(frozen=True)
class ElectionVars:
    """One copy of the state variables (see the module docstring); node i at index i - 1."""

    term: tuple[Any, ...]
    role: tuple[Any, ...]
    voted: tuple[Any, ...]
    granted: tuple[tuple[Any, ...], ...]  # granted[i - 1][j - 1]: j voted for i
    requests: dict[Request, Any]
    responses: dict[Response, Any]

    def flat(self) -> dict[Hashable, Any]:
        """Every variable under a key that names it, for stating what an action keeps."""
        out: dict[Hashable, Any] = {}
        for k in range(len(self.term)):
            out["term", k] = self.term[k]
            out["role", k] = self.role[k]
            out["voted", k] = self.voted[k]
            for j, g in enumerate(self.granted[k]):
                out["granted", k, j] = g
        for m, b in self.requests.items():
            out["request", m] = b
        for r, b in self.responses.items():
            out["response", r] = b
        return out


def one_of(
    before: dict[Hashable, Any], after: dict[Hashable, Any], actions: Sequence[Effect]
) -> Any:
    """Exactly one action instance is taken: its guard holds, the variables it changes take
    their new values, every other variable keeps its value (see the module docstring)."""
    taken = [z3.FreshBool("act") for _ in actions]
    out = [z3.PbEq([(b, 1) for b in taken], 1)]
    out += [z3.Implies(b, guard) for b, (guard, _) in zip(taken, actions, strict=True)]
    for key, old in before.items():
        new = old
        for b, (_, changes) in zip(taken, actions, strict=True):
            if key in changes:
                new = z3.If(b, changes[key], new)
        out.append(after[key] == new)
    return z3.And(*out)


class RaftElectionSymbolic(SymbolicModel[ElectionVars]):
    """RaftElectionModel(n, nc, max_term, variant), every variant, in z3."""

    def __init__(self, model: RaftElectionModel) -> None:
        self.model = model
        self.n = model.n
        self.nc = model.nc
        self.max_term = model.max_term
        self.forget = model.variant == FORGETVOTE
        self.need = model.need  # votes a candidate needs to lead (2 in noquorum)
        # unsigned, with room to spare: terms <= MaxTerm, ids and votes <= N, roles <= 2
        self.width = max(model.max_term, model.n, LEADER).bit_length() + 1
        n, nc, terms = model.n, model.nc, range(2, model.max_term + 1)
        self.request_keys: tuple[Request, ...] = tuple(
            (t, s, d) for t in terms for s in range(1, nc + 1) for d in range(1, n + 1) if d != s
        )
        self.response_keys: tuple[Response, ...] = tuple(
            (t, s, d, g)
            for t in terms
            for s in range(1, n + 1)
            for d in range(1, nc + 1)
            if d != s
            for g in (0, 1)
        )

    def val(self, x: int) -> Any:
        """The constant `x` as a term, role or node id."""
        return z3.BitVecVal(x, self.width)

    # -- variables --------------------------------------------------------------

    def variables(self, step: int) -> ElectionVars:
        nodes = range(1, self.n + 1)

        def num(name: str) -> Any:
            return z3.BitVec(f"{name}@{step}", self.width)

        return ElectionVars(
            term=tuple(num(f"term{i}") for i in nodes),
            role=tuple(num(f"role{i}") for i in nodes),
            voted=tuple(num(f"voted{i}") for i in nodes),
            granted=tuple(tuple(z3.Bool(f"granted{i}_{j}@{step}") for j in nodes) for i in nodes),
            requests={(t, s, d): z3.Bool(f"RV{t}_{s}_{d}@{step}") for t, s, d in self.request_keys},
            responses={
                (t, s, d, g): z3.Bool(f"RVR{t}_{s}_{d}_{g}@{step}")
                for t, s, d, g in self.response_keys
            },
        )

    def domain(self, v: ElectionVars) -> Any:
        """The variables' ranges (implied from the initial state; for induction)."""
        return z3.And(
            *(z3.And(z3.UGE(t, 1), z3.ULE(t, self.max_term)) for t in v.term),
            *(z3.ULE(r, LEADER) for r in v.role),
            *(z3.ULE(x, self.n) for x in v.voted),
        )

    def init(self, v: ElectionVars) -> Any:
        return z3.And(
            *(t == 1 for t in v.term),
            *(r == FOLLOWER for r in v.role),
            *(x == 0 for x in v.voted),
            *(z3.Not(g) for row in v.granted for g in row),
            *(z3.Not(b) for b in v.requests.values()),
            *(z3.Not(b) for b in v.responses.values()),
        )

    # -- the transition relation -----------------------------------------------------

    def transition(self, v: ElectionVars, w: ElectionVars) -> Any:
        return one_of(v.flat(), w.flat(), self.actions(v))

    def actions(self, v: ElectionVars) -> list[Effect]:
        """Every action instance, in the explicit model's order (nodes, then messages)."""
        out: list[Effect] = []
        for i in range(1, self.n + 1):
            if i <= self.nc:
                out.append(self.timeout(v, i))
            out.append(self.become_leader(v, i))
        false = z3.BoolVal(False)
        for m in self.request_keys:
            out.append(self.handle_request(v, m))
            out.append((v.requests[m], {("request", m): false}))  # DropMessage(m)
        for r in self.response_keys:
            out.append(self.handle_response(v, r))
            out.append((v.responses[r], {("response", r): false}))  # DropMessage(m)
        return out

    def timeout(self, v: ElectionVars, i: int) -> Effect:
        """Timeout(i): a new term, a candidate voting for itself, a request to every other."""
        k = i - 1
        t = v.term[k] + 1
        guard = z3.And(v.role[k] != LEADER, z3.ULT(v.term[k], self.max_term))
        changes: dict[Hashable, Any] = {
            ("term", k): t,
            ("role", k): self.val(CANDIDATE),
            ("voted", k): self.val(i),
        }
        for j in range(self.n):
            changes["granted", k, j] = z3.BoolVal(j == k)
        for m in self.request_keys:
            if m[1] == i:  # RequestVote(t, i, j) for every j != i joins the set
                changes["request", m] = z3.Or(v.requests[m], t == m[0])
        return guard, changes

    def quorum(self, votes: Sequence[Any]) -> Any:
        """Whether the votes (one Bool per node) let a candidate lead."""
        return z3.AtLeast(*votes, self.need)

    def become_leader(self, v: ElectionVars, i: int) -> Effect:
        k = i - 1
        guard = z3.And(v.role[k] == CANDIDATE, self.quorum(v.granted[k]))
        return guard, {("role", k): self.val(LEADER)}

    def handle_request(self, v: ElectionVars, m: Request) -> Effect:
        """HandleRequestVote(RV(t, j, i)): node i answers candidate j."""
        t, j, i = m
        k = i - 1
        higher = z3.UGT(self.val(t), v.term[k])
        ti = z3.If(higher, self.val(t), v.term[k])
        vf = z3.If(higher, self.val(0), v.voted[k])
        grant = z3.And(ti == t, z3.Or(z3.BoolVal(self.forget), vf == 0, vf == j))
        changes: dict[Hashable, Any] = {
            ("request", m): z3.BoolVal(False),
            ("term", k): ti,
            ("role", k): z3.If(higher, self.val(FOLLOWER), v.role[k]),
            ("voted", k): vf if self.forget else z3.If(grant, self.val(j), vf),
        }
        for x in range(self.n):
            changes["granted", k, x] = z3.And(z3.Not(higher), v.granted[k][x])
        for r in self.response_keys:
            rt, s, d, g = r
            if s == i and d == j:  # RequestVoteResponse(ti, i, j, grant) joins the set
                sent = z3.And(ti == rt, grant if g else z3.Not(grant))
                changes["response", r] = z3.Or(v.responses[r], sent)
        return v.requests[m], changes

    def handle_response(self, v: ElectionVars, r: Response) -> Effect:
        """HandleRequestVoteResponse(RVR(t, j, i, g)): candidate i hears j's answer."""
        t, j, i, g = r
        k = i - 1
        higher = z3.UGT(self.val(t), v.term[k])  # case 1: adopt the term, step down
        counts = z3.And(v.term[k] == t, v.role[k] == CANDIDATE) if g else z3.BoolVal(False)
        changes: dict[Hashable, Any] = {
            ("response", r): z3.BoolVal(False),
            ("term", k): z3.If(higher, self.val(t), v.term[k]),
            ("role", k): z3.If(higher, self.val(FOLLOWER), v.role[k]),
            ("voted", k): z3.If(higher, self.val(0), v.voted[k]),
        }
        for x in range(self.n):
            kept = v.granted[k][x]
            if x == j - 1:  # case 2: j's vote counts
                kept = z3.Or(kept, counts)
            changes["granted", k, x] = z3.And(z3.Not(higher), kept)
        return v.responses[r], changes

    # -- claims and decoding ----------------------------------------------------------

    def claim(self, name: str, v: ElectionVars) -> Any:
        """The claims of specs/claims.py on these states (a leader's epoch is its term)."""
        n = self.n
        leader = [v.role[k] == LEADER for k in range(n)]
        if name == "single-leader":
            return z3.And(
                *(
                    z3.Not(z3.And(leader[a], leader[b], v.term[a] == v.term[b]))
                    for a in range(n)
                    for b in range(a + 1, n)
                )
            )
        if name == "leader-elected":
            return z3.Or(*leader)
        if name == "failover":  # some node up (always) whose tenure (its term as leader) >= 2
            return z3.Or(*(z3.And(leader[k], z3.UGE(v.term[k], 2)) for k in range(n)))
        return None

    def is_state(self, v: ElectionVars, state: ElectionState) -> Any:
        """`v` is the explicit `state` (the inverse of `decode`); False if no copy of the
        variables can hold it (a message outside the ones that can ever be sent)."""
        msgs = set(state.msgs)
        unknown = msgs - {(REQUEST_VOTE, *m, 0) for m in self.request_keys}
        unknown -= {(RESPONSE, *r) for r in self.response_keys}
        if unknown:
            return z3.BoolVal(False)
        return z3.And(
            *(a == b for a, b in zip(v.term, state.terms, strict=True)),
            *(a == b for a, b in zip(v.role, state.roles, strict=True)),
            *(a == b for a, b in zip(v.voted, state.voted, strict=True)),
            *(
                g == bool(bits >> j & 1)
                for row, bits in zip(v.granted, state.granted, strict=True)
                for j, g in enumerate(row, start=1)
            ),
            *(b == ((REQUEST_VOTE, *m, 0) in msgs) for m, b in v.requests.items()),
            *(b == ((RESPONSE, *r) in msgs) for r, b in v.responses.items()),
        )

    def decode(self, m: z3.ModelRef, v: ElectionVars) -> ElectionState:
        def num(x: Any) -> int:
            return int(m.eval(x, model_completion=True).as_long())

        def true(b: Any) -> bool:
            return bool(z3.is_true(m.eval(b, model_completion=True)))

        msgs = [(REQUEST_VOTE, t, s, d, 0) for (t, s, d), b in v.requests.items() if true(b)]
        msgs += [(RESPONSE, t, s, d, g) for (t, s, d, g), b in v.responses.items() if true(b)]
        return ElectionState(
            tuple(num(t) for t in v.term),
            tuple(num(r) for r in v.role),
            tuple(num(x) for x in v.voted),
            tuple(sum(1 << j for j, g in enumerate(row, start=1) if true(g)) for row in v.granted),
            tuple(sorted(msgs)),
        )
