"""Symbolic verification with z3: the one package that imports z3.

The generic parts (answers, bounded model checking, induction, timing synthesis) know
nothing about protocols; `checker.solver.encodings` states protocols in z3 and is the one
solver module that may import `models`, to decode a z3 model into the protocol's own
states so a symbolic counterexample renders and replays like any other trace.
"""
