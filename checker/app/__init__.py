"""The application room: `verify`'s modes, one module each, over one argument layer.

`main.py` is the command line (the exit-code contract, Ctrl-C, the output channel);
`args.py` parses and checks every argument and path before any work; `modes.py` says
which options each flag-selected mode takes. Each mode's module (check, gate, listing,
lint, symbolic, traces, conform, bench) runs one kind of command and prints through
`output.py`, so nothing a user's model prints can reach stdout.
"""
