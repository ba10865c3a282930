#!/usr/bin/env bash
# DDP on one GPU with NCCL: `torchrun --nproc_per_node 1 -m hydroseq train` must work on CUDA.
#
# Prepared for a machine with an NVIDIA GPU and a CUDA build of torch==2.13.0 in the Python that
# runs it (PYTHON, default .venv/bin/python); run from the repository root:
#   bash experiments/gpu_check_ddp.sh            # about 1-2 minutes
#   DEVICE=cpu bash experiments/gpu_check_ddp.sh # dry run of the same steps with gloo (no GPU needed)
# Steps: (1) a process group under torchrun joins NCCL on cuda:0 and an all-reduce works (plain torch);
# (2) ingest 3 bundled Caravan basins; (3) 2 epochs of DDP training on CUDA via torchrun,
# (4) resumed to 3 epochs; (5) checks: one MLflow run, 3 epochs in last.pt, NCCL in hydroseq's training log.
# Everything goes to runs/gpu_check/ (log: runs/gpu_check/check.log). Exit status 0 = all passed.
set -euo pipefail

PYTHON=${PYTHON:-.venv/bin/python}
export DEVICE=${DEVICE:-cuda}
WORK=runs/gpu_check
rm -rf "$WORK" && mkdir -p "$WORK"
exec > >(tee "$WORK/check.log") 2>&1

"$PYTHON" - <<'EOF'
import os, sys, torch
print("torch", torch.__version__, "cuda build", torch.version.cuda, "devices", torch.cuda.device_count())
if os.environ["DEVICE"] == "cuda" and not torch.cuda.is_available():
    sys.exit("no usable CUDA device (or a CPU-only torch build): this check needs a GPU")
print("device 0:", torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu")
EOF

cat > "$WORK/nccl_probe.py" <<'EOF'
import os
import torch
import torch.distributed as dist

cuda = os.environ["DEVICE"] == "cuda"
dist.init_process_group("nccl" if cuda else "gloo")
device = torch.device(f"cuda:{os.environ['LOCAL_RANK']}" if cuda else "cpu")
value = torch.ones(3, device=device) * (dist.get_rank() + 1)
dist.all_reduce(value)
print(f"backend={dist.get_backend()} device={device} world={dist.get_world_size()} all_reduce={value.tolist()}")
assert value.tolist() == [float(dist.get_world_size())] * 3, value
dist.destroy_process_group()
EOF
NCCL_DEBUG=WARN "$PYTHON" -m torch.distributed.run --standalone --nproc_per_node 1 "$WORK/nccl_probe.py"

"$PYTHON" - "$WORK" <<'EOF'
import datetime as dt, os, sys
from pathlib import Path
from hydroseq.config import IngestConfig, TrainConfig, dump_config, load_config
from hydroseq.ingest import ingest

work = Path(sys.argv[1])
config = load_config("configs/ingest_caravan_daily.yaml", IngestConfig)
config = config.model_copy(update={
    "stations": config.stations.model_copy(update={"ids": ["01022500", "02064000", "03015500"]}),
    "grid": config.grid.model_copy(update={"end": dt.date(1990, 12, 31)})})
data = ingest(config, work / "small.nc", show_progress=False).output
train = {
    "data": {"path": str(data), "dynamic_inputs": ["total_precipitation_sum", "temperature_2m_mean"],
             "static_inputs": ["p_mean", "aridity"], "seq_len": 365, "min_len": 30, "cache_dir": str(work / "cache"),
             "splits": {"train": {"start": "1981-01-01", "end": "1987-12-31"},
                        "validation": {"start": "1988-01-01", "end": "1989-12-31"},
                        "test": {"start": "1990-01-01", "end": "1990-12-31"}}},
    "batching": {"batch_size": 16},
    "model": {"hidden_size": 32, "dropout": 0.1},
    "training": {"epochs": 2, "device": os.environ["DEVICE"], "output_dir": str(work / "out")},
    "tracking": {"tracking_uri": f"sqlite:///{work / 'mlruns.db'}", "artifact_root": str(work / "artifacts"),
                 "experiment": "gpu-check"},
}
(work / "train.yaml").write_text(dump_config(TrainConfig.model_validate(train)))
train["training"]["epochs"] = 3
(work / "train_3_epochs.yaml").write_text(dump_config(TrainConfig.model_validate(train)))
EOF

NCCL_DEBUG=INFO "$PYTHON" -m torch.distributed.run --standalone --nproc_per_node 1 \
    -m hydroseq train --config "$WORK/train.yaml"
"$PYTHON" -m torch.distributed.run --standalone --nproc_per_node 1 \
    -m hydroseq train --config "$WORK/train_3_epochs.yaml" --resume

"$PYTHON" - "$WORK" <<'EOF'
import sys
from pathlib import Path
from mlflow.tracking import MlflowClient
from hydroseq.training.checkpoint import Checkpoint

work = Path(sys.argv[1])
state = Checkpoint.load(work / "out" / "last.pt")
client = MlflowClient(f"sqlite:///{work / 'mlruns.db'}")
runs = client.search_runs([client.get_experiment_by_name("gpu-check").experiment_id])
print("epochs in last.pt:", state.epoch, "| MLflow runs:", len(runs), "| history:",
      [round(row["train_loss"], 4) for row in state.history])
assert state.epoch == 3 and len(runs) == 1 and runs[0].info.run_id == state.run_id
EOF
[ "$DEVICE" != cuda ] || grep -q "NCCL INFO" "$WORK/check.log" || { echo "FAILED: NCCL did not report in the training log"; exit 1; }
echo "gpu_check_ddp: all checks passed"
