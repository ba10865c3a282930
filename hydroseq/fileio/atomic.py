"""Atomic writes: a file (or a folder, such as a Zarr store) is replaced whole or not at all; checksums.

Temporary files and folders are created beside their target as ``.<target name>.<pid>.<token>.tmp`` (hidden,
with the creating process id) so that a later run can tell a stale one (its process is gone) from
one still being written (see :func:`hydroseq.fileio.output_set.clean_stale_temporaries`).

A write that the system refuses (a read-only folder, a parent that is a file, a target that is a
folder) raises :class:`~hydroseq.errors.OutputPathError` naming the output, never a bare ``OSError``:
the CLI prints it on one line and exits 3 (``ExitCode.CONFIG``). A write that fails for want of space
(a full disk or quota, a file at the size limit; :mod:`hydroseq.fileio.space`) raises
:class:`~hydroseq.errors.NoSpaceError` naming the output: exit 7 (``ExitCode.NO_SPACE``).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

from hydroseq.errors import HydroseqError, OutputPathError
from hydroseq.fileio.space import out_of_space

TEMP_NAME = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.(?P<token>[0-9a-f]{8})\.(?P<kind>tmp|journal)$")
"""The name of a temporary of :func:`temp_path` and :func:`temp_folder` (or of a journal of an output set)."""


FOLDER_REMOVAL_ATTEMPTS = 10  # about 2.75 s of waiting at most

def _problem(error: OSError) -> str:
    """The reason of a refused write in words (``strerror``, e.g. 'Read-only file system')."""
    return error.strerror or type(error).__name__


def public_path(path: Path) -> Path:
    """The output that a temporary (:data:`TEMP_NAME`, also one of a temporary) stands for; other paths as they are."""
    while (match := TEMP_NAME.match(path.name)) is not None:
        path = path.with_name(match["name"])
    return path


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
    NoSpaceError
        If the block fails for want of space (:func:`hydroseq.fileio.space.out_of_space`).
    """
    target = Path(target)
    tmp = temp_path(target)
    try:
        yield tmp
        os.replace(tmp, target)
    except HydroseqError:
        raise
    except Exception as error:
        _raise_output_error(error, target, tmp)
        raise
    finally:
        tmp.unlink(missing_ok=True)


def _raise_output_error(error: Exception, target: Path, tmp: Path) -> None:
    """Raise :class:`NoSpaceError` if ``error`` is a write that failed for want of space (looked at while
    ``tmp`` is still there), else :class:`OutputPathError` if it is an ``OSError`` about ``tmp`` or ``target``;
    return if neither."""
    full = out_of_space(error, public_path(target), [tmp])
    if full is not None:
        raise full from error
    if isinstance(error, OSError) and {str(error.filename), str(error.filename2)} & {str(tmp), str(target)}:
        raise OutputPathError(target, f"cannot be written ({_problem(error)})") from None


def temp_folder(target: str | os.PathLike[str]) -> Path:
    """Create an empty temporary folder beside ``target`` (named as :func:`temp_path` names files) and return it."""
    target = Path(target)
    if target.exists() and not target.is_dir():
        raise OutputPathError(target, "is a file, expected a folder path")
    make_output_dir(target.parent)
    while True:
        tmp = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        try:
            tmp.mkdir()
            return tmp
        except FileExistsError:
            continue
        except OSError as error:
            raise OutputPathError(target, f"cannot write in {target.parent} ({_problem(error)})") from None


def replace_path(source: Path, target: Path) -> None:
    """Rename ``source`` onto ``target``: a file in one step; a folder replacing a folder in two.

    A folder cannot be renamed onto a non-empty one, so an existing ``target`` folder is first
    renamed aside (to a temporary name, see :func:`temp_folder`), then removed: a reader in between
    finds no ``target``, never a mixture of the old and the new content.
    """
    if not (source.is_dir() and target.is_dir()):
        os.replace(source, target)
        return
    aside = temp_folder(target)
    try:
        os.replace(target, aside)
    except OSError:
        aside.rmdir()
        raise
    os.replace(source, target)
    shutil.rmtree(aside, ignore_errors=True)


def remove_path(path: Path) -> None:
    """Remove the file or folder ``path`` if it exists."""
    if not (path.is_dir() and not path.is_symlink()):
        path.unlink(missing_ok=True)
        return
    # A failed Zarr write can still have chunk writes in flight on its I/O threads for a moment: a file they
    # add while the tree is being removed leaves the folder behind, so remove it again until it is gone.
    for attempt in range(FOLDER_REMOVAL_ATTEMPTS):
        shutil.rmtree(path, ignore_errors=True)
        if not path.exists():
            return
        time.sleep(0.05 * (attempt + 1))


@contextlib.contextmanager
def atomic_folder(target: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield an empty temporary folder beside ``target``; it replaces ``target`` on success
    (:func:`replace_path`) and is removed if the block raises, leaving ``target`` as it was.

    Raises
    ------
    OutputPathError
        If the folder cannot be made or written, or ``target`` is a file.
    NoSpaceError
        If the block fails for want of space (:func:`hydroseq.fileio.space.out_of_space`).
    """
    target = Path(target)
    tmp = temp_folder(target)
    try:
        yield tmp
        replace_path(tmp, target)
    except HydroseqError:
        raise
    except Exception as error:
        _raise_output_error(error, target, tmp)
        raise
    finally:
        remove_path(tmp)


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


def sha256_path(path: str | os.PathLike[str]) -> str:
    """:func:`sha256_file` of a file; of a folder, the SHA-256 over its files' relative paths (sorted,
    ``/``-separated) and their SHA-256s, so the same content gives the same digest anywhere."""
    path = Path(path)
    if not path.is_dir():
        return sha256_file(path)
    digest = hashlib.sha256()
    files = {item.relative_to(path).as_posix(): item for item in path.rglob("*") if item.is_file()}
    for name in sorted(files):
        digest.update(f"{name}\0{sha256_file(files[name])}\n".encode())
    return digest.hexdigest()


def size_of_path(path: str | os.PathLike[str]) -> int:
    """Bytes of a file, or of every file in a folder."""
    path = Path(path)
    if not path.is_dir():
        return path.stat().st_size
    return sum(item.stat().st_size for item in path.rglob("*") if item.is_file())
