"""The ``hydroseq`` command (``python -m hydroseq`` too): :func:`hydroseq.cli.main` behind a guard.

A package the command line itself needs that cannot be imported (numpy or rich missing or broken: a
broken install) would make Python exit 1 with a traceback, the status of "nothing produced, retry
later". :func:`main` reports it instead as one line and exits 3 (``ExitCode.CONFIG``: fix the
deployment, do not retry); with ``--json`` also as the usual one-object summary.
"""

from __future__ import annotations

import json
import sys
import traceback

from hydroseq.errors import ExitCode


def main() -> int:
    """Run the ``hydroseq`` command; a broken install is one line and :attr:`ExitCode.CONFIG`."""
    try:
        from hydroseq.cli import main as run
    except ImportError as error:
        if (error.name or "hydroseq").partition(".")[0] == "hydroseq":  # its own module: a bug
            traceback.print_exc()
            print("hydroseq: unexpected error (a bug: please report it with this traceback)", file=sys.stderr)
            return ExitCode.INTERNAL
        what = f"broken install: {error.name} cannot be imported ({error}); reinstall hydroseq in this environment"
        if "--json" in sys.argv[1:]:
            print(json.dumps({"command": None, "exit_code": int(ExitCode.CONFIG), "status": ExitCode.CONFIG.name,
                              "error": what}), flush=True)
        print(f"hydroseq: error: {what}", file=sys.stderr)
        return ExitCode.CONFIG
    return run()


if __name__ == "__main__":
    raise SystemExit(main())
