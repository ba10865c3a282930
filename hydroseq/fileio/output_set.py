"""Output sets: several files published together under a manifest, all of them or none.

A member of a set may be a folder (a Zarr store): it is staged as a temporary folder, recorded
with its total size and :func:`~hydroseq.fileio.atomic.sha256_path`, and replaces the old folder
on publishing (:func:`~hydroseq.fileio.atomic.replace_path`).

A set is committed by a journal, so a run killed in the middle of publishing is finished by the
next one in the folder; stale temporaries (their process is gone) are removed then too.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from hydroseq.errors import HydroseqError
from hydroseq.fileio.atomic import (
    TEMP_NAME,
    prepare_output_file,
    remove_path,
    replace_path,
    sha256_path,
    size_of_path,
    temp_folder,
    temp_path,
    write_text_atomic,
)
from hydroseq.fileio.space import out_of_space

MANIFEST_SUFFIX = ".manifest.json"
MANIFEST_FORMAT = "hydroseq-output-set/1"
STALE_AFTER_S = 3600.0  # a temporary untouched this long is stale even if its PID runs (PID reuse)
FAULT_ENV = "HYDROSEQ_TEST_SIGNAL_AT"  # test hook: "<written|published|manifest>:<k>:<KILL|TERM>"
_LEGACY_TEMP = re.compile(r"^\..+\.[A-Za-z0-9_]{8}\.tmp$")  # mkstemp names of earlier versions
_DEFERRED = {signal.SIGINT, signal.SIGTERM}


def manifest_path(first_file: str | os.PathLike[str]) -> Path:
    """``<stem>.manifest.json`` beside the set's main file ``<stem>.<suffix>``."""
    first_file = Path(first_file)
    return first_file.with_name(first_file.stem + MANIFEST_SUFFIX)


class StagedSet:
    """The files of one set being written: :meth:`path` gives the temporary to write each to."""

    def __init__(self, manifest: Path) -> None:
        self.manifest = manifest
        self.staged: dict[Path, Path] = {}  # target -> temporary

    def path(self, target: str | os.PathLike[str]) -> Path:
        """The temporary file to write ``target``'s content to (it is published with the set)."""
        target = self._new_member(target)
        self.staged[target] = temp_path(target)
        return self.staged[target]

    def folder(self, target: str | os.PathLike[str]) -> Path:
        """The empty temporary folder to write the folder ``target``'s content to (published with the set)."""
        target = self._new_member(target)
        self.staged[target] = temp_folder(target)
        return self.staged[target]

    def _new_member(self, target: str | os.PathLike[str]) -> Path:
        target = Path(target)
        if target.parent.resolve() != self.manifest.parent.resolve():
            raise ValueError(f"{target} is not in the set's folder {self.manifest.parent}")
        if target in self.staged or target.name == self.manifest.name:
            raise ValueError(f"{target} is already part of the set")
        _fault_point("written", len(self.staged))
        return target


@contextlib.contextmanager
def publish_set(manifest: str | os.PathLike[str]) -> Iterator[StagedSet]:
    """Write several files to temporaries, then publish them together under ``manifest``.

    The block writes every file of the set to ``staged.path(target)``. If it raises (or is
    interrupted), the temporaries are removed and the published set is left as it was. On
    success the set is committed by a journal (the temporaries' names and checksums, renamed into
    place in one step); then the old manifest is removed, every temporary renamed onto its target
    and the new manifest (each file's name, size and SHA-256) written last. A block that fails for want
    of space raises :class:`~hydroseq.errors.NoSpaceError` naming the file being written. SIGINT and SIGTERM
    are held back during that commit (a few renames) and act right after it. A run killed
    (SIGKILL) during the commit leaves the journal: the next :func:`publish_set` in the folder
    finishes it (see :func:`clean_stale_temporaries`). Readers trust a set only when its manifest
    is there and every file matches it (:func:`verify_set`).
    """
    manifest = prepare_output_file(manifest)
    clean_stale_temporaries(manifest.parent)
    staged = StagedSet(manifest)
    try:
        try:
            yield staged
        except HydroseqError:
            raise
        except Exception as error:  # while the temporaries are there: a write that failed for want of space?
            being_written = next(reversed(staged.staged), manifest)
            full = out_of_space(error, being_written, staged.staged.values())
            if full is not None:
                raise full from error
            raise
        _fault_point("written", len(staged.staged))
        entries = {target.name: {"staged": tmp.name, "bytes": size_of_path(tmp), "sha256": sha256_path(tmp)}
                   for target, tmp in staged.staged.items()}
        journal_tmp = temp_path(manifest)
        journal_tmp.write_text(json.dumps({"manifest": manifest.name, "files": entries}, indent=1))
        with _signals_deferred():
            journal = journal_tmp.with_name(journal_tmp.name[:-len(".tmp")] + ".journal")
            os.replace(journal_tmp, journal)  # the commit point
            _finish(manifest, entries, journal)
    finally:
        for tmp in staged.staged.values():
            remove_path(tmp)
        with contextlib.suppress(NameError):
            journal_tmp.unlink(missing_ok=True)


def _finish(manifest: Path, entries: dict[str, dict], journal: Path) -> None:
    """Rename every staged file onto its target, write the manifest, drop the journal."""
    folder = manifest.parent
    _fault_point("published", 0)
    manifest.unlink(missing_ok=True)
    for k, (name, entry) in enumerate(sorted(entries.items()), start=1):
        staged = folder / entry["staged"]
        if staged.exists():
            replace_path(staged, folder / name)
        _fault_point("published", k)
    files = [{"name": name, "bytes": entry["bytes"], "sha256": entry["sha256"]}
             for name, entry in sorted(entries.items())]
    write_text_atomic(manifest, json.dumps({"format": MANIFEST_FORMAT, "files": files}, indent=1) + "\n")
    _fault_point("manifest", 1)
    journal.unlink(missing_ok=True)


def verify_set(manifest: str | os.PathLike[str]) -> dict[str, str] | None:
    """``{file name: sha256}`` of the set if its manifest exists and every file matches; else None."""
    manifest = Path(manifest)
    try:
        files = json.loads(manifest.read_text())["files"]
    except (OSError, ValueError, KeyError):
        return None
    for entry in files:
        path = manifest.parent / entry["name"]
        if not path.exists() or size_of_path(path) != entry["bytes"] or sha256_path(path) != entry["sha256"]:
            return None
    return {entry["name"]: entry["sha256"] for entry in files}


def copy_set(manifest: str | os.PathLike[str], folder: str | os.PathLike[str],
             extra: Sequence[str | os.PathLike[str]] = ()) -> Path:
    """Publish the set of ``manifest`` again in ``folder``, under the same names, as one set; return its manifest.

    ``extra`` files (a page made from the set, say) join the published set under their own names.

    Raises
    ------
    ValueError
        If the source set does not match its manifest (or changes while it is copied), or an ``extra`` file
        is missing or has the name of a file of the set.
    """
    manifest, folder = Path(manifest), Path(folder)
    hashes = verify_set(manifest)
    if hashes is None:
        raise ValueError(f"{manifest}: the files of this set are missing or differ from the manifest")
    added = {Path(path).name: Path(path) for path in extra}
    for name, path in added.items():
        if not path.is_file() or name in hashes or name == manifest.name:
            raise ValueError(f"{path}: not a file, or named like a file of the set {manifest.name}")
    with publish_set(folder / manifest.name) as staged:
        for name, path in added.items():
            shutil.copyfile(path, staged.path(folder / name))
        for name, sha256 in hashes.items():
            source = manifest.parent / name
            if source.is_dir():
                copy = staged.folder(folder / name)
                shutil.copytree(source, copy, dirs_exist_ok=True)
            else:
                copy = staged.path(folder / name)
                shutil.copyfile(source, copy)
            if sha256_path(copy) != sha256:
                raise ValueError(f"{manifest.parent / name} changed while it was copied")
    return folder / manifest.name


def clean_stale_temporaries(folder: str | os.PathLike[str]) -> list[Path]:
    """Finish the interrupted commits and remove the stale temporaries in ``folder``; return what was removed.

    A temporary or journal is stale when the process named in it no longer runs (or is this one:
    a container reuses PIDs), or when it has not been touched for :data:`STALE_AFTER_S`. A stale
    journal was committed, so its set is completed (rolled forward) before anything is removed.
    One writer per folder at a time is assumed (the daily job holds a lock).
    """
    folder = Path(folder)
    if not folder.is_dir():
        return []
    candidates = sorted(folder.iterdir(), key=lambda path: not path.name.endswith(".journal"))
    removed = []
    for path in candidates:
        match = TEMP_NAME.match(path.name)
        if match is None and not (_LEGACY_TEMP.match(path.name) and _older_than(path, STALE_AFTER_S)):
            continue
        if match is not None and not (_process_gone(int(match["pid"])) or _older_than(path, STALE_AFTER_S)):
            continue
        if match is not None and match["kind"] == "journal":
            _roll_forward(path)
        if path.exists():
            remove_path(path)
            removed.append(path)
    return removed


def _roll_forward(journal: Path) -> None:
    try:
        document = json.loads(journal.read_text())
        manifest, entries = journal.parent / document["manifest"], document["files"]
    except (OSError, ValueError, KeyError):
        return
    _finish(manifest, entries, journal)
    if verify_set(manifest) is None:  # a file of the set was changed since: trust none of it
        manifest.unlink(missing_ok=True)


def _process_gone(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def _older_than(path: Path, seconds: float) -> bool:
    try:
        return time.time() - path.stat().st_mtime > seconds
    except FileNotFoundError:
        return False


@contextlib.contextmanager
def _signals_deferred() -> Iterator[None]:
    """Hold SIGINT and SIGTERM back during the block; one that came meanwhile acts right after it.

    Python runs signal handlers in the main thread only, so (in the main thread) a recording
    handler is swapped in; masking the signal would not do, another thread (onnxruntime's, dask's)
    would take it.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = {signum: signal.signal(signum, lambda number, frame: caught.append(number)) for signum in _DEFERRED}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)
        for number in caught:
            signal.raise_signal(number)


def _fault_point(phase: str, count: int) -> None:
    """Test hook: with ``HYDROSEQ_TEST_SIGNAL_AT=<phase>:<count>:<signal>`` send this process that signal here."""
    spec = os.environ.get(FAULT_ENV)
    if not spec:
        return
    at_phase, at_count, name = spec.split(":")
    if at_phase == phase and int(at_count) == count:
        os.kill(os.getpid(), getattr(signal, f"SIG{name}"))
