"""Searches for state spaces that do not fit: random walks (simulation) and bitstate
depth-first search, alone or as a swarm of diversified workers.

They share the exhaustive search's model, actions, claims observer and trace rebuild,
and differ in what they remember: a walk remembers nothing but its own moves, a
bitstate search a Bloom filter of fixed size. Neither can show that a claim holds, so
their verdicts are VIOLATED (a real, replayed and shortened trace), a witnessed
`sometimes` claim, or INCOMPLETE with coverage figures (checker/result.Coverage).
"""

# The two sampled strategies register when the registry imports this package.
from leadercheck.checker.engine.strategies.sampling import bitstate, simulate  # noqa: E402, F401
