"""Atomic writes: all or nothing, readable by others like any other output."""

from __future__ import annotations

import os
import stat

import pytest

from hydroseq.fileio import atomic_path, sha256_file, write_text_atomic


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
    """An OSError about the temporary file or the target (here a full disk at the rename) is an OutputPathError."""
    import errno

    from hydroseq.errors import OutputPathError

    def full_disk(source, target):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(source), None, str(target))

    monkeypatch.setattr(os, "replace", full_disk)
    with pytest.raises(OutputPathError, match="out.txt: cannot be written \\(No space left on device\\)"):
        write_text_atomic(tmp_path / "out.txt", "x")
    assert list(tmp_path.iterdir()) == []
