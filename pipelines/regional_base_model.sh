#!/usr/bin/env bash
# Re-create the shipped regional base model, models/caravan-camels-us-daily/, from a Caravan download:
#
#   CARAVAN_ROOT=/path/to/Caravan bash pipelines/regional_base_model.sh [OUT_MODEL_DIR]
#
# and the probabilistic base model, models/caravan-camels-us-daily-probabilistic/, with its config:
#
#   CARAVAN_ROOT=/path/to/Caravan CONFIG=configs/train_caravan_regional_probabilistic.yaml \
#       bash pipelines/regional_base_model.sh models/caravan-camels-us-daily-probabilistic
#
# 1. ingest every Caravan CAMELS-US basin but the 31 bundled ones (configs/ingest_caravan_regional.yaml);
# 2. train CONFIG (default configs/train_caravan_regional.yaml) on them (40 min on one CPU core for the
#    deterministic base, 3 members of about 25 min for the probabilistic one; a GPU is faster);
# 3. export the best epoch (fixed length 365, the training chunk) to OUT_MODEL_DIR as a release (`hydroseq export
#    --release`: the recorded config's paths relative to this folder, the repository root, and SHA256SUMS).
# The model card (MODEL_CARD.md) is kept by hand: its figures come from docs/results.md.
set -euo pipefail
: "${CARAVAN_ROOT:?set CARAVAN_ROOT to the folder Caravan was unpacked to (holding attributes/ and timeseries/)}"
OUT_MODEL=${1:-models/caravan-camels-us-daily}
HYDROSEQ=${HYDROSEQ:-.venv/bin/hydroseq}
PYTHON=${PYTHON:-.venv/bin/python}
CONFIG=${CONFIG:-configs/train_caravan_regional.yaml}
DATA=runs/regional/caravan_regional.nc

"$HYDROSEQ" ingest --config configs/ingest_caravan_regional.yaml --out "$DATA"
"$HYDROSEQ" train --config "$CONFIG" --data "$DATA"
TRAIN_DIR=$("$PYTHON" -c "import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))['training']['output_dir'])" "$CONFIG")
RUN_ID=$("$PYTHON" -c "import sys; from hydroseq.training.checkpoint import Checkpoint; print(Checkpoint.load(sys.argv[1]).run_id)" "$TRAIN_DIR/best.pt")
"$HYDROSEQ" export --run "$RUN_ID" --seq-len 365 --out "$OUT_MODEL" --release
echo "base model: $OUT_MODEL (MLflow run $RUN_ID); validation figures: hydroseq evaluate --run $RUN_ID --period validation"
