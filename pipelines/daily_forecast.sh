#!/usr/bin/env bash
# The daily forecast job: incremental ingest -> forecast -> publish.
#
#   pipelines/daily_forecast.sh [ISSUE_DATE]      (default: yesterday, UTC calendar)
#
# ISSUE_DATE is a local day of the grid: the forecast uses the data up to the end of that day.
# Configuration (environment; defaults are the container's layout, see pipelines/README.md):
#   HYDROSEQ_INGEST_CONFIG  ingest config whose sources hold the newest raw files [configs/ingest_caravan_daily.yaml]
#   HYDROSEQ_DATA           ingested dataset the new days are appended to          [data/ingested.nc]
#   HYDROSEQ_MODEL          exported model directory, or a registered model models:/NAME@ALIAS (or
#                           models:/NAME/VERSION) resolved at each run in the MLflow store that
#                           MLFLOW_TRACKING_URI names (default sqlite:///mlruns.db under HYDROSEQ_HOME)  [runs/model]
#   HYDROSEQ_PUBLISH_DIR    where forecasts are published                          [forecasts]
#   HYDROSEQ_WORK_DIR       scratch space                                          [runs/daily]
#   HYDROSEQ_OVERLAP_DAYS   recent days re-ingested to pick up late observations   [3]
#   HYDROSEQ_MISSING_FORECAST_INPUT  models with weather-forecast inputs, a station with no product valid
#                           at the issue time: fallback (forecast without it) or fail  [fallback]
#   HYDROSEQ_MAX_SKIPPED_SHARE  exit 5 (partial) when more than this share of the stations was not
#                           forecast (or stale, or without a weather forecast); the others are published
#                           all the same; 1 turns the check off                                   [0.2]
#   HYDROSEQ_MAX_OBSERVATION_AGE  hours: a station forecast from a gauge whose newest observation is older
#                           counts toward that share (hydroseq forecast --max-observation-age); "off" turns
#                           it off; 72 suits a daily grid, set it for a sub-daily one                 [72]
#   (an ingest config with forecast_sources ingests the newest weather-forecast product in the same step;
#   7 days ahead from GRIB2 runs: HYDROSEQ_INGEST_CONFIG=configs/ingest_grib2_hres.yaml, or
#   configs/ingest_grib2_ensemble.yaml, with HYDROSEQ_MODEL=models/caravan-camels-us-daily-week-ahead;
#   pipelines/README.md "A week ahead from GRIB2 runs")
#   HYDROSEQ_FORCING_FORECAST  a weather-forecast product file read by the forecast itself (hydroseq forecast
#                           --forcing-forecast), instead of or besides ingesting it                [none]
#   HYDROSEQ_REPORT         write the forecaster's page forecast_<date>.html into the set: 1 or 0     [1]
#   HYDROSEQ_REPORT_HINDCAST  a hindcast (with its _scores.csv) whose per-station skill the page shows  [none]
#   HYDROSEQ_PI_XML         also publish the forecast as Delft-FEWS PI-XML, forecast_<date>.xml (hydroseq
#                           forecast --format pi-xml; needs the stations' areas): 1 or 0              [0]
#   HYDROSEQ / PYTHON       the hydroseq command and its Python                    [hydroseq / python3]
#
# Log (stderr): the job's own lines and, per hydroseq step, its JSON summary as one line ("ingest: {...}");
# the steps' own log lines go to HYDROSEQ_WORK_DIR/logs/ISSUE_DATE.log.
# Exit status: hydroseq's own table (README "Exit status", hydroseq.errors.ExitCode); the log names the step.
#   0  published                        1  no station could be forecast (nothing published)
#   2  bad issue date (not a calendar   3  setup: config, dataset or model missing (a models:/ URI naming no
#      day YYYY-MM-DD)                     registered version), HYDROSEQ or PYTHON does not start (a broken
#                                          install), publishing failed
#   4  a data file cannot be used       5  published, but more than HYDROSEQ_MAX_SKIPPED_SHARE not forecast
#                                          (or forecast from a gauge older than HYDROSEQ_MAX_OBSERVATION_AGE)
#   6  another run holds the lock, or   7  no space left (a step's output or publishing): free space, retry
#      the MLflow store does not answer
#   143 stopped by SIGTERM (passed on to the running step; what was published before stays as it was)
#   a failing hydroseq step passes on its own status
set -uo pipefail
EXIT_NOTHING_PRODUCED=1 EXIT_USAGE=2 EXIT_CONFIG=3 EXIT_PARTIAL=5 EXIT_UNAVAILABLE=6 EXIT_NO_SPACE=7 EXIT_TERMINATED=143

ISSUE_DATE=${1:-$(date -u -d yesterday +%F)}
INGEST_CONFIG=${HYDROSEQ_INGEST_CONFIG:-configs/ingest_caravan_daily.yaml}
DATA=${HYDROSEQ_DATA:-data/ingested.nc}
MODEL=${HYDROSEQ_MODEL:-runs/model}
PUBLISH_DIR=${HYDROSEQ_PUBLISH_DIR:-forecasts}
WORK_DIR=${HYDROSEQ_WORK_DIR:-runs/daily}
OVERLAP_DAYS=${HYDROSEQ_OVERLAP_DAYS:-3}
MISSING_FORECAST_INPUT=${HYDROSEQ_MISSING_FORECAST_INPUT:-fallback}
MAX_SKIPPED_SHARE=${HYDROSEQ_MAX_SKIPPED_SHARE:-0.2}
MAX_OBSERVATION_AGE=${HYDROSEQ_MAX_OBSERVATION_AGE:-72}
[[ $MAX_OBSERVATION_AGE == off ]] && MAX_OBSERVATION_AGE=
FORCING_FORECAST=${HYDROSEQ_FORCING_FORECAST:-}
REPORT=${HYDROSEQ_REPORT:-1}
REPORT_HINDCAST=${HYDROSEQ_REPORT_HINDCAST:-}
PI_XML=${HYDROSEQ_PI_XML:-0}
pi_xml=()
HYDROSEQ=${HYDROSEQ:-hydroseq}
PYTHON=${PYTHON:-python3}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
STEP_LOG="$WORK_DIR/logs/$ISSUE_DATE.log"

log() { printf '%s daily_forecast %s: %s\n' "$(date -u +%FT%TZ)" "$ISSUE_DATE" "$*" >&2; }
fail() { log "FAILED ($1): $2"; exit "$1"; }

# As PID 1 of a container (the CronJob) bash ignores SIGTERM unless trapped, and it would not pass
# it on: each step runs in the background so that the trap can hand the signal to it.
child=0
terminated=0
on_term() { terminated=1; if ((child)); then kill -TERM "$child" 2>/dev/null; fi; }
trap on_term TERM

step() {  # step COMMAND...: run it, pass a SIGTERM on to it, return its exit status
    ((terminated)) && fail $EXIT_TERMINATED "stopped by SIGTERM"
    "$@" &
    child=$!
    local status=0
    wait "$child" || status=$?
    while kill -0 "$child" 2>/dev/null; do  # the trap cut the wait short: wait for the step itself
        status=0
        wait "$child" || status=$?
    done
    child=0
    ((terminated)) && fail $EXIT_TERMINATED "stopped by SIGTERM (the step exited with $status)"
    return "$status"
}

check_setup() {
    [[ $ISSUE_DATE =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}$ && $(date -u -d "$ISSUE_DATE" +%F 2>/dev/null) == "$ISSUE_DATE" ]] \
        || fail $EXIT_USAGE "issue date '$ISSUE_DATE' is not a calendar day YYYY-MM-DD"
    [[ $PI_XML == [01] ]] || fail $EXIT_CONFIG "HYDROSEQ_PI_XML is '$PI_XML', not 1 or 0"
    if ((PI_XML)); then pi_xml=(--format pi-xml); fi
    local started
    started=$("$HYDROSEQ" --version 2>&1) \
        || fail $EXIT_CONFIG "the hydroseq command '$HYDROSEQ' does not start (a broken install?): ${started##*$'\n'}"
    started=$("$PYTHON" -c 'import hydroseq.errors' 2>&1) \
        || fail $EXIT_CONFIG "'$PYTHON' cannot import hydroseq (set PYTHON to hydroseq's Python): ${started##*$'\n'}"
    [[ -f $INGEST_CONFIG ]] || fail $EXIT_CONFIG "ingest config $INGEST_CONFIG not found"
    [[ -f $DATA ]] || fail $EXIT_CONFIG "dataset $DATA not found: run the first full ingest (hydroseq ingest) once"
    if [[ $MODEL != models:/* ]]; then  # a registered model is resolved by hydroseq forecast (exit 3 or 6)
        [[ -f $MODEL/metadata.json ]] || fail $EXIT_CONFIG "no exported model in $MODEL (hydroseq export)"
    fi
    mkdir -p "$WORK_DIR/logs" "$PUBLISH_DIR" || fail $EXIT_CONFIG "cannot create $WORK_DIR or $PUBLISH_DIR"
}

take_lock() {  # then removes the latest.* links a run killed while swapping them left (it held this lock)
    exec 9>"$WORK_DIR/.lock"
    if command -v flock >/dev/null; then
        flock -n 9 || fail $EXIT_UNAVAILABLE "another daily run holds $WORK_DIR/.lock"
    fi
    local stale
    for stale in "$PUBLISH_DIR"/.latest.*; do
        [[ -L $stale && ${stale##*/} =~ ^\.latest\.[a-z.]+\.[0-9]+$ ]] || continue
        rm -f "$stale" && log "removed $stale, left by a run stopped while it swapped the latest.* links"
    done
}

summary=""
hydroseq_step() {  # hydroseq_step COMMAND ARGS...: quiet, its JSON summary logged as one line (and kept in $summary)
    local command=$1 status=0
    shift
    step "$HYDROSEQ" "$command" -q --json --log-file "$STEP_LOG" "$@" >"$WORK_DIR/$command.json" || status=$?
    summary=$(<"$WORK_DIR/$command.json")
    [[ -z $summary ]] || log "$command: $summary"
    return "$status"
}

incremental_ingest() {
    local window_yaml="$WORK_DIR/ingest_window.yaml" window status=0
    window=$("$PYTHON" "$HERE/window_config.py" "$INGEST_CONFIG" "$DATA" "$ISSUE_DATE" "$OVERLAP_DAYS" \
        "$window_yaml") || { status=$?; fail $status "cannot derive the ingest window"; }
    log "ingesting local days ${window/ / .. } into $DATA"
    hydroseq_step ingest --config "$window_yaml" --out "$DATA" --append || status=$?
    ((status == 0)) || fail $status "hydroseq ingest --append exited with $status"
    if [[ $summary == *'"no_new_data": true'* ]]; then
        log "no new raw data: nothing appended to $DATA (the raw files have not arrived?); the next run ingests" \
            "from the day after its end"
    fi
}

forecast_status=0
forecast() {  # a partial forecast is published, and the job exits with its status after publishing
    hydroseq_step forecast --model "$MODEL" --data "$DATA" --issue-time "$ISSUE_DATE" \
        --out "$WORK_DIR/forecast_$ISSUE_DATE.nc" --missing-forecast-input "$MISSING_FORECAST_INPUT" \
        --max-skipped-share "$MAX_SKIPPED_SHARE" ${MAX_OBSERVATION_AGE:+--max-observation-age "$MAX_OBSERVATION_AGE"} \
        ${FORCING_FORECAST:+--forcing-forecast "$FORCING_FORECAST"} "${pi_xml[@]}" || forecast_status=$?
    if [[ $summary == *'"late_weather_forecast": {"'* ]]; then
        log "WARNING: the newest weather-forecast run was not in by the issue time: an older run was read" \
            "(late_weather_forecast in the forecast line above; the files' attribute late_weather_forecast_stations)"
    fi
    case $forecast_status in
        0 | "$EXIT_PARTIAL") ;;
        "$EXIT_NOTHING_PRODUCED")
            fail $EXIT_NOTHING_PRODUCED "no station could be forecast (reasons in the forecast line above)" ;;
        *) fail $forecast_status "hydroseq forecast exited with $forecast_status" ;;
    esac
}

page=()
report() {  # the forecaster's page: the observations of the data file, yesterday's published forecast beside it
    [[ $REPORT == 1 ]] || return 0
    local yesterday status=0 previous=()
    yesterday=$(date -u -d "$ISSUE_DATE - 1 day" +%F)
    [[ -f $PUBLISH_DIR/forecast_$yesterday.nc ]] && previous=(--previous "$PUBLISH_DIR/forecast_$yesterday.nc")
    hydroseq_step report --forecast "$WORK_DIR/forecast_$ISSUE_DATE.nc" --data "$DATA" "${previous[@]}" \
        ${REPORT_HINDCAST:+--hindcast "$REPORT_HINDCAST"} --out "$WORK_DIR/forecast_$ISSUE_DATE.html" || status=$?
    ((status == 0)) || fail $status "hydroseq report exited with $status (nothing published)"
    page=("$WORK_DIR/forecast_$ISSUE_DATE.html")
}

publish() {  # the .nc, .csv, .xml, page and manifest as one set, then the latest.* links, the manifest's last
    local name suffix status=0 suffixes=(nc csv)
    if ((${#pi_xml[@]})); then suffixes+=(xml); else rm -f "$PUBLISH_DIR/latest.xml"; fi  # no stale PI-XML link
    step "$PYTHON" "$HERE/publish_set.py" "$WORK_DIR/forecast_$ISSUE_DATE.manifest.json" "$PUBLISH_DIR" "${page[@]}" \
        >/dev/null || status=$?
    ((status == EXIT_NO_SPACE)) && fail $EXIT_NO_SPACE "no space to publish forecast_$ISSUE_DATE in $PUBLISH_DIR"
    ((status == 0)) || fail $EXIT_CONFIG "cannot publish forecast_$ISSUE_DATE to $PUBLISH_DIR"
    if ((${#page[@]})); then suffixes+=(html); else rm -f "$PUBLISH_DIR/latest.html"; fi  # no stale page
    for suffix in "${suffixes[@]}" manifest.json; do
        name="forecast_$ISSUE_DATE.$suffix"
        ln -sfn "$name" "$PUBLISH_DIR/.latest.$suffix.$$" \
            && mv -fT "$PUBLISH_DIR/.latest.$suffix.$$" "$PUBLISH_DIR/latest.$suffix" \
            || fail $EXIT_CONFIG "cannot point $PUBLISH_DIR/latest.$suffix at $name"
    done
    log "published $PUBLISH_DIR/forecast_$ISSUE_DATE.nc, .csv${pi_xml[*]:+, .xml}${page[*]:+, .html} and" \
        ".manifest.json (latest.* point to them)"
}

check_setup
take_lock
incremental_ingest
forecast
report
publish
if ((forecast_status == EXIT_PARTIAL)); then
    log "PARTIAL ($EXIT_PARTIAL): more than $MAX_SKIPPED_SHARE of the stations not forecast" \
        "${MAX_OBSERVATION_AGE:+or forecast from a gauge silent for more than $MAX_OBSERVATION_AGE h }or forecast" \
        "without any weather forecast (listed in the forecast line above)"
fi
exit "$forecast_status"
