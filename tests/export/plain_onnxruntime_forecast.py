"""Forecast from ``model.onnx`` with numpy, pandas, xarray and onnxruntime only, reading nothing but the file's
``metadata_props`` and the ingested NetCDF: what a user without hydroseq does, following the ``preprocessing``
text step by step. Run as a script (the test checks that hydroseq was never imported):

    python plain_onnxruntime_forecast.py MODEL.onnx DATA.nc LOCAL_DAY OUT.csv

OUT.csv: ``station,issue_time,lead,valid_time,value`` (then ``value_q05``..., ``value_member0``...) for every
station forecast, as the forecast CSV names them.
"""

from __future__ import annotations

import json
import sys

import numpy as np
import onnxruntime as ort
import pandas as pd
import xarray as xr


def issue_label(day: str, grid: dict[str, str]) -> np.datetime64:
    """1. The last label of local day ``day``: day + 1 day + the day boundary, in the grid's zone, as UTC."""
    hours, minutes = (int(part) for part in grid["grid_day_boundary"].split(":"))
    local = pd.Timestamp(day) + pd.Timedelta(days=1, hours=hours, minutes=minutes)
    return np.datetime64(local.tz_localize(grid["grid_timezone"]).tz_convert("UTC").tz_localize(None), "ns")


def target_moments(scalers: dict, stations: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The target's (mean, std) of every station: per station if the scalers list them, else one for all."""
    per_station = scalers["target"]["per_station"]
    if per_station:
        moments = np.array([per_station[station] for station in stations], dtype=np.float64)
        return moments[:, 0], moments[:, 1]
    ones = np.ones(len(stations))
    return ones * scalers["target"]["mean"], ones * scalers["target"]["std"]


def step_features(ds: xr.Dataset, props: dict[str, str], stations: list[str], start: int,
                  stop: int) -> tuple[np.ndarray, np.ndarray]:
    """2.-3. ``features [station, step, F]`` of steps start..stop-1 and ``valid [station, step]``."""
    scalers, target = json.loads(props["scalers"]), props["target"]
    sources = json.loads(props["feature_sources"])
    n_steps = stop - start

    def series(name: str, first: int = start, last: int = stop) -> np.ndarray:
        values = ds[name].isel(time=slice(first, last)).transpose("station", "time").values.astype(np.float64)
        return np.pad(values, ((0, 0), (0, n_steps - values.shape[1])), constant_values=np.nan)  # past the end

    def forecast(source: dict) -> np.ndarray:
        if source["source"] == "ingested":
            variable = ds[source["variable"]].sel(lead=source["lead"]).isel(time=slice(start, stop))
            return variable.transpose("station", "time").values.astype(np.float64)
        return series(source["variable"], start + source["lead"], stop + source["lead"])  # perfect

    target_mean, target_std = target_moments(scalers, stations)
    with_flag = any(source["kind"] == "observed_flag" for source in sources)
    valid = np.ones((len(stations), n_steps), dtype=bool)
    columns = []
    for source in sources:
        kind, name = source["kind"], source["variable"]
        if kind == "dynamic":
            raw = series(name)
            valid &= np.isfinite(raw)
            mean, std = scalers["dynamic"][name]
            columns.append((raw - mean) / std)
        elif kind == "static":
            mean, std = scalers["static"][name]
            columns.append(np.repeat(((ds[name].values.astype(np.float64) - mean) / std)[:, None], n_steps, axis=1))
        elif kind == "observed_target":
            raw = series(target)
            if not with_flag:  # sequence models need the observed target on every step they read
                valid &= np.isfinite(raw)
            columns.append((raw - target_mean[:, None]) / target_std[:, None])
        elif kind == "observed_flag":
            columns.append(np.isfinite(series(target)).astype(np.float64))
        elif kind == "forecast":
            mean, std = scalers["forecast"][name]
            columns.append((forecast(source) - mean) / std)
        elif kind == "forecast_present":
            columns.append(np.isfinite(forecast(source)).astype(np.float64))
        else:
            raise ValueError(f"unknown feature kind {kind!r}")
    return np.nan_to_num(np.stack(columns, axis=-1)).astype(np.float32), valid


def main(model_path: str, data_path: str, day: str, out_path: str) -> None:
    """Forecast every station of ``data_path`` at the end of local day ``day`` and write ``out_path``."""
    session = ort.InferenceSession(model_path, providers=["CPUExecutionProvider"])
    props = session.get_modelmeta().custom_metadata_map
    grid, leads, levels = json.loads(props["grid"]), json.loads(props["leads"]), json.loads(props["quantiles"])
    seq_len = int(props["seq_len"])
    needed = min(int(props["min_len"]), seq_len)
    with xr.open_dataset(data_path) as ds:
        for name, units in json.loads(props["input_units"]).items():
            assert ds[name].attrs.get("units", "") == units, f"{name} is not in {units}"
        times = ds["time"].values.astype("datetime64[ns]")
        issue = int(np.searchsorted(times, issue_label(day, grid), side="right")) - 1
        start = max(0, issue - seq_len + 1)
        stations = [str(station) for station in ds["station"].values]
        features, valid = step_features(ds, props, stations, start, issue + 1)
    run = np.zeros(len(stations), dtype=np.int64)  # 2. consecutive valid steps ending at the issue step
    for step in range(valid.shape[1]):
        run = np.where(valid[:, step], run + 1, 0)
    rows = np.flatnonzero(run >= needed)
    x = np.zeros((len(rows), seq_len, features.shape[-1]), dtype=np.float32)  # 4. right-padded windows
    for row, station in enumerate(rows):
        x[row, : run[station]] = features[station, features.shape[1] - run[station]:]
    outputs = session.run(None, {"x": x, "lengths": run[rows]})
    mean, std = (moments[rows] for moments in target_moments(json.loads(props["scalers"]), stations))

    def discharge(scaled: np.ndarray) -> np.ndarray:  # 6. unscaled, negatives set to 0
        shape = (-1,) + (1,) * (scaled.ndim - 1)
        return np.maximum(scaled * std.reshape(shape) + mean.reshape(shape), 0.0)

    y = discharge(outputs[0])
    median = levels.index(0.5) if levels else None
    step = pd.Timedelta(grid["grid_frequency"])
    label = pd.Timestamp(times[issue])
    table = pd.DataFrame({
        "station": np.repeat(np.asarray(stations)[rows], len(leads)),
        "issue_time": f"{label.isoformat()}Z",
        "lead": np.tile(leads, len(rows)),
        "valid_time": np.tile([f"{(label + lead * step).isoformat()}Z" for lead in leads], len(rows)),
        "value": (y[..., median] if levels else y).reshape(-1)})
    for k, level in enumerate(levels):
        table[f"value_q{level * 100:02.0f}"] = y[..., k].reshape(-1)
    if len(outputs) > 1:  # an ensemble: each member's point forecast
        members = discharge(outputs[1].transpose(0, 2, 1, *range(3, outputs[1].ndim)))  # [row, lead, member(, q)]
        for member in range(members.shape[2]):
            point = members[:, :, member]
            table[f"value_member{member}"] = (point[..., median] if levels else point).reshape(-1)
    table.to_csv(out_path, index=False)
    leaked = sorted(name for name in sys.modules if name == "hydroseq" or name.startswith("hydroseq."))
    assert not leaked, f"hydroseq was imported: {leaked}"


if __name__ == "__main__":
    main(*sys.argv[1:5])
