"""Benchmarks: measurements that are too slow or too noisy for the unit tests (``python -m benchmarks.compare``)."""
