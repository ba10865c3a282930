"""The thresholds a served model carries: written as JSON and read back exactly, labels, interval, water years
and notes included; a file logged before those were stored reads back without them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from hydroseq.scoring.thresholds import StationThresholds
from hydroseq.serving.pyfunc_thresholds import read_thresholds, write_thresholds


def test_thresholds_read_back_as_they_were_written(tmp_path: Path) -> None:
    values = np.array([[15.174644470214844, 6.66], [np.nan, 4.84]])
    written = StationThresholds(("2-year", "q95"), ("01022500", "01547700"), values, "training period ..., L-moments",
                                ("2-year daily-mean flow", "daily-mean flow exceeded 5 % of the time"),
                                np.array([[13.258416843, np.nan], [np.nan, np.nan]]),
                                np.array([[16.959639841, np.nan], [np.nan, np.nan]]), np.array([[27, 0], [4, 0]]),
                                ("", "4 water years with enough days for an annual maximum, fewer than the 5 a fit "
                                     "needs"), 0.9)
    read = read_thresholds(write_thresholds(written, tmp_path / "flood_thresholds.json"))
    assert (read.levels, read.stations, read.labels, read.notes, read.source, read.confidence) == (
        written.levels, written.stations, written.labels, written.notes, written.source, 0.9)
    for name in ("values", "lower", "upper", "years"):
        np.testing.assert_array_equal(getattr(read, name), getattr(written, name))
    stored = json.loads((tmp_path / "flood_thresholds.json").read_text())
    assert stored["lower"][0] == [13.258416843, None] and stored["labels"][0] == "2-year daily-mean flow"


def test_a_file_without_labels_or_interval_reads_back_with_the_level_ids(tmp_path: Path) -> None:
    path = tmp_path / "flood_thresholds.json"
    path.write_text(json.dumps({"levels": ["2-year"], "stations": ["a"], "values": [[3.5]], "source": "old"}))
    read = read_thresholds(path)
    assert read.labels == ("2-year",) and read.notes == ("",) and read.confidence is None
    assert read.values.tolist() == [[3.5]] and np.isnan(read.lower).all() and read.years.tolist() == [[0]]
