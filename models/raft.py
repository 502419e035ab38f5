"""Raft-style leader election by majority vote, and three ways to get it wrong.

The algorithm (the election half of Raft, without logs): every node keeps a
current term, starting at 0, and the node it voted for in that term. A node that is
not leader may time out at any moment (time is not modelled: an election timeout
is a nondeterministic step); it starts term + 1, votes for itself and sends
RequestVote to every node it can reach. A node grants its vote if the request's
term is its current term and it has not voted for anyone else in that term, so it
votes at most once per term; it answers VoteGranted or VoteRefused with its term.
A candidate that collects votes from a strict majority of the cluster, itself
included, leads that term. Any message with a higher term makes the receiver adopt
the term and step down to follower, a leader too. Two majorities always share a
node, and that node votes once per term, so there is at most one leader per term.
The current term and the vote survive a crash (they are on disk); the role and the
votes received do not. A leader writes to the storage with its term as the epoch;
the storage checks nothing, and a leader that has not heard of a newer term yet
still believes it leads, so a deposed leader's write may land after its
successor's: Raft alone does not make writes to an outside system safe.

The broken variants, each a real bug:

- `raft-no-quorum` counts the quorum against the nodes the candidate can see (up and
  on its side of a partition), as a cluster that shrinks its membership on failure
  detection does. With everyone visible it is a true majority; behind a partition a
  lone node is a majority of one and elects itself while the other side elects
  another leader in the same term.
- `raft-volatile-vote` keeps the current term on disk but the vote in memory (the
  term is written on every change and plainly needed; the vote looks like part of the
  election in progress). A node that votes, crashes and restarts in the same term has
  forgotten its vote and votes again, for another candidate: two majorities of one
  term no longer share a voter that refuses the second. Forgetting the term too
  breaks it the same way, in as many steps.
- `even-quorum` is correct Raft on an even cluster split exactly in half by a
  partition that never heals: neither side holds a strict majority, so nobody is ever
  elected, which is why clusters have an odd size. With five nodes the split is 2/3
  and the three elect a leader.

There are no heartbeats: a leader steps down only when a message brings a newer
term, so one elected before a partition leads on in a minority, and a candidate
whose requests are lost simply times out again.

Liveness needs a timing assumption. Under weak fairness alone, candidates may split the
votes forever (two time out together, again and again); Raft escapes by randomized
election timeouts, and its paper's timing requirement, broadcast time much shorter than
the election timeout. `raft` and `even-quorum` model that as a moment when timing
stabilizes (global stabilization time, as in partial synchrony): a `stabilize` step of
the clock, weakly fair, so every fair behaviour takes it, after which no fault happens
(recoveries still may) and an election timeout fires only when no message is in flight:
one election at a time. Before it, anything goes, so every behaviour without the step
is still explored and the safety verdicts see all of them. Because terms are bounded,
one term is kept for after it (`terms` + 1): otherwise the votes could be split until
every term is used up, a behaviour that exists only because of the bound.

Faults: crash and restart,
node-to-node partitions, message loss (all from `ClusterModel`; the clock's tick
changes nothing here). Terms are bounded by `terms`: a node whose term has reached
it no longer times out. A message that can no longer change anything (a late vote,
a refusal that brings no newer term) is dropped as soon as it becomes useless rather
than delivered later to no effect: the same behaviours, far fewer states.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import partial
from typing import Any, NamedTuple

from leadercheck.checker.kernel import Kernel
from leadercheck.checker.model import TICK, Action, Model
from leadercheck.models.cluster import (
    STORAGE,
    ClusterModel,
    ClusterState,
    FaultBounds,
    InterchangeableNodes,
    Message,
    Network,
    Storage,
    Store,
)
from leadercheck.models.cluster.base import Successor
from leadercheck.models.cluster.faults import Faults
from leadercheck.models.cluster.network import islands
from leadercheck.models.cluster.nodes import CLOCK, node_name, node_set, with_life
from leadercheck.models.cluster.records import quick_replace
from leadercheck.models.params import NODES, Measure, Param, ProtocolEntry, fault_params

FOLLOWER, CANDIDATE, LEADER = "follower", "candidate", "leader"
REQUEST_VOTE, GRANTED, REFUSED = "RequestVote", "VoteGranted", "VoteRefused"
STABILIZE = "stabilize"


@quick_replace
class RaftNode(NamedTuple):
    up: bool = True
    paused: bool = False
    role: str = FOLLOWER  # volatile
    term: int = 0  # currentTerm, durable
    voted: int = 0  # votedFor in `term` (0: nobody), durable unless the variant forgets it
    votes: frozenset[int] = frozenset()  # granted votes received as candidate, volatile

    @property
    def is_leader(self) -> bool:
        return self.role == LEADER

    @property
    def epoch(self) -> int:
        return self.term

    @property
    def tenure(self) -> int:
        return self.term if self.role == LEADER else 0

    def describe(self) -> dict[str, object]:
        return {
            "up": self.up,
            "paused": self.paused,
            "role": self.role,
            "term": self.term,
            "voted_for": node_name(self.voted) if self.voted else None,
            "votes_from": [node_name(n) for n in sorted(self.votes)],
        }

    def summary(self) -> str:
        text = f"{self.role} t{self.term}"
        if self.role == FOLLOWER and self.voted:
            text += f", voted {node_name(self.voted)}"
        return with_life(self.up, self.paused, text)

    def adopt(self, term: int) -> RaftNode:
        """Step down to follower in a newer term, with no vote cast in it yet."""
        return self._replace(role=FOLLOWER, term=term, voted=0, votes=frozenset())


class Timing(NamedTuple):
    """Whether timing has stabilized (see the module docstring); kept in `extra`."""

    stable: bool = False

    def describe(self) -> dict[str, object]:
        return {"stable": self.stable}


def _tally(have: int, need: int, term: int, leads: bool) -> str:
    text = f"{have} vote{'s' if have > 1 else ''}, {need} needed"
    return f"{text}: leader t{term}" if leads else text


def _timeout_note(term: int, peers: tuple[int, ...], need: int) -> str:
    """The note of a timeout (written only when the step is shown)."""
    asked = f"RequestVote to {node_set(peers)}" if peers else "nobody reachable"
    return f"term {term}: {asked}, {_tally(1, need, term, need <= 1)}"


def _delivery_note(msg: Message, before: RaftNode, after: RaftNode, need: int) -> str:
    """The note of a delivery, from the receiver before and after it."""
    notes = []
    if msg.epoch > before.term:
        was = f", steps down from {before.role}" if before.role != FOLLOWER else ""
        notes.append(f"adopts term {msg.epoch}{was}")
    if msg.kind == REQUEST_VOTE:
        grant = msg.epoch == after.term and after.voted == msg.src
        notes.append(
            f"grants its term {after.term} vote" if grant else f"refuses in term {after.term}"
        )
    elif msg.kind == GRANTED:
        have = len(after.votes)
        notes.append(_tally(have, need, after.term, have >= need))
    return "; ".join(notes)


def _stable(s: ClusterState) -> bool:
    return isinstance(s.extra, Timing) and s.extra.stable


class RaftModel(InterchangeableNodes, ClusterModel):
    """Majority election with terms; the variants change how the quorum or the vote is kept.

    Nodes are interchangeable (`--symmetry`); a record names nodes in `voted` and `votes`.
    """

    uses_store = False
    node_partitions = True

    def rename_node(self, node: RaftNode, new_id: Sequence[int]) -> RaftNode:
        return node._replace(
            voted=new_id[node.voted], votes=frozenset(new_id[j] for j in node.votes)
        )

    def node_key(self, node: RaftNode, i: int) -> tuple[object, ...]:
        vote = "none" if not node.voted else "itself" if node.voted == i else "another"
        return (node.up, node.paused, node.role, node.term, vote, len(node.votes), i in node.votes)

    def __init__(
        self,
        nodes: int,
        terms: int,
        faults: FaultBounds,
        *,
        visible_quorum: bool = False,
        durable_vote: bool = True,
        stabilizes: bool = False,
    ) -> None:
        super().__init__(nodes, faults)
        self.terms = terms
        self.visible_quorum = visible_quorum
        self.durable_vote = durable_vote
        self.stabilizes = stabilizes

    def initial_extra(self) -> dict[str, Any]:
        return {"extra": Timing()} if self.stabilizes else {}

    def last_term(self, s: ClusterState) -> int:
        """The highest term a node may start: one more once timing has stabilized."""
        return self.terms + 1 if _stable(s) else self.terms

    def initial_node(self, i: int) -> RaftNode:
        return RaftNode()

    def quorum(self, s: ClusterState, i: int) -> int:
        """Votes node i needs to win: a strict majority of the cluster (or of what it sees)."""
        if self.visible_quorum:
            return len(self._reachable(s, i, include_self=True)) // 2 + 1
        return self.n // 2 + 1

    def _reachable(self, s: ClusterState, i: int, include_self: bool = False) -> list[int]:
        return [
            j
            for j in self.ids
            if (include_self or j != i) and s.node(j).up and s.net.connected(i, j)
        ]

    def _count(self, s: ClusterState, i: int, node: RaftNode) -> tuple[RaftNode, int]:
        """A candidate counts its votes; it leads once they reach the quorum (also returned,
        for the note)."""
        need = self.quorum(s, i)
        if len(node.votes) >= need:
            return node._replace(role=LEADER), need
        return node, need

    def node_steps(self, s: ClusterState, i: int) -> Iterator[Successor]:
        node: RaftNode = s.node(i)
        name = node_name(i)
        if node.role != LEADER and node.term < self.last_term(s) and self._may_time_out(s, i):
            term = node.term + 1
            asks = [Message(REQUEST_VOTE, i, j, term) for j in self.ids if j != i]
            after, unreached = s.post(*asks)
            peers = tuple(m.dst for m in asks if m not in unreached)
            candidate = node._replace(role=CANDIDATE, term=term, voted=i, votes=frozenset({i}))
            candidate, need = self._count(s, i, candidate)
            note = partial(_timeout_note, term, peers, need)
            action = Action("timeout", name, None, note, unreached=unreached)
            yield action, after.with_node(i, candidate)
        if node.role == LEADER:
            storage, _ = s.storage.write(node.term, fencing=False)
            wrote = f"term {node.term} accepted"
            yield Action("write", name, STORAGE, wrote), s._replace(storage=storage)

    def deliver(self, s: ClusterState, msg: Message) -> Successor:
        i = msg.dst
        before: RaftNode = s.node(i)
        node = before.adopt(msg.epoch) if msg.epoch > before.term else before
        need = 0
        unreached: tuple[Message, ...] = ()
        if msg.kind == REQUEST_VOTE:
            if msg.epoch == node.term and node.voted in (0, msg.src):
                node = node._replace(voted=msg.src)
            granted = node.voted == msg.src and msg.epoch == node.term
            s, unreached = s.post(Message(GRANTED if granted else REFUSED, i, msg.src, node.term))
        elif msg.kind == GRANTED:  # useful, so the receiver is a candidate in that term
            node, need = self._count(s, i, node._replace(votes=node.votes | {msg.src}))
        note = partial(_delivery_note, msg, before, node, need)
        action = Action(msg.kind, node_name(msg.src), node_name(i), note, unreached=unreached)
        return action, s.with_node(i, node)

    def successors(self, s: ClusterState) -> Iterator[Successor]:
        """The shared steps, with every message its receiver can no longer use dropped;
        then, where timing may still stabilize, the step that stabilizes it."""
        for action, after in super().successors(s):
            live = tuple(m for m in after.net.msgs if self._useful(after, m))
            if len(live) < len(after.net.msgs):
                after = after._replace(net=after.net._replace(msgs=live))
            yield action, after
        if self.stabilizes and not _stable(s):
            note = "no more faults; one election at a time"
            yield (
                # the clock's, weakly fair in a class of its own (not the tick's)
                Action(STABILIZE, CLOCK, None, note, TICK, fairness=STABILIZE),
                s._replace(faults=Faults(), extra=Timing(stable=True)),
            )

    def _useful(self, s: ClusterState, msg: Message) -> bool:
        """Whether delivering `msg` could still change anything, now or later.

        Terms only grow, and a vote once cast stays for its term (a crash drops the
        messages to the node), so a message useless now stays useless: a vote for a
        candidacy that is over, a refusal that brings no newer term, and a request that
        cannot be granted when its sender has reached the last term, so that no refusal
        can tell it of a newer one. (Stabilizing raises the last term by one: a request
        dropped before it could afterwards have brought its sender a refusal with the kept
        term. Dropping it only loses a step-down, which no claim can be broken by, and the
        sender learns the term from the RequestVote that raised the refuser to it.)
        """
        node: RaftNode = s.node(msg.dst)
        if msg.kind == GRANTED:
            return node.role == CANDIDATE and node.term == msg.epoch
        if msg.kind == REFUSED:
            return msg.epoch > node.term
        if msg.epoch > node.term or (msg.epoch == node.term and node.voted in (0, msg.src)):
            return True
        return s.node(msg.src).term < self.last_term(s)

    def _may_time_out(self, s: ClusterState, i: int) -> bool:
        """Once timing has stabilized, an election timeout waits for the network to drain,
        and a node that cannot reach a majority does not stand (as with Raft's PreVote)."""
        if not _stable(s):
            return True
        return not s.net.msgs and 2 * len(self._reachable(s, i, include_self=True)) > self.n

    def describe(self, s: ClusterState) -> Mapping[str, Mapping[str, object]]:
        view = dict(super().describe(s))
        if isinstance(s.extra, Timing):
            view["timing"] = s.extra.describe()
        return view

    # -- the compiled twin ---------------------------------------------------------

    def kernel(self, symmetric: bool) -> Kernel[ClusterState] | None:
        """models/kernels/raft.py, for these classes only (a subclass may change what the
        kernel would not know), up to five nodes, where numba is installed."""
        if type(self) not in (RaftModel, SplitRaftModel) or self.n > 5 or self.fault_kinds:
            return None
        last = self.terms + (1 if self.stabilizes else 0)
        if last > 6 or max(self.bounds[:4]) > 7:
            return None
        try:
            from leadercheck.models.kernels.raft import RaftKernel  # noqa: PLC0415 (numba)
        except ImportError:
            return None
        build = {
            "RaftNode": RaftNode,
            "ClusterState": ClusterState,
            "Store": Store,
            "Storage": Storage,
            "Network": Network,
            "Message": Message,
            "Faults": Faults,
            "Timing": Timing,
            "islands": islands,
        }
        return RaftKernel(self, symmetric, build)

    def crash_node(self, node: RaftNode) -> RaftNode:
        return RaftNode(up=False, term=node.term, voted=node.voted if self.durable_vote else 0)

    def restart_node(self, node: RaftNode, i: int) -> RaftNode:
        return node._replace(up=True)


class SplitRaftModel(RaftModel):
    """Majority election with the cluster split in two from the start, for good.

    The first half of the nodes (rounded down) is cut off from the rest in the initial
    state; there are no partition or heal steps.
    """

    heals = False

    def initial_network(self) -> Network:
        return Network(island=frozenset(range(1, self.n // 2 + 1)))


# -- the message cost of one election ------------------------------------------


class FirstTerm(NamedTuple):
    """Who has stood and who voted for whom in term 1, in a `FirstTermElection`."""

    votes: tuple[int, ...]  # node i at i - 1: 0 still in term 0; c: voted for c (itself: stood)


class FirstTermElection(Model[FirstTerm]):
    """One election: term 1 of `RaftModel` from all followers in term 0, with no fault.

    `RaftModel(nodes, terms=1)` with no fault budget and no writes, and no message
    dropped as useless (every RequestVote is answered, and the answer counted). A node
    in term 0 may time out and stand (a vote for itself, RequestVote to the other
    N - 1) until a RequestVote reaches it; the first to reach it gets its vote, and it
    refuses every other. A candidate whose votes reach a majority leads. Nobody can
    start term 2, so an election whose votes split (no majority) ends without a
    leader: Raft would hold another one, in term 2, and count it as another election.

    The state is the vote of each node (0: still in term 0), because everything else
    follows from it. The messages in flight are exactly one RequestVote from every
    candidate to every node still in term 0: a node in term 1 has answered all it got
    (below), and a candidate sends to every node. Replies are delivered, and a
    RequestVote to a node already in term 1 is answered (refused), at once; both are
    sound, for the same reason as OKs in `BullyElection`: a reply changes only its
    candidate's vote count, and in term 1 a candidate and a leader answer every
    message alike (refuse: they voted for themselves) and cannot stand again; a
    refusal changes nothing. So a run of this model is a run of the full model with
    those deliveries moved earlier, the same messages sent.
    """

    def __init__(self, nodes: int) -> None:
        self.n = nodes
        self.need = nodes // 2 + 1

    def initial_states(self) -> list[FirstTerm]:
        return [FirstTerm((0,) * self.n)]

    def successors(self, s: FirstTerm) -> Iterator[tuple[Action, FirstTerm]]:
        votes = s.votes
        candidates = [c for c in range(1, self.n + 1) if votes[c - 1] == c]
        for i in range(1, self.n + 1):
            if not votes[i - 1]:
                after = FirstTerm(votes[: i - 1] + (i,) + votes[i:])
                note = f"term 1: RequestVote to {self.n - 1} nodes"
                if refused := [j for j in range(1, self.n + 1) if j != i and votes[j - 1]]:
                    note += f"; {node_set(tuple(refused))} refuse at once (in term 1)"
                yield Action("timeout", node_name(i), None, note), after
        for v in range(1, self.n + 1):
            if votes[v - 1]:
                continue
            for c in candidates:
                after = FirstTerm(votes[: v - 1] + (c,) + votes[v:])
                note = f"grants its term 1 vote, {self.votes_for(after, c)} of {self.need}"
                if len(candidates) > 1:
                    note += f"; refuses {len(candidates) - 1} other RequestVote"
                yield Action(REQUEST_VOTE, node_name(c), node_name(v), note), after

    def votes_for(self, s: FirstTerm, c: int) -> int:
        return sum(1 for v in s.votes if v == c)

    def leaders(self, s: FirstTerm) -> list[int]:
        return [
            c
            for c in range(1, self.n + 1)
            if s.votes[c - 1] == c and self.votes_for(s, c) >= self.need
        ]

    def describe(self, s: FirstTerm) -> dict[str, dict[str, object]]:
        return {
            node_name(i): {"voted_for": node_name(v) if v else None}
            for i, v in enumerate(s.votes, start=1)
        }

    def summary(self, s: FirstTerm) -> dict[str, str]:
        out = {}
        for i, v in enumerate(s.votes, start=1):
            if v == i:
                out[node_name(i)] = "leader t1" if i in self.leaders(s) else "candidate t1"
            else:
                out[node_name(i)] = f"follower t1, voted {node_name(v)}" if v else "follower t0"
        return out


def first_term_messages(s: FirstTerm) -> int:
    """RequestVote + VoteGranted + VoteRefused sent so far in a `FirstTermElection`.

    Each of the k candidates sent N - 1 RequestVotes; all are answered but the k in
    flight to each of the z nodes still in term 0: 2k(N - 1) - kz.
    """
    n, k = len(s.votes), sum(1 for i, v in enumerate(s.votes, start=1) if v == i)
    z = s.votes.count(0)
    return 2 * k * (n - 1) - k * z


def first_term_over(s: FirstTerm) -> bool:
    """A leader is elected and no message is in flight (every node is in term 1)."""
    n = len(s.votes)
    if 0 in s.votes:
        return False
    return any(s.votes[c - 1] == c and s.votes.count(c) >= n // 2 + 1 for c in range(1, n + 1))


# One election from a leaderless start (every node a follower in term 0) with no fault, until
# a leader is elected and no message is in flight. Counted: every RequestVote and every reply
# (VoteGranted, VoteRefused). Worst and best over every interleaving; elections whose votes
# split (no leader in term 1) are not counted. The mean is over the distinct reachable end
# states: who stood and who voted for whom.
ELECTION_MESSAGES = Measure(
    "messages per election in term 1 (RequestVote + replies until a leader and nothing in "
    "flight; mean over the distinct end states: who stood, who voted for whom)",
    "nodes",
    (3, 4, 5, 6, 7),
    FirstTermElection,
    first_term_messages,
    first_term_over,
)


TERMS = Param("terms", 2, 1, 4, "highest term a node may start (bounds elections)")


def _params(nodes: Param = NODES, **faults: int) -> tuple[Param, ...]:
    budgets = fault_params(**{"losses": 0, "pauses": 0, **faults})
    return (nodes, TERMS, *budgets)


def _builder(**variant: bool) -> Callable[..., RaftModel]:
    def build(nodes: int, terms: int, **faults: int) -> RaftModel:
        return RaftModel(nodes, terms, FaultBounds(**faults), **variant)

    return build


def _build_split(nodes: int, terms: int, **faults: int) -> RaftModel:
    return SplitRaftModel(nodes, terms, FaultBounds(**faults), stabilizes=True)


PROTOCOLS = (
    ProtocolEntry(
        "raft",
        "Raft-style election: terms, one durable vote per term, a strict majority to win",
        _params(crashes=1, partitions=1),
        _builder(stabilizes=True),
        measures=(ELECTION_MESSAGES,),
    ),
    ProtocolEntry(
        "raft-no-quorum",
        "the same, but the majority is counted among the nodes the candidate can see",
        _params(crashes=0, partitions=1),
        _builder(visible_quorum=True),
    ),
    ProtocolEntry(
        "raft-volatile-vote",
        "the same, but the vote is kept in memory: a restarted node votes twice in a term",
        _params(crashes=1, partitions=0),
        _builder(durable_vote=False),
    ),
    ProtocolEntry(
        "even-quorum",
        "majority election on a cluster split in two halves that never heals",
        tuple(
            p
            for p in _params(
                Param("nodes", 4, 2, 5, "cluster size (the first half, rounded down, is cut off)"),
                crashes=0,
                partitions=0,
            )
            if p.name != "partitions"
        ),
        _build_split,
    ),
)
