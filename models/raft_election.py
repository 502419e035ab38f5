"""raft-election: the leader-election half of Raft, exactly as the shared benchmark defines it.

The reference semantics are ../shared/benchmarks/raft-election.md: the same transition
system is written in TLA+ and Promela, so the distinct and generated state counts and the
diameter can be compared with TLC and Spin. No log, no AppendEntries, no heartbeats, no
faults but message loss: a leader stays leader until it hears of a higher term.

A state is `(currentTerm, role, votedFor, votesGranted, msgs)` and nothing else. Nodes are
1..N, all starting as followers in term 1; only nodes 1..NC may time out, and terms stay in
1..MaxTerm. The network is a set of messages (a sorted tuple here): RequestVote(t, s, d)
and RequestVoteResponse(t, s, d, g). Every enabled action instance yields exactly one
successor, repeats included, so the generated-state count matches the reference:
Timeout(i) and BecomeLeader(i) for every node, HandleRequestVote / HandleRequestVoteResponse
for every message of that kind, and DropMessage for every message. There is no separate
UpdateTerm step: a higher term is adopted in the same step that handles the message.

The broken variants:

- `noquorum`: a candidate leads with any two votes (itself and one other), a majority only
  when N = 3; with four nodes two candidates of one term can both win.
- `forgetvote`: votes are not recorded, so a node grants every request of its current term
  (a candidate or leader too), and two majorities of a term no longer share a refusing voter.

The shared claims read derived views (`leaders()`, `nodes`, `storage`) that add no state;
single-leader is then exactly the benchmark's ElectionSafety.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from operator import itemgetter
from typing import NamedTuple

from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.kernel import Kernel
from leadercheck.checker.model import Action, Model
from leadercheck.models.cluster.nodes import NETWORK, node_name
from leadercheck.models.cluster.storage import Storage
from leadercheck.models.params import Param, ProtocolEntry, choice

CORRECT, NOQUORUM, FORGETVOTE = 0, 1, 2
VARIANTS = ("correct", "noquorum", "forgetvote")

FOLLOWER, CANDIDATE, LEADER = 0, 1, 2
ROLE_NAMES = ("follower", "candidate", "leader")

# A message is a plain tuple (kind, term, src, dst, granted); requests carry granted = 0.
REQUEST_VOTE, RESPONSE = 0, 1
Msg = tuple[int, int, int, int, int]
HANDLE, DROP = 0, 1
Move = int | tuple[int, Msg]  # see RaftElectionModel._moves
Renaming = tuple[Callable[[tuple[int, ...]], tuple[int, ...]], tuple[int, ...], tuple[int, ...]]

_STORAGE = Storage()
_new = tuple.__new__  # builds a NamedTuple without its constructor's Python frame


class NodeView(NamedTuple):
    """One node as the shared claims read it (derived, never stored)."""

    role: str
    epoch: int
    voted: int
    votes: tuple[int, ...]
    up: bool = True
    paused: bool = False

    @property
    def is_leader(self) -> bool:
        return self.role == "leader"

    @property
    def term(self) -> int:
        return self.epoch

    @property
    def tenure(self) -> int:
        return self.epoch if self.role == "leader" else 0


class ElectionState(NamedTuple):
    """The benchmark's five variables; node i is at index i - 1, votes as a bit set (bit i)."""

    terms: tuple[int, ...]
    roles: tuple[int, ...]
    voted: tuple[int, ...]
    granted: tuple[int, ...]
    msgs: tuple[Msg, ...]

    @property
    def storage(self) -> Storage:
        """Constant: this model has no writes."""
        return _STORAGE

    def leaders(self) -> tuple[tuple[int, int], ...]:
        if LEADER not in self.roles:
            return ()
        return tuple(
            (i, self.terms[i - 1])
            for i in range(1, len(self.roles) + 1)
            if self.roles[i - 1] == LEADER
        )

    @property
    def nodes(self) -> tuple[NodeView, ...]:
        return tuple(
            NodeView(ROLE_NAMES[r], t, v, _members(g))
            for r, t, v, g in zip(self.roles, self.terms, self.voted, self.granted, strict=True)
        )


def _members(bits: int) -> tuple[int, ...]:
    return tuple(i for i in range(1, bits.bit_length()) if bits >> i & 1)


def _names(nodes: tuple[int, ...]) -> str:
    return ",".join(node_name(n) for n in nodes)


def _msg_text(m: Msg) -> str:
    kind, t, s, d, g = m
    if kind == REQUEST_VOTE:
        return f"RV(t{t},{node_name(s)}->{node_name(d)})"
    return f"RVR(t{t},{node_name(s)}->{node_name(d)},{'granted' if g else 'refused'})"


def _insert(msgs: tuple[Msg, ...], m: Msg) -> tuple[Msg, ...]:
    """The set `msgs` with `m` added, kept sorted (unchanged if `m` is already there)."""
    if m in msgs:
        return msgs
    return tuple(sorted((*msgs, m)))


class RaftElectionModel(Model[ElectionState]):
    """The benchmark transition system; successors in a fixed order (nodes, then messages)."""

    def __init__(self, n: int, nc: int, max_term: int, variant: int) -> None:
        if not 1 <= nc <= n:
            raise LeadercheckError(f"raft-election: NC={nc} must be at most N={n}")
        self.n = n
        self.nc = nc
        self.max_term = max_term
        self.variant = variant
        self.need = 2 if variant == NOQUORUM else n // 2 + 1
        names = [node_name(i) for i in range(n + 1)]
        self._timeout = [Action("timeout", names[i]) for i in range(n + 1)]
        self._lead = [Action("become-leader", names[i]) for i in range(n + 1)]
        self._handle_cache: dict[Msg, Action] = {}
        self._drop_cache: dict[Msg, Action] = {}
        self._renamings: dict[tuple[int, ...], Renaming] = {}
        # RequestVote(t, i, j) to every other node j, sorted, for each term t and node i
        self._requests = [
            [
                tuple((REQUEST_VOTE, t, i, j, 0) for j in range(1, n + 1) if j != i)
                for i in range(n + 1)
            ]
            for t in range(max_term + 1)
        ]

    # -- actions --------------------------------------------------------------

    def _handle_action(self, m: Msg) -> Action:
        action = self._handle_cache.get(m)
        if action is None:
            kind, t, s, d, g = m
            if kind == REQUEST_VOTE:
                action = Action("handle-request-vote", node_name(d), node_name(s), f"t{t}")
            else:
                note = f"t{t} {'granted' if g else 'refused'}"
                action = Action("handle-vote-response", node_name(d), node_name(s), note)
            self._handle_cache[m] = action
        return action

    def _drop_action(self, m: Msg) -> Action:
        action = self._drop_cache.get(m)
        if action is None:
            action = Action("drop", NETWORK, node_name(m[3]), _msg_text(m))
            self._drop_cache[m] = action
        return action

    def initial_states(self) -> list[ElectionState]:
        n = self.n
        return [ElectionState((1,) * n, (FOLLOWER,) * n, (0,) * n, (0,) * n, ())]

    def successors(self, state: ElectionState) -> Iterator[tuple[Action, ElectionState]]:
        names: list[Move] = []
        afters = self._moves(state, names)
        for who, after in zip(names, afters, strict=True):
            if isinstance(who, int):
                yield self._timeout[who] if who > 0 else self._lead[-who], after
            elif who[0] == DROP:
                yield self._drop_action(who[1]), after
            else:
                yield self._handle_action(who[1]), after

    def next_states(self, state: ElectionState) -> list[ElectionState]:
        return self._moves(state, None)

    def _moves(self, state: ElectionState, names: list[Move] | None) -> list[ElectionState]:
        """Each enabled action instance's next state, in order; with `names`, also each one's
        name, cheaply: i for Timeout(i), -i for BecomeLeader(i), (HANDLE, m) or (DROP, m).

        `successors` turns a name into an Action only when a trace is rebuilt; the search
        asks for next states alone (the hot loop: states are built with tuple.__new__,
        skipping the NamedTuple constructor's Python frame).
        """
        terms, roles, voted, granted, msgs = state
        n = self.n
        out: list[ElectionState] = []
        add = out.append
        for k in range(n):
            i = k + 1
            role = roles[k]
            # Timeout(i)
            if i <= self.nc and role != LEADER and terms[k] < self.max_term:
                t = terms[k] + 1
                requests = self._requests[t][i]
                add(
                    _new(
                        ElectionState,
                        (
                            terms[:k] + (t,) + terms[i:],
                            roles[:k] + (CANDIDATE,) + roles[i:],
                            voted[:k] + (i,) + voted[i:],
                            granted[:k] + (1 << i,) + granted[i:],
                            tuple(sorted(set(msgs).union(requests))) if msgs else requests,
                        ),
                    )
                )
                if names is not None:
                    names.append(i)
            # BecomeLeader(i)
            if role == CANDIDATE and granted[k].bit_count() >= self.need:
                add(
                    _new(
                        ElectionState,
                        (terms, roles[:k] + (LEADER,) + roles[i:], voted, granted, msgs),
                    )
                )
                if names is not None:
                    names.append(-i)
        for x, m in enumerate(msgs):
            rest = msgs[:x] + msgs[x + 1 :]
            dropped = _new(ElectionState, (terms, roles, voted, granted, rest))
            kind, t, s, d, g = m
            k = d - 1
            if kind == REQUEST_VOTE:
                add(self._request_vote(state, rest, t, s, d))
            # HandleRequestVoteResponse(m)
            elif t > terms[k]:
                add(
                    _new(
                        ElectionState,
                        (
                            terms[:k] + (t,) + terms[d:],
                            roles[:k] + (FOLLOWER,) + roles[d:],
                            voted[:k] + (0,) + voted[d:],
                            granted[:k] + (0,) + granted[d:],
                            rest,
                        ),
                    )
                )
            elif t == terms[k] and roles[k] == CANDIDATE and g:
                votes = granted[k] | 1 << s
                add(
                    _new(
                        ElectionState,
                        (terms, roles, voted, granted[:k] + (votes,) + granted[d:], rest),
                    )
                )
            else:  # a response that changes nothing: the same state as dropping it
                add(dropped)
            # DropMessage(m)
            add(dropped)
            if names is not None:
                names += ((HANDLE, m), (DROP, m))
        return out

    def _request_vote(
        self, state: ElectionState, rest: tuple[Msg, ...], t: int, j: int, i: int
    ) -> ElectionState:
        """HandleRequestVote(RV(t, j, i)): node i answers candidate j."""
        terms, roles, voted, granted, _ = state
        k = i - 1
        higher = t > terms[k]
        ti = t if higher else terms[k]
        vf = 0 if higher else voted[k]
        forget = self.variant == FORGETVOTE
        grant = t == ti and (forget or vf == 0 or vf == j)
        reply: Msg = (RESPONSE, ti, i, j, 1 if grant else 0)
        new_vote = j if grant and not forget else vf
        msgs = _insert(rest, reply)
        if higher:
            return _new(
                ElectionState,
                (
                    terms[:k] + (ti,) + terms[i:],
                    roles[:k] + (FOLLOWER,) + roles[i:],
                    voted[:k] + (new_vote,) + voted[i:],
                    granted[:k] + (0,) + granted[i:],
                    msgs,
                ),
            )
        if new_vote != voted[k]:
            voted = voted[:k] + (new_vote,) + voted[i:]
        return _new(ElectionState, (terms, roles, voted, granted, msgs))

    # -- partial-order reduction --------------------------------------------------
    # No local moves (Model.local_moves keeps its default: none). Timeout(i) and
    # BecomeLeader(i) change a role, which the claims read (candidate, leader). Every
    # other move takes a message out of the shared set, and for each message m,
    # handling m and DropMessage(m) are both enabled and each disables the other (the
    # benchmark's loss is unbounded), so neither commutes with the other; handling also
    # races with the other messages to the same node (who gets the vote).

    # -- symmetry -----------------------------------------------------------------

    def symmetry_groups(self) -> tuple[tuple[int, ...], ...]:
        """Nodes 1..NC may time out, NC+1..N may not: two groups of interchangeable ids."""
        return tuple(range(self.nc)), tuple(range(self.nc, self.n))

    def permute(self, state: ElectionState, perm: Sequence[int]) -> ElectionState:
        terms, roles, voted, granted, msgs = state
        pick, new_id, new_bits = self._renaming(tuple(perm))
        renamed = sorted([(kind, t, new_id[a], new_id[b], ok) for kind, t, a, b, ok in msgs])
        return ElectionState(
            pick(terms),
            pick(roles),
            tuple([new_id[v] for v in pick(voted)]),
            tuple([new_bits[g] for g in pick(granted)]),
            tuple(renamed),
        )

    def _renaming(self, perm: tuple[int, ...]) -> Renaming:
        """For a renaming: who lands at each position, each id's new id, each vote set's."""
        found = self._renamings.get(perm)
        if found is None:
            n = self.n
            inverse = [0] * n
            for old, new in enumerate(perm):
                inverse[new] = old
            new_id = (0, *(p + 1 for p in perm))  # id 0 (nobody) stays 0
            new_bits = tuple(
                sum(1 << new_id[j] for j in range(1, n + 1) if bits >> j & 1)
                for bits in range(1 << (n + 1))
            )
            found = self._renamings[perm] = (itemgetter(*inverse), new_id, new_bits)
        return found

    def node_keys(self, state: ElectionState) -> list[tuple[int, ...]]:
        """Term, role, whom it voted for (nobody, itself, another), votes, messages in and out."""
        terms, roles, voted, granted, msgs = state
        traffic = [0] * (self.n + 1)
        for kind, _, a, b, ok in msgs:
            traffic[a] += 1 + 4 * kind + 16 * ok
            traffic[b] += 256 * (1 + 4 * kind + 16 * ok)
        return [
            (t, r, 0 if not v else 1 if v == i else 2, g.bit_count(), m)
            for i, t, r, v, g, m in zip(
                range(1, self.n + 1), terms, roles, voted, granted, traffic[1:], strict=True
            )
        ]

    # -- the compiled twin ---------------------------------------------------------

    def kernel(self, symmetric: bool) -> Kernel[ElectionState] | None:
        """models/kernels/raft_election.py, for this class only, where numba is installed."""
        if type(self) is not RaftElectionModel:
            return None  # a subclass may change what the kernel would not know
        try:
            from leadercheck.models.kernels.raft_election import (  # noqa: PLC0415 (numba)
                RaftElectionKernel,
            )
        except ImportError:
            return None
        n, nc, top, variant = self.n, self.nc, self.max_term, self.variant
        return RaftElectionKernel(n, nc, top, variant, symmetric, ElectionState)

    # -- traces -----------------------------------------------------------------

    def describe(self, state: ElectionState) -> dict[str, dict[str, object]]:
        out: dict[str, dict[str, object]] = {}
        for i, node in enumerate(state.nodes, start=1):
            out[node_name(i)] = {
                "role": node.role,
                "term": node.epoch,
                "voted_for": node_name(node.voted) if node.voted else None,
                "votes_granted": [node_name(v) for v in node.votes],
            }
        out[NETWORK] = {"msgs": [_msg_text(m) for m in state.msgs]}
        return out

    def summary(self, state: ElectionState) -> dict[str, str]:
        out: dict[str, str] = {}
        for i, node in enumerate(state.nodes, start=1):
            text = f"{node.role} t{node.epoch}"
            if node.role == "candidate":
                text += f" (votes {_names(node.votes)})"
            out[node_name(i)] = text
        return out


def build(N: int, NC: int, MaxTerm: int, variant: int) -> RaftElectionModel:  # noqa: N803
    return RaftElectionModel(N, NC, MaxTerm, variant)


PARAMS = (
    Param("N", 3, 2, 5, "number of nodes"),
    Param("NC", 2, 1, 5, "only nodes 1..NC may time out and stand as candidates (NC <= N)"),
    Param("MaxTerm", 3, 2, 4, "terms range over 1..MaxTerm; every node starts in term 1"),
    choice(
        "variant",
        "correct",
        VARIANTS,
        "correct; noquorum (any two votes win); forgetvote (votes are not recorded)",
    ),
)

PROTOCOLS = (
    ProtocolEntry(
        "raft-election",
        "the Raft election benchmark (TLA+/Promela reference): terms, votes, a message set",
        PARAMS,
        build,
    ),
)
