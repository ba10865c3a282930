#!/usr/bin/env bash
# The GPU check of the regional recipe, for a machine with an NVIDIA GPU and a CUDA build of
# torch==2.13.0 in PYTHON (default .venv/bin/python); run from the repository root:
#   CARAVAN_ROOT=/path/to/Caravan bash experiments/gpu_check_regional.sh     # about 5 minutes
# (1) the LSTM paths on one batch (benchmarks.bench_lstm_paths: packed vs padded, CPU vs CUDA agreement);
# (2) ingest the 433 regional basins (configs/ingest_caravan_regional.yaml) unless already there;
# (3) one full regional training epoch on CUDA through hydroseq's loop, packed and then padded, each
#     beside a bare torch loop of the same shape (experiments.bench_regional --device cuda).
# Everything goes to runs/gpu_check_regional/ (log: check.log).
set -euo pipefail
: "${CARAVAN_ROOT:?set CARAVAN_ROOT to the folder Caravan was unpacked to (holding attributes/ and timeseries/)}"
PYTHON=${PYTHON:-.venv/bin/python}
HYDROSEQ=${HYDROSEQ:-.venv/bin/hydroseq}
WORK=runs/gpu_check_regional
DATA=${DATA:-runs/regional/caravan_regional.nc}
mkdir -p "$WORK"
exec > >(tee "$WORK/check.log") 2>&1

"$PYTHON" -m benchmarks.bench_lstm_paths --device cuda --hidden 128 256 --batch-size 64
[ -f "$DATA" ] || "$HYDROSEQ" ingest --config configs/ingest_caravan_regional.yaml --out "$DATA"
for path in packed padded; do
    "$PYTHON" -m experiments.bench_regional --data "$DATA" --device cuda --lstm-path "$path" \
        --batches 133 --repeats 2 --threads 4 | tee "$WORK/regional_epoch_$path.txt"
done
