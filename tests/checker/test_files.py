"""The file layer against special paths: every reader and writer refuses a device, a FIFO, a
link (writing), a directory, a missing place or an oversize file in one line, never hangs, and
leaves every path as it was (same inode, same type, no temporary file left beside it)."""

from __future__ import annotations

import ast
import io
import os
import pickle
import shutil
import stat
import tempfile
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leadercheck.checker.engine.checkpoint import FILE, Checkpoints
from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.io import files
from leadercheck.checker.render.golden import update_golden
from leadercheck.checker.render.readme import check_block, replace_block
from leadercheck.checker.render.trace_file import load_trace
from leadercheck.specs.expectations import load_expectations
from tests.helpers import PROC, deadline, snapshot, special_path

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 1024


special = partial(special_path, oversize=LIMIT)


def listing(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir()) if directory.is_dir() else []


def refused(call: Callable[[], object], text: str) -> str:
    """`call` raises a one-line LeadercheckError containing `text`, within the deadline."""
    with deadline(5.0), pytest.raises(LeadercheckError) as caught:
        call()
    message = str(caught.value)
    assert "\n" not in message and text in message, message
    return message


# Reading

READ_REFUSALS = [
    ("/dev/zero", "/dev/zero is a character device, not a regular file"),
    ("/dev/full", "/dev/full is a character device, not a regular file"),
    ("/dev/null", "/dev/null is a character device, not a regular file"),
    ("fifo", "fifo is a FIFO, not a regular file"),
    ("link-to-zero", "link-to-zero is a character device, not a regular file"),
    ("directory", "directory is a directory, not a regular file"),
    ("missing", "cannot read --in {path}: no such file"),
    ("dangling", "cannot read --in {path}: no such file"),
    ("oversize", "oversize: larger than 1 KiB"),
    (str(PROC), "status: larger than 16 bytes"),  # /proc claims size 0: the read is bounded
]


@pytest.mark.parametrize(("kind", "text"), READ_REFUSALS, ids=[k for k, _ in READ_REFUSALS])
def test_a_read_refuses_anything_but_a_small_regular_file(
    tmp_path: Path, kind: str, text: str
) -> None:
    path = special(tmp_path, kind)
    before = snapshot(path)
    limit = 16 if path == PROC else LIMIT
    message = refused(lambda: files.read_bytes(path, limit, "--in"), text.format(path=path))
    assert message.startswith(f"--in {path}") or message.startswith("cannot read --in")
    refused(lambda: files.read_text(path, limit, "--in"), text.format(path=path))
    assert snapshot(path) == before


def test_a_read_follows_a_link_to_a_regular_file_and_bounds_proc(tmp_path: Path) -> None:
    assert files.read_text(special(tmp_path, "symlink"), LIMIT) == "the link's target"
    assert "Pid:" in files.read_text(PROC, LIMIT * 64)


def test_a_read_refuses_text_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "binary"
    path.write_bytes(b"\xff\xfe")
    refused(lambda: files.read_text(path, LIMIT, "--in"), f"--in {path} is not UTF-8 text")


def test_a_missing_file_is_its_own_error(tmp_path: Path) -> None:
    with pytest.raises(files.FileMissing):
        files.open_regular(tmp_path / "none")


@pytest.mark.parametrize(
    "kind", ["/dev/zero", "/dev/full", "fifo", "link-to-zero", "directory", "missing"]
)
def test_every_input_reader_refuses_special_paths(tmp_path: Path, kind: str) -> None:
    """The program's own readers: trace files, TOML manifests, --readme, checkpoints."""
    path = special(tmp_path, kind)
    before = snapshot(path)
    name = path.name
    refused(lambda: load_trace(path), name)
    refused(lambda: load_expectations(path), name)
    refused(lambda: check_block(path, "verdicts"), name)
    if kind != "missing":  # a checkpoint is the file FILE in the --resume directory
        resume = tmp_path / "resume"
        resume.mkdir()
        (resume / FILE).symlink_to(path)
        cp = Checkpoints(tmp_path / "cp", {"protocol": "x"}, resume_from=resume)
        refused(cp.load, "not a regular file")
    assert snapshot(path) == before


def test_oversize_inputs_are_refused_by_kind(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    with big.open("wb") as f:  # sparse: the size is what is checked, not read
        f.truncate(files.TRACE_LIMIT + 1)
    refused(lambda: load_trace(big), f"{big}: larger than 32 MiB")
    toml = tmp_path / "expected.toml"
    toml.write_bytes(b"#" * (files.TOML_LIMIT + 1))
    refused(lambda: load_expectations(toml), f"{toml}: larger than 1 MiB")
    readme = tmp_path / "README.md"
    with readme.open("wb") as f:
        f.truncate(files.README_LIMIT + 1)
    refused(lambda: check_block(readme, "verdicts"), f"--readme {readme}: larger than 4 MiB")


# Writing

WRITE_REFUSALS = [
    ("/dev/full", "--out /dev/full is a character device, not a regular file; give a new path"),
    ("/dev/null", "--out /dev/null is a character device, not a regular file; give a new path"),
    ("fifo", "fifo is a FIFO, not a regular file; give a new path or a regular file"),
    ("symlink", "symlink is a symbolic link, not a regular file; give a new path"),
    ("dangling", "dangling is a symbolic link, not a regular file"),
    ("directory", "directory is a directory, not a regular file"),
    ("missing-parent", "cannot write to {path}: no directory {parent}"),
]


def _writers(path: Path) -> dict[str, Callable[[], object]]:
    def streamed() -> None:
        with files.atomic_writer(path, "--out") as f:
            f.write(b"new")

    return {
        "check_output_file": lambda: files.check_output_file(path, "--out"),
        "write_bytes": lambda: files.write_bytes(path, b"new", "--out"),
        "write_text": lambda: files.write_text(path, "new", "--out"),
        "atomic_writer": streamed,
    }


@pytest.mark.parametrize(("kind", "text"), WRITE_REFUSALS, ids=[k for k, _ in WRITE_REFUSALS])
def test_a_write_refuses_anything_but_a_regular_file_or_a_new_path(
    tmp_path: Path, kind: str, text: str
) -> None:
    path = special(tmp_path, kind)
    before, around = snapshot(path), listing(path.parent)
    target = (tmp_path / "target").read_bytes() if kind == "symlink" else None
    for writer in _writers(path).values():
        refused(writer, text.format(path=path, parent=path.parent))
        assert snapshot(path) == before  # not replaced: same type, same inode
        assert listing(path.parent) == around  # no temporary file left beside it
    if target is not None:
        assert (tmp_path / "target").read_bytes() == target


def test_write_files_refuses_all_when_one_target_is_special(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    os.mkfifo(out / "b.json")
    (out / "c.dot").symlink_to(tmp_path)
    before = {name: snapshot(out / name) for name in listing(out)}
    for bad in ("b.json", "c.dot"):
        refused(partial(files.write_files, out, {"a.json": "a", bad: "b"}), f"{out / bad} is a")
        assert {name: snapshot(out / name) for name in listing(out)} == before  # no a.json
    refused(lambda: files.write_files(out, {"../escape": "x"}), "not a plain file name")
    assert not (tmp_path / "escape").exists()


def test_write_files_writes_all_and_replaces_regular_files(tmp_path: Path) -> None:
    out = tmp_path / "new" / "out"
    written = files.write_files(out, {"a.json": "é", "b.bin": b"\0\1"})
    assert written == (out / "a.json", out / "b.bin")
    assert (out / "a.json").read_text(encoding="utf-8") == "é"
    (out / "a.json").chmod(0o600)
    files.write_files(out, {"a.json": "second"})
    assert (out / "a.json").read_text() == "second"
    assert stat.S_IMODE(os.stat(out / "a.json").st_mode) == 0o600  # its mode is kept
    assert listing(out) == ["a.json", "b.bin"]


def test_a_write_replaces_a_regular_file_whole_and_breaks_a_hard_link(tmp_path: Path) -> None:
    path = tmp_path / "report.xml"
    path.write_text("old")
    other = tmp_path / "other-name"
    os.link(path, other)
    files.check_output_file(path, "--junit")
    files.write_text(path, "new", "--junit")
    assert path.read_text() == "new" and other.read_text() == "old"
    assert listing(tmp_path) == ["other-name", "report.xml"]


def test_a_path_changed_since_it_was_checked_is_refused_at_write_time(tmp_path: Path) -> None:
    path = tmp_path / "plot.svg"
    files.check_output_file(path, "--plot")
    (tmp_path / "elsewhere").write_text("keep")

    def swapped() -> None:
        with files.atomic_writer(path, "--plot") as f:
            f.write(b"<svg/>")
            path.symlink_to(tmp_path / "elsewhere")  # someone else, meanwhile

    refused(swapped, f"--plot {path} is a symbolic link")
    assert path.is_symlink() and (tmp_path / "elsewhere").read_text() == "keep"
    assert listing(tmp_path) == ["elsewhere", "plot.svg"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "file"
    path.write_text("old")

    def interrupted() -> None:
        with files.atomic_writer(path) as f:
            f.write(b"half")
            raise OSError(28, "No space left on device")

    refused(interrupted, f"cannot write to {path}: No space left on device")
    assert path.read_text() == "old" and listing(tmp_path) == ["file"]


@pytest.mark.parametrize(
    ("kind", "text"),
    [
        ("/dev/null", "--out /dev/null is a character device, not a directory"),
        ("fifo", "is a FIFO, not a directory"),
        ("dangling", "is a link to nothing; give a directory"),
        ("oversize", "is a regular file, not a directory"),
        ("under-a-file", "cannot write to {path}: Not a directory"),
    ],
)
def test_an_output_directory_must_be_a_directory(tmp_path: Path, kind: str, text: str) -> None:
    if kind == "under-a-file":
        (tmp_path / "plain").write_text("")
        path = tmp_path / "plain" / "deeper" / "sub"
    else:
        path = special(tmp_path, kind)
    around = listing(tmp_path)
    refused(lambda: files.check_output_dir(path, "--out"), text.format(path=path))
    assert listing(tmp_path) == around


def test_an_output_directory_may_be_missing_or_a_link_to_one(tmp_path: Path) -> None:
    files.check_output_dir(tmp_path / "a" / "b" / "c", "--out")
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    files.check_output_dir(tmp_path / "link", "--out")
    files.write_files(tmp_path / "link", {"x.json": "{}"})
    assert (tmp_path / "link").is_symlink() and (real / "x.json").read_text() == "{}"
    assert listing(tmp_path) == ["link", "real"]  # the check made no directory


def test_the_programs_writers_refuse_special_paths(tmp_path: Path) -> None:
    """--readme's rewrite, --update-golden and a checkpoint over a FIFO or a link."""
    readme = tmp_path / "README.md"
    (tmp_path / "real.md").write_text("<!-- v:begin -->\n<!-- v:end -->\n")
    readme.symlink_to(tmp_path / "real.md")
    refused(lambda: replace_block(readme, "v", ["x"]), f"--readme {readme} is a symbolic link")
    assert (tmp_path / "real.md").read_text() == "<!-- v:begin -->\n<!-- v:end -->\n"

    fresh, golden = tmp_path / "fresh", tmp_path / "golden"
    fresh.mkdir()
    golden.mkdir()
    (fresh / "a.json").write_text("{}")
    (fresh / "b.json").write_text("{}")
    os.mkfifo(golden / "b.json")
    refused(lambda: update_golden(fresh, golden), "b.json is a FIFO")
    assert listing(golden) == ["b.json"]  # a.json not written either

    cp_dir = tmp_path / "cp"
    cp_dir.mkdir()
    os.mkfifo(cp_dir / FILE)
    before = snapshot(cp_dir / FILE)
    cp = Checkpoints(cp_dir, {"protocol": "x"})
    with deadline(5.0):
        cp.save({"states": 1})  # a failed write is a note, not an error
    assert cp.written == 0 and cp.failure is not None and "is a FIFO" in cp.failure
    assert snapshot(cp_dir / FILE) == before and listing(cp_dir) == [FILE]


def test_a_checkpoint_round_trips_through_the_layer(tmp_path: Path) -> None:
    cp = Checkpoints(tmp_path / "cp", {"protocol": "x"})
    cp.save({"states": 7})
    assert cp.written == 1 and cp.failure is None
    assert listing(tmp_path / "cp") == [FILE]
    back = Checkpoints(tmp_path / "other", {"protocol": "x"}, resume_from=tmp_path / "cp")
    assert back.load()["states"] == 7
    (tmp_path / "cp" / FILE).write_bytes(pickle.dumps({"format": "nope"})[:5])
    fresh = Checkpoints(tmp_path / "o", {"protocol": "x"}, resume_from=tmp_path / "cp")
    refused(fresh.load, "not a readable checkpoint")


def _outcomes(calls: list[Callable[[], object]], unprivileged: bool) -> list[str]:
    """What each call says: "written", or its one-line refusal. With `unprivileged`, in a
    forked child that has dropped to the user `nobody` (uid and gid 65534) first, so no
    executable or import path need be readable by nobody."""
    if not unprivileged:
        return [_outcome(call) for call in calls]
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: drop root, run the calls, report through the pipe, end
        try:
            os.close(reader)
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            os.write(writer, "\n".join(_outcome(call) for call in calls).encode())
        finally:
            os._exit(0)
    os.close(writer)
    with os.fdopen(reader, "rb") as pipe:
        said = pipe.read().decode()
    os.waitpid(pid, 0)
    return said.splitlines()


def _outcome(call: Callable[[], object]) -> str:
    try:
        call()
    except LeadercheckError as exc:
        return str(exc)
    return "written"


def test_a_read_only_directory_is_refused() -> None:
    """Root writes anywhere: as root, the same checks run as the unprivileged user `nobody`."""
    base = Path(tempfile.mkdtemp(prefix="leadercheck-ro-"))
    try:
        base.chmod(0o755)
        locked = base / "locked"
        locked.mkdir(mode=0o555)
        locked.chmod(0o555)  # whatever the umask
        calls: list[Callable[[], object]] = [
            lambda: files.check_output_file(locked / "x.xml", "--junit"),
            lambda: files.write_text(locked / "x.xml", "x", "--junit"),
            lambda: files.check_output_dir(locked / "a" / "b", "--out"),
            lambda: files.write_files(locked, {"a.json": "x"}),
        ]
        lines = _outcomes(calls, unprivileged=os.geteuid() == 0)
        assert len(lines) == 4, lines
        assert all("Permission denied" in line for line in lines), lines
        assert lines[0] == f"cannot write to {locked / 'x.xml'}: Permission denied"
        assert listing(locked) == []
    finally:
        (base / "locked").chmod(0o755)
        shutil.rmtree(base)


# Every reader and writer over every special kind of path

KINDS = [
    "/dev/zero",
    "/dev/full",
    "/dev/null",
    str(PROC),
    "fifo",
    "symlink",
    "link-to-zero",
    "dangling",
    "directory",
    "missing",
    "missing-parent",
    "oversize",
]
READERS: dict[str, Callable[[Path], object]] = {
    "read_bytes": lambda p: files.read_bytes(p, LIMIT),
    "read_text": lambda p: files.read_text(p, LIMIT),
    "check_input_file": files.check_input_file,
    "load_trace": load_trace,
    "load_expectations": load_expectations,
}
WRITERS: dict[str, Callable[[Path], object]] = {
    "check_output_file": lambda p: files.check_output_file(p, "--out"),
    "write_bytes": lambda p: files.write_bytes(p, b"new", "--out"),
    "write_files": lambda p: files.write_files(p.parent, {p.name: "new"}),
    "check_output_dir": lambda p: files.check_output_dir(p, "--out"),
}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(KINDS),
    name=st.sampled_from(sorted(READERS) + sorted(WRITERS)),
)
def test_any_special_path_ends_in_one_line_or_a_whole_file(kind: str, name: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = special(Path(tmp), kind)
        before, around = snapshot(path), listing(path.parent)
        call = READERS.get(name) or WRITERS[name]
        with deadline(5.0):
            try:
                call(path)
            except LeadercheckError as exc:
                assert "\n" not in str(exc) and str(exc)
                assert snapshot(path) == before
                assert listing(path.parent) == around
                return
        regular = before is not None and stat.S_ISREG(before[0])
        directory = before is not None and stat.S_ISDIR(before[0])
        if name in READERS:  # only a regular file (or a link to one) reads; a large one, not
            small = name != "check_input_file"
            assert kind in ("symlink", str(PROC), *(() if small else ("oversize",)))
            assert snapshot(path) == before
        elif name.startswith("check"):  # a check creates nothing and changes nothing
            assert snapshot(path) == before and listing(path.parent) == around
            assert before is None or (directory if name == "check_output_dir" else regular)
        else:  # written: a regular file now, where there was nothing or a regular file
            assert before is None or regular
            assert stat.S_ISREG(os.lstat(path).st_mode)
            assert path.read_bytes() == b"new"
            assert listing(path.parent) == sorted({*around, path.name})


def test_the_layer_imports_nothing_from_the_project_but_errors() -> None:
    tree = ast.parse((ROOT / "checker" / "io" / "files.py").read_text())
    imported = {
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("leader")
    }
    assert imported == {"leadercheck.checker.errors"}


def test_ctrl_c_as_a_file_opens_stays_a_ctrl_c(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Ctrl-C that lands just as the file object is made (the object is dropped, and
    closes its descriptor) propagates as the interrupt it is: the descriptor is not closed a
    second time, which raised "Bad file descriptor" and made `config --all` exit 2."""
    target = tmp_path / "f.yml"
    target.write_text("a: 1\n")
    real_open = io.open

    def interrupted_fdopen(fd: int, mode: str = "r", *args: object, **kwargs: object) -> object:
        real_open(fd, mode)  # made and dropped at once: it closes fd
        raise KeyboardInterrupt

    monkeypatch.setattr(files.os, "fdopen", interrupted_fdopen)
    with pytest.raises(KeyboardInterrupt):
        files.read_bytes(target, 1 << 10)
