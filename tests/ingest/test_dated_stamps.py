"""Dates without a time of day (a Caravan ``date`` column, CAMELS' year, month and day) name the day their value
covers. Read with the default ``timestamp: interval_end`` every value would land on the grid day before its
date, so a source that does not say what its dates mark is refused in one line naming the file (exit 3,
nothing written); one that says ``interval_end`` explicitly is ingested with a one-line warning."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from hydroseq.cli import main
from hydroseq.errors import ExitCode

STATION = "01022500"
CARAVAN_VARIABLES = {"total_precipitation_sum": {"source": "total_precipitation_sum", "units": "mm/d",
                                                 "aggregation": "sum"}}


def _ingest(tmp_path: Path, data_dir: Path, source: dict[str, object], *options: str) -> tuple[int, Path]:
    config = {"stations": {"path": str(data_dir / "stations" / "caravan_camels_us.csv"), "ids": [STATION]},
              "sources": [source],
              "grid": {"frequency": "1D", "timezone": "UTC", "start": "2001-01-01", "end": "2001-01-31"}}
    path = tmp_path / "ingest.yaml"
    path.write_text(yaml.safe_dump(config))
    out = tmp_path / "out.nc"
    return main(["ingest", "--config", str(path), "--out", str(out), *options]), out


def _caravan(data_dir: Path, name: str, **conventions: str) -> dict[str, object]:
    return {"name": name, "path": str(data_dir / "daily_caravan_camels_us" / f"{STATION}.csv"),
            "format": "caravan_csv", "frequency": "1D", "variables": CARAVAN_VARIABLES, **conventions}


def _camels(data_dir: Path) -> dict[str, object]:
    return {"path": str(data_dir / "camels_us_sample" / "usgs_streamflow" / f"{STATION}_streamflow_qc.txt"),
            "format": "camels_us_streamflow", "frequency": "1D",
            "variables": {"streamflow": {"source": "Q", "units": "ft3/s", "aggregation": "mean"}}}


@pytest.mark.parametrize("kind", ["caravan_csv", "camels_us_streamflow"])
def test_dates_without_a_stated_convention_are_refused_naming_the_file(tmp_path: Path, data_dir: Path,
                                                                       capsys: pytest.CaptureFixture[str],
                                                                       kind: str) -> None:
    source = _caravan(data_dir, "caravan") if kind == "caravan_csv" else _camels(data_dir)
    status, out = _ingest(tmp_path, data_dir, source, "-q")
    error = capsys.readouterr().err.strip()
    assert status == ExitCode.CONFIG, error
    assert len(error.splitlines()) == 1 and "Traceback" not in error
    assert f"{source['path']}: the stamps are dates without a time of day" in error
    assert "set timestamp: interval_start if a date names the day its value covers" in error
    assert not out.exists() and not list(tmp_path.glob("out*"))


def test_dates_read_as_interval_ends_on_purpose_are_ingested_with_a_warning(tmp_path: Path, data_dir: Path,
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    source = _caravan(data_dir, "dated ends on purpose", timestamp="interval_end")
    status, out = _ingest(tmp_path, data_dir, source)
    warnings = [line for line in capsys.readouterr().err.splitlines() if "without a time of day" in line]
    assert status == ExitCode.OK and out.exists()
    assert warnings == [f"{source['path']}: source 'dated ends on purpose' reads dates without a time of day as "
                        "interval ends (timestamp: interval_end): each value lands on the grid day before its date"]


def test_dates_read_as_interval_starts_are_ingested_without_a_word(tmp_path: Path, data_dir: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    status, out = _ingest(tmp_path, data_dir, _caravan(data_dir, "dated days", timestamp="interval_start"))
    assert status == ExitCode.OK and out.exists()
    assert "without a time of day" not in capsys.readouterr().err
