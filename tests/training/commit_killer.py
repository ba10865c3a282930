"""``hydroseq train`` that SIGKILLs itself right after the k-th write of its epoch commits.

Usage: ``python commit_killer.py K COUNT_FILE <hydroseq train arguments>``. The writes counted, in
the order they happen, are the renames onto ``out/last.pt`` or ``out/best.pt`` and every MLflow
``log_batch`` that carries metrics (the epochs', the final validation summary's, and the one that
``log_model`` makes to link the run's metrics to the logged model). ``K = 0``
kills nothing and writes the list of those writes to ``COUNT_FILE`` when the process exits.
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
from pathlib import Path


def main() -> int:
    kill_after, count_file, train_args = int(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:]
    writes: list[str] = []

    def written(what: str) -> None:
        writes.append(what)
        if len(writes) == kill_after:
            os.kill(os.getpid(), signal.SIGKILL)

    real_replace = os.replace

    def replace(source, target, *args, **kwargs):
        real_replace(source, target, *args, **kwargs)
        if Path(target).name in ("last.pt", "best.pt") and Path(target).parent.name == "out":  # not the artifacts
            written(Path(target).name)

    os.replace = replace
    from mlflow.tracking import MlflowClient

    real_log_batch = MlflowClient.log_batch

    def log_batch(self, *args, **kwargs):
        result = real_log_batch(self, *args, **kwargs)
        metrics = kwargs.get("metrics", args[1] if len(args) > 1 else ())
        if metrics:
            written(f"metrics {','.join(sorted({metric.key for metric in metrics}))}")
        return result

    MlflowClient.log_batch = log_batch
    atexit.register(lambda: count_file.write_text("\n".join(writes)))
    from hydroseq.cli import main as hydroseq_main

    return hydroseq_main(["train", *train_args])


if __name__ == "__main__":
    sys.exit(main())
