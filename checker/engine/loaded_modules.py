"""The user's modules this process loaded from files, so another process can load them too.

A model defined in a user's file (`verify --model FILE.py`) is imported under a name of
its own. Forked worker processes inherit it; a Ray actor starts afresh, so before it
unpickles a model it loads the same files under the same names (`load_again`).
"""

from __future__ import annotations

import importlib.util
import sys

_LOADED: dict[str, str] = {}  # module name -> the file's absolute path
_FOLDERS: list[str] = []  # folders put on sys.path for them, in order


def remember(name: str, path: str, folder: str) -> None:
    """Record that module `name` was loaded from `path`, with `folder` on sys.path."""
    _LOADED[name] = path
    remember_folder(folder)


def remember_folder(folder: str) -> None:
    """Record a folder put on sys.path for a dotted module (imported by name elsewhere)."""
    if folder not in _FOLDERS:
        _FOLDERS.append(folder)


def loaded() -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    """What `load_again` needs: the (name, path) of each module, and the folders."""
    return tuple(_LOADED.items()), tuple(_FOLDERS)


def load_again(modules: tuple[tuple[str, str], ...], folders: tuple[str, ...]) -> None:
    """Load each recorded module under its name, unless this process has it already."""
    for folder in folders:
        if folder not in sys.path:
            sys.path.insert(0, folder)
    for name, path in modules:
        if name in sys.modules:
            continue
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {path} again as {name}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
