"""``model.onnx`` describes itself: what a forecast needs besides the network, in the file's ``metadata_props``.

A reader with onnxruntime alone (``InferenceSession(...).get_modelmeta().custom_metadata_map``) finds the
feature order and where each feature comes from (``feature_sources``), the units, leads, grid, sequence length,
quantile levels, members, the scalers and a ``preprocessing`` text that says exactly how raw values become
``x`` and ``lengths`` and how ``y`` becomes discharge. Every value is a string (JSON where it is structured).

The scaling is documented, not folded into the graph. The graph's contract stays the one the forecast, the
served model, ``model.pt2`` and the export's parity check share (scaled ``x``, scaled ``y``); scaling alone
would not make the graph take raw values anyway, since the missing-value encoding, the flags, the valid-history
lengths and the padding are decided outside it; and per-station target scaling needs each row's station id,
which is not an input of the network.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import onnx

from hydroseq.export.metadata import ExportMetadata

PROPS_FORMAT_VERSION = 1


def metadata_props(metadata: ExportMetadata) -> dict[str, str]:
    """The ``metadata_props`` of ``model.onnx`` for the model ``metadata`` describes (string keys and values).

    Raises
    ------
    ValueError
        If ``metadata.feature_names`` is not the order the feature layout builds (a malformed export).
    """
    sources = feature_sources(metadata)
    names = [source["name"] for source in sources]
    if names != metadata.feature_names:
        raise ValueError(f"feature names {metadata.feature_names} differ from the layout's {names}")
    scalers = metadata.scalers
    per_station = bool(scalers.get("target", {}).get("per_station"))

    def text(value: Any) -> str:
        return json.dumps(value)

    return {
        "hydroseq_props_format": str(PROPS_FORMAT_VERSION),
        "hydroseq_version": metadata.hydroseq_version,
        "run_id": metadata.run_id,
        "dataset_checksum": metadata.dataset_checksum,
        "feature_names": text(metadata.feature_names),
        "feature_sources": text(sources),
        "input_units": text(metadata.input_units),
        "target": metadata.target,
        "target_units": metadata.input_units.get(metadata.target, ""),
        "mode": metadata.mode,
        "leads": text(metadata.leads),
        "grid": text(metadata.grid.to_attrs()),
        "seq_len": str(metadata.seq_len),
        "min_len": str(metadata.min_len),
        "quantiles": text(metadata.quantiles),
        "members": str(metadata.members),
        "forecast_inputs": text(metadata.forecast_inputs),
        "forecast_horizon": str(metadata.forecast_horizon),
        "scalers": text(scalers),
        "target_scaling": "per_station" if per_station else "global",
        "scaling_in_graph": "false",
        "preprocessing": preprocessing_text(metadata),
    }


def feature_sources(metadata: ExportMetadata) -> list[dict[str, Any]]:
    """One entry per input feature, in input order: its ``name``, ``kind``, ``variable`` (the data variable it
    reads), ``lead`` (weather-forecast features), ``source`` (``ingested`` or ``perfect``, weather-forecast
    values) and ``scaler`` (the section of the scalers that scales it; None for the 0/1 flags)."""
    layout = metadata.feature_layout()
    target = metadata.target
    sources: list[dict[str, Any]] = [{"name": name, "kind": "dynamic", "variable": name, "scaler": "dynamic"}
                                     for name in layout.dynamic_names]
    if layout.lagged_target:
        sources.append({"name": layout.lagged_name, "kind": "observed_target", "variable": target, "scaler": "target"})
    if layout.observed_flag:
        sources.append({"name": layout.flag_name, "kind": "observed_flag", "variable": target, "scaler": None})
    leads = range(1, layout.forecast_horizon + 1)
    values = [{"name": f"{item.feature_name}_lead{lead}", "kind": "forecast", "variable": item.variable,
               "lead": lead, "source": item.source, "scaler": "forecast"}
              for item in layout.forecast_inputs for lead in leads]
    flags = [{**value, "name": f"{value['name']}_present", "kind": "forecast_present", "scaler": None}
             for value in values]
    statics = [{"name": name, "kind": "static", "variable": name, "scaler": "static"} for name in layout.static_names]
    return [*sources, *values, *flags, *statics]


def preprocessing_text(metadata: ExportMetadata) -> str:
    """How raw data become the network's inputs and its outputs become discharge, for this model, step by step."""
    layout = metadata.feature_layout()
    n, needed = metadata.seq_len, min(metadata.min_len, metadata.seq_len)
    target_scaling = ("scalers.target.per_station[station id] (a station not listed there cannot be forecast)"
                      if metadata.scalers.get("target", {}).get("per_station")
                      else "scalers.target.mean and scalers.target.std")
    sequence_target = " and the target" if layout.lagged_target and not layout.observed_flag else ""
    output = "[batch, lead, quantile] (levels in quantiles)" if metadata.quantiles else "[batch, lead]"
    steps = [
        f"The graph does not scale: x float32 [batch, {n}, {len(metadata.feature_names)}] and lengths int64 [batch] "
        "are built as below, and y is in scaled units.",
        "1. Data: on the grid of `grid` (labels are the UTC ends of their intervals), every variable in the units "
        "of input_units. The issue step T is the last grid label at or before the issue time; a local day D of the "
        "grid means its last label, D + 1 day + grid_day_boundary in grid_timezone.",
        f"2. Valid history: a step is valid where every dynamic input{sequence_target} is present (not missing). "
        f"L = the number of consecutive valid steps ending at T, at most {n} (0 if T is not valid); a station with "
        f"L < {needed} is not forecast.",
        "3. Features of step t, in the order of feature_sources (each names its variable): dynamic and static: "
        "(value - mean) / std with scalers.dynamic[variable] or scalers.static[variable] (a static value on every "
        f"step); observed_target: the target at t, (value - mean) / std with {target_scaling}; observed_flag: 1 "
        "where the target at t is present, else 0; forecast: the weather forecast of variable for lead issued at "
        "t (source ingested: the (station, time, lead) variable at time t and that lead; source perfect: the "
        "observed variable at step t + lead, missing past the data's end), (value - mean) / std with "
        "scalers.forecast[variable]; forecast_present: 1 where that value is present, else 0. Then every missing "
        "value becomes 0 and the features float32.",
        f"4. Window: positions 0..L-1 of a row hold steps T-L+1..T in time order, positions L..{n - 1} zeros (right "
        "padding); lengths = L.",
        f"5. Outputs: y {output}; lead l (leads) is the target at T + l grid steps (lead 0: T itself).",
        f"6. Discharge: y * std + mean with {target_scaling}, in target_units; negative values set to 0.",
    ]
    if metadata.quantiles:
        steps.append("The published value is the 0.5 quantile.")
    if metadata.members > 1:
        steps.append("The graph also returns members [batch, member, ...], each ensemble member's output (y is "
                     "their mean); a member's published forecast is its own output" +
                     (" at the 0.5 quantile" if metadata.quantiles else "") + ", unscaled as in 6.")
    if any(item.source == "perfect" and item.noise_std is not None for item in metadata.forecast_input_specs):
        steps.append("Perfect forecast inputs with noise_std: hydroseq adds keyed pseudo-random noise to their "
                     "scaled values (hydroseq.dataset.forecast_inputs.forecast_noise), which this text does not "
                     "reproduce; such a model is an upper-bound experiment, not an operational forecast.")
    if layout.forecast_inputs:
        steps.append("An ensemble weather forecast (a variable with a member dimension) drives steps 3-6 once per "
                     "member; hydroseq combines the runs as docs/forecast.md says (ensemble weather forecasts).")
    return "\n".join(steps)


def read_metadata_props(path: str | Path) -> dict[str, str]:
    """The ``metadata_props`` of the ONNX file ``path`` (empty for a model exported before they were written)."""
    model = onnx.load(str(path), load_external_data=False)
    return {entry.key: entry.value for entry in model.metadata_props}
