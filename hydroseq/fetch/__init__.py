"""``hydroseq fetch``: the forecast runs and gauge readings of an issue time, downloaded into a raw folder.

:func:`fetch_runs` takes the run of a forecast product an issue time needs (ECMWF open data HRES or ENS
through ``ecmwf-opendata``, NOAA GFS or GEFS through Herbie), only the requested fields (byte ranges
from the run's index files), as one GRIB2 file per run; :func:`fetch_gauges` the day's discharge
readings of USGS gauges from NWIS, as one CSV per day. Both write complete files only, skip those a
previous fetch completed, retry a source that fails, and raise an
:class:`~hydroseq.errors.UnavailableError` (exit 6) naming the source and URL when it stays unreachable.
They need the ``fetch`` extra (``pip install '.[fetch]'`` in the hydroseq clone). They have been tested against a
local server laid out like each source, not against the live services (``docs/fetch.md``).
"""

from hydroseq.fetch.download import RetryPolicy
from hydroseq.fetch.nwis import fetch_gauges
from hydroseq.fetch.products import PRODUCTS, Product, runs_needed
from hydroseq.fetch.runs import fetch_runs
from hydroseq.fetch.store import FetchResult

SOURCES = (*PRODUCTS, "nwis")

__all__ = ["PRODUCTS", "SOURCES", "FetchResult", "Product", "RetryPolicy", "fetch_gauges", "fetch_runs", "runs_needed"]
