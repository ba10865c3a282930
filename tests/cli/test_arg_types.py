"""Option values the command line checks itself: a bad one is a usage error (exit 2) naming the option."""

from __future__ import annotations

import pytest

from hydroseq.cli import main

FORECAST = ["forecast", "--model", "m", "--data", "d.nc", "--issue-time", "2014-09-30"]


@pytest.mark.parametrize("args, message", [
    ([*FORECAST, "--max-observation-age", "-1"], "argument --max-observation-age: expected hours (0 or more)"),
    ([*FORECAST, "--max-skipped-share", "1.5"], "argument --max-skipped-share: expected a share from 0 to 1"),
    ([*FORECAST, "--min-probability", "nan"], "argument --min-probability: expected a share from 0 to 1"),
    ([*FORECAST, "--format", "pi-xml,"], "argument --format: expected names separated by commas, got 'pi-xml,'"),
    (["fetch", "--source", "gfs", "--issue-time", "2014-09-30", "--out", "raw", "--attempts", "0"],
     "argument --attempts: expected a whole number, 1 or more"),
    (["fetch", "--source", "gfs", "--issue-time", "2014-09-30", "--out", "raw", "--retry-wait", "inf"],
     "argument --retry-wait: expected a number, 0 or more"),
    (["promote", "--model", "demo", "--version", "0"], "argument --version: expected a version number (1, 2, ...)"),
])
def test_a_bad_value_is_a_usage_error_naming_the_option(args, message, capsys):
    with pytest.raises(SystemExit) as stopped:
        main(args)
    assert stopped.value.code == 2 and message in capsys.readouterr().err
