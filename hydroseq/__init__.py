"""hydroseq: leakage-free ingestion, variable-length packed LSTMs and batch forecasts for streamflow.

The package follows the data's path, one subpackage per stage, each importing only the stages
before it::

    ingest -> dataset -> batching -> model -> training -> export -> forecast

The command line (:mod:`hydroseq.cli`) is a thin layer over the public functions of each stage.
"""

__version__ = "0.1.0"
