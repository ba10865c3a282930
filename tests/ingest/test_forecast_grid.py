"""The leakage-free rules of forecast products on the grid (hydroseq.ingest.forecast_grid), each a
property: grids, product steps (finer or coarser than the grid, straddling its boundaries),
latencies, issue frequencies, phases, missing values and missing products are drawn at random."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hydroseq.config import ForecastSourceConfig, validate_config
from hydroseq.config.ingest import GridConfig
from hydroseq.errors import InputDataError
from hydroseq.ingest import build_grid
from hydroseq.ingest.forecast_grid import choose_products, forecast_on_grid
from hydroseq.ingest.forecast_products import Product, read_products
from hydroseq.ingest.stations import Station

from .forecast_builders import write_station_product

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
HOUR = pd.Timedelta("1h").value
STATIONS = [Station("a", "a", 0.0, 0.0, 10.0), Station("b", "b", 0.0, 0.0, 10.0)]


def source_config(path: str = "unused", **extra) -> ForecastSourceConfig:
    config = {"name": "product", "path": path, "layout": "station", "latency": "6h", "issue_frequency": "1D",
              "horizon": 3, "variables": {"p": {"source": "p", "units": "mm", "aggregation": "sum",
                                                "accumulation": "per_step"},
                                          "t": {"source": "t", "units": "degC", "aggregation": "mean"}}}
    return validate_config({**config, **extra}, ForecastSourceConfig)


@st.composite
def cases(draw):
    """Products (per-step values, canonical units) around a grid, and the source that reads them."""
    grid_step = draw(st.sampled_from(["1h", "6h", "1D"]))
    g = pd.Timedelta(grid_step).value
    horizon = draw(st.integers(1, 4))
    latency = draw(st.sampled_from([0, 1, 6, 30])) * HOUR
    frequency = draw(st.sampled_from(["6h", "12h", "1D"]))
    spacing = draw(st.sampled_from([1, 3, 6, 24])) * HOUR
    count = int(-(-(latency + pd.Timedelta(frequency).value + (horizon + 1) * g) // spacing)) + draw(st.integers(0, 2))
    phase = draw(st.integers(0, 23)) * HOUR
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    n_products = 8
    base = pd.Timestamp("2001-01-03").value + phase
    products = []
    for index in range(n_products):
        values = {"p": rng.gamma(0.5, 2.0, (count, 2)), "t": rng.normal(10, 5, (count, 2))}
        for name in values:
            values[name][rng.random((count, 2)) < 0.05] = np.nan
        reference = np.datetime64(base + index * pd.Timedelta(frequency).value, "ns")
        ends = np.arange(1, count + 1, dtype=np.int64) * spacing
        products.append(Product(Path(f"product_{index}.nc"), reference, ends, values))
    grid = build_grid(validate_config({"frequency": grid_step, "timezone": "UTC", "start": "2001-01-02",
                                       "end": "2001-01-10"}, GridConfig))
    source = source_config(latency=f"{latency // HOUR}h", issue_frequency=frequency, horizon=horizon,
                           on_missing_product=draw(st.sampled_from(["fail", "use_previous"])))
    return {"products": products, "grid": grid, "source": source, "seed": seed,
            "cutoff": draw(st.integers(0, len(grid) - 1))}


def _on_grid(source, products, grid):
    chosen = choose_products(source, products, grid)
    return chosen, forecast_on_grid(source, products, chosen, grid, 2)


@SETTINGS
@given(case=cases(), extend=st.booleans())
def test_a_product_published_after_the_issue_is_never_used(case, extend):
    source, products, grid = case["source"], case["products"], case["grid"]
    cutoff = grid.labels[case["cutoff"]].value
    chosen, before = _on_grid(source, products, grid)
    rng = np.random.default_rng(case["seed"] + 1)
    perturbed = []
    for product in products:
        if product.reference.astype(np.int64) + source.latency_step.value <= cutoff:
            perturbed.append(product)
            continue
        ends = np.concatenate([product.ends, product.ends[-1] + product.ends[:2]]) if extend else product.ends
        values = {name: rng.normal(50, 30, (len(ends), 2)) for name in product.values}
        perturbed.append(Product(product.path, product.reference, ends, values))
    chosen_after, after = _on_grid(source, perturbed, grid)
    known = slice(0, case["cutoff"] + 1)
    published = np.array([p.reference.astype(np.int64) for p in products]) + source.latency_step.value
    assert (published[chosen[known][chosen[known] >= 0]] <= grid.labels.asi8[known][chosen[known] >= 0]).all()
    np.testing.assert_array_equal(chosen_after[known], chosen[known])
    for name in before:
        np.testing.assert_array_equal(after[name][:, known], before[name][:, known])


def _brute_force(source, products, grid, name, issue, lead, station):
    """The lead's value from a minute-by-minute walk over the newest published product's intervals."""
    label = grid.labels[issue].value
    usable = [p for p in products if p.reference.astype(np.int64) + source.latency_step.value <= label]
    if not usable:
        return np.nan
    product = usable[-1]
    reference = product.reference.astype(np.int64)
    if source.on_missing_product == "fail" and label >= reference + source.latency_step.value + source.issue_step.value:
        return np.nan
    g = grid.step.value
    start, end = label + (lead - 1) * g - reference, label + lead * g - reference
    if end > product.ends[-1]:
        return np.nan
    minutes = np.arange(start, end, 60 * 10**9) + 30 * 10**9  # minute midpoints inside (start, end]
    interval = np.searchsorted(product.ends, minutes)
    edges = np.concatenate([[0], product.ends])
    values = product.values[name][interval, station]
    if np.isnan(values).any():
        return np.nan
    if name == "p":
        return float(np.sum(values * 60 * 10**9 / np.diff(edges)[interval]))
    return float(np.mean(values))


@SETTINGS
@given(case=cases(), drop=st.integers(1, 6))
def test_each_lead_is_its_own_interval_from_the_newest_product_and_never_extrapolated(case, drop):
    """use_previous with a product missing; fail with none missing (missing once the next one is due)."""
    source = case["source"]
    products = case["products"]
    if source.on_missing_product == "use_previous":
        products = [p for index, p in enumerate(products) if index != drop]
    grid = case["grid"]
    _, result = _on_grid(source, products, grid)
    for issue in range(0, len(grid), max(1, len(grid) // 12)):
        for lead in range(1, source.horizon + 1):
            for name in ("p", "t"):
                expected = _brute_force(source, products, grid, name, issue, lead, 1)
                np.testing.assert_allclose(result[name][1, issue, lead - 1], expected, rtol=1e-9, atol=1e-9,
                                           err_msg=f"{name} issue {grid.labels[issue]} lead {lead}")


@SETTINGS
@given(case=cases(), drop=st.integers(1, 6))
def test_a_missing_product_fails_naming_the_file_and_the_reference_time(case, drop):
    source = case["source"].model_copy(update={"on_missing_product": "fail"})
    products = [p for index, p in enumerate(case["products"]) if index != drop]
    missing = pd.Timestamp(case["products"][drop].reference)
    with pytest.raises(InputDataError, match=f"product_{drop + 1}.nc.*reference time {missing}"):
        choose_products(source, products, case["grid"])


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**31 - 1), spacing=st.sampled_from([3, 6, 24]), with_step_zero=st.booleans(),
       grid_step=st.sampled_from(["6h", "1D"]))
def test_since_reference_and_per_step_encodings_give_identical_grid_values(tmp_path_factory, seed, spacing,
                                                                           with_step_zero, grid_step):
    folder = tmp_path_factory.mktemp("encodings")
    rng = np.random.default_rng(seed)
    references = pd.date_range("2001-01-02 00:00", periods=6, freq="1D")
    hours = np.arange(1, 96 // spacing + 1) * spacing
    per_step = rng.integers(0, 400, (len(references), len(hours), 2)) / 64.0  # exact in binary: sums are exact
    accumulated = np.cumsum(per_step, axis=1)
    if with_step_zero:
        hours = np.concatenate([[0], hours])
        zero = np.zeros((len(references), 1, 2))
        per_step, accumulated = np.concatenate([zero, per_step], axis=1), np.concatenate([zero, accumulated], axis=1)
    grid = build_grid(validate_config({"frequency": grid_step, "timezone": "UTC", "start": "2001-01-01",
                                       "end": "2001-01-09"}, GridConfig))
    results = []
    for name, values, accumulation in (("per_step", per_step, "per_step"),
                                       ("accumulated", accumulated, "since_reference")):
        path = write_station_product(folder / f"{name}.nc", references, hours, ["a", "b"],
                                     {"tp": (values, {"units": "mm", "GRIB_stepType": "accum"})})
        source = source_config(str(path), horizon=2, variables={"p": {
            "source": "tp", "units": "mm", "aggregation": "sum", "accumulation": accumulation}})
        products = read_products(source, STATIONS)
        results.append(_on_grid(source, products, grid)[1]["p"])
    assert np.isfinite(results[0]).any()
    np.testing.assert_array_equal(results[0], results[1])
