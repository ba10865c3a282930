"""Publish a set of output files (a forecast's .nc, .csv and manifest) into a folder, as one set.

    python pipelines/publish_set.py SOURCE.manifest.json DEST_DIR [EXTRA_FILE ...]

The files listed in the manifest are checked against it, copied beside their targets in
``DEST_DIR`` with the EXTRA_FILEs (the forecast's page) and renamed into place together, the
manifest last, which lists them all (``hydroseq.fileio.copy_set``).
Exit status 2 with a message if the source set is incomplete or the folder cannot be written; 7 if
there is no space left for it (``hydroseq.errors.ExitCode.NO_SPACE``); 143 on SIGTERM (nothing
published, the previous set left as it was).
"""

from __future__ import annotations

import signal
import sys

from hydroseq.errors import ExitCode, HydroseqError, NoSpaceError
from hydroseq.fileio import copy_set, space_errno


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, _interrupt)  # like hydroseq: temporaries removed, the old set kept
    try:
        print(copy_set(argv[0], argv[1], extra=argv[2:]))
    except (HydroseqError, OSError, ValueError) as error:
        print(f"publish_set: error: {error}", file=sys.stderr)
        no_space = isinstance(error, NoSpaceError) or space_errno(error) is not None
        return ExitCode.NO_SPACE if no_space else 2
    except KeyboardInterrupt:
        print("publish_set: interrupted", file=sys.stderr)
        return 128 + signal.SIGTERM
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
