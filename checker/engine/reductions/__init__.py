"""Reductions a search may apply: one representative per orbit of interchangeable nodes
(symmetry.py), and one local action explored alone (por.py). Both keep every verdict."""
