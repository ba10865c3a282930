"""Unit conversion of the ingested sources: source units -> a canonical unit per kind -> the output unit.

The functions live in :mod:`hydroseq.config.unit_conversion` (the forecast stage uses them too, to carry ingest's
plausibility bounds onto the grid); the ingest modules name them here.
"""

from hydroseq.config.unit_conversion import AreaMissing, cf_units, from_canonical_rate, to_canonical, to_output

__all__ = ["AreaMissing", "cf_units", "from_canonical_rate", "to_canonical", "to_output"]
