"""A user's protocol whose states hold frozensets of node ids, with interchangeable nodes.

Each node votes once, for any node (itself included), and keeps the set of the nodes that
voted for it; a node with a majority of the votes may declare itself leader. All nodes are
one symmetry group, with no node keys: the engine tries every renaming and keeps the least
in the order_key. Under Python's `<` frozensets compare as subsets, a partial order:
`votes-partial` declares the state itself as its order_key, which --symmetry and --lint
refuse; `votes` keeps the default, which orders every state totally.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import NamedTuple

from leadercheck.checker import Action, Model, always, sometimes
from leadercheck.models.params import Param, ProtocolEntry


class Voter(NamedTuple):
    voted: int  # the id it voted for; 0: not yet
    votes: frozenset[int]  # the ids of the nodes that voted for it
    leader: bool


VotesState = tuple[Voter, ...]


class FrozenVotes(Model[VotesState]):
    def __init__(self, nodes: int) -> None:
        self.n = nodes

    def initial_states(self) -> list[VotesState]:
        return [tuple(Voter(0, frozenset(), False) for _ in range(self.n))]

    def successors(self, s: VotesState) -> Iterator[tuple[Action, VotesState]]:
        for i, me in enumerate(s, start=1):
            if not me.voted:
                for j in range(1, self.n + 1):
                    nodes = list(s)
                    nodes[i - 1] = nodes[i - 1]._replace(voted=j)
                    nodes[j - 1] = nodes[j - 1]._replace(votes=nodes[j - 1].votes | {i})
                    yield Action("vote", f"n{i}", f"n{j}"), tuple(nodes)
            if not me.leader and 2 * len(me.votes) > self.n:
                nodes = list(s)
                nodes[i - 1] = me._replace(leader=True)
                yield Action("lead", f"n{i}"), tuple(nodes)

    def symmetry_groups(self) -> tuple[tuple[int, ...], ...]:
        return (tuple(range(self.n)),)

    def permute(self, s: VotesState, perm: Sequence[int]) -> VotesState:
        new_id = (0, *(p + 1 for p in perm))
        nodes: list[Voter] = list(s)
        for old, me in enumerate(s):
            nodes[perm[old]] = Voter(
                new_id[me.voted], frozenset(new_id[v] for v in me.votes), me.leader
            )
        return tuple(nodes)

    def summary(self, s: VotesState) -> dict[str, str]:
        return {
            f"n{i}": f"voted n{me.voted}; votes {sorted(me.votes)}" + (" leader" * me.leader)
            for i, me in enumerate(s, start=1)
        }


class PartialOrder(FrozenVotes):
    """The state itself as the order: its frozensets compare as subsets."""

    def order_key(self, s: VotesState) -> VotesState:
        return s


one_leader = always("one-leader", lambda s: sum(me.leader for me in s) <= 1)
elected = sometimes("elected", lambda s: any(me.leader for me in s))

NODES = Param("nodes", 3, 2, 4, "interchangeable nodes")
PROTOCOLS = (
    ProtocolEntry("votes", "votes kept as frozensets, default order", (NODES,), FrozenVotes),
    ProtocolEntry("votes-partial", "the same, ordered by <", (NODES,), PartialOrder),
)
PROPERTIES = (one_leader, elected)
EXPECTED = {
    "votes": {"one-leader": "HOLDS", "elected": "HOLDS"},
    "votes-partial": {"one-leader": "HOLDS", "elected": "HOLDS"},
}
