#!/usr/bin/env bash
# The main job on the bundled data: ingest (later stages are appended as they land).
set -euo pipefail
OUT=${1:-runs/demo}
HYDROSEQ=${HYDROSEQ:-.venv/bin/hydroseq}
mkdir -p "$OUT"
"$HYDROSEQ" ingest --config configs/ingest_caravan_daily.yaml --out "$OUT/caravan_daily.nc"
