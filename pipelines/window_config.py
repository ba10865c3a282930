"""Write the ingest config of one daily run: the base config with its grid cut to the days to ingest.

    python pipelines/window_config.py BASE.yaml DATA.nc ISSUE_DATE OVERLAP_DAYS OUT.yaml

The window ends on the issue date (a local day of the grid) and starts ``OVERLAP_DAYS`` before it,
or on the day after the dataset's last day if that is earlier (a missed run is caught up, never
leaving a gap). Prints the window. On bad input a message and a status of hydroseq's table
(``hydroseq.errors.ExitCode``): 2 for bad arguments, else the error's (3 configuration or a broken
install, 4 data).
"""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

from hydroseq.errors import ExitCode, HydroseqError

try:
    from hydroseq.config import IngestConfig, dump_config, load_config
    from hydroseq.config.ingest import GridConfig
    from hydroseq.fileio import write_text_atomic
    from hydroseq.ingested import open_ingested
except ImportError as missing:  # a broken install: a setup error, not Python's 1 (the "retry later" status)
    print(f"window_config: broken install: {missing.name} cannot be imported ({missing})", file=sys.stderr)
    sys.exit(ExitCode.CONFIG)


def last_local_day(data_path: Path) -> dt.date:
    """The local grid day of the dataset's last step (the day its interval ends in)."""
    dataset, grid = open_ingested(data_path)
    with dataset:
        return grid.local_days(dataset["time"].values[-1:])[0].date()


def window_config(base: Path, data_path: Path, issue: dt.date, overlap_days: int) -> IngestConfig:
    """``base`` with ``grid.start``/``grid.end`` set to the days this run ingests."""
    config = load_config(base, IngestConfig)
    start = min(issue - dt.timedelta(days=overlap_days), last_local_day(data_path) + dt.timedelta(days=1))
    config.grid = GridConfig.model_validate({**config.grid.model_dump(), "start": start, "end": issue})
    return config


def main(argv: list[str]) -> int:
    """Command-line entry (see the module docstring)."""
    try:
        base, data_path, issue_text, overlap_text, out = argv
        issue, overlap_days = dt.date.fromisoformat(issue_text), int(overlap_text)
    except ValueError as error:
        print(f"window_config: {error}\n{__doc__}", file=sys.stderr)
        return ExitCode.USAGE
    try:
        config = window_config(Path(base), Path(data_path), issue, overlap_days)
    except HydroseqError as error:
        print(f"window_config: {error}", file=sys.stderr)
        return error.exit_code
    except (ValueError, OSError, KeyError) as error:
        print(f"window_config: {data_path}: {error}", file=sys.stderr)
        return ExitCode.INPUT_DATA
    write_text_atomic(out, dump_config(config))
    print(f"{config.grid.start} {config.grid.end}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
