"""Every ``--help`` shows examples; ``--issue-time`` says its formats and time zone rule; the global
options are read before and after the command."""

from __future__ import annotations

import argparse

import pytest

from hydroseq.cli import build_parser, main
from hydroseq.errors import ExitCode


def _commands() -> list[str]:
    parser = build_parser()
    actions = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    return list(actions[0].choices)


def _help(args: list[str], capsys: pytest.CaptureFixture) -> str:
    with pytest.raises(SystemExit) as stopped:
        main([*args, "--help"])
    assert stopped.value.code == 0
    return capsys.readouterr().out


def test_the_commands_are_all_there() -> None:
    assert _commands() == ["fetch", "ingest", "stats", "train", "evaluate", "export", "forecast", "report",
                          "promote", "config"]


@pytest.mark.parametrize("command", _commands())
def test_every_command_help_has_examples_of_itself(command: str, capsys: pytest.CaptureFixture) -> None:
    text = _help([command], capsys)
    examples = text.split("\nexamples:\n", 1)[1]
    lines = [line for line in examples.splitlines() if line.strip() and not line.strip().startswith("#")]
    assert lines and all(line.startswith("  ") for line in lines), examples  # raw: not rewrapped by argparse
    assert f"hydroseq {command} " in examples or f" {command} --" in examples
    for option in ("--quiet", "--verbose", "--log-file", "--diagnostics", "--json"):
        assert option in text


def test_main_help_has_examples_and_the_exit_statuses(capsys: pytest.CaptureFixture) -> None:
    text = _help([], capsys)
    assert "examples:\n  hydroseq ingest --config" in text
    assert "exit status: 0 ok, 1 nothing_produced, 2 usage, 3 config, 4 input_data, 5 partial" in text


def test_issue_time_help_states_formats_and_time_zone(capsys: pytest.CaptureFixture,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "1000")  # argparse wraps help at hyphens too
    text = _help(["forecast"], capsys)
    for phrase in ("ISO 8601 only", "a date YYYY-MM-DD is that local day of the grid and means its last step",
                   "with Z or a UTC offset (+02:00) is that instant",
                   "without either it is wall-clock time in the grid's time zone", "START..END",
                   "last grid label at or before T", "03/04/2014 are rejected"):
        assert phrase in text, phrase


def test_global_options_before_or_after_the_command() -> None:
    parse = build_parser().parse_args
    plain = parse(["stats", "--config", "c.yaml"])
    assert (plain.quiet, plain.verbose, plain.json, plain.log_file) == (False, False, False, None)
    before = parse(["-q", "--json", "--log-file", "a.log", "stats", "--config", "c.yaml"])
    after = parse(["stats", "--config", "c.yaml", "-q", "--json", "--log-file", "a.log"])
    assert vars(before).keys() == vars(after).keys()
    for args in (before, after):
        assert (args.quiet, args.json, str(args.log_file)) == (True, True, "a.log")
    assert parse(["-v", "stats", "--config", "c.yaml"]).verbose  # not reset by the command's parser


def test_quiet_and_verbose_exclude_each_other(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["-q", "stats", "--config", "c.yaml", "-v"])
    assert stopped.value.code == ExitCode.USAGE
    assert "-q/--quiet and -v/--verbose exclude each other" in capsys.readouterr().err


def test_train_nproc_hands_the_global_options_to_every_process(tmp_path) -> None:
    from hydroseq.cli.training import global_options
    from hydroseq.training.distributed import LaunchOptions, torchrun_arguments

    args = build_parser().parse_args(["-q", "train", "--config", "c.yaml", "--nproc", "2", "--json",
                                      "--log-file", str(tmp_path / "t.log")])
    options = global_options(args)
    assert options == ("--quiet", "--json", "--log-file", str(tmp_path / "t.log"))
    command = torchrun_arguments(tmp_path / "c.yaml", LaunchOptions(2, cli_options=options))
    assert command[command.index("train") + 1:] == [*options, "--config", str(tmp_path / "c.yaml")]
    assert global_options(build_parser().parse_args(["train", "--config", "c.yaml"])) == ()
