"""The example notebooks read the forecast files the report tests make (``tests/report/conftest.py``): a quantile
forecast with user thresholds, the forecast of the day before, a hindcast with its scores and their data file."""

from tests.report.conftest import report_inputs

__all__ = ["report_inputs"]
