"""Write the ingest config of one daily run: the base config with its grid cut to the days to ingest.

    python pipelines/window_config.py BASE.yaml DATA.nc ISSUE_DATE OVERLAP_DAYS OUT.yaml

The window ends on the issue date (a local day of the grid) and starts ``OVERLAP_DAYS`` before it,
or on the day after the dataset's last day if that is earlier (a missed run is caught up, never
leaving a gap). Prints the window. Exit status 2 with a message on bad input.
"""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

from hydroseq.config import IngestConfig, dump_config, load_config
from hydroseq.config.ingest import GridConfig
from hydroseq.errors import HydroseqError
from hydroseq.fileio import write_text_atomic
from hydroseq.ingested import open_ingested


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
    if len(argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    base, data_path, issue_text, overlap_text, out = argv
    try:
        config = window_config(Path(base), Path(data_path), dt.date.fromisoformat(issue_text), int(overlap_text))
    except (HydroseqError, ValueError, OSError, KeyError) as error:
        print(f"window_config: {error}", file=sys.stderr)
        return 2
    write_text_atomic(out, dump_config(config))
    print(f"{config.grid.start} {config.grid.end}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
