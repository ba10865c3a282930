"""Make an exported model directory a release: no path of the machine that trained it, checksums a reader can check.

An export records the resolved train config of its run twice, in ``checkpoint.pt`` and in ``metadata.json``, with
the absolute paths of that machine (the data file, the cache, the training folder, the MLflow store). A release
takes the prefix ``root/`` out of every string of those configs (configs name paths relative to the repository),
records the new SHA-256 of ``checkpoint.pt`` in ``metadata.json`` and writes ``SHA256SUMS`` (``sha256sum -c``
reads it; the forecast checks it too: :meth:`hydroseq.export.ExportedModel.verify_files`). A second release of
the same directory changes nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from hydroseq.config import TrainConfig
from hydroseq.errors import InputDataError
from hydroseq.export.metadata import METADATA_FILE, ExportMetadata
from hydroseq.export.runtime import RELEASE_CHECKSUMS
from hydroseq.fileio import sha256_file, write_text_atomic
from hydroseq.training.checkpoint import WEIGHTS_FILE, Checkpoint


@dataclass(frozen=True)
class ReleaseResult:
    """What :func:`write_release` did to a model directory.

    Attributes
    ----------
    model_dir
        The released model directory.
    root
        The folder whose absolute path was taken out of the recorded configs.
    rewritten
        The files whose contents changed, in the order they were written (empty when the directory was a
        release of ``root`` already).
    sums
        ``{file: sha256}`` as ``SHA256SUMS`` lists them: ``metadata.json`` first, then the files it lists.
    """

    model_dir: Path
    root: Path
    rewritten: tuple[str, ...]
    sums: dict[str, str]


def write_release(model_dir: str | Path, root: str | Path | None = None) -> ReleaseResult:
    """Make the exported model directory ``model_dir`` a release relative to ``root`` (default: the current folder).

    Every string of the train config recorded in ``checkpoint.pt`` and ``metadata.json`` loses the prefix
    ``root/`` wherever it holds it (``/repo/runs/data.nc`` becomes ``runs/data.nc``, ``sqlite:////repo/mlruns.db``
    becomes ``sqlite:///mlruns.db``), and a string that is ``root`` itself becomes ``.``. The checksum of the
    rewritten ``checkpoint.pt`` goes into ``metadata.json``; ``SHA256SUMS`` lists ``metadata.json`` and every file
    it lists. Each file is replaced atomically, and only when its contents change.

    Raises
    ------
    ConfigError
        If ``model_dir`` is no exported model directory (no ``metadata.json``).
    InputDataError
        If a file differs from the checksum ``metadata.json`` records for it, or is missing: a release vouches
        for the exported files, so a modified directory is refused before anything is written.
    """
    model_dir = Path(model_dir)
    root = Path.cwd() if root is None else Path(root)
    ExportMetadata.read(model_dir)  # the setup and format errors of a folder that is no exported model
    metadata: dict[str, Any] = json.loads((model_dir / METADATA_FILE).read_text())
    files: dict[str, str] = metadata.get("files", {})
    _check_recorded_sums(model_dir, files)
    prefixes = _root_prefixes(root)
    rewritten: list[str] = []
    if WEIGHTS_FILE in files and _release_checkpoint(model_dir / WEIGHTS_FILE, prefixes):
        rewritten.append(WEIGHTS_FILE)
        files[WEIGHTS_FILE] = sha256_file(model_dir / WEIGHTS_FILE)
    if "train_config" in metadata:
        metadata["train_config"] = _without_prefixes(metadata["train_config"], prefixes)
    if _write_if_changed(model_dir / METADATA_FILE, json.dumps(metadata, indent=2) + "\n"):
        rewritten.append(METADATA_FILE)
    sums = {METADATA_FILE: sha256_file(model_dir / METADATA_FILE), **files}
    if _write_if_changed(model_dir / RELEASE_CHECKSUMS, "".join(f"{sha}  {name}\n" for name, sha in sums.items())):
        rewritten.append(RELEASE_CHECKSUMS)
    return ReleaseResult(model_dir=model_dir, root=root, rewritten=tuple(rewritten), sums=sums)


def _check_recorded_sums(model_dir: Path, files: dict[str, str]) -> None:
    """Raise :class:`InputDataError` unless every file ``metadata.json`` lists is there with its recorded SHA-256."""
    for name, expected in files.items():
        path = model_dir / name
        if not path.is_file():
            raise InputDataError(path, "file of the exported model is missing: refusing to release the directory")
        if sha256_file(path) != expected:
            raise InputDataError(path, f"checksum differs from {METADATA_FILE}: the exported model was modified "
                                       "after its export; refusing to release it (export it again)")


def _root_prefixes(root: Path) -> list[str]:
    """The spellings of ``root`` a recorded path may start with: as given made absolute, and with links resolved
    (none for the file system's root, relative to which every absolute path already is)."""
    return list(dict.fromkeys(str(path) for path in (root.absolute(), root.resolve()) if path != Path(path.anchor)))


def _without_prefixes(value: Any, prefixes: list[str]) -> Any:
    """``value`` with every ``prefix/`` taken out of each string in it, and a string that is a prefix made ``.``."""
    if isinstance(value, str):
        for prefix in prefixes:
            value = "." if value == prefix else value.replace(f"{prefix}/", "")
        return value
    if isinstance(value, dict):
        return {key: _without_prefixes(item, prefixes) for key, item in value.items()}
    if isinstance(value, list):
        return [_without_prefixes(item, prefixes) for item in value]
    return value


def _release_checkpoint(path: Path, prefixes: list[str]) -> bool:
    """Rewrite the config recorded in the checkpoint ``path`` without ``prefixes``; whether it changed."""
    checkpoint = Checkpoint.load(path)
    recorded = checkpoint.config.model_dump(mode="json")
    relative = _without_prefixes(recorded, prefixes)
    if relative == recorded:
        return False
    replace(checkpoint, config=TrainConfig.model_validate(relative)).save(path)
    return True


def _write_if_changed(path: Path, text: str) -> bool:
    """Replace ``path`` with ``text`` atomically unless it holds it already; whether it was written."""
    if path.is_file() and path.read_text() == text:
        return False
    write_text_atomic(path, text)
    return True
