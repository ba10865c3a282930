"""Stage ``forecast``: batch forecasts (and hindcasts) for every station from an exported model.

Needs numpy, xarray, netCDF4 and onnxruntime; it never imports torch or the training code.
"""

from hydroseq.forecast.outputs import PublishedForecast
from hydroseq.forecast.result import ForecastResult, ForecastRun
from hydroseq.forecast.run import run_forecast

__all__ = ["ForecastResult", "ForecastRun", "PublishedForecast", "run_forecast"]
