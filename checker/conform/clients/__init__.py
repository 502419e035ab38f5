"""The clients a node's process runs, one module per real system, each a class `Client`.

A client keeps what a real node keeps in memory (its lease, its token, the write it has
decided to send) and offers the operations a binding asks of it as `op_<name>` methods.
Each runs in its own process (checker/conform/agent.py), so a pause or a crash of the
process is a pause or a crash of the node.
"""
