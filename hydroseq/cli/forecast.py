"""``hydroseq forecast``: run :func:`hydroseq.forecast.run_forecast`, print its tables and summary, set the exit
status."""

from __future__ import annotations

import argparse
import dataclasses
import logging
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from hydroseq.cli.forecast_tables import print_distribution_scores, print_exceedance, print_scores, result_issue
from hydroseq.cli.output import console_for, finish
from hydroseq.cli.tables import add_column, add_id_column, leads_label
from hydroseq.climate.derived import describe_derived
from hydroseq.errors import ExitCode
from hydroseq.export.metadata import ExportMetadata
from hydroseq.forecast import ForecastResult, ForecastRun, run_forecast
from hydroseq.scoring.return_periods import FrequencyAnalysis
from hydroseq.serving import is_model_uri

LOGGER = logging.getLogger(__name__)


def forecast_command(args: argparse.Namespace) -> int:
    """Forecast (or hindcast) every station; the exit status says how much was produced.

    ``ExitCode.OK`` when something was written and at most ``--max-skipped-share`` of the stations
    were not forecast (or, with ``--max-observation-age``, were forecast from a stale gauge, or, at
    one issue time, without any weather forecast), ``PARTIAL`` when more were (the files are written
    all the same), and ``NOTHING_PRODUCED`` when no station could be forecast (nothing written; also
    when the data end before the issue time). A ``--model models:/NAME@ALIAS`` (or ``/VERSION``) is
    the exported model of that registered version
    (:func:`hydroseq.serving.model_uri.registered_model`); the summary's ``model`` names it. With
    ``--pi-run-file`` (a Delft-FEWS General Adapter run) the issue time is the run file's ``time0``.
    """
    if not is_model_uri(args.model):
        if args.tracking_uri:
            LOGGER.warning(f"hydroseq forecast: --tracking-uri is read with --model models:/... only; {args.model} "
                           "is a model directory")
        return _forecast(args, Path(args.model), {})
    from hydroseq.serving.model_uri import registered_model

    with registered_model(args.model, args.tracking_uri) as registered:
        LOGGER.info(f"hydroseq forecast: {args.model} is version {registered.version} of {registered.name!r} (run "
                    f"{registered.run_id}) in {registered.tracking_uri}")
        label = {"model_name": registered.name, "model_version": str(registered.version),
                 "model_alias": registered.alias or ""}
        return _forecast(args, registered.model_dir, {"model": registered.summary()}, label)


def _forecast(args: argparse.Namespace, model_dir: Path, about_model: dict[str, Any],
              model_label: dict[str, str] | None = None) -> int:
    issue_time = args.issue_time
    if args.pi_run_file is not None:  # lxml: loaded for a Delft-FEWS run only
        from hydroseq.fileio.pi_run import read_run_file

        issue_time = read_run_file(args.pi_run_file).issue_time
    formats = list(args.formats or [])
    if args.pi_xml:
        LOGGER.warning("hydroseq forecast: --pi-xml is deprecated; use --format pi-xml")
        formats.append("pi-xml")
    run = run_forecast(model_dir, data_path=args.data, issue_time=issue_time, out=args.out,
                       missing_forecast_input=args.missing_forecast_input, thresholds=args.thresholds,
                       show_progress=not args.quiet, forcing_forecast=args.forcing_forecast,
                       forecast_source=args.forecast_source, max_observation_age=args.max_observation_age,
                       model_label=model_label, rating_curve=args.rating_curve,
                       threshold_analysis=FrequencyAnalysis(args.threshold_method, args.threshold_distribution),
                       formats=formats)
    summary = {**about_model, **forecast_summary(run)}
    console = console_for(args, width_off_terminal=120)
    print_summary(run.result, run.stations_forecast, run.published.forecast_files if run.published else [], console)
    metadata = ExportMetadata.read(model_dir)
    if derived := describe_derived([*metadata.dynamic_inputs, *metadata.static_inputs], metadata.climate_sources):
        console.print(escape(derived))
        summary["derived_inputs"] = derived
    if run.published is None:
        return finish(args, summary, ExitCode.NOTHING_PRODUCED)
    if run.result.exceedance is not None and len(run.result.issue_times) == 1:
        print_exceedance(run.result, console, args.min_probability)
    if run.published.scores is not None:
        print_scores(run.published.scores, list(run.published.score_files), run.result, console)
    if run.published.distribution_scores is not None:
        print_distribution_scores(run.published.distribution_scores, run.result, console)
    if run.result.late_weather_forecast:
        LOGGER.warning(f"hydroseq forecast: {len(run.result.late_weather_forecast)} stations read an older weather "
                       f"forecast run than the one due ({next(iter(run.result.late_weather_forecast.values()))})")
    skipped, stale, total = len(run.result.skipped), len(run.result.stale), len(run.result.stations)
    without_weather = len(run.result.fallback) if len(run.result.issue_times) == 1 else 0
    if skipped + stale + without_weather > args.max_skipped_share * total:
        counted = ", ".join(part for part in (
            f"{skipped} of {total} stations not forecast",
            f"{stale} forecast from a gauge silent for more than --max-observation-age "
            f"{args.max_observation_age:g} h" if stale else "",
            f"{without_weather} forecast without a weather forecast" if without_weather else "") if part)
        share = (skipped + stale + without_weather) / total
        LOGGER.warning(f"hydroseq forecast: partial result: {counted} ({share:.0%}), more than "
                       f"--max-skipped-share {args.max_skipped_share:g} allows; what was forecast is written")
        return finish(args, summary, ExitCode.PARTIAL)
    return finish(args, summary, ExitCode.OK)


def forecast_summary(run: ForecastRun) -> dict[str, Any]:
    """The ``--json`` summary: issue times, stations forecast and not (with the reasons), those forecast
    without some weather-forecast input (and per station and input where it came from,
    :func:`forecast_input_use`) or without their newest observation, with ``--max-observation-age``
    those forecast from a stale gauge (``stale``, counted in ``stations``), the files written and, for a
    hindcast, per lead the median and mean NSE over stations of every forecast (the printed table)."""
    result, published = run.result, run.published
    summary: dict[str, Any] = {
        "issue_times": {"first": result.issue_times[0], "last": result.issue_times[-1],
                        "count": len(result.issue_times)},
        "stations": {"total": len(result.stations), "forecast": run.stations_forecast,
                     "skipped": len(result.skipped), "stale": len(result.stale)},
        "skipped": result.skipped, "without_weather_forecast": result.fallback,
        "late_weather_forecast": result.late_weather_forecast,
        "forecast_inputs": forecast_input_use(result),
        "without_newest_observation": late_gauges(result),
        "max_observation_age_hours": result.max_observation_age_hours, "stale": result.stale, "leads": result.leads,
        "files": [*published.forecast_files, *published.score_files] if published else [],
        "manifest": published.manifest if published else None}
    if published is not None and published.scores is not None:
        summary["hindcast"] = [dataclasses.asdict(row) for row in published.scores.summary()]
    if result.exceedance is not None and result.thresholds is not None and len(result.issue_times) == 1:
        thresholds = result.thresholds.for_stations(result.stations)
        summary["exceedance_probability"] = {  # station -> threshold level -> probability per lead
            station: {level: [None if not np.isfinite(p) else round(float(p), 4) for p in result.exceedance[0, s, :, k]]
                      for k, level in enumerate(thresholds.levels)}
            for s, station in enumerate(result.stations) if np.isfinite(result.values[0, s]).any()}
    return summary


def print_summary(result: ForecastResult, n_forecast: int, outputs: list[Path], console: Console) -> None:
    """Issue time(s) (the local day and the UTC label), stations forecast and skipped (with reasons), leads in
    days (hours on a sub-daily grid) and the files written."""
    issue = result_issue(result)
    table = Table(title=f"hydroseq forecast, issued {issue}", show_header=False)
    table.add_column(no_wrap=True)
    add_column(table, "")
    table.add_row("stations forecast", f"{n_forecast} of {len(result.stations)}")
    table.add_row("leads", leads_label(result.leads, result.step))
    for path in outputs:
        table.add_row("written", escape(str(path)))
    console.print(table)
    late = late_gauges(result)
    for reasons, title in ((result.skipped, "stations not forecast"),
                           (result.fallback, "stations forecast without some weather-forecast input"),
                           (result.late_weather_forecast, "stations forecast from an older weather run than due"),
                           (late, "stations forecast without their newest observation"),
                           (result.stale, "stations forecast from a stale gauge (--max-observation-age)")):
        if reasons:
            stations = Table(title=f"{len(reasons)} {title}, issued {issue}")
            add_id_column(stations, "station", reasons)
            add_column(stations, "reason")
            for station, reason in reasons.items():
                stations.add_row(escape(station), escape(reason))
            console.print(stations)
    if result.observation_age_hours is not None and len(result.issue_times) == 1:
        console.print(f"observed at the issue step: {n_forecast - len(late)} of {n_forecast} stations forecast")
    if "forecast_inputs_source" in result.attributes:
        console.print(f"[bold]forecast inputs[/bold]: {result.attributes['forecast_inputs_source']}")


def forecast_input_use(result: ForecastResult) -> dict[str, dict[str, dict[str, Any]]]:
    """Per station forecast and weather-forecast input, what the model read: at one issue time
    ``{"from": "product", "age_hours": 6.0}`` (the product's age, as in ``forecast_input_age_by_input``),
    ``{"from": "perfect"}`` (observed values) or ``{"from": "fallback"}`` (no value valid: it read
    "no forecast"); over several, the number of issue times of each (``{"product": 9, "fallback": 1}``).
    Empty for a model without weather-forecast inputs."""
    read = result.forecast_input_read
    if read is None:
        return {}
    ages = result.forecast_input_ages if result.forecast_input_ages is not None else np.full(read.shape, np.nan)
    kinds = np.where(~read, "fallback", np.where(np.isfinite(ages), "product", "perfect"))  # [issue, station, input]
    forecast = np.isfinite(result.values).any(axis=2)
    use: dict[str, dict[str, dict[str, Any]]] = {}
    for s, station in enumerate(result.stations):
        issues = np.flatnonzero(forecast[:, s])
        if not len(issues):
            continue
        if len(result.issue_times) == 1:
            use[station] = {name: {"from": str(kinds[0, s, k]),
                                   **({"age_hours": float(ages[0, s, k])} if np.isfinite(ages[0, s, k]) else {})}
                            for k, name in enumerate(result.forecast_inputs)}
        else:
            use[station] = {name: {kind: int(count) for kind, count in
                                   zip(*np.unique(kinds[issues, s, k], return_counts=True), strict=True)}
                            for k, name in enumerate(result.forecast_inputs)}
    return use


def late_gauges(result: ForecastResult) -> dict[str, str]:
    """``{station: age of its newest observation}`` for the stations forecast at a single issue time
    without an observation at the issue step, or that the gauge is absent (models that read the
    observed target; a hindcast's ages per issue time are in its files)."""
    ages = result.observation_age_hours
    if ages is None or len(result.issue_times) != 1:
        return {}
    forecast = np.isfinite(result.values[0]).any(axis=1)
    ungauged = set(result.ungauged)
    late = {}
    for station, age, was_forecast in zip(result.stations, ages[0], forecast, strict=True):
        if not was_forecast or age == 0:
            continue
        if station in ungauged:
            late[station] = f"no observed {result.variable} in the data file (ungauged)"
        elif np.isnan(age):
            late[station] = "no observation in the model's input window"
        else:
            late[station] = f"newest observation {age:g} h before the issue time"
    return late
