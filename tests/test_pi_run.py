"""The Delft-FEWS PI run file: its time0 and period in UTC and the grid days they cover; a bad run
file or time zone fails in one line naming the file and the line. docs/fews.md: its General Adapter runs
commands hydroseq parses, on the files it exports and imports; its run file and ingest config are valid."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml
from lxml import etree

from hydroseq.cli import build_parser
from hydroseq.config import IngestConfig, validate_config
from hydroseq.config.ingest import GridConfig
from hydroseq.errors import InputDataError
from hydroseq.fileio.pi_run import read_run_file
from hydroseq.grid import GridSpec
from tests.ingest.pi_builders import run_file_text

SCHEMA = Path(__file__).resolve().parent / "data" / "fews_pi" / "pi_run.xsd"


def test_a_run_file_gives_time0_and_the_grid_days_of_its_run(tmp_path: Path) -> None:
    path = tmp_path / "run_info.xml"
    path.write_text(run_file_text("2014-03-02 06:00", "2014-07-11 09:00", "2014-07-01 09:30", time_zone=5.5))
    etree.XMLSchema(etree.parse(str(SCHEMA))).assertValid(etree.parse(str(path)))
    run = read_run_file(path)
    assert (run.start, run.time0, run.end) == (pd.Timestamp("2014-03-02T00:30"), pd.Timestamp("2014-07-01T04:00"),
                                               pd.Timestamp("2014-07-11T03:30"))
    assert run.issue_time == "2014-07-01T04:00:00Z"
    # 2014-03-02T00:30Z is 16:30 on 1 March in UTC-8; 2014-07-01T04:00Z is 20:00 on 30 June
    assert run.local_days(GridSpec("1D", "Etc/GMT+8")) == (dt.date(2014, 3, 1), dt.date(2014, 6, 30))


@pytest.mark.parametrize("edit, fragment, line", [
    (lambda text: text.replace("    <timeZone>0.0</timeZone>\n", ""), "the run file has no timeZone", None),
    (lambda text: text.replace("<timeZone>0.0", "<timeZone>CET"), "timeZone 'CET' is not an offset in hours", 4),
    (lambda text: text.replace('time0 date="2014-07-01"', 'time0 date="2014-02-01"'), "time0 2014-02-01 09:00:00 UTC "
     "is before the run's start 2014-03-02 06:00:00 UTC", None),
    (lambda text: text.replace('<time0 date="2014-07-01" time="09:00:00"/>', ""), "the run file has no time0", None),
    (lambda text: text.replace('"2014-07-01" time="09:00:00"', '"2014-07-01" time="9h"'), "time0: date and time "
     "'2014-07-01 9h' are not yyyy-mm-dd hh:mm:ss", 7),
    (lambda text: text.replace("</Run>", ""), "not well-formed XML", 13),
])
def test_a_bad_run_file_fails_in_one_line(tmp_path: Path, edit, fragment: str, line: int | None) -> None:
    path = tmp_path / "run_info.xml"
    path.write_text(edit(run_file_text("2014-03-02 06:00", "2014-07-11 09:00", "2014-07-01 09:00")))
    with pytest.raises(InputDataError) as caught:
        read_run_file(path)
    message = str(caught.value)
    assert message.startswith(str(path)) and fragment in message and "\n" not in message
    assert line is None or f"(line {line})" in message, message


DOC = Path(__file__).resolve().parents[1] / "docs" / "fews.md"


def _blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", DOC.read_text(), re.S | re.M)


def test_the_documented_general_adapter_runs_commands_hydroseq_parses_on_the_files_it_exchanges() -> None:
    config = etree.fromstring(next(block for block in _blocks("xml") if "generalAdapterRun" in block).encode())
    ns = {"ga": "http://www.wldelft.nl/fews"}
    general = {child.tag.split("}")[1]: child.text for child in config.find("ga:general", ns)}
    commands = [build_parser().parse_args([argument.text for argument in activity.iterfind("ga:arguments/ga:argument",
                                                                                           ns)])
                for activity in config.iterfind(".//ga:executeActivity", ns)]
    assert [args.command for args in commands] == ["ingest", "forecast"]
    ingest, forecast = commands
    run_file = Path(general["exportDir"]) / config.find(".//ga:exportRunFileActivity/ga:exportFile", ns).text
    assert ingest.pi_run_file == forecast.pi_run_file == run_file and forecast.issue_time is None
    assert ingest.out == forecast.data and forecast.formats == ["pi-xml"]
    assert ingest.diagnostics == forecast.diagnostics == Path(general["diagnosticFile"])  # each writes what FEWS reads
    imported = Path(general["importDir"]) / config.find(".//ga:importTimeSeriesActivity/ga:importFile", ns).text
    assert imported == forecast.out.with_suffix(".xml")
    exported = config.find(".//ga:exportTimeSeriesActivity/ga:exportFile", ns).text
    ingest_config = validate_config(yaml.safe_load(_blocks("yaml")[0]), IngestConfig)
    assert Path(general["workDir"]) / ingest_config.sources[0].path == Path(general["exportDir"]) / exported


def test_the_documented_run_file_is_valid_and_gives_the_days_it_names(tmp_path: Path) -> None:
    text = next(block for block in _blocks("xml") if "<Run " in block)
    assert text == run_file_text("2014-03-02 06:00", "2014-07-01 09:00", "2014-07-01 09:00", time_zone=1.0)
    path = tmp_path / "run_info.xml"
    path.write_text(text)
    etree.XMLSchema(etree.parse(str(SCHEMA))).assertValid(etree.parse(str(path)))
    run = read_run_file(path)
    grid = validate_config(yaml.safe_load(_blocks("yaml")[0])["grid"], GridConfig)
    assert run.issue_time == "2014-07-01T08:00:00Z"
    assert run.local_days(grid.spec) == (dt.date(2014, 3, 1), dt.date(2014, 6, 30))
