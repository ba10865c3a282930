"""The argument parser of the ``hydroseq`` command: its commands, options, examples and global options.

The global options (``-q``, ``-v``, ``--log-file``, ``--diagnostics``, ``--json``) are accepted before the
command and after it; they are read by :mod:`hydroseq.cli.output`.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from hydroseq import __version__
from hydroseq.cli.arg_types import hours_value, name_list, share_value
from hydroseq.cli.fetch import add_fetch_options
from hydroseq.cli.registry import add_promote_options
from hydroseq.errors import ExitCode

Handler = Callable[[argparse.Namespace], int]

TRACKING_URI_HELP = ("MLflow tracking URI (overrides MLFLOW_TRACKING_URI, which overrides the config's; default "
                     "sqlite:///mlruns.db; relative store paths resolve under HYDROSEQ_HOME, default the working "
                     "directory)")
ISSUE_TIME_HELP = (
    "issue time T, or START..END for a hindcast at every grid step between them. ISO 8601 only: a date "
    "YYYY-MM-DD is that local day of the grid and means its last step; YYYY-MM-DDTHH:MM[:SS] with Z or a UTC "
    "offset (+02:00) is that instant; without either it is wall-clock time in the grid's time zone (grid.timezone "
    "of the ingest config, the data file's grid_timezone attribute). The forecast starts from the last grid label "
    "at or before T. Day/month forms such as 03/04/2014 are rejected")
EXIT_STATUSES = ", ".join(f"{code.value} {code.name.lower()}" for code in ExitCode)

MAIN_EXAMPLES = f"""\
examples:
  hydroseq ingest --config configs/ingest_caravan_daily.yaml --out runs/demo/caravan_daily.nc
  hydroseq train --config configs/train_demo_cpu.yaml --data runs/demo/caravan_daily.nc
  hydroseq --json -q forecast --model runs/demo/model --data runs/demo/caravan_daily.nc --issue-time 2014-09-30
  hydroseq config --template ingest > configs/my_ingest.yaml
  hydroseq promote --model demo --version 3 --alias champion
  hydroseq forecast --help

exit status: {EXIT_STATUSES} (README "Exit status")"""

EXAMPLES = {
    "fetch": """\
  hydroseq fetch --source ecmwf-hres --issue-time 2026-11-02T12:00Z --out raw --params tp 2t --steps 0/90/6
  hydroseq fetch --source gefs --issue-time 2026-11-02 --timezone Etc/GMT+8 --out raw --params tp --members 10
  hydroseq fetch --source nwis --issue-time 2026-11-02 --out raw --stations data/stations.csv --station-prefix usgs_
  # a mirror laid out like the source, and a scheduler's retries
  hydroseq --json fetch --source gfs --issue-time 2026-11-02T06:00Z --out raw --base-url https://mirror.example/gfs \\
      --attempts 8 --retry-wait 30""",
    "ingest": """\
  hydroseq ingest --config configs/ingest_caravan_daily.yaml --out runs/demo/caravan_daily.nc
  hydroseq ingest --config configs/ingest_camels_us.yaml --out runs/camels_us.nc --workers 4
  hydroseq ingest --config configs/ingest_camels_us.yaml --out runs/camels_us.zarr --workers 4
  hydroseq --log-file ingest.log ingest --config window.yaml --out data/ingested.nc --append
  # inside a Delft-FEWS General Adapter run: the exported PI-XML files over the run's period (docs/fews.md)
  hydroseq ingest --config fews_ingest.yaml --out work/ingested.nc --pi-run-file run_info.xml""",
    "stats": """\
  hydroseq stats --config configs/train_caravan_per_step.yaml --data runs/demo/caravan_daily.nc
  hydroseq --json stats --config configs/train_caravan_sequence.yaml --out runs/stats_sequence""",
    "train": """\
  hydroseq train --config configs/train_demo_cpu.yaml --data runs/demo/caravan_daily.nc
  hydroseq train --config configs/train_caravan_forecast.yaml --nproc 2 --tracking-uri http://mlflow:5000
  hydroseq train --config configs/train_demo_cpu.yaml --resume
  hydroseq train --config configs/finetune_caravan.yaml --init-from models/caravan-camels-us-daily
  hydroseq --json -q train --config configs/train_demo_cpu.yaml    # run id, best epoch, validation NSE""",
    "evaluate": """\
  hydroseq evaluate --run 3f2a9c... --period test
  hydroseq evaluate --run 3f2a9c... --period validation --data runs/demo/caravan_daily.nc
  hydroseq --json evaluate --run 3f2a9c...    # the summary metrics""",
    "export": """\
  hydroseq export --run 3f2a9c... --seq-len 90 --out runs/demo/model
  hydroseq export --run runs/demo/train/best.pt --seq-len 90 --out runs/demo/model
  hydroseq export --run 3f2a9c... --seq-len 365 --out models/my-model --release   # relative paths, SHA256SUMS""",
    "forecast": """\
  hydroseq forecast --model runs/demo/model --data runs/demo/caravan_daily.nc --issue-time 2014-09-30
  hydroseq forecast --model runs/demo/model --data runs/demo/caravan_daily.nc --issue-time 2014-09-30T06:00Z
  hydroseq forecast --model runs/demo/model --data runs/demo/caravan_daily.nc \\
      --issue-time 2013-10-01..2014-09-30 --out runs/demo/forecast/hindcast_wy2014.nc
  # a scheduler's run: exit 5 if more than 20 % of the stations are not forecast or forecast from a gauge
  # silent for more than 72 h, JSON summary on stdout
  hydroseq --json -q --log-file forecast.log forecast --model runs/model --data data/ingested.nc \\
      --issue-time 2014-09-30 --max-skipped-share 0.2 --max-observation-age 72
  # the version the alias @champion of the registered model "demo" names (hydroseq promote sets it)
  hydroseq forecast --model models:/demo@champion --data runs/demo/caravan_daily.nc --issue-time 2014-09-30
  hydroseq forecast --model models:/demo/3 --tracking-uri http://mlflow:5000 --data data/ingested.nc \\
      --issue-time 2014-09-30
  # inside a Delft-FEWS General Adapter run: issued at the run's time0, PI-XML for FEWS to import
  hydroseq forecast --model runs/model --data work/ingested.nc --pi-run-file run_info.xml \\
      --out output/forecast.nc --format pi-xml""",
    "report": """\
  hydroseq report --forecast runs/demo/forecast/forecast_2014-09-30.nc --data runs/demo/caravan_daily.nc \\
      --hindcast runs/demo/forecast/hindcast_wy2014.nc --out runs/demo/forecast/forecast_2014-09-30.html
  hydroseq report --forecast forecasts/forecast_2014-10-01.nc --previous forecasts/forecast_2014-09-30.nc \\
      --data data/ingested.nc --out forecasts/forecast_2014-10-01.html
  # the verification page of a hindcast
  hydroseq report --hindcast runs/demo/forecast/hindcast_wy2014.nc --data runs/demo/caravan_daily.nc \\
      --out runs/demo/forecast/hindcast_wy2014.html""",
    "promote": """\
  hydroseq promote --model demo --version 3 --alias champion
  # judged on one hindcast per version (hydroseq forecast --model models:/demo/N --issue-time A..B)
  hydroseq promote --model demo --version 4 --hindcast runs/hindcast_v4.nc runs/hindcast_v3.nc
  hydroseq promote --model demo --version 5 --force    # despite the gate; the move records it
  hydroseq promote --history demo
  hydroseq promote --model demo --rollback    # back to the version @champion named before
  hydroseq --json promote --model hydroseq --version 7 --tracking-uri http://mlflow:5000""",
    "config": """\
  hydroseq config --template train > configs/my_train.yaml
  hydroseq config --template ingest > configs/my_ingest.yaml
  hydroseq config --schema train > train.schema.json""",
}


def build_parser(command: Callable[[str, str], Handler]) -> argparse.ArgumentParser:
    """The argument parser; ``command(module, function)`` makes the handler each command sets as ``handler``."""
    parser = argparse.ArgumentParser(
        prog="hydroseq", description="Streamflow forecasting: ingest -> train -> evaluate -> export -> forecast.",
        epilog=MAIN_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"hydroseq {__version__}")
    _global_options(parser, after_command=False)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name: str, help: str, module: str, function: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help, description=help, epilog=f"examples:\n{EXAMPLES[name]}",
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
        sub.set_defaults(handler=command(module, function))
        _global_options(sub, after_command=True)
        return sub

    add_fetch_options(add("fetch", "download the forecast runs (ECMWF open data, NOAA GFS/GEFS) or gauge readings "
                          "(USGS NWIS) an issue time needs into a raw folder", "fetch", "fetch_command"))

    ingest = add("ingest", "resample raw sources onto one leakage-free time grid", "ingest", "ingest_command")
    ingest.add_argument("--config", required=True, type=Path, help="ingest config (YAML)")
    ingest.add_argument("--out", required=True, type=Path, help="output NetCDF file or Zarr store (NAME.zarr)")
    ingest.add_argument("--workers", type=int, default=None, help="start a local dask cluster with N workers")
    ingest.add_argument("--scheduler", default=None, help="address of an existing dask scheduler")
    ingest.add_argument("--pi-run-file", type=Path, default=None, metavar="FILE",
                        help="a Delft-FEWS PI run file: the grid covers the local days of its run, from its "
                             "startDateTime to its time0, instead of the config's grid.start..end (docs/fews.md)")
    ingest.add_argument("--append", action="store_true",
                        help="append newer steps to an existing output (steps past its end without any value, "
                             "their raw files not arrived, are not appended: a warning and append.no_new_data)")

    stats = add("stats", "sequence-length distribution and padding per batching strategy", "stats", "stats_command")
    stats.add_argument("--config", required=True, type=Path, help="train config (YAML)")
    stats.add_argument("--data", type=Path, default=None, help="ingested NetCDF or Zarr store (overrides the config)")
    stats.add_argument("--out", type=Path, default=Path("runs/stats"), help="folder for the histogram PNG")

    train = add("train", "train a packed LSTM, tracked in MLflow", "training", "train_command")
    train.add_argument("--config", required=True, type=Path, help="train config (YAML)")
    train.add_argument("--data", type=Path, default=None, help="ingested NetCDF or Zarr store (overrides the config)")
    train.add_argument("--resume", action="store_true", help="continue from the last checkpoint")
    train.add_argument("--nproc", type=int, default=None, help="train with N local DDP processes")
    train.add_argument("--init-from", default=None, metavar="DIR_OR_RUN",
                       help="fine-tune: start from this base model (exported model directory, checkpoint file or "
                            "MLflow run id), keeping its inputs and scalers")
    train.add_argument("--tracking-uri", default=None, help=TRACKING_URI_HELP)
    train.add_argument("--artifact-root", type=Path, default=None,
                       help="artifact folder of a new experiment in a local store (overrides HYDROSEQ_ARTIFACT_ROOT, "
                            "which overrides tracking.artifact_root)")

    evaluate = add("evaluate", "score a trained run against baselines", "training", "evaluate_command")
    evaluate.add_argument("--run", required=True, help="MLflow run id")
    evaluate.add_argument("--period", default="test", choices=["train", "validation", "test"],
                          help="which period of the run's config (data.splits) to score; default: test, "
                               "the one neither training nor early stopping saw")
    evaluate.add_argument("--data", type=Path, default=None, help="ingested NetCDF or Zarr store (default: the run's)")
    evaluate.add_argument("--tracking-uri", default=None, help=TRACKING_URI_HELP)

    export = add("export", "write a self-contained fixed-length model directory", "export", "export_command")
    export.add_argument("--run", required=True, help="MLflow run id or checkpoint file")
    export.add_argument("--seq-len", required=True, type=int, help="fixed input length N")
    export.add_argument("--out", required=True, type=Path, help="output model directory")
    export.add_argument("--tracking-uri", default=None, help=TRACKING_URI_HELP)
    export.add_argument("--release", action="store_true",
                        help="make --out a release: the recorded config's paths relative to --release-root, SHA256SUMS")
    export.add_argument("--release-root", type=Path, default=None, metavar="DIR",
                        help="with --release: the folder the recorded paths are made relative to (default: this one)")

    forecast = add("forecast", "forecast every station from an exported or a registered model", "forecast",
                   "forecast_command")
    forecast.add_argument("--model", required=True, metavar="DIR_OR_URI",
                          help="exported model directory, or a registered model: models:/NAME@ALIAS "
                               "(models:/demo@champion) or models:/NAME/VERSION, read from the MLflow store")
    forecast.add_argument("--data", required=True, type=Path, help="ingested NetCDF or Zarr store")
    issue = forecast.add_mutually_exclusive_group(required=True)
    issue.add_argument("--issue-time", metavar="T[..T2]", help=ISSUE_TIME_HELP)
    issue.add_argument("--pi-run-file", type=Path, default=None, metavar="FILE",
                       help="a Delft-FEWS PI run file (the General Adapter's exportRunFileActivity): the issue time "
                            "is its time0 (docs/fews.md)")
    forecast.add_argument("--out", type=Path, default=None, help="output NetCDF (CSV written beside it)")
    forecast.add_argument("--format", dest="formats", type=name_list, action="extend", default=None,
                          metavar="NAME[,NAME...]",
                          help="also write the forecast in these formats, a comma list, as <out stem>.<suffix> in "
                               "the same set (the NetCDF and the CSV are always written): pi-xml, Delft-FEWS PI-XML "
                               "time series in m3/s for one issue time, <out stem>.xml (docs/fews.md); "
                               "docs/forecast.md lists every format")
    forecast.add_argument("--pi-xml", action="store_true", help="deprecated: the same as --format pi-xml")
    forecast.add_argument("--missing-forecast-input", choices=("fallback", "fail"), default="fallback",
                          help="models with weather-forecast inputs, a station with no product valid at the issue "
                               "time: forecast it without one (default) or fail the run")
    forecast.add_argument("--forcing-forecast", type=Path, default=None, metavar="FILE",
                          help="models with ingested weather-forecast inputs: a product file (NetCDF) gridded now "
                               "with the data file's own forecast source and used where it is newer than the "
                               "ingested product")
    forecast.add_argument("--forecast-source", default=None, metavar="NAME",
                          help="with --forcing-forecast, the forecast source (its name in the ingest config) that "
                               "reads the file, when there are several")
    forecast.add_argument("--thresholds", type=Path, default=None,
                          help="models with a predictive distribution: CSV of thresholds with the units in the "
                               "header (station,level,discharge [m3/s]; any discharge unit: ft3/s, l/s, mm/d, ...; "
                               "or station,level,stage [m] with --rating-curve); it replaces the default: 2- and "
                               "5-year daily-mean flows fitted to the water-year maxima (and the 95th and 99th "
                               "percentiles) of the model's training period")
    forecast.add_argument("--rating-curve", type=Path, default=None, metavar="FILE",
                          help="with --thresholds: CSV of station,stage [m],discharge [m3/s] pairs (units in the "
                               "header) that turns the table's stages into discharges (monotone interpolation; a "
                               "stage outside a station's pairs is refused)")
    forecast.add_argument("--threshold-method", choices=("lmoments", "mle"), default="lmoments",
                          help="how the default thresholds' return-period flows are fitted: L-moments, with a 90 %% "
                               "bootstrap interval (default), or maximum likelihood without one (the earlier method, "
                               "to reproduce thresholds derived with it)")
    forecast.add_argument("--threshold-distribution", choices=("gumbel", "gev"), default="gumbel",
                          help="the distribution fitted to the water-year maxima (default gumbel)")
    forecast.add_argument("--min-probability", type=share_value, default=0.1, metavar="P",
                          help="models with a predictive distribution, one issue time: the printed table lists the "
                               "stations whose probability of exceeding a flood threshold is at least P (0 to 1) at "
                               "some lead, with their names and the thresholds in m3/s (default 0.1); the files "
                               "and --json keep every station")
    forecast.add_argument("--max-skipped-share", type=share_value, default=1.0, metavar="SHARE",
                          help="exit 5 (partial result) when more than this share (0 to 1) of the stations could "
                               "not be forecast (or, with --max-observation-age, were forecast from a stale gauge, "
                               "or were forecast without any weather forecast valid at the issue time); "
                               "what was forecast is written all the same (default 1: never)")
    forecast.add_argument("--max-observation-age", type=hours_value, default=None, metavar="HOURS",
                          help="one issue time: a station whose newest observed discharge is older than HOURS at "
                               "the issue time is forecast and flagged as stale (stale_gauge in the CSV, "
                               "stale_stations in the NetCDF) and counts toward --max-skipped-share "
                               "(default: not checked)")
    forecast.add_argument("--tracking-uri", default=None, help="with --model models:/...: " + TRACKING_URI_HELP)

    report = add("report", "write the forecaster's page (or a hindcast's verification page) as one HTML file",
                 "report", "report_command")
    report.add_argument("--forecast", type=Path, default=None, metavar="F.nc",
                        help="a forecast of one issue time (hydroseq forecast's NetCDF): the forecast page")
    report.add_argument("--data", type=Path, default=None, metavar="INGESTED.nc",
                        help="the ingested data file the observations come from (the last 60 days on a "
                             "forecast page, the hindcast period on a verification page)")
    report.add_argument("--hindcast", type=Path, default=None, metavar="H.nc",
                        help="a hindcast (with its _scores.csv beside it): each station's recent skill on the "
                             "forecast page; alone, the verification page")
    report.add_argument("--previous", type=Path, default=None, metavar="P.nc",
                        help="an earlier forecast (yesterday's) drawn beside --forecast")
    report.add_argument("--stations", type=Path, default=None, metavar="FILE",
                        help="only these stations (a CSV with a station_id or station column, such as the station "
                             "table filtered to a region, or one id a line): one page per region")
    report.add_argument("--max-stations", type=int, default=2000, metavar="N",
                        help="refuse a page of more than N stations (default 2000: a page of more takes seconds to "
                             "sort; write one page per region with --stations)")
    report.add_argument("--out", required=True, type=Path, metavar="PAGE.html", help="the page to write")

    add_promote_options(add("promote", "point an alias (@champion) of a registered model at one of its versions if it "
                            "is no worse than the version the alias names and than persistence; list or roll back "
                            "the moves", "registry", "promote_command"), TRACKING_URI_HELP)

    config = add("config", "print the JSON schema of a config, or a commented starting YAML", "config",
                 "config_command")
    shown = config.add_mutually_exclusive_group(required=True)
    shown.add_argument("--schema", choices=("train", "ingest"), help="the JSON schema of the train or ingest config")
    shown.add_argument("--template", choices=("train", "ingest"),
                       help="a starting YAML with every key, its default and its description as a comment")
    return parser


def _global_options(parser: argparse.ArgumentParser, after_command: bool) -> None:
    """``-q``, ``-v``, ``--log-file``, ``--diagnostics``, ``--json``. After the command their defaults are SUPPRESS, so
    that one given before the command is not reset by the command's parser."""
    def default(value: object) -> object:
        return argparse.SUPPRESS if after_command else value

    group = parser.add_argument_group("output and logging (before or after the command)")
    group.add_argument("-q", "--quiet", action="store_true", default=default(False),
                       help="print nothing but errors: no tables, progress bars or warnings")
    group.add_argument("-v", "--verbose", action="store_true", default=default(False),
                       help="also print debug lines (on stderr, and into --log-file)")
    group.add_argument("--log-file", type=Path, default=default(None), metavar="PATH",
                       help="append plain log lines to PATH: UTC timestamp, level, message, the result's summary; "
                            "no colours or progress bars; INFO and above, DEBUG with -v")
    group.add_argument("--diagnostics", type=Path, default=default(None), metavar="PATH",
                       help="when the command ends, write its log lines (INFO and above, DEBUG with -v) to PATH as a "
                            "Delft-FEWS PI diagnostics file (levels 1 error, 2 warning, 3 info, 4 debug), atomically")
    group.add_argument("--json", action="store_true", default=default(False),
                       help="print the result as one JSON object on stdout (exit code included); "
                            "the tables go to stderr")
