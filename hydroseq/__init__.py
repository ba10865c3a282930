"""hydroseq: leakage-free ingestion, variable-length packed LSTMs and batch forecasts for streamflow.

The package follows the data's path, one subpackage per stage, each importing only the stages
before it::

    ingest -> dataset -> batching -> model -> training -> export -> forecast

The command line (:mod:`hydroseq.cli`) is a thin layer over the public functions of each stage.
The public API is what each stage package's ``__init__`` exports, plus three modules every stage
shares: :mod:`hydroseq.config` (the validated configs), :mod:`hydroseq.errors` (what the API
raises) and :mod:`hydroseq.scoring.metrics` (NSE, KGE and the other scores). Everything else is internal.
"""

__version__ = "0.1.0"
