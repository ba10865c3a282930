"""Atomic writes: a file is replaced whole or not at all; checksums.

Temporary files are created beside their target as ``.<target name>.<pid>.<token>.tmp`` (hidden,
with the creating process id) so that a later run can tell a stale one (its process is gone) from
one still being written (see :func:`hydroseq.fileio.output_set.clean_stale_temporaries`).

A write that the system refuses (a read-only folder, a parent that is a file, a target that is a
folder, a full disk) raises :class:`~hydroseq.errors.OutputPathError` naming the output, never a
bare ``OSError``: the CLI prints it on one line and exits 3 (``ExitCode.CONFIG``).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
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


def prepare_output_file(target: str | os.PathLike[str]) -> Path:
    """Check that ``target`` can be a file and create its folder; an :class:`OutputPathError` naming it if not."""
    target = Path(target)
    if target.is_dir():
        raise OutputPathError(target, "is a folder, expected a file path")
    blocking = _blocking_file(target.parent)
    if blocking is not None:
        raise OutputPathError(target, f"cannot be written: {blocking} is a file, not a folder")
    make_output_dir(target.parent)
    return target


def temp_path(target: str | os.PathLike[str], kind: str = "tmp") -> Path:
    """Create an empty, umask-moded temporary file beside ``target`` and return its path."""
    target = prepare_output_file(target)
    while True:
        tmp = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.{kind}")
        try:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            return tmp
        except FileExistsError:
            continue
        except OSError as error:
            raise OutputPathError(target, f"cannot write in {target.parent} ({_problem(error)})") from None


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; rename it onto ``target`` on success.

    Nothing is left behind if the block raises: readers see either the old file or the complete
    new one, never a half-written one. The file gets the usual umask-based mode (0644 under
    umask 022). For several files that belong together use :func:`hydroseq.fileio.publish_set`.

    Raises
    ------
    OutputPathError
        If the folder cannot be made or written, ``target`` is a folder, or writing the temporary
        file fails (an ``OSError`` about that file inside the block).
    """
    target = Path(target)
    tmp = temp_path(target)
    try:
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
