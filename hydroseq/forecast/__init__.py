"""Stage ``forecast``: batch forecasts (and hindcasts) for every station from an exported model.

Needs numpy, xarray, netCDF4 and onnxruntime; it never imports torch or the training code, except
:mod:`hydroseq.forecast.pyfunc_logging`, which ``hydroseq train`` calls to export and log a run's
forecaster as the MLflow pyfunc model of :mod:`hydroseq.forecast.pyfunc_model` (which needs mlflow,
not torch). Neither is imported by this package.

Public API: :func:`run_forecast` (what ``hydroseq forecast`` calls) returns a :class:`ForecastRun`:
the :class:`ForecastResult` and, when files were written, the :class:`PublishedForecast`.
:class:`IngestedFile` opens an ingested file against a model's metadata and reads a slice of steps
(``IngestedFile(path, metadata).read(start, stop)``), e.g. the table the served model reads. How the
network inputs are assembled (:mod:`hydroseq.forecast.features`) is internal.
"""

from hydroseq.forecast.data_window import IngestedFile
from hydroseq.forecast.outputs import PublishedForecast
from hydroseq.forecast.result import ForecastResult
from hydroseq.forecast.run import ForecastRun, run_forecast

__all__ = ["ForecastResult", "ForecastRun", "IngestedFile", "PublishedForecast", "run_forecast"]
