"""Atomic writes: all or nothing, readable by others like any other output."""

from __future__ import annotations

import errno
import hashlib
import os
import signal
import stat
import subprocess
import sys

import pytest

from hydroseq.errors import ExitCode, NoSpaceError
from hydroseq.fileio import (
    FAULT_ENV,
    atomic_folder,
    atomic_path,
    clean_stale_temporaries,
    copy_set,
    publish_set,
    sha256_file,
    sha256_path,
    verify_set,
    write_text_atomic,
)


def test_failed_write_leaves_old_file_and_no_temp(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("crash mid-write")
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_written_file_has_umask_mode(tmp_path):
    old = os.umask(0o022)
    try:
        write_text_atomic(tmp_path / "a.txt", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "a.txt").stat().st_mode) == 0o644


def test_sha256_matches_known_digest(tmp_path):
    path = tmp_path / "abc"
    path.write_bytes(b"abc")
    assert sha256_file(path) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


# Output sets: several files published together under a manifest (hydroseq.fileio.publish_set)

OLD = {"a.nc": b"old nc", "a.csv": b"old csv", "a_scores.csv": b"old scores"}
NEW = {"a.nc": b"new nc " * 1000, "a.csv": b"new csv", "a_scores.csv": b"new scores"}
CHILD = """
import sys
from pathlib import Path
from hydroseq.fileio import publish_set
folder = Path(sys.argv[1])
with publish_set(folder / "a.manifest.json") as staged:
    for name in ("a.nc", "a.csv", "a_scores.csv"):
        staged.path(folder / name).write_bytes(sys.argv[2].encode() + b" " + name.encode())
"""


def _publish(folder, contents):
    with publish_set(folder / "a.manifest.json") as staged:
        for name, data in contents.items():
            staged.path(folder / name).write_bytes(data)


def _hashes(contents):
    return {name: hashlib.sha256(data).hexdigest() for name, data in contents.items()}


def _temporaries(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_set_is_published_with_a_manifest_of_checksums(tmp_path):
    _publish(tmp_path, OLD)
    assert verify_set(tmp_path / "a.manifest.json") == _hashes(OLD)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv", "a.manifest.json", "a.nc", "a_scores.csv"]
    (tmp_path / "a.csv").write_bytes(b"edited")
    assert verify_set(tmp_path / "a.manifest.json") is None  # a reader can tell the set was tampered with


def test_failed_set_leaves_the_old_set_and_no_temporaries(tmp_path):
    _publish(tmp_path, OLD)
    with pytest.raises(RuntimeError):
        with publish_set(tmp_path / "a.manifest.json") as staged:
            staged.path(tmp_path / "a.nc").write_bytes(b"half")
            raise RuntimeError("crash while writing the second file")
    assert verify_set(tmp_path / "a.manifest.json") == _hashes(OLD)
    assert _temporaries(tmp_path) == []


def test_files_outside_the_sets_folder_are_refused(tmp_path):
    with pytest.raises(ValueError, match="not in the set's folder"):
        with publish_set(tmp_path / "a.manifest.json") as staged:
            staged.path(tmp_path / "sub" / "a.nc")


@pytest.mark.parametrize("moment", ["written:0", "written:1", "written:2", "written:3",
                                    "published:0", "published:1", "published:2", "published:3", "manifest:1"])
def test_sigkill_at_any_moment_leaves_the_old_set_or_the_new_one(tmp_path, moment):
    """A real child process publishing a set of 3 files is SIGKILLed at ``moment``."""
    _publish(tmp_path, OLD)
    env = {**os.environ, FAULT_ENV: f"{moment}:KILL"}
    child = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path), "new"], env=env, timeout=60)
    assert child.returncode == -signal.SIGKILL
    manifest = tmp_path / "a.manifest.json"
    new = {name: f"new {name}".encode() for name in OLD}
    assert verify_set(manifest) in (_hashes(OLD), _hashes(new), None)  # never a mixed set that verifies
    if moment != "written:0":
        assert _temporaries(tmp_path)  # the kill left something to clean
    clean_stale_temporaries(tmp_path)  # what the next run in the folder does first
    assert _temporaries(tmp_path) == []
    expected = OLD if moment.startswith("written") else new  # committed by the journal: rolled forward
    assert verify_set(manifest) == _hashes(expected)
    assert {name: (tmp_path / name).read_bytes() for name in OLD} == expected


def test_temporaries_of_a_running_writer_are_kept(tmp_path):
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"]) as alive:
        try:
            live = tmp_path / f".a.nc.{alive.pid}.0123abcd.tmp"
            live.write_bytes(b"being written")
            dead = tmp_path / f".a.csv.{_dead_pid()}.0123abcd.tmp"
            dead.write_bytes(b"left by a kill")
            legacy = tmp_path / ".a.png.k3j_x9q2.tmp"  # an earlier version's name, without a PID
            legacy.write_bytes(b"old")
            os.utime(legacy, (0, 0))
            assert sorted(clean_stale_temporaries(tmp_path)) == sorted([dead, legacy])
            assert live.exists()
        finally:
            alive.kill()


def _dead_pid() -> int:
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(child.stdout)


def test_target_that_is_a_folder_is_a_clear_error_and_leaves_no_temp(tmp_path):
    from hydroseq.errors import OutputPathError

    (tmp_path / "out.nc").mkdir()
    with pytest.raises(OutputPathError, match="out.nc: is a folder, expected a file path"):
        write_text_atomic(tmp_path / "out.nc", "x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.nc"]


def test_parent_that_is_a_file_is_named(tmp_path):
    from hydroseq.errors import OutputPathError
    from hydroseq.fileio import make_output_dir

    (tmp_path / "plain").write_text("x")
    with pytest.raises(OutputPathError, match=r"plain/sub/out.txt: cannot be written: .*plain is a file"):
        write_text_atomic(tmp_path / "plain" / "sub" / "out.txt", "x")
    with pytest.raises(OutputPathError, match=r"plain: exists and is not a folder"):
        make_output_dir(tmp_path / "plain")


def test_refused_rename_names_the_target(tmp_path, monkeypatch):
    """An OSError about the temporary file or the target (here a read-only file system at the rename) is an
    OutputPathError; a full disk there is a NoSpaceError."""
    from hydroseq.errors import OutputPathError

    def refused(number):
        def replace(source, target):
            raise OSError(number, os.strerror(number), str(source), None, str(target))
        return replace

    monkeypatch.setattr(os, "replace", refused(errno.EROFS))
    with pytest.raises(OutputPathError, match="out.txt: cannot be written \\(Read-only file system\\)"):
        write_text_atomic(tmp_path / "out.txt", "x")
    monkeypatch.setattr(os, "replace", refused(errno.ENOSPC))
    with pytest.raises(NoSpaceError, match="out.txt: cannot be written: no space left on device"):
        write_text_atomic(tmp_path / "out.txt", "x")
    assert list(tmp_path.iterdir()) == []


def test_a_folder_is_replaced_whole_or_not_at_all(tmp_path):
    target = tmp_path / "store.zarr"
    with atomic_folder(target) as tmp:
        (tmp / "a").write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_folder(target) as tmp:
            (tmp / "a").write_text("half")
            raise RuntimeError("boom")
    assert [path.name for path in tmp_path.iterdir()] == ["store.zarr"]
    assert (target / "a").read_text() == "old"
    with atomic_folder(target) as tmp:
        (tmp / "b").write_text("new")
    assert sorted(path.name for path in target.iterdir()) == ["b"]
    assert [path.name for path in tmp_path.iterdir()] == ["store.zarr"]


def test_a_set_with_a_folder_is_published_verified_and_copied(tmp_path):
    with publish_set(tmp_path / "data.manifest.json") as staged:
        store = staged.folder(tmp_path / "data.zarr")
        (store / "sub").mkdir()
        (store / "sub" / "0.0").write_bytes(b"chunk")
        staged.path(tmp_path / "data.report.csv").write_text("station\n")
    hashes = verify_set(tmp_path / "data.manifest.json")
    assert hashes is not None and hashes["data.zarr"] == sha256_path(tmp_path / "data.zarr")
    copied = copy_set(tmp_path / "data.manifest.json", tmp_path / "copy")
    assert verify_set(copied) == hashes
    (tmp_path / "data.zarr" / "sub" / "0.0").write_bytes(b"other")
    assert verify_set(tmp_path / "data.manifest.json") is None


def _no_space(path) -> OSError:
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))


def test_no_space_however_wrapped_names_the_output_and_leaves_nothing(tmp_path):
    target = tmp_path / "out.nc"
    with pytest.raises(NoSpaceError) as caught:
        with atomic_path(target) as tmp:
            tmp.write_bytes(b"x" * 3000)
            try:
                raise _no_space(tmp)
            except OSError as error:
                raise RuntimeError("a library's own error") from error
    assert caught.value.exit_code == ExitCode.NO_SPACE and caught.value.written == 3000
    assert str(caught.value).startswith(f"{target}: cannot be written: no space left on device (more than 2.9 KiB "
                                        f"needed; ")
    assert list(tmp_path.iterdir()) == []


def test_a_write_that_fails_without_an_errno_in_a_full_folder_is_no_space(tmp_path, monkeypatch):
    """netCDF4 says only "NetCDF: HDF error": a folder (nearly) full at that moment tells why. The set names
    the file being written, not its temporary."""
    real_statvfs = os.statvfs

    def nearly_full(path):
        stats = real_statvfs(path)
        return os.statvfs_result((stats.f_bsize, 4096, stats.f_blocks, 1, 1, *tuple(stats)[5:]))
    (tmp_path / "f.csv").write_text("earlier")
    with pytest.raises(NoSpaceError, match=r"f\.nc: cannot be written: no space left on device \(more than 100 B "
                                           r"needed; 4\.0 KiB free in .* when the write failed\)"):
        with publish_set(tmp_path / "f.manifest.json") as staged:
            staged.path(tmp_path / "f.csv").write_text("new")
            with atomic_path(staged.path(tmp_path / "f.nc")) as tmp:
                tmp.write_bytes(b"x" * 100)
                monkeypatch.setattr(os, "statvfs", nearly_full)
                raise RuntimeError("NetCDF: HDF error")
    monkeypatch.undo()
    assert [path.name for path in tmp_path.iterdir()] == ["f.csv"] and (tmp_path / "f.csv").read_text() == "earlier"


def test_a_failed_write_with_space_left_stays_what_it_was(tmp_path):
    with pytest.raises(RuntimeError, match="NetCDF: HDF error"):
        with publish_set(tmp_path / "f.manifest.json") as staged:
            staged.path(tmp_path / "f.nc").write_bytes(b"x" * 100)
            raise RuntimeError("NetCDF: HDF error")
    assert list(tmp_path.iterdir()) == []
