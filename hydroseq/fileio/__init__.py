"""Small file helpers shared by every stage: atomic writes, output sets published as a unit, checksums.

:mod:`.atomic` replaces one file (or folder) whole or not at all; :mod:`.output_set` publishes several files
together under a manifest (:func:`publish_set`) and lets readers check them (:func:`verify_set`); :mod:`.space`
tells a write that failed for want of space (:func:`out_of_space`), which both raise as a ``NoSpaceError``.
:mod:`.pi_xml` reads and writes Delft-FEWS PI-XML time series and :mod:`.pi_run` reads a FEWS run file (imported
where used: they load lxml).
"""

from hydroseq.fileio.atomic import (
    atomic_folder,
    atomic_path,
    make_output_dir,
    prepare_output_file,
    remove_path,
    replace_path,
    sha256_file,
    sha256_path,
    size_of_path,
    temp_folder,
    temp_path,
    write_bytes_atomic,
    write_text_atomic,
)
from hydroseq.fileio.output_set import (
    FAULT_ENV,
    MANIFEST_FORMAT,
    MANIFEST_SUFFIX,
    STALE_AFTER_S,
    StagedSet,
    clean_stale_temporaries,
    copy_set,
    manifest_path,
    publish_set,
    verify_set,
)
from hydroseq.fileio.space import out_of_space, space_errno

__all__ = [
    "FAULT_ENV", "MANIFEST_FORMAT", "MANIFEST_SUFFIX", "STALE_AFTER_S", "StagedSet", "atomic_folder", "atomic_path",
    "clean_stale_temporaries", "copy_set", "make_output_dir", "manifest_path", "out_of_space", "prepare_output_file",
    "publish_set", "remove_path", "replace_path", "sha256_file", "sha256_path", "size_of_path", "space_errno",
    "temp_folder", "temp_path", "verify_set", "write_bytes_atomic", "write_text_atomic",
]
