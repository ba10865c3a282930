"""Small file helpers shared by every stage: atomic writes, output folders and checksums.

A write that the system refuses (a read-only folder, a parent that is a file, a target that is a
folder, a full disk) raises :class:`~hydroseq.errors.OutputPathError` naming the output, never a
bare ``OSError``: the CLI prints it on one line and exits 2.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from hydroseq.errors import OutputPathError


def _problem(error: OSError) -> str:
    """The reason of a refused write in words (``strerror``, e.g. 'Read-only file system')."""
    return error.strerror or type(error).__name__


def _blocking_file(path: Path) -> Path | None:
    """The first of ``path`` and its parents that exists and is not a folder, if any."""
    return next((folder for folder in (path, *path.parents) if folder.exists() and not folder.is_dir()), None)


def make_output_dir(folder: str | os.PathLike[str]) -> Path:
    """Create ``folder`` (and its parents) for outputs; a clear error if that is impossible.

    Raises
    ------
    OutputPathError
        If ``folder`` or one of its parents is a file, or the system refuses to create it.
    """
    folder = Path(folder)
    blocking = _blocking_file(folder)
    if blocking == folder:
        raise OutputPathError(folder, "exists and is not a folder")
    if blocking is not None:
        raise OutputPathError(folder, f"cannot create the folder: {blocking} is a file")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise OutputPathError(folder, f"cannot create the folder ({_problem(error)})") from None
    return folder


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; rename it onto ``target`` on success.

    Nothing is left behind if the block raises: readers see either the old file or the complete
    new one, never a half-written one.

    Raises
    ------
    OutputPathError
        If the folder cannot be made or written, ``target`` is a folder, or writing the temporary
        file fails (an ``OSError`` about that file inside the block).
    """
    target = Path(target)
    if target.is_dir():
        raise OutputPathError(target, "is a folder, expected a file path")
    blocking = _blocking_file(target.parent)
    if blocking is not None:
        raise OutputPathError(target, f"cannot be written: {blocking} is a file, not a folder")
    make_output_dir(target.parent)
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as error:
        raise OutputPathError(target, f"cannot write in {target.parent} ({_problem(error)})") from None
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        # mkstemp creates the file owner-only; published outputs get the usual umask-based mode.
        umask = os.umask(0)
        os.umask(umask)
        tmp.chmod(0o666 & ~umask)
        yield tmp
        os.replace(tmp, target)
    except OSError as error:
        if {str(error.filename), str(error.filename2)} & {str(tmp), str(target)}:
            raise OutputPathError(target, f"cannot be written ({_problem(error)})") from None
        raise
    finally:
        tmp.unlink(missing_ok=True)


def write_text_atomic(target: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``target`` atomically."""
    with atomic_path(target) as tmp:
        tmp.write_text(text)


def write_bytes_atomic(target: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``target`` atomically."""
    with atomic_path(target) as tmp:
        tmp.write_bytes(data)


def sha256_file(path: str | os.PathLike[str], chunk_size: int = 1 << 20) -> str:
    """Hex SHA-256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(chunk_size), b""):
            digest.update(chunk)
    return digest.hexdigest()
