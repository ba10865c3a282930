"""Configuration of ``hydroseq ingest``: the station table, the sources and the target time grid.

An ingest YAML holds one :class:`IngestConfig`. Every source declares how its timestamps are to be
read (convention, time zone, native frequency) so that the ingest can convert each observation to
the UTC interval ``(a, b]`` it summarises before binning it onto the grid.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Literal

import pandas as pd
from pydantic import Field, PrivateAttr, field_validator, model_validator

from hydroseq.config.base import StrictModel
from hydroseq.config.dates import IsoDate, IsoDateTime
from hydroseq.config.forecast_source import ForecastSourceConfig, expected_step_hours
from hydroseq.config.outlines import OutlinesConfig
from hydroseq.config.variables import VariableSpec
from hydroseq.grid import GridSpec, parse_step, parse_timezone

SourceFormat = Literal[
    "csv", "caravan_csv", "caravan_netcdf", "camels_us_streamflow", "camels_us_forcing",
    "netcdf_station", "netcdf_grid", "pi_xml",
]
TimestampConvention = Literal["interval_start", "interval_end", "instantaneous"]

class SourceConfig(StrictModel):
    """One input: a file or glob, its format, its time conventions and its variables."""

    name: str | None = Field(None, description="label used in messages (default: the path)")
    path: str = Field(description="file path or glob, relative to the working directory")
    format: SourceFormat
    variables: dict[str, VariableSpec] = Field(min_length=1, description="output name -> spec")
    frequency: str = Field(description="native step (e.g. 5min, 1h, 1D, 8D) or 'irregular'")
    timestamp: TimestampConvention = "interval_end"
    timezone: str | None = Field(None, description="zone of stamps WITHOUT a UTC offset: IANA name, "
                                 "fixed offset, 'station' (the table's timezone column, DST-aware) or "
                                 "'station_standard' (that zone's standard time all year, as Caravan's "
                                 "daily values use); unset = UTC. Stamps with an offset are converted by "
                                 "it, and a zone set here must agree with it (else an error)")
    missing_values: list[float | str] = Field(default_factory=list)
    on_implausible: Literal["fail", "mark_missing"] = Field(
        "fail", description="a value that is not finite or outside its variable's valid_min..valid_max: "
        "fail the run naming file, line and value, or set it missing and count it in the report")
    min_coverage: float = Field(1.0, ge=0.0, le=1.0,
                                description="fraction of expected sub-steps that must be valid")
    fill_limit: int | None = Field(None, ge=0, description="coarse-to-fine: grid steps a value may "
                                   "be carried forward (default: until the next source step is due)")
    # Table layouts (csv, caravan_csv)
    time_column: str = "date"
    time_format: str | None = Field(None, description="strftime format of the time column")
    time_start: IsoDateTime | None = Field(None, description="csv without a time column: row i (0-based, "
                                           "after any header) is stamped time_start + i x frequency, "
                                           "in the source's timezone")
    header: bool = Field(True, description="csv: false if the file has no header line; its columns are "
                         "then named by position, '1', '2', ...")
    station_column: str | None = Field(None, description="long-format CSV: column holding station ids")
    station: str | None = Field(None, description="the station a single-station file belongs to")
    station_from_filename: bool = Field(False, description="station id is the file name's stem (after "
                                        "station_id_prefix); also for NetCDF files without a station dimension")
    # NetCDF layouts
    station_dim: str | None = None
    station_id_variable: str | None = None
    station_id_prefix: str = Field("", description="prefix stripped from source station ids")
    station_map: dict[str, str] = Field(default_factory=dict, description="source station id -> table id "
                                        "(e.g. a NextGen catchment to its gauge)")
    time_variable: str | None = None
    # Gridded NetCDF
    extraction: Literal["nearest", "weights", "polygons"] = Field(
        "nearest", description="netcdf_grid: nearest (the cell holding the station), weights (the cells and weights "
        "of weights_path) or polygons (the cells each station's outline covers, weighted by the area covered; "
        "needs stations.outlines)")
    weights_path: Path | None = Field(None, description="CSV station_id,lat,lon,weight for 'weights'")
    # CAMELS streamflow quality flags treated as missing
    bad_flags: list[str] = Field(default_factory=lambda: ["M"])
    _step: pd.Timedelta | None = PrivateAttr(None)

    @field_validator("frequency")
    @classmethod
    def _frequency(cls, value: str) -> str:
        if value != "irregular":
            parse_step(value)
        return value

    @field_validator("timezone")
    @classmethod
    def _timezone(cls, value: str | None) -> str | None:
        if value is not None and value not in ("station", "station_standard"):
            parse_timezone(value)
        return value

    @model_validator(mode="after")
    def _consistent(self) -> SourceConfig:
        if self.frequency == "irregular":
            if self.timestamp != "instantaneous":
                raise ValueError("an irregular source must have timestamp: instantaneous")
            for name, spec in self.variables.items():
                if spec.kind == "depth_rate" and spec.aggregation == "sum":
                    raise ValueError(f"variable {name}: summing a rate needs a regular frequency")
        if self.time_start is not None and (self.format != "csv" or self.frequency == "irregular"):
            raise ValueError("time_start needs format csv and a regular frequency")
        if not self.header and self.format != "csv":
            raise ValueError("header: false applies to format csv only")
        if self.time_start is not None and self.time_start.tzinfo is not None:
            raise ValueError("time_start must be a wall-clock time without offset; set the source's timezone")
        if self.extraction == "weights" and self.weights_path is None:
            raise ValueError("extraction 'weights' needs weights_path")
        self._step = None if self.frequency == "irregular" else parse_step(self.frequency)
        return self

    @property
    def step(self) -> pd.Timedelta | None:
        """The native step (None for an irregular source), parsed once when the config is validated."""
        return self._step

    @property
    def label(self) -> str:
        """How messages name this source."""
        return self.name or self.path


class StationsConfig(StrictModel):
    """The stations: a table CSV (``path``) or the attribute files of a published dataset (``dataset``).

    A table has at least ``station_id,name,lat,lon,area_km2``; ``station_id`` is read as text
    (leading zeros kept). An optional ``timezone`` column gives each station's local time zone for
    sources declared with ``timezone: station``. A published dataset (Caravan, CAMELS-US) is read
    as distributed under ``root`` (:mod:`hydroseq.ingest.published`); a station's zone is then
    ``timezones``, else a ``timezone`` attribute, else found offline from its coordinates.
    """

    path: Path | None = Field(None, description="the station table CSV (or give dataset and root)")
    dataset: Literal["caravan", "camels_us"] | None = Field(
        None, description="read the stations from this published dataset's attribute files under root")
    root: Path | None = Field(None, description="dataset: the folder the dataset was unpacked to (holding "
                              "attributes/ for Caravan, camels_attributes_v2.0/ for CAMELS-US)")
    source: str | None = Field(None, description="caravan: the source dataset, the folder under attributes/ "
                               "(camels, camelsgb, hysets, ...); station ids are its gauge ids without "
                               "the '<source>_' prefix")
    timezones: dict[str, str] = Field(default_factory=dict, description="dataset: station id -> time zone, "
                                      "before a timezone attribute and the zone found from lat/lon")
    static_attributes: list[str] = Field(default_factory=list)
    static_units: dict[str, str] = Field(default_factory=dict, description="UDUNITS units of static attributes "
                                         "(e.g. p_mean: mm d-1, aridity: '1'); one without is written without units")
    ids: list[str] | Path | None = Field(None, description="restrict to these stations (default: all): a list, "
                                         "or a text file with one id per line")
    exclude_ids: list[str] | Path | None = Field(
        None, description="leave out these stations (a list, or a text file with one id per line), for "
                          "instance the basins kept apart to test a regional model on basins it never saw")
    outlines: OutlinesConfig | None = Field(
        None, description="basin outlines, one per station (every station must have one), for gridded sources "
                          "with extraction: polygons")

    @field_validator("timezones")
    @classmethod
    def _known_zones(cls, value: dict[str, str]) -> dict[str, str]:
        for zone in value.values():
            parse_timezone(zone)
        return value

    @model_validator(mode="after")
    def _one_origin(self) -> StationsConfig:
        if (self.path is None) == (self.dataset is None):
            raise ValueError("give either path (a station table) or dataset and root (a published dataset)")
        if self.path is not None:
            given = [name for name in ("root", "source", "timezones") if getattr(self, name)]
            if given:
                raise ValueError(f"{', '.join(given)} apply to a published dataset, not to a station table")
        elif self.root is None:
            raise ValueError(f"dataset {self.dataset} needs root, the folder it was unpacked to")
        elif (self.dataset == "caravan") != (self.source is not None):
            raise ValueError("source (e.g. camels) is needed for dataset caravan, and only there")
        return self

    @model_validator(mode="after")
    def _units_of_listed_attributes(self) -> StationsConfig:
        unknown = sorted(set(self.static_units) - set(self.static_attributes))
        if unknown:
            raise ValueError(f"static_units names {unknown}, which are not in static_attributes")
        return self

    @property
    def label(self) -> str:
        """How messages name where the stations come from: ``the station table <path>`` or
        ``the <dataset> attributes under <root>``."""
        if self.path is not None:
            return f"the station table {self.path}"
        return f"the {self.dataset} attributes under {self.root}"


class GridConfig(StrictModel):
    """The target grid: labels are interval ends in UTC; days are defined in ``timezone``.

    ``timezone`` must have a fixed UTC offset (e.g. ``Etc/GMT+8`` or ``-08:00``), otherwise a daily
    grid would not be regular in UTC. ``start``/``end`` are local dates: the grid covers the local
    days ``start..end`` as :class:`hydroseq.grid.GridSpec` defines them.
    """

    frequency: str = "1D"
    timezone: str = "UTC"
    day_boundary: dt.time = dt.time(0, 0)
    start: IsoDate
    end: IsoDate
    _spec: GridSpec = PrivateAttr()

    @field_validator("frequency")
    @classmethod
    def _frequency(cls, value: str) -> str:
        step = parse_step(value)
        if pd.Timedelta(days=1) % step != pd.Timedelta(0) and step % pd.Timedelta(days=1) != pd.Timedelta(0):
            raise ValueError(f"grid frequency {value!r} must divide a day or be whole days")
        return value

    @field_validator("timezone")
    @classmethod
    def _fixed_offset(cls, value: str) -> str:
        zone = parse_timezone(value)
        offsets = {zone.utcoffset(dt.datetime(2001, month, 1)) for month in (1, 7)}
        if len(offsets) > 1:
            raise ValueError(f"grid time zone {value!r} observes daylight saving time; use a fixed "
                             "offset such as Etc/GMT+5 or -05:00 so that the grid stays regular")
        return value

    @model_validator(mode="after")
    def _ordered(self) -> GridConfig:
        if self.end < self.start:
            raise ValueError(f"end {self.end} is before start {self.start}")
        self._spec = GridSpec(self.frequency, self.timezone, self.day_boundary)
        return self

    @property
    def spec(self) -> GridSpec:
        """The grid's identity (what the ingested file records), parsed once when the config is validated."""
        return self._spec


class OutputConfig(StrictModel):
    """How the dataset is stored; the format follows the output path (``*.zarr``: a Zarr store, else NetCDF4)."""

    zarr_stations_per_chunk: int | None = Field(
        None, ge=1, description="stations per Zarr chunk (each chunk holds all grid steps); "
                                "default: as many as make a chunk of about 4 MiB")


class IngestConfig(StrictModel):
    """A whole ingest: what a ``configs/ingest_*.yaml`` file holds."""

    stations: StationsConfig
    sources: list[SourceConfig] = Field(min_length=1)
    forecast_sources: list[ForecastSourceConfig] = Field(
        default_factory=list, description="issued weather forecasts gridded onto (station, issue, lead)")
    grid: GridConfig
    on_bad_station: Literal["fail", "skip"] = Field(
        "fail", description="fail the run on a station's bad input, or skip it and report why")
    title: str | None = None
    output: OutputConfig = Field(default_factory=OutputConfig)

    @model_validator(mode="after")
    def _outlines_for_polygons(self) -> IngestConfig:
        polygons = ([source.label for source in self.sources if source.extraction == "polygons"]
                    + [source.label for source in self.forecast_sources if source.extraction == "polygons"])
        if polygons and self.stations.outlines is None:
            raise ValueError(f"extraction: polygons (source {polygons[0]!r}) needs the stations' basin outlines: "
                             "set stations.outlines")
        return self

    @model_validator(mode="after")
    def _steps_reach_the_horizon(self) -> IngestConfig:
        """Listed ``steps`` that end before the latency plus ``horizon`` grid steps: refused before any run is read."""
        for forecast in self.forecast_sources:
            if forecast.steps is None:
                continue
            last = max(expected_step_hours(forecast.steps))
            needed = forecast.latency_step + forecast.horizon * self.grid.spec.step
            if pd.Timedelta(hours=last) < needed:
                raise ValueError(f"forecast source {forecast.label!r}: its steps end at {last:g} h, but horizon "
                                 f"{forecast.horizon} (lead steps of the {self.grid.frequency} grid) after a latency "
                                 f"of {forecast.latency} needs steps up to {needed / pd.Timedelta(hours=1):g} h at "
                                 "least; lower the horizon to what the runs cover, or list the runs' longer steps")
        return self

    @model_validator(mode="after")
    def _unique_variables(self) -> IngestConfig:
        produced = [(name, source.label) for source in self.sources for name in source.variables]
        for forecast in self.forecast_sources:
            produced += [(output, forecast.label) for name in forecast.variables
                         for output in (name, f"{name}_reference_time")]
        seen: dict[str, str] = {}
        for name, label in produced:
            if name in seen:
                raise ValueError(f"variable {name!r} is produced by both {seen[name]!r} and {label!r}")
            seen[name] = label
        members = {forecast.members for forecast in self.forecast_sources if forecast.members is not None}
        if len(members) > 1:
            raise ValueError(f"the ensemble forecast sources have different numbers of members ({sorted(members)}); "
                             "an ingested file holds one member dimension")
        return self
