"""``hydroseq forecast``: every station from an exported model, at one issue time or a range."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from hydroseq import __version__
from hydroseq.dataset import FeatureLayout, Scalers, StationData
from hydroseq.errors import ConfigError, InputDataError
from hydroseq.export import ExportedModel
from hydroseq.export.metadata import METADATA_FILE, ONNX_FILE
from hydroseq.forecast.baselines import hindcast_baselines, training_climatology
from hydroseq.forecast.core import ENSEMBLE_LEVELS, combine_weather_members, forecast_core, weather_attributes
from hydroseq.forecast.data_window import IngestedFile, StationInfo
from hydroseq.forecast.freshness import nothing_at_the_issue_step, stale_gauges
from hydroseq.forecast.hindcast import hindcast_signatures, observed_at_leads
from hydroseq.forecast.outputs import PublishedForecast, publish_forecast
from hydroseq.forecast.plan import Plan, plan_run
from hydroseq.forecast.probabilistic import exceedance, score_hindcast_distribution, training_record
from hydroseq.forecast.product_use import MissingForecastInput, ProductUse, check_lead_coverage, product_use
from hydroseq.forecast.result import ForecastResult
from hydroseq.forecast.writers import output_writers, refuse_for_hindcast
from hydroseq.grid import GridSpec
from hydroseq.scoring.return_periods import FrequencyAnalysis

DEFAULT_FORECAST_DIR = Path("runs/forecast")


@dataclass(frozen=True)
class ForecastRun:
    """What :func:`hydroseq.forecast.run_forecast` returns.

    Attributes
    ----------
    result
        The forecast (NaN where a station could not be forecast; the reasons in ``result.skipped``).
    stations_forecast
        Stations forecast at one issue time at least.
    published
        The files written (and a hindcast's scores); None when no station could be forecast, in
        which case nothing was written.
    """

    result: ForecastResult
    stations_forecast: int
    published: PublishedForecast | None


def run_forecast(model_dir: str | Path, data_path: str | Path, issue_time: str, out: str | Path | None = None,
                 batch_size: int = 1024, show_progress: bool = True,
                 missing_forecast_input: MissingForecastInput = "fallback",
                 thresholds: str | Path | None = None, forcing_forecast: str | Path | None = None,
                 forecast_source: str | None = None, max_observation_age: float | None = None,
                 model_label: dict[str, str] | None = None, rating_curve: str | Path | None = None,
                 threshold_analysis: FrequencyAnalysis | None = None, formats: Sequence[str] = ()) -> ForecastRun:
    """Forecast every station of ``data_path`` with the model in ``model_dir``.

    For each station the last ``seq_len`` grid steps at or before the issue step are scaled with
    the training scalers and run through the exported network in batches of ``batch_size``. A
    station is forecast from its valid history ending at the issue step (shorter than ``seq_len``
    if its record or its last gap is more recent), provided it has at least ``min(min_len,
    seq_len)`` steps; otherwise it is listed with the reason. Nothing after the issue step is read
    for the inputs.

    ``issue_time`` is ``T`` or ``START..END`` (see :mod:`hydroseq.grid.issue_times`); a range is
    a hindcast, scored against the observations (NSE/KGE/Peak-MAPE per station and lead, ``<out stem>_scores.csv``)
    beside persistence and the training-period climatology (:mod:`hydroseq.forecast.baselines`), with the
    hydrological signatures of the observed and forecast flows (``<out stem>_signatures.csv``).
    Writes ``out`` (CF-NetCDF), the CSV beside it, the forecast in each of ``formats`` (names in
    :data:`hydroseq.forecast.writers.WRITERS`; ``pi-xml``, one issue time: Delft-FEWS PI-XML, ``<out stem>.xml``) and
    a hindcast's scores as one set under ``<out stem>.manifest.json``
    (:func:`hydroseq.forecast.outputs.publish_forecast`): all of them or none; the files are byte-identical when
    re-run on the same inputs. ``show_progress`` draws a hindcast's progress bar on a terminal.

    A model with weather-forecast inputs reads, at each issue step, the product the ingested file
    holds for it (the newest one published by then) and records its age per station; where none
    is valid, ``missing_forecast_input`` says whether the station is forecast without one
    (``fallback``, listed in ``result.fallback``) or the run fails (``fail``). ``forcing_forecast``, a
    product file, is gridded at forecast time with the ingested file's own forecast source
    (``forecast_source`` names it if there are several; :mod:`hydroseq.forecast.forcing_file`) and used
    wherever its product is at least as new as the ingested one; the forecast files name it.

    A model that reads the observed target with an "observed" flag forecasts a station without any observation
    up to the issue time as it does a late gauge and lists it in ``result.ungauged``; a data file without the
    target (forcing and attributes of ungauged basins) makes every station ungauged (a hindcast needs it).

    A model with a predictive distribution publishes its quantiles, its members (an ensemble) and the probability
    of exceeding each station's thresholds (the ``thresholds`` table's, stages through ``rating_curve``, else derived
    as ``threshold_analysis`` says: :mod:`hydroseq.forecast.probabilistic`); a hindcast scores the distribution too.

    A single issue time after the data file's last step (the newest days not ingested yet) forecasts no
    station: each is skipped with the reason, nothing is written. ``max_observation_age`` (hours, one issue
    time) lists in ``result.stale`` the stations whose newest observed target is older (:mod:`.freshness`).

    ``model_label`` names the model in the files' attributes (``model_name``, for a registered model also
    ``model_version`` and ``model_alias``; by default ``model_name`` is the model directory's name).

    Returns
    -------
    ForecastRun
        The forecast, how many stations it covers and the files written; when no station could be
        forecast nothing is written (``published`` is None) and any earlier files stay as they were.

    Raises
    ------
    InputDataError
        If the model directory or the data file cannot be used, the file's layout is not the model's (grid,
        variables, units, fewer weather-forecast leads: :func:`.check_data_layout`), the data end before a
        hindcast's last issue, or a weather forecast covers only some leads (:func:`.check_lead_coverage`).
        :class:`~hydroseq.errors.ConfigError`: the issue time does not parse, a bad ``max_observation_age``, an
        unknown format or one a hindcast cannot be written in.
    """
    writers = output_writers(formats)  # an unknown format is refused before anything is read
    model = ExportedModel(model_dir)
    metadata = model.metadata
    scalers = Scalers.from_dict(metadata.scalers)
    if forcing_forecast is not None and not any(item.source == "ingested" for item in metadata.forecast_input_specs):
        raise ConfigError(f"--forcing-forecast {forcing_forecast}: the model in {model_dir} reads no ingested "
                          "weather-forecast input")
    with IngestedFile(data_path, metadata, forcing_forecast, forecast_source) as source:
        plan = plan_run(source, issue_time, metadata.seq_len, max(metadata.leads))
        if plan.is_range:
            refuse_for_hindcast(writers)
        if max_observation_age is not None and (plan.is_range or max_observation_age < 0):
            raise ConfigError(f"--max-observation-age {max_observation_age:g}: hours (0 or more), for a forecast "
                              "at one issue time, not a hindcast")
        if plan.past_the_data is not None:  # the newest steps not ingested: nothing to forecast from
            return ForecastRun(nothing_at_the_issue_step(metadata, source.info(), source.station_ids,
                                                         plan.past_the_data, source.times[-1]), 0, published=None)
        if plan.is_range and not source.has_target:
            raise InputDataError(source.path, f"a hindcast is scored against the observed {metadata.target}, a "
                                              "variable the file lacks")
        n_weather = source.weather_members
        if n_weather and forcing_forecast is not None:
            raise ConfigError(f"--forcing-forecast {forcing_forecast}: the data file's weather forecast is an ensemble "
                              f"({n_weather} members); a product file is read at forecast time for a deterministic "
                              "product only")
        data = source.read(plan.start, plan.stop, plan.last_issue, 0 if n_weather else None, plan.first_issue)
        weather = [data] + [replace(data, forecast=source.read_forecast(plan.start, plan.stop, plan.last_issue, member))
                            for member in range(1, n_weather)]  # the same observations, another member's forecast
        observed_flag = metadata.feature_layout().observed_flag
        newest = (source.newest_observations(data, plan.start, plan.last_issue)
                  if observed_flag or max_observation_age is not None else None)
        info = source.info()
        references = source.read_reference_times(plan.start, plan.stop, last_issue=plan.last_issue)
        schedules = source.forecast_schedules()
        climatology = training_climatology(source) if plan.is_range else None
        levels = tuple(metadata.quantiles) or (ENSEMBLE_LEVELS if n_weather else ())
        record = (training_record(source, levels, thresholds, plan.is_range, rating_curve, threshold_analysis)
                  if levels else None)
        forcing_attributes = source.forcing.attributes if source.forcing is not None else {}
    layout = metadata.feature_layout()
    _check_feature_order(Path(model_dir) / METADATA_FILE, data, scalers, layout, metadata.feature_names)
    products = product_use(metadata, data, plan.window_ends, references, missing_forecast_input,
                           Path(forcing_forecast or data_path), forcing_attributes, schedules)
    for other in weather[1:]:  # every member of an ensemble weather forecast covers the model's leads
        check_lead_coverage(metadata, other.forecast, other.times, plan.window_ends, references, schedules,
                            other.station_ids, Path(data_path))
    core = forecast_core(model, data, plan.window_ends, batch_size, progress=show_progress and plan.is_range)
    values, members, age = core.values, core.members, core.observation_age_hours
    if n_weather:  # each weather member drives the model; the forecast is their combination
        cores = [core] + [forecast_core(model, other, plan.window_ends, batch_size) for other in weather[1:]]
        values, members = combine_weather_members(cores, metadata.quantiles)
        products = replace(products, attributes={**products.attributes, **weather_attributes(n_weather)})
    skipped = _skip_reasons(data, core.valid, core.lengths, plan.window_ends, core.needed)
    ungauged = () if newest is None or not observed_flag else tuple(np.asarray(data.station_ids)[newest < 0])
    label = model_label if model_label is not None else {"model_name": Path(model_dir).resolve().name}
    result = replace(_result(model, data, info, plan, values, members, skipped, age, products, label, levels),
                     ungauged=ungauged)
    if max_observation_age is not None and newest is not None:
        stale = stale_gauges(result, newest, plan.last_issue, metadata.grid.step, max_observation_age)
        result = replace(result, max_observation_age_hours=float(max_observation_age), stale=stale)
    if record is not None and result.quantiles is not None:
        result = replace(result, thresholds=record.thresholds,
                         exceedance=exceedance(result.quantiles, levels, record.thresholds))
    n_forecast = int(np.isfinite(result.values).any(axis=(0, 2)).sum())
    if n_forecast == 0:  # nothing to publish: leave any earlier files alone and let the scheduler act
        return ForecastRun(result, n_forecast, published=None)
    target = Path(out) if out is not None else default_output(result, plan.is_range)
    observed, baselines, distribution, signatures = None, None, None, None
    if plan.is_range:
        observed = observed_at_leads(data.target, plan.window_ends, result.leads)
        baselines = hindcast_baselines(result, data.target, plan.window_ends, climatology, data.grid)
        if record is not None:
            distribution = score_hindcast_distribution(result, observed, baselines["persistence"], record, data.grid)
        rain = data.runoff_precipitation()
        rain_at_leads = None if rain is None else observed_at_leads(rain, plan.window_ends, result.leads)
        signatures = hindcast_signatures(result, observed, baselines, data.grid, rain_at_leads)
    return ForecastRun(result, n_forecast, publish_forecast(result, target, observed, baselines, distribution,
                                                            signatures, writers))


def _check_feature_order(path: Path, data: StationData, scalers: Scalers, layout: FeatureLayout,
                         expected: list[str]) -> None:
    """The model's feature list, the scalers and the features built here must agree name by name."""
    built = layout.names
    if built != expected:
        raise InputDataError(path, f"feature order {expected} differs from what the forecast builds: {built}")
    if list(scalers.dynamic_names) != list(data.dynamic_names) or list(scalers.static_names) != list(data.static_names):
        raise InputDataError(path, "the scalers' feature order differs from the model's "
                             f"({scalers.dynamic_names + scalers.static_names} vs {built})")


def _skip_reasons(data: StationData, valid: np.ndarray, lengths: np.ndarray, ends: np.ndarray,
                  needed: int) -> dict[str, str]:
    """Why each station that was never forecast was skipped (judged at the last issue step)."""
    reasons = {}
    never = ~(lengths >= needed).any(axis=1)
    last = int(ends[-1])
    label = f"{pd.Timestamp(data.times[last]).isoformat()}Z"
    for s in np.flatnonzero(never):
        if not valid[s, last]:
            missing = [name for i, name in enumerate(data.dynamic_names) if not np.isfinite(data.dynamic[s, last, i])]
            what = ", ".join(missing) if missing else data.target_name
            reasons[data.station_ids[s]] = f"no valid input at the issue step {label} (missing: {what})"
        else:
            reasons[data.station_ids[s]] = (f"only {int(lengths[s, -1])} valid steps up to {label}; "
                                            f"the model needs at least {needed}")
    return reasons


def _result(model: ExportedModel, data: StationData, info: StationInfo, plan: Plan, values: np.ndarray,
            members: np.ndarray | None, skipped: dict[str, str], age_hours: np.ndarray | None,
            products: ProductUse, model_label: dict[str, str], levels: tuple[float, ...]) -> ForecastResult:
    metadata = model.metadata
    quantiles = values if levels else None
    if levels:
        values = values[..., levels.index(0.5)]
    step = pd.Timedelta(data.times[1] - data.times[0]) if len(data.times) > 1 else metadata.grid.step
    attributes = {
        "hydroseq_version": __version__, "model_run_id": metadata.run_id, "model_seq_len": str(metadata.seq_len),
        "model_onnx_sha256": metadata.files.get(ONNX_FILE, ""), "model_dataset_checksum": metadata.dataset_checksum,
        "input_file": data.path.name, "input_dataset_checksum": info.dataset_checksum,
        **data.grid.to_attrs(),  # the file's own zone: a local_standard_day model reads any
        "comment": "negative model outputs are published as 0 (discharge cannot be negative)",
        **products.attributes,
        **{key: value for key, value in model_label.items() if value},
    }
    return ForecastResult(
        issue_times=plan.labels, stations=data.station_ids,
        leads=np.asarray(metadata.leads, dtype=np.int64), step=step, values=values, variable=metadata.target,
        units=info.target_units, long_name=f"forecast of {info.target_long_name}",
        standard_name=info.target_standard_name, attributes=attributes,
        skipped=skipped, station_names=info.names, lats=info.lats, lons=info.lons,
        area_km2=info.areas, observation_age_hours=age_hours,
        forecast_input_age_hours=products.age_hours, forecast_inputs=products.inputs,
        forecast_input_read=products.read, forecast_input_ages=products.input_age_hours,
        fallback={station: why for station, why in products.fallback.items() if station not in skipped},
        late_weather_forecast={station: why for station, why in products.late.items() if station not in skipped},
        quantiles=quantiles, quantile_levels=levels or None, members=members,
    )


def default_output(result: ForecastResult, is_range: bool) -> Path:
    """``runs/forecast/forecast_<issue>.nc`` or ``runs/forecast/hindcast_<first>_<last>.nc``, each issue named
    as the daily job and the demo name it: its local day (``2014-09-30``) on a daily grid, its local time
    (``2005-06-01T0600``) on a sub-daily one."""
    grid = GridSpec.from_attrs(result.attributes)
    daily = result.step >= pd.Timedelta(days=1)

    def stamp(value: np.datetime64) -> str:
        if daily:
            return f"{grid.local_days(np.asarray([value]))[0]:%Y-%m-%d}"
        return f"{pd.Timestamp(value).tz_localize('UTC').tz_convert(grid.zone):%Y-%m-%dT%H%M}"
    if is_range:
        return DEFAULT_FORECAST_DIR / f"hindcast_{stamp(result.issue_times[0])}_{stamp(result.issue_times[-1])}.nc"
    return DEFAULT_FORECAST_DIR / f"forecast_{stamp(result.issue_times[0])}.nc"
