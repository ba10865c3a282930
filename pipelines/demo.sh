#!/usr/bin/env bash
# The main job on the bundled data: ingest -> train (short CPU run) -> evaluate -> export -> forecast.
#
#   bash pipelines/demo.sh [OUT]          (`make demo` runs it with OUT=runs/demo)
#
# Outputs (printed again at the end):
#   OUT/caravan_daily.nc                 ingested dataset (+ .report.csv/.json, .records.png)
#   runs/demo/train/                     checkpoints, validation/test metrics and hydrographs
#   mlruns.db, mlartifacts/              the MLflow store (mlflow ui --backend-store-uri sqlite:///mlruns.db)
#   OUT/model/                           exported model: model.onnx, model.pt2, metadata.json
#   OUT/forecast/forecast_2014-09-30.*   forecast issued at the end of 2014-09-30 (NetCDF + CSV)
#   OUT/forecast/hindcast_wy2014.*       hindcast over water year 2014 (+ _scores.csv: NSE/KGE of model, persistence, climatology)
set -euo pipefail
OUT=${1:-runs/demo}
HYDROSEQ=${HYDROSEQ:-.venv/bin/hydroseq}
PYTHON=${PYTHON:-.venv/bin/python}
TRAIN_CONFIG=configs/train_demo_cpu.yaml
mkdir -p "$OUT"

step() { printf '\n== %s\n' "$*"; }

step "1/5 ingest the bundled Caravan basins"
"$HYDROSEQ" ingest --config configs/ingest_caravan_daily.yaml --out "$OUT/caravan_daily.nc"

step "2/5 train ($TRAIN_CONFIG, a short CPU run)"
"$HYDROSEQ" train --config "$TRAIN_CONFIG" --data "$OUT/caravan_daily.nc"
TRAIN_DIR=$("$PYTHON" -c "import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))['training']['output_dir'])" "$TRAIN_CONFIG")
RUN_ID=$("$PYTHON" -c "import sys; from hydroseq.training.checkpoint import Checkpoint; print(Checkpoint.load(sys.argv[1]).run_id)" "$TRAIN_DIR/best.pt")

step "3/5 evaluate run $RUN_ID on the test period"
"$HYDROSEQ" evaluate --run "$RUN_ID" --period test --data "$OUT/caravan_daily.nc"

SEQ_LEN=$("$PYTHON" -c "import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))['data']['max_len'])" "$TRAIN_CONFIG")
step "4/5 export run $RUN_ID (fixed length $SEQ_LEN, the training max_len)"
"$HYDROSEQ" export --run "$RUN_ID" --seq-len "$SEQ_LEN" --out "$OUT/model"

step "5/5 forecast and hindcast"
"$HYDROSEQ" forecast --model "$OUT/model" --data "$OUT/caravan_daily.nc" --issue-time 2014-09-30 \
    --out "$OUT/forecast/forecast_2014-09-30.nc"
"$HYDROSEQ" forecast --model "$OUT/model" --data "$OUT/caravan_daily.nc" --issue-time 2013-10-01..2014-09-30 \
    --out "$OUT/forecast/hindcast_wy2014.nc"

cat <<DONE

Done. Outputs:
  ingested data      $OUT/caravan_daily.nc (report: $OUT/caravan_daily.report.csv)
  training           $TRAIN_DIR/ (checkpoints, metrics, hydrographs); MLflow run $RUN_ID in mlruns.db
  evaluation         $TRAIN_DIR/evaluation/
  exported model     $OUT/model/ (model.onnx, model.pt2, metadata.json)
  forecast           $OUT/forecast/forecast_2014-09-30.nc and .csv
  hindcast           $OUT/forecast/hindcast_wy2014.nc, .csv and _scores.csv
Browse the runs with: mlflow ui --backend-store-uri sqlite:///mlruns.db
DONE
