"""Configuration of an issued weather-forecast product read by ``hydroseq ingest``.

A forecast source is a set of GRIB2 run files as ECMWF and NOAA publish them (``format: grib2``,
deterministic or ensemble), or of NetCDF files in the layout cfgrib writes for them: a
reference-time dimension (``time``), a lead dimension (``step``, a duration), a ``valid_time``
coordinate equal to ``time + step``, optionally a member dimension (``number``), and either a
station dimension or a ``latitude``/``longitude`` grid. It is gridded onto ``(station, issue,
lead[, member])`` by :mod:`hydroseq.ingest.forecast_grid`. A source that names a product of the catalogue
(``product: ecmwf-hres``, :data:`hydroseq.grid.weather_products.WEATHER_PRODUCTS`) takes its ``latency`` and
``issue_frequency`` from it unless it sets them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import pandas as pd
from pydantic import Field, PrivateAttr, field_validator, model_validator

from hydroseq.config.base import StrictModel
from hydroseq.config.variables import VariableSpec
from hydroseq.grid import parse_step
from hydroseq.grid.step_ranges import step_hours
from hydroseq.grid.weather_products import weather_product

Accumulation = Literal["per_step", "since_reference"]


class ForecastVariableSpec(VariableSpec):
    """One forecast variable: units, plausibility and conversion as for observations.

    ``sum`` variables are amounts (``mm``, ``m``, ``kg m-2``) and must say how the product
    accumulates them: ``per_step`` (each step holds the amount since the previous step) or
    ``since_reference`` (each step holds the amount since the reference time, as ECMWF ``tp``).
    ``mean`` variables (temperature, rates) hold the value of each step's interval, or the
    instantaneous value at its valid time, and take no ``accumulation``.
    """

    aggregation: Literal["sum", "mean"] = "mean"
    accumulation: Accumulation | None = Field(None, description="sum variables: per_step or since_reference")

    @model_validator(mode="after")
    def _accumulation_declared(self) -> ForecastVariableSpec:
        if self.aggregation == "sum":
            if self.accumulation is None:
                raise ValueError("a summed forecast variable must declare accumulation: per_step or since_reference")
            if self.kind != "depth":
                raise ValueError(f"a summed forecast variable must be an amount (mm, m, kg m-2), not {self.units!r}")
        elif self.accumulation is not None:
            raise ValueError(f"accumulation {self.accumulation!r} applies to sum variables only")
        return self


class ForecastSourceConfig(StrictModel):
    """One forecast product: its files, layout, availability and variables."""

    name: str = Field(description="label of the product in messages and in the output's attributes")
    path: str = Field(description="file path or glob (one file per reference time, or one with many)")
    format: str = Field(
        "netcdf", description="the reader of hydroseq.ingest.readers.FORECAST_READERS: netcdf (files in cfgrib's "
        "NetCDF layout) or grib2 (GRIB2 run files as ECMWF open data and NOAA GFS/GEFS publish them, read with "
        "ecCodes; layout grid; each variable's source is the GRIB shortName, e.g. tp, 2t; the control member, "
        "dataType cf, is member 0)")
    layout: Literal["station", "grid"] = Field(description="station: (time, step, station); "
                                               "grid: (time, step, latitude, longitude)")
    variables: dict[str, ForecastVariableSpec] = Field(min_length=1, description="output name -> spec")
    members: int | None = Field(None, ge=1, description="an ensemble: the number of members every run holds (the "
                                "control included), kept as the output's 'member' dimension; a run with another "
                                "number is refused. Unset: a deterministic product")
    member_dim: str = Field("number", description="the files' member dimension (cfgrib: number)")
    steps: list[str] | None = Field(None, description="the steps every run must have, as ranges 'FIRST/LAST/BY' in "
                                    "hours (ECMWF's notation), e.g. ['0/90/1', '93/144/3']; a run lacking one is "
                                    "refused naming the step. Unset: any strictly increasing steps")
    product: str | None = Field(None, description="a product of the catalogue (ecmwf-hres, ecmwf-ens, gfs, gefs): "
                                "latency and issue_frequency default to its own (the runs that reach the last of "
                                "steps)")
    latency: str = Field(description="a product with reference time r is usable from r + latency on, e.g. 6h; "
                         "default: the product's")
    issue_frequency: str = Field(description="expected spacing of reference times, e.g. 1D; default: the product's")
    horizon: int = Field(ge=1, description="lead steps of the grid to produce")
    on_missing_product: Literal["fail", "use_previous"] = Field(
        "fail", description="a gap in the reference times: fail naming the missing one, or use the older "
        "product (its leads shift, missing beyond its horizon)")
    reference_time_variable: str = "time"
    step_variable: str = "step"
    valid_time_variable: str = "valid_time"
    # station layout
    station_dim: str = "station"
    station_id_variable: str | None = Field(None, description="default: the station dimension's coordinate, "
                                            "else a variable station_id")
    station_id_prefix: str = Field("", description="prefix stripped from the file's station ids")
    # grid layout: the same extraction as netcdf_grid observations
    latitude_variable: str = "latitude"
    longitude_variable: str = "longitude"
    extraction: Literal["nearest", "weights", "polygons"] = Field(
        "nearest", description="layout grid: nearest (the cell holding the station), weights (the cells and weights "
        "of weights_path) or polygons (the cells each station's outline covers, weighted by the area covered; "
        "needs stations.outlines)")
    weights_path: Path | None = Field(None, description="CSV station_id,lat,lon,weight for 'weights'")
    _latency: pd.Timedelta = PrivateAttr()
    _issue_step: pd.Timedelta = PrivateAttr()

    @model_validator(mode="before")
    @classmethod
    def _catalogued_defaults(cls, data: Any) -> Any:
        if not isinstance(data, dict) or data.get("product") is None:
            return data
        product = weather_product(str(data["product"]))
        filled = dict(data)
        if "latency" not in filled:
            filled["latency"] = f"{product.latency / pd.Timedelta(hours=1):g}h"
        if "issue_frequency" not in filled:
            listed = expected_step_hours(filled["steps"]) if isinstance(filled.get("steps"), list) else [0.0]
            filled["issue_frequency"] = f"{product.issue_frequency(max(listed)) / pd.Timedelta(hours=1):g}h"
        return filled

    @field_validator("latency")
    @classmethod
    def _latency_valid(cls, value: str) -> str:
        parse_latency(value)
        return value

    @field_validator("issue_frequency")
    @classmethod
    def _frequency_valid(cls, value: str) -> str:
        parse_step(value)
        return value

    @field_validator("steps")
    @classmethod
    def _steps_valid(cls, value: list[str] | None) -> list[str] | None:
        if value is not None:
            expected_step_hours(value)
        return value

    @model_validator(mode="after")
    def _consistent(self) -> ForecastSourceConfig:
        if self.extraction == "weights" and self.weights_path is None:
            raise ValueError("extraction 'weights' needs weights_path")
        if self.layout == "station" and self.extraction != "nearest":
            raise ValueError("extraction applies to layout grid only")
        self._latency = parse_latency(self.latency)
        self._issue_step = parse_step(self.issue_frequency)
        return self

    @property
    def latency_step(self) -> pd.Timedelta:
        """``latency`` parsed."""
        return self._latency

    @property
    def issue_step(self) -> pd.Timedelta:
        """``issue_frequency`` parsed."""
        return self._issue_step

    @property
    def label(self) -> str:
        """How messages name this source."""
        return self.name


def expected_step_hours(ranges: list[str]) -> list[float]:
    """The hours the ``steps`` ranges name, sorted (:func:`hydroseq.grid.step_ranges.step_hours`).

    Raises
    ------
    ValueError
        If a range is not ``FIRST/LAST/BY`` with FIRST <= LAST and BY > 0, in hours.
    """
    try:
        return step_hours(ranges)
    except ValueError as error:
        raise ValueError(f"steps: {error}") from None


def parse_latency(text: str) -> pd.Timedelta:
    """A non-negative duration such as ``6h``, ``90min`` or ``0h``.

    Raises
    ------
    ValueError
        If the text is not a duration or is negative.
    """
    try:
        latency = pd.Timedelta(text)
    except ValueError:
        raise ValueError(f"not a duration: {text!r} (examples: 6h, 90min, 0h)") from None
    if latency < pd.Timedelta(0):
        raise ValueError(f"latency must not be negative, got {text!r}")
    return latency
