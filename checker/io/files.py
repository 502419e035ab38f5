"""The one file layer: reads bounded, writes whole to a regular file or a new path.

Why one layer: inputs are untrusted (a trace file someone sent, `--readme /dev/zero`, a FIFO
that never ends) and outputs are named by the user (`--plot /dev/full` once replaced the
device node with a regular file, `--junit FIFO` hung). So:

- **Reads** open only regular files (a symbolic link to one is followed: reading through it
  changes nothing). Anything else is refused by `stat` before it is opened, so a FIFO cannot
  block and a device is never opened; the descriptor is opened non-blocking and checked
  again with `fstat` (the path may have changed in between). At most `limit + 1` bytes are
  read: `/proc` files, which claim size 0, are bounded too. Each kind of input has its
  limit below, far above anything leadercheck writes.
- **Checkpoints** have no size limit, only the regular-file rule: a checkpoint holds the
  whole store of the search that saved it, so an honest one is as large as that search's
  memory, and the resumed search needs that memory anyway. `open_regular` hands it to the
  checkpoint reader, which reads it entry by entry rather than into one buffer first.
- **Writes** go to a temporary file in the target's directory (created with `O_EXCL` and
  `O_NOFOLLOW`), are flushed and fsynced, then renamed over the target: a crash or a full
  disk leaves the previous file whole and no half-written one. The target must be absent
  or a regular file, never a symbolic link (the link would be replaced, not followed), a
  device, a FIFO, a socket or a directory. A file keeps its permission bits when replaced.
  The checks are made again just before the rename, since the path may have changed since
  the command line checked it.
- **Output checks** (`check_output_file`, `check_output_dir`) run before any work: a file's
  directory must exist (as with a shell redirection, a typo fails rather than creates); a
  directory may be missing (it is created when written, as `--out` always has been) but
  its nearest existing ancestor must be a writable directory. A directory given as a
  symbolic link to a directory is followed: files are added inside it, the link itself is
  never replaced, and each file inside obeys the file rules. Writability is probed by
  creating and removing a file, since permission bits say little to root or on special file
  systems. Nothing is left behind by a check.

Every refusal is a `LeadercheckError` with one line naming the option and the path.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import BinaryIO

from leadercheck.checker.errors import LeadercheckError

KiB = 1 << 10
MiB = 1 << 20

# The most read of each kind of input: far above what leadercheck writes, far below harm.
TRACE_LIMIT = 32 * MiB  # a trace file is a few KB; a long sampled walk, a few MB
README_LIMIT = 4 * MiB  # a Markdown file with a verdicts block
TOML_LIMIT = 1 * MiB  # an expectations manifest is a few KB
OUTPUT_LIMIT = 64 * MiB  # a file leadercheck wrote itself (golden traces, diagrams)

_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_HINT = "give a new path or a regular file"
_ENTRY_HINT = "remove it or give another directory"


class FileMissing(LeadercheckError):
    """An input that does not exist (a caller may say what it expected there)."""


def _label(path: Path, option: str | None) -> str:
    return f"{option} {path}" if option else str(path)


def _size(limit: int) -> str:
    if limit >= MiB and limit % MiB == 0:
        return f"{limit // MiB} MiB"
    if limit >= KiB and limit % KiB == 0:
        return f"{limit // KiB} KiB"
    return f"{limit} bytes"


def kind(mode: int) -> str:
    """What a non-regular file is, in words ("a FIFO"), from its `st_mode`."""
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISREG, "a regular file"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


# Reading


def open_regular(path: Path, option: str | None = None) -> BinaryIO:
    """A regular file opened for reading (a link to one is followed); anything else refused
    without being opened. For streaming a large input; `read_bytes` for a bounded one."""
    label = _label(path, option)
    try:
        before = os.stat(path)
        if not stat.S_ISREG(before.st_mode):
            raise LeadercheckError(f"{label} is {kind(before.st_mode)}, not a regular file")
        fd = os.open(path, _READ_FLAGS)
    except FileNotFoundError:
        raise FileMissing(f"cannot read {label}: no such file") from None
    except OSError as exc:
        raise LeadercheckError(f"cannot read {label}: {_reason(exc)}") from None
    try:
        after = os.fstat(fd)
        if not stat.S_ISREG(after.st_mode):  # swapped for something else since the stat
            raise LeadercheckError(f"{label} is {kind(after.st_mode)}, not a regular file")
    except BaseException:
        os.close(fd)
        raise
    # Outside the `except`: once the file object exists it owns the descriptor, and a Ctrl-C
    # landing as fdopen returns drops the object, which closes it; closing it again here
    # turned that Ctrl-C into "Bad file descriptor" (or closed a descriptor reused meanwhile)
    return os.fdopen(fd, "rb")


def read_bytes(path: Path, limit: int, option: str | None = None) -> bytes:
    """The whole of a regular file of at most `limit` bytes; a larger one is refused."""
    label = _label(path, option)
    with open_regular(path, option) as f:
        fd = f.fileno()
        too_large = f"{label}: larger than {_size(limit)}"
        if os.fstat(fd).st_size > limit:
            raise LeadercheckError(too_large)
        chunks: list[bytes] = []
        total = 0
        try:
            while total <= limit:  # the descriptor is non-blocking: a /proc file cannot hang
                chunk = os.read(fd, min(limit + 1 - total, MiB))
                if not chunk:
                    break
                chunks.append(chunk)
                total += len(chunk)
        except OSError as exc:
            raise LeadercheckError(f"cannot read {label}: {_reason(exc)}") from None
        if total > limit:
            raise LeadercheckError(too_large)
    return b"".join(chunks)


def read_text(path: Path, limit: int, option: str | None = None) -> str:
    """`read_bytes` decoded as UTF-8 (line endings kept as they are)."""
    try:
        return read_bytes(path, limit, option).decode("utf-8")
    except UnicodeDecodeError:
        raise LeadercheckError(f"{_label(path, option)} is not UTF-8 text") from None


def check_input_file(path: Path, option: str | None = None) -> None:
    """Fail early unless `path` is a regular file that can be opened for reading."""
    open_regular(path, option).close()


# Checking outputs before any work


def check_output_file(path: Path, option: str | None = None) -> None:
    """Fail now unless `path` can be written whole later: absent or a regular file (not a
    link), in an existing, writable directory. Creates nothing."""
    label = _label(path, option)
    _writable_target(path, label, _FILE_HINT)
    parent = path.parent
    try:
        mode = os.stat(parent).st_mode
    except FileNotFoundError:
        raise LeadercheckError(f"cannot write to {path}: no directory {parent}") from None
    except OSError as exc:
        raise LeadercheckError(f"cannot write to {path}: {_reason(exc)}") from None
    if not stat.S_ISDIR(mode):
        raise LeadercheckError(f"cannot write to {path}: {parent} is not a directory")
    _probe(parent, path)


def check_output_dir(path: Path, option: str | None = None) -> None:
    """Fail now unless files can later be written in directory `path`: an existing directory
    (or a link to one), or a missing one whose nearest existing ancestor is a writable
    directory. Creates nothing."""
    label = _label(path, option)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        if os.path.islink(path):
            raise LeadercheckError(f"{label} is a link to nothing; give a directory") from None
        _missing_dir(path)
        return
    except OSError as exc:
        raise LeadercheckError(f"cannot write to {path}: {_reason(exc)}") from None
    if not stat.S_ISDIR(mode):
        what = f"a symbolic link to {kind(mode)}" if os.path.islink(path) else kind(mode)
        raise LeadercheckError(f"{label} is {what}, not a directory")
    _probe(path, path)


def _missing_dir(path: Path) -> None:
    """A directory to be created: its nearest existing ancestor must be a writable directory."""
    for ancestor in path.absolute().parents:
        try:
            mode = os.stat(ancestor).st_mode
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise LeadercheckError(f"cannot write to {path}: {_reason(exc)}") from None
        if not stat.S_ISDIR(mode):
            raise LeadercheckError(f"cannot write to {path}: {ancestor} is not a directory")
        _probe(ancestor, path)
        return


def _writable_target(path: Path, label: str, hint: str) -> os.stat_result | None:
    """The target's own status (links not followed): None if absent, refused unless regular."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise LeadercheckError(f"cannot write to {path}: {_reason(exc)}") from None
    if not stat.S_ISREG(st.st_mode):
        raise LeadercheckError(f"{label} is {kind(st.st_mode)}, not a regular file; {hint}")
    return st


def _probe(directory: Path, target: Path) -> None:
    """Create and remove a file in `directory`: the one sure test that it can be written."""
    try:
        fd, tmp = _temp_file(directory, "probe", 0o600)
        os.close(fd)
        os.unlink(tmp)
    except OSError as exc:
        raise LeadercheckError(f"cannot write to {target}: {_reason(exc)}") from None


# Writing


def _temp_file(directory: Path, name: str, mode: int) -> tuple[int, Path]:
    """A new file beside the target, never an existing one nor through a link."""
    while True:
        tmp = directory / f".{name[:200]}.{secrets.token_hex(4)}.tmp"
        try:
            return os.open(tmp, _TEMP_FLAGS, mode), tmp
        except FileExistsError:
            continue


def _fsync_dir(directory: Path) -> None:
    """Make the renames durable; best effort (some file systems refuse a directory fsync)."""
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def atomic_writer(path: Path, option: str | None = None) -> Iterator[BinaryIO]:
    """A binary file that replaces `path` whole when the block ends, or not at all.

    For streaming a large output (a checkpoint); `write_bytes`/`write_text` for a small one.
    """
    label = _label(path, option)
    directory = path.parent
    tmp: Path | None = None
    try:
        old = _writable_target(path, label, _FILE_HINT)
        mode = stat.S_IMODE(old.st_mode) if old is not None else 0o666  # less the umask
        fd, tmp = _temp_file(directory, path.name, mode)
        with os.fdopen(fd, "wb") as f:
            if old is not None:
                os.fchmod(fd, mode)
            yield f
            f.flush()
            os.fsync(fd)
        _writable_target(path, label, _FILE_HINT)  # again: it may have changed meanwhile
        os.replace(tmp, path)
        tmp = None
        _fsync_dir(directory)
    except FileNotFoundError as exc:
        if not os.path.isdir(directory):
            raise LeadercheckError(f"cannot write to {path}: no directory {directory}") from None
        raise LeadercheckError(f"cannot write to {path}: {_reason(exc)}") from None
    except OSError as exc:
        raise LeadercheckError(f"cannot write to {path}: {_reason(exc)}") from None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def write_bytes(path: Path, data: bytes, option: str | None = None) -> Path:
    """Replace `path` (absent or a regular file) with `data`, whole or not at all."""
    with atomic_writer(path, option) as f:
        f.write(data)
    return path


def write_text(path: Path, text: str, option: str | None = None) -> Path:
    """`write_bytes` of `text` as UTF-8 (line endings as given)."""
    return write_bytes(path, text.encode("utf-8"), option)


def write_files(directory: Path, contents: Mapping[str, str | bytes]) -> tuple[Path, ...]:
    """Every file or none, in `directory` (created if missing): each staged under a
    temporary name, then all renamed into place. `contents` maps plain file names (no
    directory part) to text (written as UTF-8) or bytes."""
    for name in contents:
        if not name or name in (".", "..") or "/" in name or "\0" in name:
            raise LeadercheckError(f"{name!r} is not a plain file name; nothing written")
    staged: list[tuple[Path, Path]] = []
    try:
        directory.mkdir(parents=True, exist_ok=True)
        olds = {name: _entry(directory / name) for name in contents}
        for name, content in contents.items():
            old = olds[name]
            mode = stat.S_IMODE(old.st_mode) if old is not None else 0o666
            fd, tmp = _temp_file(directory, name, mode)
            staged.append((tmp, directory / name))
            with os.fdopen(fd, "wb") as f:
                if old is not None:
                    os.fchmod(fd, mode)
                f.write(content.encode("utf-8") if isinstance(content, str) else content)
                f.flush()
                os.fsync(fd)
        for _, final in staged:
            _entry(final)  # again: it may have changed meanwhile
        while staged:
            tmp, final = staged[0]
            os.replace(tmp, final)
            staged.pop(0)
        _fsync_dir(directory)
    except OSError as exc:
        raise LeadercheckError(f"cannot write to {directory}: {_reason(exc)}") from None
    finally:
        for tmp, _ in staged:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    return tuple(directory / name for name in contents)


def _entry(path: Path) -> os.stat_result | None:
    return _writable_target(path, str(path), _ENTRY_HINT)


def remove_file(path: Path) -> None:
    """Remove a file (a link itself, never its target); a directory is refused in one line."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise LeadercheckError(f"cannot remove {path}: {_reason(exc)}") from None
