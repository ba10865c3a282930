"""Stage ``forecast``: batch forecasts (and hindcasts) for every station from an exported model.

Needs numpy, xarray, netCDF4 and onnxruntime; no module of it imports torch, MLflow or the training
code (the ``[forecast]`` install imports every one; a test). The same forecast as an MLflow model is
:mod:`hydroseq.serving`'s.

Public API: :func:`run_forecast` (what ``hydroseq forecast`` calls) returns a :class:`ForecastRun`:
the :class:`ForecastResult` and, when files were written, the :class:`PublishedForecast`.
:class:`IngestedFile` opens an ingested file against a model's metadata and reads a slice of steps
(``IngestedFile(path, metadata).read(start, stop)``), e.g. the table the served model reads. How the
network inputs are assembled and run (:mod:`hydroseq.forecast.core`, shared with the served model) is internal.
"""

from hydroseq.forecast.data_window import IngestedFile
from hydroseq.forecast.outputs import PublishedForecast
from hydroseq.forecast.result import ForecastResult
from hydroseq.forecast.run import ForecastRun, run_forecast

__all__ = ["ForecastResult", "ForecastRun", "IngestedFile", "PublishedForecast", "run_forecast"]
