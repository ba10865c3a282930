"""The plausibility bounds of a served model's inputs, in the ingested file's units (recorded when it is logged).

Ingest refuses, or sets missing, every value outside its variable's ``valid_min .. valid_max``
(:mod:`hydroseq.config.plausible_ranges`: the configured bounds, else the defaults of the variable's
kind, in the source's units, for each source step). ``hydroseq forecast`` checks the values it reads from a
file against the same bounds carried onto the file's grid (:mod:`hydroseq.dataset.plausible_values`); the
served (MLflow pyfunc) model reads rows from anywhere. :func:`input_bounds` computes those bounds from the
ingested file the model was trained on and the ingest config it records, so that the served model refuses
what ingest and ``hydroseq forecast`` would have refused (:mod:`hydroseq.serving.served_input`):

* a bound is converted from the source's units to the file's (``mm/h`` to ``mm/d``, ``K`` to ``degC``);
* an amount summed over the source steps of one grid step: the bound times their number;
* where the bound on the grid depends on what is not known when the model is logged (a catchment
  area, the steps of a weather-forecast product or of an irregular source), the sign of ingest's
  bound is kept and a side the config does not set is the default of the file's units on the grid
  (:func:`hydroseq.config.plausible_ranges.grid_bounds`: 0 .. 50000 mm of a daily forecast amount);
* a variable no source of the config names (a file not written by ingest): the default of the kind its
  units give; a static attribute: any value within ±1e30.
"""

from __future__ import annotations

from pathlib import Path

from hydroseq.config.plausible_ranges import grid_bounds
from hydroseq.dataset.plausible_values import file_bounds
from hydroseq.export import ExportMetadata
from hydroseq.forecast.data_window import model_variables
from hydroseq.ingested import open_ingested

__all__ = ["grid_bounds", "input_bounds"]


def input_bounds(path: str | Path, metadata: ExportMetadata) -> dict[str, list[float]]:
    """``{variable: [low, high]}`` for every variable ``metadata``'s model reads, in the units of the
    ingested file ``path`` (see the module docstring).

    Raises
    ------
    InputDataError
        If ``path`` is not an ingested dataset.
    """
    dataset, grid = open_ingested(path)
    with dataset:
        return file_bounds(dataset, grid.step, model_variables(metadata), metadata.static_inputs)
