"""Training and evaluation hydrographs: the basin's name, the split's period and the lead in days in the title,
discharge in m³/s (the target's units on a second axis) where the file gives the area, the 90 % band of a
model with quantiles. Real Caravan series (``small_nc``: 01022500, 02064000, 03015500, 1981-1988)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.collections import PolyCollection

from hydroseq.dataset import load_station_data
from hydroseq.training.plots import (
    M3S_LABEL,
    HydrographStyle,
    hydrograph_figure,
    hydrograph_style,
    lead_days,
    quantile_band,
)


def test_hydrograph_names_the_basin_period_and_lead_in_m3s_with_the_band(small_nc: Path, make_config,
                                                                          tmp_path: Path) -> None:
    data = load_station_data(small_nc, make_config(tmp_path, small_nc).data)
    year = slice(365 * 6, 365 * 7)  # 1987
    times, obs = data.times[year], data.target[0, year].astype(np.float64)
    sim = np.roll(obs, 1)  # yesterday's flow
    quantiles = np.stack([sim * 0.7, sim, sim * 1.4], axis=-1)
    band = quantile_band(quantiles[None], (0.05, 0.5, 0.95))
    assert band is not None and band.shape == (2, 1, len(times))
    style = hydrograph_style(data, "test", times, 1)
    figure = hydrograph_figure(times, obs, sim, "01022500", 0.8, "streamflow [mm]", band=band[:, 0], style=style)
    axis = figure.axes[0]
    assert axis.get_title() == ("Narraguagus River at Cherryfield, Maine (01022500): "
                                "test 1987-01-01..1987-12-31 UTC, lead 1 d")
    assert axis.get_ylabel() == M3S_LABEL
    assert sum(isinstance(child, PolyCollection) for child in axis.get_children()) == 1
    observed = next(line for line in axis.get_lines() if line.get_label() == "observed")
    area = style.areas["01022500"] if style.areas else np.nan
    np.testing.assert_allclose(observed.get_ydata(), obs * area * 1000 / 86400, rtol=1e-6)  # mm per day -> m3/s
    assert [child.get_ylabel() for child in axis.child_axes] == ["streamflow [mm]"]


def test_without_area_or_quantiles_the_target_units_and_no_band(small_nc: Path) -> None:
    times = np.arange("1987-01-01", "1987-03-01", dtype="datetime64[D]").astype("datetime64[ns]")
    obs = np.linspace(1.0, 2.0, len(times))
    figure = hydrograph_figure(times, obs, obs, "01022500", 1.0, "streamflow [mm]", style=HydrographStyle())
    axis = figure.axes[0]
    assert axis.get_title() == "station 01022500" and axis.get_ylabel() == "streamflow [mm]"
    assert not any(isinstance(child, PolyCollection) for child in axis.get_children())
    assert quantile_band(None, None) is None and quantile_band(np.ones((1, 2, 3)), (0.25, 0.5, 0.75)) is None


def test_lead_days() -> None:
    assert lead_days(0, pd.Timedelta("1D")) == "lead 0 d" and lead_days(3, pd.Timedelta("1D")) == "lead 3 d"
    assert lead_days(6, pd.Timedelta("1h")) == "lead 0.25 d (6 h)"
