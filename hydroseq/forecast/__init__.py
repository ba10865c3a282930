"""Stage ``forecast``: batch forecasts (and hindcasts) for every station from an exported model.

Needs numpy, xarray, netCDF4 and onnxruntime; it never imports torch or the training code, except
:mod:`hydroseq.forecast.pyfunc_logging`, which ``hydroseq train`` calls to export and log a run's
forecaster as the MLflow pyfunc model of :mod:`hydroseq.forecast.pyfunc_model` (which needs mlflow,
not torch). Neither is imported by this package.

:func:`run_forecast` is what ``hydroseq forecast`` calls. The steps it takes to build the network
inputs are public too, for callers that want those inputs without a whole forecast (the forecast
benchmark, ``benchmarks/bench_forecast.py``, times the bare model on them): :class:`IngestedFile`
opens an ingested file against a model's metadata and reads a slice of steps,
:func:`history_lengths` gives each station's valid history at the issue steps and
:func:`gather_windows` cuts the scaled features into right-padded windows.
"""

from hydroseq.forecast.data_window import IngestedFile
from hydroseq.forecast.features import gather_windows, history_lengths
from hydroseq.forecast.outputs import PublishedForecast
from hydroseq.forecast.result import ForecastResult
from hydroseq.forecast.run import ForecastRun, run_forecast

__all__ = ["ForecastResult", "ForecastRun", "IngestedFile", "PublishedForecast", "gather_windows", "history_lengths",
           "run_forecast"]
