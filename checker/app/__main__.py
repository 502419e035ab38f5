"""`python -m leadercheck.checker.app`: the `verify` command."""

from leadercheck.checker.app.main import main

main()
