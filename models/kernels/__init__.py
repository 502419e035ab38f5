"""Compiled kernels of catalogue models (checker/kernel.py): numba code, imported only when a
search asks a model for its kernel and numba is installed (the `fast` extra)."""
