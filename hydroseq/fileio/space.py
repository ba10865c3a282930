"""Writes that fail for want of space: a full disk or quota, or a file at the process's size limit.

Writers report it in different ways: an ``OSError`` whose ``errno`` is ``ENOSPC``, ``EDQUOT`` or
``EFBIG`` (Python's own files, pandas, zarr), the same wrapped in another exception (its
``__cause__`` or ``__context__``), or no errno at all (netCDF4 and HDF5 say ``RuntimeError: NetCDF:
HDF error``). :func:`out_of_space` tells them apart from other failures: by the errno when there is
one, else, for an error of the kind a failed write raises (``OSError``, ``RuntimeError``), by the
output's folder and the files being written, looked at while they are still there: the folder
(nearly) full, or a file that has reached the process's size limit (``ulimit -f``).
"""

from __future__ import annotations

import errno
import os
import resource
from collections.abc import Iterable
from pathlib import Path

from hydroseq.errors import NoSpaceError

SPACE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
NEARLY_FULL_BYTES = 1 << 20
"""A write that fails (without an errno) while its folder has less than this free failed for want of space."""
_WRITE_ERRORS = (OSError, RuntimeError)  # what a failed write raises, with or without an errno


def space_errno(error: BaseException) -> OSError | None:
    """The ``OSError`` saying "no space" (an errno in :data:`SPACE_ERRNOS`) in ``error``, its causes and contexts
    (and the members of an exception group), if any."""
    pending: list[BaseException] = [error]
    seen: set[int] = set()
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in SPACE_ERRNOS:
            return current
        members = getattr(current, "exceptions", ())  # an exception group's (written for Python 3.10 too)
        if isinstance(members, (tuple, list)):
            pending.extend(member for member in members if isinstance(member, BaseException))
        pending.extend(linked for linked in (current.__cause__, current.__context__) if linked is not None)
    return None


def free_bytes(folder: str | os.PathLike[str]) -> int | None:
    """Bytes this user may still write in ``folder``'s file system, or None if that cannot be told."""
    try:
        stats = os.statvfs(folder)
    except OSError:
        return None
    return stats.f_bavail * stats.f_frsize


def _free_inodes(folder: Path) -> int | None:
    try:
        return os.statvfs(folder).f_favail
    except OSError:
        return None


def file_size_limit() -> int | None:
    """The largest file this process may write (``RLIMIT_FSIZE``, ``ulimit -f``) in bytes; None if unlimited."""
    soft, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
    return None if soft == resource.RLIM_INFINITY else soft


def describe(reason: OSError) -> str:
    """What ran out, in words, for an ``OSError`` with an errno of :data:`SPACE_ERRNOS`."""
    if reason.errno == errno.EFBIG:
        return _too_large(file_size_limit())
    if reason.errno == errno.EDQUOT:
        return "disk quota exceeded"
    return "no space left on device"


def out_of_space(error: BaseException, target: Path, written: Iterable[Path] = ()) -> NoSpaceError | None:
    """A :class:`~hydroseq.errors.NoSpaceError` naming ``target`` if ``error`` is a write that failed for want
    of space, else None.

    Call it while the files being written (``written``: temporary files or folders) are still there: their
    size tells how much was written before the failure, and a file at the size limit or a full folder
    tells a failure without an errno.
    """
    sizes = [_size(file) for path in written for file in _files(path)]
    total = sum(sizes)
    reason = space_errno(error)
    if reason is not None and reason.errno == errno.EFBIG:  # a limit on each file: the folder's space is no matter
        return NoSpaceError(target, describe(reason))
    if reason is not None:
        free = free_bytes(target.parent)
        problem = describe(reason)
        if reason.errno == errno.ENOSPC and free is not None and free >= NEARLY_FULL_BYTES and \
                _free_inodes(target.parent) == 0:
            problem = "no inodes (file entries) left on device"
        return NoSpaceError(target, problem, free, total)
    if not isinstance(error, _WRITE_ERRORS):
        return None
    free = free_bytes(target.parent)
    if free is not None and free < NEARLY_FULL_BYTES:
        return NoSpaceError(target, "no space left on device", free, total)
    limit = file_size_limit()
    if limit is not None and any(size >= limit for size in sizes):
        return NoSpaceError(target, _too_large(limit))
    return None


def _too_large(limit: int | None) -> str:
    if limit is None:
        return "file too large"
    return f"file too large: this process may write files of at most {limit} bytes (ulimit -f)"


def _files(path: Path) -> list[Path]:
    """``path`` if it is a file, the files under it if it is a folder; nothing if it is gone."""
    if path.is_dir():
        return [item for item in path.rglob("*") if item.is_file()]
    return [path] if path.exists() else []


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
