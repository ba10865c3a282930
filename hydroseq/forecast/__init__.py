"""Stage ``forecast``: batch forecasts (and hindcasts) for every station from an exported model.

Needs numpy, xarray, netCDF4 and onnxruntime; it never imports torch or the training code.
"""

from hydroseq.forecast.result import ForecastResult
from hydroseq.forecast.run import EXIT_NOTHING_FORECAST, EXIT_OK, run_forecast

__all__ = ["EXIT_NOTHING_FORECAST", "EXIT_OK", "ForecastResult", "run_forecast"]
