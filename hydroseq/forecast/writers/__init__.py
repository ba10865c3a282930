"""The formats a forecast is written in: one :class:`ForecastWriter` per format in :data:`WRITERS`.

The CF-NetCDF file (the ``--out`` path, which the page, the hindcast scores and the manifest name) and the CSV
table beside it are written by every run (:data:`ALWAYS_WRITTEN`); ``hydroseq forecast --format`` (the
``formats`` of :func:`hydroseq.forecast.run_forecast`) adds others. A new format is a module in this folder with
a function that writes a :class:`~hydroseq.forecast.result.ForecastResult` to a path atomically, and one line in
:data:`WRITERS`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from hydroseq.errors import ConfigError
from hydroseq.forecast.result import ForecastResult
from hydroseq.forecast.writers.csv import write_forecast_csv
from hydroseq.forecast.writers.netcdf import write_forecast_netcdf
from hydroseq.forecast.writers.pi_xml import write_forecast_pi_xml


@dataclass(frozen=True)
class ForecastWriter:
    """One output format of a forecast.

    Attributes
    ----------
    name
        Its name in ``--format`` (lower case, no comma).
    suffix
        The suffix of its file, which replaces the ``--out`` file's (``forecast.nc`` -> ``forecast.xml``).
    write
        ``write(result, path)`` writes the forecast to ``path`` atomically (nothing there on failure) and returns
        the path; it raises a :class:`~hydroseq.errors.HydroseqError` for a forecast it cannot hold.
    one_issue_time
        The format holds a forecast at one issue time only: a hindcast asking for it is refused before it runs.
    """

    name: str
    suffix: str
    write: Callable[[ForecastResult, Path], Path]
    one_issue_time: bool = False


PRIMARY_FORMAT = "netcdf"  # written at the --out path itself
WRITERS: dict[str, ForecastWriter] = {writer.name: writer for writer in (
    ForecastWriter("netcdf", ".nc", write_forecast_netcdf),
    ForecastWriter("csv", ".csv", write_forecast_csv),
    ForecastWriter("pi-xml", ".xml", write_forecast_pi_xml, one_issue_time=True),
)}
ALWAYS_WRITTEN = ("netcdf", "csv")


def output_writers(formats: Sequence[str] = ()) -> list[ForecastWriter]:
    """The writers of a run: those of :data:`ALWAYS_WRITTEN` and of ``formats``, once each, in table order.

    Raises
    ------
    ConfigError
        If a name in ``formats`` is not one of :data:`WRITERS`.
    """
    requested = (formats,) if isinstance(formats, str) else tuple(formats)
    for name in requested:
        if name not in WRITERS:
            raise ConfigError(f"--format {name}: not an output format; the formats are {', '.join(WRITERS)}")
    return [writer for name, writer in WRITERS.items() if name in ALWAYS_WRITTEN or name in requested]


def refuse_for_hindcast(writers: Sequence[ForecastWriter]) -> None:
    """Raise :class:`ConfigError` if one of ``writers`` holds a forecast at one issue time only."""
    for writer in writers:
        if writer.one_issue_time:
            raise ConfigError(f"--format {writer.name}: {writer.name} is written for a forecast at one issue time, "
                              "not a hindcast")


def output_path(target: Path, writer: ForecastWriter) -> Path:
    """Where ``writer`` writes the forecast whose NetCDF file is ``target``: ``target`` itself for the NetCDF,
    else ``target`` with the writer's suffix."""
    return target if writer.name == PRIMARY_FORMAT else target.with_suffix(writer.suffix)
