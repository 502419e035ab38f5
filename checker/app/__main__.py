"""`python -m leadercheck.checker.app`: the `verify` command, its stop signals taken first."""

from leadercheck.checker.app.launch import main

main()
