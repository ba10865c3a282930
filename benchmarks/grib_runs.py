"""A year of daily GRIB2 weather-forecast runs over the 31 bundled basins, and the ingest config that reads them.

The runs are written with ecCodes by the writer of the example runs (``data/forecast_grib2/make_runs.py``,
loaded from its path): the bundled ERA5-Land reanalysis laid out as ECMWF-style deterministic runs on its
0.5-degree grid (``tp`` accumulated, ``2t``), one run a day at 00 UTC, ``0..last_step`` hours by
``step_hours``. THE VALUES ARE THE REANALYSIS, NOT A FORECAST: what the benchmarks time does not depend on
them. The ingest config is ``configs/ingest_grib2_hres.yaml`` (31 basins, static attributes, basin
outlines, horizon 7) with its forecast source pointed at the runs, one run a day.
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pandas as pd

from hydroseq.config import IngestConfig, load_config

REPO_ROOT = Path(__file__).resolve().parents[1]
RUN_WRITER = REPO_ROOT / "data" / "forecast_grib2" / "make_runs.py"
LAST_ISSUE_DAY = dt.date(2014, 9, 30)  # the end of the bundled test period (water year 2014)


def run_writer() -> ModuleType:
    """``data/forecast_grib2/make_runs.py`` as a module (``Reanalysis``, ``write_runs``)."""
    name = "forecast_grib2_make_runs"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, RUN_WRITER)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # its dataclass looks its module up by name
        spec.loader.exec_module(module)
    return sys.modules[name]


def issue_days(count: int) -> tuple[dt.date, dt.date]:
    """The ``count`` local days up to :data:`LAST_ISSUE_DAY`."""
    return LAST_ISSUE_DAY - dt.timedelta(days=count - 1), LAST_ISSUE_DAY


def write_daily_runs(folder: Path, days: int, last_step: int = 240, step_hours: int = 6) -> list[Path]:
    """One run a day at 00 UTC for the issues of the ``days`` local days up to :data:`LAST_ISSUE_DAY` (the
    issue of local day D, D+1 08:00 UTC, reads the run of D+1 00 UTC); returns the files."""
    first, last = issue_days(days)
    references = pd.date_range(pd.Timestamp(first) + pd.Timedelta(days=1), pd.Timestamp(last) + pd.Timedelta(days=1),
                               freq="1D")
    writer = run_writer()
    basins = writer.Reanalysis.load(references[0], references[-1] + pd.Timedelta(hours=last_step))
    return list(writer.write_runs(folder, basins, references, np.arange(0, last_step + 1, step_hours)))


def ingest_config(runs: Path, start: dt.date, end: dt.date, last_step: int = 240, step_hours: int = 6) -> IngestConfig:
    """``configs/ingest_grib2_hres.yaml`` on the local days ``start .. end``, reading the daily runs in ``runs``."""
    config = load_config(REPO_ROOT / "configs" / "ingest_grib2_hres.yaml", IngestConfig)
    assert config.stations.path is not None
    config.stations.path = REPO_ROOT / config.stations.path
    if config.stations.outlines is not None:
        config.stations.outlines.path = REPO_ROOT / config.stations.outlines.path
    for source in config.sources:
        source.path = str(REPO_ROOT / source.path)
    forecast = config.forecast_sources[0]
    forecast.path = str(runs / "*.grib2")
    forecast.steps = [f"0/{last_step}/{step_hours}"]
    forecast.issue_frequency = "1D"
    config.grid.start, config.grid.end = start, end
    return validate(config)


def validate(config: IngestConfig) -> IngestConfig:
    """``config`` validated again after its fields were set (the forecast source's parsed schedule)."""
    return IngestConfig.model_validate(config.model_dump(mode="json"))


def publish(figures: dict, title: str, rows: list[tuple[str, str]], timed: str, json_path: Path | None) -> dict:
    """Print the benchmark's table (``rows``, then whether ``figures[timed]`` met the target and the load average)
    and write ``figures`` to ``json_path`` when given; returns ``figures``."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    for column in ("what", "value"):
        table.add_column(column, justify="right")
    for row in rows:
        table.add_row(*row)
    table.add_row(f"target < {figures['target_s']:.0f} s", "met" if figures[timed] < figures["target_s"] else "MISSED")
    table.add_row("load average (1 min, at the end)", f"{figures['load_average']:.1f}")
    Console().print(table)
    if json_path:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(figures, indent=1) + "\n")
    return figures
