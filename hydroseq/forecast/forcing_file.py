"""``hydroseq forecast --forcing-forecast FILE``: a weather-forecast product gridded at forecast time.

The product is read with the forecast source that made the ingested file (its ``ingest_config``
attribute), its path replaced by ``FILE``, at the file's stations and on the grid steps the
forecast reads. It is the ingest's own code (:func:`hydroseq.ingest.forecast_grid.grid_forecast_source`),
so its checks and leakage rules hold: a product is used from ``reference time + latency`` on,
each lead covers its own grid interval, no lead beyond the product's horizon. At each step the
forecast reads the newer of the file's product and the one already ingested, so an old file
never replaces a newer ingested product.
"""

from __future__ import annotations

import glob
import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr
import yaml
from pydantic import ValidationError

from hydroseq.config import ForecastSourceConfig, IngestConfig
from hydroseq.dataset.forecast_inputs import REFERENCE_TIME_SUFFIX
from hydroseq.errors import ConfigError, InputDataError
from hydroseq.grid import GridSpec
from hydroseq.ingest import Station, TimeGrid
from hydroseq.ingest.forecast_grid import grid_forecast_source
from hydroseq.ingest.outlines import with_outlines


@dataclass(frozen=True)
class ForcingForecast:
    """A product file on grid steps ``start..start + n - 1`` of the ingested file.

    Attributes
    ----------
    values
        Forecast variable -> float32 ``[station, step, lead]`` in the ingested file's units (NaN: no
        product published by the step, or a lead beyond its horizon).
    reference_time
        datetime64[ns] ``[station, step]``: the reference time of the product used (NaT: none).
    """

    path: Path
    sha256: str
    source: str
    start: int
    values: dict[str, np.ndarray]
    reference_time: np.ndarray

    @property
    def attributes(self) -> dict[str, str]:
        """Global attributes of the forecast files naming the product file."""
        return {"forcing_forecast_file": self.path.name, "forcing_forecast_sha256": self.sha256,
                "forcing_forecast_source": self.source}

    @property
    def stop(self) -> int:
        """One past the last grid step the product was gridded on."""
        return self.start + self.reference_time.shape[1]

    def newer_than_ingested(self, dataset: xr.Dataset, horizon: int) -> xr.Dataset:
        """Steps ``start..stop-1 + horizon`` of ``dataset`` (perfect inputs read ``horizon`` steps past ``stop``)
        with each forecast variable of steps ``start..stop-1`` taken from this file wherever its product is
        at least as new as the ingested one."""
        n_steps = self.stop - self.start
        window = dataset.isel(time=slice(self.start, min(dataset.sizes["time"], self.stop + horizon)))
        reference = self.reference_time
        for name, values in self.values.items():
            merged = np.array(window[name].transpose("station", "time", "lead").values, dtype=np.float32)
            references = _ingested_reference(window, name)
            first = merged[:, :n_steps]  # a view: the issue steps
            newer = ~np.isnat(reference) & (np.isnat(references[:, :n_steps]) | (reference >= references[:, :n_steps]))
            leads = min(values.shape[2], first.shape[2])
            first[newer] = np.nan
            first[..., :leads] = np.where(newer[..., None], values[..., :leads], first[..., :leads])
            references[:, :n_steps] = np.where(newer, reference, references[:, :n_steps])
            window = window.assign({
                name: (("station", "time", "lead"), merged, window[name].attrs),
                name + REFERENCE_TIME_SUFFIX: (("station", "time"), references,
                                               _attrs(window, name + REFERENCE_TIME_SUFFIX))})
        return window


def read_forcing_forecast(path: str | Path, dataset: xr.Dataset, data_path: Path, spec: GridSpec, start: int,
                          stop: int, source_name: str | None = None,
                          last_issue: int | None = None) -> ForcingForecast:
    """Grid the product file ``path`` on steps ``start..stop-1`` of the ingested ``dataset``.

    Only the products published by the last issue step (``last_issue``, default ``stop - 1``) are
    read and checked: a later one is never used for the forecast, so a bad one does not fail it
    (it fails the forecast of the issue time that uses it). A source with ``extraction: polygons``
    reads the stations' outlines from the outlines file of the recorded ingest config (its path as
    the ingest config gives it).

    Raises
    ------
    ConfigError
        If the file does not exist, or the ingested file has no forecast source to read it with
        (or several, and ``source_name`` names none of them).
    InputDataError
        If the product is unusable: :mod:`hydroseq.ingest.forecast_products` names the file and the
        reference time (missing variable, wrong units, unknown accumulation, truncated horizon, ...).
    """
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"--forcing-forecast {path}: no such file")
    source, config = _forecast_source(dataset, data_path, source_name)
    stations = [Station(id=str(station), name=str(station), lat=float(lat), lon=float(lon), area_km2=float(area))
                for station, lat, lon, area in zip(dataset["station"].values, dataset["lat"].values,
                                                   dataset["lon"].values, dataset["area_km2"].values, strict=True)]
    if source.extraction == "polygons" and config.stations.outlines is not None:
        stations = with_outlines(stations, config.stations.outlines)  # the outlines file the ingest read
    labels = pd.DatetimeIndex(np.asarray(dataset["time"].values[start:stop], dtype="datetime64[ns]"), name="time")
    published_by = labels.to_numpy()[(stop - 1 if last_issue is None else last_issue) - start]
    on_grid = grid_forecast_source(source.model_copy(update={"path": glob.escape(str(path))}), stations,
                                   TimeGrid(labels, spec), published_by)
    return ForcingForecast(path=path, sha256=hashlib.sha256(path.read_bytes()).hexdigest(), source=source.label,
                           start=start, values=on_grid.values, reference_time=on_grid.reference_time)


def _forecast_source(dataset: xr.Dataset, data_path: Path,
                     name: str | None) -> tuple[ForecastSourceConfig, IngestConfig]:
    text = dataset.attrs.get("ingest_config")
    if not text:
        raise ConfigError(f"--forcing-forecast: {data_path} records no ingest config (attribute ingest_config); "
                          "ingest it with hydroseq ingest and a config with forecast_sources")
    try:
        config = IngestConfig.model_validate(yaml.safe_load(str(text)))
    except (yaml.YAMLError, ValidationError) as error:
        raise InputDataError(data_path, f"its ingest_config attribute is not a valid ingest config ({error})",
                             where="global attribute ingest_config") from None
    sources = config.forecast_sources
    labels = ", ".join(repr(source.label) for source in sources)
    if not sources:
        raise ConfigError(f"--forcing-forecast: the ingest config of {data_path} has no forecast_sources to read "
                          "the product with")
    if name is None and len(sources) == 1:
        return sources[0], config
    chosen = [source for source in sources if source.label == name]
    if not chosen:
        wanted = "name one with --forecast-source" if name is None else f"none is called {name!r}"
        raise ConfigError(f"--forcing-forecast: the ingest config of {data_path} has forecast sources {labels}; "
                          f"{wanted}")
    return chosen[0], config


def _ingested_reference(window: xr.Dataset, name: str) -> np.ndarray:
    """The ingested reference times of forecast variable ``name`` ``[station, time]`` (NaT where the file has none)."""
    variable = name + REFERENCE_TIME_SUFFIX
    if variable not in window.variables:
        return np.full((window.sizes["station"], window.sizes["time"]), np.datetime64("NaT"), dtype="datetime64[ns]")
    return np.array(window[variable].transpose("station", "time").values, dtype="datetime64[ns]")


def _attrs(window: xr.Dataset, name: str) -> dict[str, object]:
    return dict(window[name].attrs) if name in window.variables else {}
