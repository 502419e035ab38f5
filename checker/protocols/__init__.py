"""Which protocols a command runs: the built-in catalogue or a user's module, loaded through
the same door (catalogue.py), and the child process that prints a protocol's successor order
for `verify --lint` (order_probe.py). The room that names the catalogue and the expected
verdicts for the others: the engine, rendering and conformance never import models/ or specs/."""
