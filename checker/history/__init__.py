"""Recorded histories: a real system's events, judged on their own and against a model.

A history is what a real leader election logged (acquire, renew, lose, write, each with
its time and fencing token). `format` reads one (or a conformance timeline), `safety`
judges single-leader and no-stale-write on the events themselves, `permits` searches the
model's states for a behaviour that shows exactly those events, and `chart` draws what
the model did as the usual sequence chart. The search uses only the Model API and the
cluster vocabulary; the engine knows nothing of histories.
"""
