"""GRIB2 forecast runs in ``hydroseq ingest``: the project's example runs (deterministic and a
10-member ensemble, written with ecCodes) give the same basin series as the same runs converted to
cfgrib's NetCDF layout; each broken run is refused through the CLI with one line naming the file,
nothing written; and a run published after an issue time never changes that issue's values."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr
import yaml

from hydroseq.cli import main
from hydroseq.config import IngestConfig, validate_config
from hydroseq.config.train import ForecastInput
from hydroseq.dataset.forecast_inputs import read_forecast_inputs
from hydroseq.errors import ExitCode, InputDataError
from hydroseq.ingest import load_stations
from hydroseq.ingest.readers.basin_weights import write_weights_csv

from .grib_builders import ENS_RUNS, HRES_RUNS, STATIONS, as_cfgrib_netcdf, copy_runs, grib_ingest_config, rewrite

VARIABLES = ("precipitation_forecast", "temperature_forecast")


def _run_cli(tmp_path: Path, config: dict, name: str = "out.nc") -> tuple[int, Path]:
    config_path = tmp_path / f"{Path(name).stem}.yaml"
    config_path.write_text(yaml.safe_dump(config))
    out = tmp_path / name
    return main(["ingest", "--config", str(config_path), "--out", str(out), "-q"]), out


@pytest.fixture(scope="module")
def ensemble_ingest(tmp_path_factory, data_dir) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("ens")
    copy_runs(data_dir, "ens", ENS_RUNS, folder / "runs")
    status, out = _run_cli(folder, grib_ingest_config(data_dir, str(folder / "runs" / "*.grib2"), 10, ["0/240/12"]))
    assert status == 0
    return folder, out


@pytest.mark.slow
def test_ensemble_runs_keep_their_ten_members_as_a_dimension(ensemble_ingest):
    _, out = ensemble_ingest
    with xr.open_dataset(out) as ds:
        forecast = ds["precipitation_forecast"]
        assert forecast.dims == ("station", "time", "lead", "member")
        assert ds.sizes["member"] == 10 and forecast.attrs["forecast_members"] == "10"
        issue = ds.sel(time="2014-09-23T08:00")
        members = issue["precipitation_forecast"].values  # (station, lead, member)
        assert np.isfinite(members).all()
        # the control is the unperturbed reanalysis, the perturbed members scatter around it
        assert (np.nanstd(members[..., 1:], axis=-1) > 0).any()
        # the run of 2014-09-23 00 UTC, published 08 UTC, is the one read at the 08 UTC issue
        reference = issue["precipitation_forecast_reference_time"].values
        assert (reference == np.datetime64("2014-09-23T00:00", "ns")).all()


@pytest.mark.slow
@pytest.mark.parametrize("kind, runs, members, steps", [("hres", HRES_RUNS, None, ["0/240/6"]),
                                                        ("ens", ENS_RUNS, 10, ["0/240/12"])])
def test_grib2_runs_with_polygons_give_the_series_of_cfgrib_netcdf_with_cell_weights(tmp_path, data_dir, kind, runs,
                                                                                      members, steps):
    """The acceptance of the GRIB2 path: the example runs read as GRIB2 and averaged over the basin outlines
    equal the same runs converted to cfgrib's NetCDF layout and averaged with the outlines' cell weights
    written as a weights CSV (deterministic and 10-member ensemble)."""
    grib_files = copy_runs(data_dir, kind, runs, tmp_path / "grib")
    (tmp_path / "netcdf").mkdir()
    for path in grib_files:
        as_cfgrib_netcdf(path, tmp_path / "netcdf" / f"{path.stem}.nc", ["tp", "2t"])
    config = grib_ingest_config(data_dir, str(tmp_path / "grib" / "*.grib2"), members, steps, latency="7h",
                                extraction="polygons")
    status, from_grib = _run_cli(tmp_path, config, "grib.nc")
    assert status == 0
    with xr.open_dataset(tmp_path / "netcdf" / f"{grib_files[0].stem}.nc") as grid:
        lats, lons = grid["latitude"].values, grid["longitude"].values
    stations = load_stations(validate_config(config, IngestConfig).stations)
    weights = write_weights_csv(stations, lats, lons, tmp_path / "weights.csv")
    netcdf_config = grib_ingest_config(data_dir, str(tmp_path / "netcdf" / "*.nc"), members, steps, latency="7h",
                                       format="netcdf", extraction="weights", weights_path=str(weights))
    status, from_netcdf = _run_cli(tmp_path, netcdf_config, "netcdf.nc")
    assert status == 0
    with xr.open_dataset(from_grib) as grib, xr.open_dataset(from_netcdf) as netcdf:
        for name in VARIABLES:
            assert np.isfinite(grib[name].values).sum() > 0
            np.testing.assert_array_equal(grib[name].values, netcdf[name].values)
            np.testing.assert_array_equal(grib[f"{name}_reference_time"].values,
                                          netcdf[f"{name}_reference_time"].values)


def _refused(tmp_path, data_dir, capsys, damage, members=10, steps=("0/240/12",), kind="ens",
             runs=ENS_RUNS[:3], named=1, **forecast) -> str:
    files = copy_runs(data_dir, kind, runs, tmp_path / "runs")
    damage(files[1])
    config = grib_ingest_config(data_dir, str(tmp_path / "runs" / "*.grib2"), members, list(steps), **forecast)
    status, out = _run_cli(tmp_path, config)
    error = capsys.readouterr().err.strip()
    assert status == ExitCode.INPUT_DATA, error
    assert not out.exists() and not list(tmp_path.glob("out*.nc*"))
    assert len(error.splitlines()) == 1 and "Traceback" not in error
    assert files[named].name in error, error
    return error


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 700])


def _drop_step(path: Path) -> None:
    assert rewrite(path, keep=lambda keys: keys["step"] != 36) == 20


def _drop_member(path: Path) -> None:
    rewrite(path, keep=lambda keys: keys["number"] != 7)


def _drop_one_message(path: Path) -> None:
    assert rewrite(path, keep=lambda keys: not (keys["number"] == 3 and keys["step"] == 24
                                                and keys["shortName"] == "2t")) == 1


def _only_temperature(path: Path) -> None:
    rewrite(path, keep=lambda keys: keys["shortName"] == "2t")


@pytest.mark.parametrize("damage, expected", [
    (_truncate, "truncated or corrupt"),
    (_drop_step, "step(s) 36h missing"),
    (_drop_member, "holds 9 member(s)"),
    (_drop_one_message, "'2t' is missing for member 3, step 24h"),
    (_only_temperature, "no GRIB message of parameter 'tp' (the file has 2t)"),
])
def test_a_broken_run_is_refused_in_one_line_naming_the_file(tmp_path, data_dir, capsys, damage, expected):
    assert expected in _refused(tmp_path, data_dir, capsys, damage)


def test_a_grid_that_does_not_cover_a_basin_is_refused(tmp_path, data_dir, capsys):
    longitudes = np.tile(np.arange(-125.0, -67.49, 0.5), 44)  # the example grid, row by row

    def mask_oregon(path: Path) -> None:  # the Oregon basin's cells missing (9999, the bitmap's value)
        rewrite(path, change=lambda keys, values: np.where(longitudes < -115, 9999.0, values))

    error = _refused(tmp_path, data_dir, capsys, mask_oregon)
    assert "station 14325000" in error and "masked or missing" in error


def test_a_station_outside_the_grid_is_refused(tmp_path, data_dir, capsys):
    files = copy_runs(data_dir, "ens", ENS_RUNS[:2], tmp_path / "runs")
    config = grib_ingest_config(data_dir, str(tmp_path / "runs" / "*.grib2"), 10, ["0/240/12"])
    table = pd.read_csv(data_dir / "stations" / "caravan_camels_us.csv", dtype={"station_id": str})
    table.loc[table["station_id"] == STATIONS[0], ["lat", "lon"]] = (61.2, -149.9)  # Anchorage, Alaska
    table.to_csv(tmp_path / "stations.csv", index=False)
    config["stations"]["path"] = str(tmp_path / "stations.csv")
    status, out = _run_cli(tmp_path, config)
    error = capsys.readouterr().err.strip()
    assert status == ExitCode.INPUT_DATA and not out.exists()
    assert f"station {STATIONS[0]}" in error and "outside the grid" in error and files[0].name in error


def test_units_that_disagree_with_the_declared_ones_are_refused(tmp_path, data_dir, capsys):
    config_units = {"variables": {"precipitation_forecast": {"source": "tp", "units": "mm", "aggregation": "sum",
                                                             "accumulation": "since_reference"}}}
    error = _refused(tmp_path, data_dir, capsys, lambda path: None, runs=ENS_RUNS[:2], named=0,
                     **config_units)
    assert "units 'm' in the file" in error


@pytest.mark.slow
def test_a_run_published_after_the_issue_time_changes_nothing_up_to_it(tmp_path, data_dir):
    """Perturb the future: every run published after T (reference time + 8 h > T) is replaced by
    other values; the ingested values of every issue up to T stay bit-identical, later ones change."""
    issue = np.datetime64("2014-09-23T08:00", "ns")
    copy_runs(data_dir, "ens", ENS_RUNS, tmp_path / "original")
    perturbed = copy_runs(data_dir, "ens", ENS_RUNS, tmp_path / "perturbed")
    for path in perturbed:
        reference = np.datetime64(f"{path.name[:4]}-{path.name[4:6]}-{path.name[6:8]}T{path.name[8:10]}:00", "ns")
        if reference + np.timedelta64(8, "h") > issue:
            rewrite(path, change=lambda keys, values: values * 3.0 if keys["shortName"] == "tp" else values + 5.0)
    results = []
    for name in ("original", "perturbed"):
        status, out = _run_cli(tmp_path, grib_ingest_config(data_dir, str(tmp_path / name / "*.grib2"), 10,
                                                            ["0/240/12"]), f"{name}.nc")
        assert status == 0
        results.append(xr.open_dataset(out).load())
    original, changed = results
    up_to = original["time"].values <= issue
    for name in VARIABLES:
        np.testing.assert_array_equal(original[name].values[:, up_to], changed[name].values[:, up_to])
        later = original[name].values[:, ~up_to]
        assert np.isfinite(later).any()
        assert not np.array_equal(later, changed[name].values[:, ~up_to], equal_nan=True)


@pytest.mark.slow
def test_a_model_reading_an_ensemble_variable_is_told_in_one_line(ensemble_ingest):
    _, out = ensemble_ingest
    with xr.open_dataset(out) as ds, pytest.raises(InputDataError, match=r"is an ensemble \(10 members\)"):
        read_forecast_inputs(ds, [ForecastInput(variable="precipitation_forecast", source="ingested")], 3, [0], out)


@pytest.mark.slow
def test_the_shipped_ensemble_config_ingests_the_example_runs_with_the_drawn_outlines(tmp_path, repo_root):
    """configs/ingest_grib2_ensemble.yaml as shipped, its grid cut to the weeks around the runs."""
    config = yaml.safe_load((repo_root / "configs" / "ingest_grib2_ensemble.yaml").read_text())
    config["grid"].update(start="2014-09-01", end="2014-10-05")
    for section in (config["stations"], *config["sources"], *config["forecast_sources"]):
        for key in ("path", "weights_path"):
            if section.get(key):
                section[key] = str(repo_root / section[key])
    config["stations"]["outlines"]["path"] = str(repo_root / config["stations"]["outlines"]["path"])
    status, out = _run_cli(tmp_path, config)
    assert status == 0
    with xr.open_dataset(out) as ds:
        forecast = ds["total_precipitation_sum_forecast"]
        assert forecast.dims == ("station", "time", "lead", "member") and ds.sizes["member"] == 10
        assert ds.sizes["station"] == 31 and ds["lead"].values.tolist() == [1, 2, 3, 4, 5, 6, 7]  # a week
        assert np.isfinite(forecast.sel(time="2014-09-25T08:00").values).all()  # every basin, lead and member


def test_the_cached_parameter_concepts_are_those_ecCodes_evaluates_for_each_message(data_dir):
    """The reader evaluates shortName, units and stepType once per product identity (the slow part of a read):
    every message of an HRES and an ENS example run, read after the cache was filled by other runs, gets what
    ecCodes gives it directly, the member number too."""
    import eccodes

    from hydroseq.ingest.readers import grib

    runs = [next((data_dir / "forecast_grib2" / kind).glob(f"{run}0000-*.grib2"))
            for kind, run in (("hres", HRES_RUNS[0]), ("ens", ENS_RUNS[0]), ("hres", HRES_RUNS[1]),
                              ("ens", ENS_RUNS[1]))]
    checked = 0
    for path in runs:
        with path.open("rb") as handle:
            while (message := eccodes.codes_grib_new_from_file(handle)) is not None:
                try:
                    cached, direct = grib._concepts(eccodes, message), grib._evaluated_concepts(eccodes, message)
                    assert cached == direct, (path.name, checked)
                    checked += 1
                finally:
                    eccodes.codes_release(message)
    assert checked == 2 * (82 + 420) and len(grib._CONCEPTS) < checked
