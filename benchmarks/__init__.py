"""Per-stage timings of hydroseq's public API: ingest, batching, a training step, forecast, growth with stations.

Each module's docstring says what it times and how to run it; the experiments are in ``experiments/``.
"""
