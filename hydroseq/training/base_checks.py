"""What ``hydroseq train --init-from`` checks before fine-tuning: the base model directory and the data's units.

A base given as an exported model directory is read as ``hydroseq forecast`` reads one: its
``metadata.json`` must be a JSON object, and its weights file (and ``metadata.json`` itself) the bytes
the directory's records list (``metadata.json``'s ``files``, a released model's ``SHA256SUMS``); a
modified or corrupt directory is refused in one line (exit 4) instead of being trained on.

The fine-tuning keeps the base's scalers, so a variable in other units than the base was trained
on (a forecast precipitation in m, read as the base's mm) would be trained on a thousand times too
small. The data file is refused as ``hydroseq forecast`` refuses it
(:func:`hydroseq.forecast.data_layout.check_data_layout`): each variable the base recorded units for
must have those units, as the same text. A base given as a checkpoint file or a run id records no
units, so nothing is compared (as for a model exported before hydroseq recorded them).

The training stage cannot import the export stage, so ``metadata.json`` is read here as JSON.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from hydroseq.errors import InputDataError
from hydroseq.fileio import sha256_file
from hydroseq.ingested import open_ingested

METADATA_FILE = "metadata.json"  # hydroseq.export.metadata.METADATA_FILE
RELEASE_CHECKSUMS = "SHA256SUMS"  # hydroseq.export.runtime.RELEASE_CHECKSUMS


def read_base_directory(model_dir: Path, weights_file: str) -> dict[str, str]:
    """The ``input_units`` a base model directory records (``{}``: none), after checking the directory.

    A directory without ``metadata.json`` (only a weights file) is read as a checkpoint: nothing to check.

    Raises
    ------
    InputDataError
        If ``metadata.json`` is not a JSON object, or the weights file or ``metadata.json`` differ from
        the SHA-256 the directory lists for them.
    """
    path = model_dir / METADATA_FILE
    if not path.is_file():
        return {}
    try:
        metadata = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise InputDataError(path, f"unreadable model metadata ({error}): the base model directory is damaged; "
                                   "use an intact copy or export it again") from None
    if not isinstance(metadata, dict):
        raise InputDataError(path, "unreadable model metadata (not a JSON object): the base model directory is "
                                   "damaged; use an intact copy or export it again")
    listed = {name: (str(expected), METADATA_FILE) for name, expected in _mapping(metadata.get("files")).items()}
    listed.update(_release_checksums(model_dir / RELEASE_CHECKSUMS))
    for name in (weights_file, METADATA_FILE):
        if name in listed and sha256_file(model_dir / name) != listed[name][0]:
            raise InputDataError(model_dir / name, f"checksum differs from {listed[name][1]}: the base model "
                                                   "directory was modified or copied incompletely")
    return {str(name): str(units) for name, units in _mapping(metadata.get("input_units")).items()}


def check_data_units(data_path: Path, base_units: Mapping[str, str]) -> None:
    """Refuse the data file ``data_path`` if a variable has other units than the base was trained on.

    Raises
    ------
    InputDataError
        Naming the file and, on one line, every variable whose units differ or are not given.
    """
    if not base_units:
        return
    dataset, _ = open_ingested(data_path)
    with dataset:
        found = {name: dataset[name].attrs.get("units") for name in base_units if name in dataset.variables}
    differences = [units_difference(name, units, base_units[name], "the base model")
                   for name, units in found.items()]
    wrong = [difference for difference in differences if difference]
    if wrong:
        raise InputDataError(data_path, "; ".join(wrong) + " (--init-from keeps the base's scalers: convert the "
                                                           "variable to the base's units when you ingest it)")


def units_difference(name: str, found: object, trained_on: str, model: str = "the model") -> str:
    """How the units of variable ``name`` in a file (``found``; None: no units attribute) differ from those
    ``model`` was trained on, in the words of ``hydroseq forecast``; "" if they do not."""
    if found is None:
        return f"variable {name} has no units attribute; {model} was trained on {trained_on}"
    if str(found).strip() != trained_on.strip():
        return f"variable {name} is in {found}; {model} was trained on {trained_on}"
    return ""


def _mapping(value: object) -> dict[object, object]:
    return value if isinstance(value, dict) else {}


def _release_checksums(path: Path) -> dict[str, tuple[str, str]]:
    """``{file: (sha256, SHA256SUMS)}`` of a released model's ``sha256sum`` file (none without one)."""
    if not path.is_file():
        return {}
    listed = {}
    for line in path.read_text().splitlines():
        expected, _, name = line.strip().partition("  ")
        if name:
            listed[name] = (expected, RELEASE_CHECKSUMS)
    return listed
