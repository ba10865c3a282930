"""``hydroseq promote``: move an alias through the gate (:func:`hydroseq.serving.promote.promote`), roll it back
(:func:`~hydroseq.serving.promote.rollback`) or list its moves (:func:`~hydroseq.serving.promote.promotion_history`).

The parser imports this module for :func:`add_promote_options`: MLflow is imported when the command runs.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from hydroseq.cli.arg_types import version_number
from hydroseq.cli.output import console_for, finish
from hydroseq.errors import ConfigError, ExitCode

if TYPE_CHECKING:
    from hydroseq.serving.promote import Promotion
    from hydroseq.serving.promotion_trail import Move


def add_promote_options(promote: argparse.ArgumentParser, tracking_uri_help: str) -> None:
    """The options of ``hydroseq promote``: one of ``--version``, ``--rollback``, ``--history``, and the gate's."""
    promote.add_argument("--model", metavar="NAME", help="registered model name (tracking.registered_model_name of "
                         "the training config; default: its experiment)")
    move = promote.add_mutually_exclusive_group(required=True)
    move.add_argument("--version", type=version_number,
                      help="the version the alias names from now on, if it passes the gate: its median NSE over "
                           "stations at least the alias's version's and persistence's at every lead (else exit 3, "
                           "one line with both figures)")
    move.add_argument("--rollback", action="store_true",
                      help="point the alias back at the version it named before its last recorded move")
    move.add_argument("--history", nargs="?", const="", default=None, metavar="NAME",
                      help="list the recorded moves of the model's aliases (of --alias only, when given), newest "
                           "first; NAME or --model names the model")
    promote.add_argument("--alias", default=None, help="alias name (default: champion; with --history: every alias)")
    promote.add_argument("--hindcast", nargs="+", type=Path, default=[], metavar=("CANDIDATE.nc", "CHAMPION.nc"),
                         help="judge on hindcasts instead of the validation period: the candidate's, then the "
                              "alias's version's (hydroseq forecast --model models:/NAME/N --issue-time A..B wrote "
                              "them, each with its _scores.csv; same issue times and stations)")
    promote.add_argument("--force", action="store_true",
                         help="move the alias even if the gate refuses or has no figures; the move records it")
    promote.add_argument("--tracking-uri", default=None, help=tracking_uri_help)



def promote_command(args: argparse.Namespace) -> int:
    """Promote ``--version``, ``--rollback`` or list the ``--history`` of ``--model``; exit status 0."""
    from hydroseq.serving import DEFAULT_ALIAS
    from hydroseq.serving.promote import promote, rollback

    name = _model_name(args)
    if args.history is not None:
        return _history(args, name)
    if args.rollback and (args.hindcast or args.force):
        raise ConfigError("--rollback takes no --hindcast or --force: it returns to a version that was in operation")
    alias = args.alias or DEFAULT_ALIAS
    promotion = (rollback(name, alias, tracking_uri=args.tracking_uri) if args.rollback else
                 promote(name, args.version, alias, tracking_uri=args.tracking_uri, hindcast=args.hindcast,
                         force=args.force))
    console = console_for(args)
    _print_promotion(promotion, console)
    return finish(args, promotion.summary(), ExitCode.OK)


def _model_name(args: argparse.Namespace) -> str:
    """The model ``--model`` or ``--history NAME`` names (the same one when both do)."""
    named = {name for name in (args.model, args.history) if name}
    if len(named) > 1:
        raise ConfigError(f"--model {args.model} and --history {args.history} name two models: name one")
    if not named:
        raise ConfigError("name the registered model: --model NAME (or --history NAME)")
    return named.pop()


def _print_promotion(promotion: Promotion, console: Console) -> None:
    """What the alias names now, how it got there (the gate's figures, forced, rolled back), and how to use it."""
    def say(text: str) -> None:
        console.print(text, markup=False, highlight=False, soft_wrap=True)

    before = ("new alias" if promotion.previous_version is None
              else "unchanged" if promotion.move is None
              else f"was version {promotion.previous_version}")
    how = ", a rollback" if promotion.rollback else ", forced" if promotion.forced else ""
    say(f"{promotion.uri} -> version {promotion.version}{how} ({before}; run {promotion.run_id}) in "
        f"{promotion.tracking_uri}")
    if promotion.figures:
        say(f"median NSE over stations ({promotion.evaluation}): {_figures_text(promotion.move)}")
    if promotion.forced:
        say(f"forced: {promotion.refusal}")
    if promotion.description:
        say(promotion.description)
    say(f"forecast with it: hydroseq forecast --model {promotion.uri} ...")


def _figures_text(move: Move | None) -> str:
    """``lead 1 0.712 (champion 0.690, persistence 0.548), lead 2 ...`` of a move."""
    if move is None:
        return ""
    parts = []
    for row in move.figures:
        others = [f"{label} {_number(row[key])}" for key, label in (("champion", move.alias),
                                                                    ("persistence", "persistence"))
                  if row.get(key) is not None]
        parts.append(f"lead {row['lead']} {_number(row['candidate'])}" + (f" ({', '.join(others)})" if others else ""))
    return ", ".join(parts)


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _history(args: argparse.Namespace, name: str) -> int:
    """The table of the recorded moves, newest first (the list in ``--json``)."""
    if args.hindcast or args.force:
        raise ConfigError("--history lists the moves: it takes no --hindcast or --force")
    from hydroseq.serving.promote import promotion_history

    moves = promotion_history(name, args.alias, tracking_uri=args.tracking_uri)
    console = console_for(args, width_off_terminal=160)
    which = f"@{args.alias}" if args.alias else "every alias"
    if not moves:
        console.print(f"no recorded move of {which} of {name!r}", markup=False, highlight=False)
    else:
        table = Table(title=f"moves of {which} of {name!r}, newest first")
        for column in ("#", "time (UTC)", "alias", "version", "before", "user", "how", "median NSE per lead"):
            table.add_column(column, justify="right" if column in ("#", "version", "before") else "left")
        for move in moves:
            how = ("rollback" if move.rollback else "forced" if move.forced else "gate passed")
            table.add_row(*map(escape, (str(move.number), move.time, move.alias, move.version,
                                        move.previous_version or "-", move.user, how, _figures_text(move) or "-")))
        console.print(table)
    return finish(args, {"name": name, "alias": args.alias, "moves": [move.as_dict() for move in moves]},
                  ExitCode.OK)
