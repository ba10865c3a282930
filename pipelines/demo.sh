#!/usr/bin/env bash
# The main job on the bundled data, in two sizes:
#
#   bash pipelines/demo.sh --quick [OUT]   (`make demo`) ingest -> a short train (configs/train_demo_quick.yaml)
#                                          -> evaluate -> export -> forecast and hindcast (steps 1-5)
#   bash pipelines/demo.sh [OUT]           (`make demo-full`) the same with the 40-epoch demo model
#                                          (configs/train_demo_cpu.yaml), then the shipped regional base model's
#                                          forecast beside it, then a model with weather-forecast inputs from a
#                                          GENERATED product archive, its hindcast beside the first, and a
#                                          7-day forecast page from the example GRIB2 runs (steps 1-10)
#
# OUT defaults to runs/demo. Outputs (printed again at the end):
#   OUT/caravan_daily.nc                 ingested dataset (+ .report.csv/.json, .records.png)
#   runs/demo/train/ (quick: train_quick/) checkpoints, validation/test metrics and hydrographs
#   mlruns.db, mlartifacts/              the MLflow store (mlflow ui --backend-store-uri sqlite:///mlruns.db)
#   OUT/model/                           exported model: model.onnx, model.pt2, metadata.json
#   OUT/forecast/forecast_2014-09-30.*   forecast issued at the end of 2014-09-30 (NetCDF + CSV): median, quantiles,
#                                        probability of exceeding each station's 2- and 5-year flows; .html: the
#                                        forecaster's page (map, table, hydrographs; the forecast of 2014-09-29
#                                        beside it, the hindcast's skill per station)
#   OUT/forecast/hindcast_wy2014.*       hindcast over water year 2014 (+ _scores.csv: NSE/KGE of model, persistence,
#                                        climatology; _probabilistic.csv: CRPS, coverage, Brier; _reliability.png, _plume.png;
#                                        .html: its verification page)
# and with the full demo only:
#   OUT/forecast/base_*                  the same forecast (and its page) and hindcast from the shipped regional base
#                                        model (models/caravan-camels-us-daily), printed beside the local model's
#   OUT/forecast_product.nc              a generated weather-forecast product archive (observed forcing + noise)
#   OUT/caravan_daily_forecast.nc        the ingest with that product as a forecast source
#   OUT/model_forecast_inputs/           exported model that reads the product for leads 1-3
#   OUT/forecast/hindcast_wy2014_forecast_inputs.*  its hindcast over water year 2014
#   OUT/forecast/week_ahead_2014-09-29.*  a 7-day forecast (NetCDF, CSV, page) of the shipped week-ahead model
#                                        from the example GRIB2 ensemble runs (OUT/caravan_daily_grib2_ensemble.nc)
set -euo pipefail
QUICK=false
if [[ ${1:-} == --quick ]]; then QUICK=true; shift; fi
OUT=${1:-runs/demo}
HYDROSEQ=${HYDROSEQ:-.venv/bin/hydroseq}
PYTHON=${PYTHON:-.venv/bin/python}
if $QUICK; then TRAIN_CONFIG=configs/train_demo_quick.yaml STEPS=5; else TRAIN_CONFIG=configs/train_demo_cpu.yaml STEPS=10; fi
mkdir -p "$OUT"

step() { printf '\n== %s\n' "$*"; }

# What steps 1-5 wrote (both demos print it at the end).
print_outputs() {
    cat <<DONE

Done. Outputs:
  ingested data      $OUT/caravan_daily.nc (report: $OUT/caravan_daily.report.csv)
  training           $TRAIN_DIR/ (checkpoints, metrics, hydrographs); MLflow run $RUN_ID in mlruns.db
  evaluation         $TRAIN_DIR/evaluation/
  exported model     $OUT/model/ (model.onnx, model.pt2, metadata.json)
  forecast           $OUT/forecast/forecast_2014-09-30.nc and .csv
  hindcast           $OUT/forecast/hindcast_wy2014.nc, .csv, _scores.csv, _probabilistic.csv,
                     _reliability.png (exceeding the 2-year flow), _plume.png
  forecaster's page  $OUT/forecast/forecast_2014-09-30.html (open it in a browser; no network needed)
  verification page  $OUT/forecast/hindcast_wy2014.html
DONE
}
# `hydroseq --json train`: the tables go to stderr (shown), the summary to stdout; prints the run id
train() {
    "$HYDROSEQ" --json train --config "$1" --data "$2" \
        | "$PYTHON" -c 'import json, sys; print(json.load(sys.stdin).get("run_id") or "")'
}
config_value() { "$PYTHON" -c "import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))[sys.argv[2]][sys.argv[3]])" "$@"; }

step "1/$STEPS ingest the bundled Caravan basins"
"$HYDROSEQ" ingest --config configs/ingest_caravan_daily.yaml --out "$OUT/caravan_daily.nc"

step "2/$STEPS train ($TRAIN_CONFIG, a short CPU run)"
RUN_ID=$(train "$TRAIN_CONFIG" "$OUT/caravan_daily.nc")
[[ -n $RUN_ID ]] || { echo "demo: the training printed no run id" >&2; exit 1; }
TRAIN_DIR=$(config_value "$TRAIN_CONFIG" training output_dir)

step "3/$STEPS evaluate run $RUN_ID on the test period"
"$HYDROSEQ" evaluate --run "$RUN_ID" --period test --data "$OUT/caravan_daily.nc"

SEQ_LEN=$(config_value "$TRAIN_CONFIG" data seq_len)
step "4/$STEPS export run $RUN_ID (fixed length $SEQ_LEN, the training seq_len)"
"$HYDROSEQ" export --run "$RUN_ID" --seq-len "$SEQ_LEN" --out "$OUT/model"

step "5/$STEPS forecast, hindcast (its table: the model beside persistence and climatology) and the forecaster's page"
"$HYDROSEQ" forecast --model "$OUT/model" --data "$OUT/caravan_daily.nc" --issue-time 2014-09-29 \
    --out "$OUT/forecast/forecast_2014-09-29.nc" >/dev/null
"$HYDROSEQ" forecast --model "$OUT/model" --data "$OUT/caravan_daily.nc" --issue-time 2014-09-30 \
    --out "$OUT/forecast/forecast_2014-09-30.nc"
"$HYDROSEQ" forecast --model "$OUT/model" --data "$OUT/caravan_daily.nc" --issue-time 2013-10-01..2014-09-30 \
    --out "$OUT/forecast/hindcast_wy2014.nc"
"$HYDROSEQ" report --forecast "$OUT/forecast/forecast_2014-09-30.nc" --data "$OUT/caravan_daily.nc" \
    --previous "$OUT/forecast/forecast_2014-09-29.nc" --hindcast "$OUT/forecast/hindcast_wy2014.nc" \
    --out "$OUT/forecast/forecast_2014-09-30.html"
"$HYDROSEQ" report --hindcast "$OUT/forecast/hindcast_wy2014.nc" --data "$OUT/caravan_daily.nc" \
    --out "$OUT/forecast/hindcast_wy2014.html"

if $QUICK; then
    print_outputs
    cat <<DONE
Browse the runs with: mlflow ui --backend-store-uri sqlite:///mlruns.db
The full demo (a 40-epoch model, the shipped base model, weather-forecast inputs, a 7-day page from GRIB2 runs): make demo-full
DONE
    exit 0
fi

BASE_MODEL=models/caravan-camels-us-daily
step "6/10 the shipped regional base model ($BASE_MODEL: learned from 433 other basins, never these): forecast and hindcast"
"$HYDROSEQ" forecast --model "$BASE_MODEL" --data "$OUT/caravan_daily.nc" --issue-time 2014-09-30 \
    --out "$OUT/forecast/base_forecast_2014-09-30.nc"
"$HYDROSEQ" forecast --model "$BASE_MODEL" --data "$OUT/caravan_daily.nc" --issue-time 2013-10-01..2014-09-30 \
    --out "$OUT/forecast/base_hindcast_wy2014.nc"
"$HYDROSEQ" report --forecast "$OUT/forecast/base_forecast_2014-09-30.nc" --data "$OUT/caravan_daily.nc" \
    --hindcast "$OUT/forecast/base_hindcast_wy2014.nc" --out "$OUT/forecast/base_forecast_2014-09-30.html"
"$PYTHON" pipelines/compare_hindcasts.py "trained here on the 31=$OUT/forecast/hindcast_wy2014_scores.csv" \
    "shipped base model=$OUT/forecast/base_hindcast_wy2014_scores.csv"

FORECAST_CONFIG=configs/train_demo_forecast_inputs.yaml
step "7/10 a generated weather-forecast product (observed forcing + noise growing with the lead; not a real forecast)"
"$PYTHON" pipelines/make_forecast_product.py --data "$OUT/caravan_daily.nc" \
    --variables total_precipitation_sum temperature_2m_mean --out "$OUT/forecast_product.nc" \
    --noise-std 0.3 0.5 0.7 --horizon 3 --latency 6h --seed 0
"$PYTHON" - configs/ingest_caravan_daily_forecast.yaml "$OUT/forecast_product.nc" "$OUT/ingest_forecast.yaml" <<'PY'
import sys, yaml
config = yaml.safe_load(open(sys.argv[1]))
config["forecast_sources"][0]["path"] = sys.argv[2]
yaml.safe_dump(config, open(sys.argv[3], "w"), sort_keys=False)
PY
"$HYDROSEQ" ingest --config "$OUT/ingest_forecast.yaml" --out "$OUT/caravan_daily_forecast.nc"

step "8/10 train with the forecast inputs ($FORECAST_CONFIG), export"
FORECAST_RUN=$(train "$FORECAST_CONFIG" "$OUT/caravan_daily_forecast.nc")
[[ -n $FORECAST_RUN ]] || { echo "demo: the training printed no run id" >&2; exit 1; }
"$HYDROSEQ" export --run "$FORECAST_RUN" --seq-len "$SEQ_LEN" --out "$OUT/model_forecast_inputs"

step "9/10 forecast-driven hindcast over water year 2014, beside the observed-only one"
"$HYDROSEQ" forecast --model "$OUT/model_forecast_inputs" --data "$OUT/caravan_daily_forecast.nc" \
    --issue-time 2013-10-01..2014-09-30 --out "$OUT/forecast/hindcast_wy2014_forecast_inputs.nc"
"$PYTHON" pipelines/compare_hindcasts.py "observed only=$OUT/forecast/hindcast_wy2014_scores.csv" \
    "with forecast inputs=$OUT/forecast/hindcast_wy2014_forecast_inputs_scores.csv"

WEEK_MODEL=models/caravan-camels-us-daily-week-ahead
step "10/10 a week ahead from weather-forecast runs: the shipped week-ahead model ($WEEK_MODEL) on the example
      10-member GRIB2 ensemble (data/forecast_grib2/: reanalysis written as runs, NOT a forecast), each member
      through the model, the forecast their mixture"
"$HYDROSEQ" ingest --config configs/ingest_grib2_ensemble.yaml --out "$OUT/caravan_daily_grib2_ensemble.nc"
"$HYDROSEQ" forecast --model "$WEEK_MODEL" --data "$OUT/caravan_daily_grib2_ensemble.nc" --issue-time 2014-09-28 \
    --out "$OUT/forecast/week_ahead_2014-09-28.nc" >/dev/null
"$HYDROSEQ" forecast --model "$WEEK_MODEL" --data "$OUT/caravan_daily_grib2_ensemble.nc" --issue-time 2014-09-29 \
    --out "$OUT/forecast/week_ahead_2014-09-29.nc"
"$HYDROSEQ" report --forecast "$OUT/forecast/week_ahead_2014-09-29.nc" --data "$OUT/caravan_daily_grib2_ensemble.nc" \
    --previous "$OUT/forecast/week_ahead_2014-09-28.nc" --out "$OUT/forecast/week_ahead_2014-09-29.html"

print_outputs
cat <<DONE
  week ahead         $OUT/forecast/week_ahead_2014-09-29.html: the 7-day forecast page from the example GRIB2
                     ensemble ($OUT/caravan_daily_grib2_ensemble.nc), .nc and .csv beside it
  base model         $OUT/forecast/base_forecast_2014-09-30.* (its page: .html) and base_hindcast_wy2014.*
                     (models/caravan-camels-us-daily)
  forecast inputs    $OUT/forecast_product.nc (generated), $OUT/caravan_daily_forecast.nc, $OUT/model_forecast_inputs/
  its hindcast       $OUT/forecast/hindcast_wy2014_forecast_inputs.nc, .csv and _scores.csv (MLflow run $FORECAST_RUN)
Browse the runs with: mlflow ui --backend-store-uri sqlite:///mlruns.db
DONE
