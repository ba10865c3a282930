"""Promote a registered model version: point an alias (``@champion``) at it, through a gate, leaving a trail.

``hydroseq promote --model demo --version 4 --alias champion`` calls :func:`promote`: version 4's figures
(median NSE over stations per lead, on the validation period or on a hindcast per version:
:mod:`.promotion_gate`) must be as good as those of the version the alias names now and as persistence's
at every lead, else it is refused (``force=True`` moves the alias all the same and records it). From then
on ``hydroseq forecast --model models:/demo@champion`` (and the daily job with
``HYDROSEQ_MODEL=models:/demo@champion``) forecasts with version 4, without a new deployment. Every move
is recorded in the registry (:mod:`.promotion_trail`): :func:`promotion_history` lists the moves, newest
first, and :func:`rollback` moves the alias back to the version it named before the last move. An alias
names one version at a time; a version may carry several.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlflow.entities.model_registry import ModelVersion, RegisteredModel
from mlflow.tracking import MlflowClient

from hydroseq.errors import ConfigError, HydroseqError, RefusedError
from hydroseq.serving import DEFAULT_ALIAS
from hydroseq.serving.model_uri import resolve_version
from hydroseq.serving.promotion_gate import GateError, LeadFigures, Verdict, figures_of, judge
from hydroseq.serving.promotion_trail import Move, current_user, read_moves, record_move, utc_now
from hydroseq.serving.stores import open_registry, store_error

ALIAS = re.compile(r"^[\w-]+$")  # MLflow's alias characters
RESERVED = re.compile(r"^(latest|[vV]\d+)$")  # names MLflow keeps for itself
FORCE_HINT = "; --force to promote anyway"


@dataclass(frozen=True)
class Promotion:
    """An alias set: which version it names now, and which it named before (None: it is new).

    ``move`` is the trail's record of it (None when the alias named the version already: nothing moved);
    ``figures`` the gate's per lead (empty for a rollback, or a forced move without figures), on
    ``evaluation``; ``refusal`` the gate's line a forced move overrode.
    """

    name: str
    alias: str
    version: str
    previous_version: str | None
    run_id: str | None
    description: str
    tracking_uri: str
    evaluation: str | None = None
    figures: tuple[LeadFigures, ...] = ()
    forced: bool = False
    refusal: str | None = None
    rollback: bool = False
    move: Move | None = field(default=None, repr=False)

    @property
    def uri(self) -> str:
        """``models:/NAME@ALIAS``, what the forecast reads."""
        return f"models:/{self.name}@{self.alias}"

    def summary(self) -> dict[str, Any]:
        """The ``--json`` summary of ``hydroseq promote``."""
        return {"uri": self.uri, "name": self.name, "alias": self.alias, "version": self.version,
                "previous_version": self.previous_version, "run_id": self.run_id, "description": self.description,
                "tracking_uri": self.tracking_uri, "evaluation": self.evaluation,
                "figures": [row.as_dict() for row in self.figures], "forced": self.forced, "refusal": self.refusal,
                "rollback": self.rollback, "moved": self.move is not None,
                "time": None if self.move is None else self.move.time,
                "user": None if self.move is None else self.move.user}


def check_alias(alias: str) -> str:
    """``alias`` if MLflow accepts it as an alias name.

    Raises
    ------
    ConfigError
        If it is empty, holds other characters than letters, digits, ``_`` and ``-``, or is reserved
        (``latest``, ``v1``: they would read as versions).
    """
    if not ALIAS.match(alias):
        raise ConfigError(f"--alias {alias!r}: an alias holds letters, digits, '_' and '-' only (such as "
                          f"{DEFAULT_ALIAS})")
    if RESERVED.match(alias):
        raise ConfigError(f"--alias {alias!r} is reserved by MLflow (latest, v<number>); choose a name such as "
                          f"{DEFAULT_ALIAS}")
    return alias


def promote(name: str, version: int | str, alias: str = DEFAULT_ALIAS, tracking_uri: str | None = None, *,
            hindcast: Sequence[str | Path] = (), force: bool = False) -> Promotion:
    """Point ``alias`` of registered model ``name`` at ``version`` in the store ``tracking_uri`` (default:
    ``MLFLOW_TRACKING_URI``, else ``sqlite:///mlruns.db`` under ``HYDROSEQ_HOME``) if it passes the gate;
    returns what changed, recorded in the trail.

    Parameters
    ----------
    hindcast
        Empty: compare the validation-period figures the versions' runs logged. Else the hindcast of the
        candidate, then (when the alias names a version) that of the version it names: files ``hydroseq
        forecast`` wrote, each with its ``_scores.csv``, over the same issue times and stations.
    force
        Move the alias even when the gate refuses, or has no figures to judge; the move records it.

    Setting an alias to the version it already names changes nothing (no gate, no record) and is not an error.

    Raises
    ------
    ConfigError
        If the alias is not a valid name, the store does not exist, ``name`` has no version ``version`` (the
        error lists the versions there are), or, without ``force``, the gate cannot judge: a version has no
        figures, or the two were not scored on the same evaluation.
    RefusedError
        Without ``force``, if the gate refuses: the candidate's median NSE is lower than the champion's or
        than persistence's at a lead (one line, with the figures).
    InputDataError
        If a hindcast or its scores cannot be read.
    UnavailableError
        If the store does not answer or stays locked.
    """
    check_alias(alias)
    if not str(version).isdigit():
        raise ConfigError(f"--version {version!r}: a version number (1, 2, ...)")
    if len(hindcast) > 2:
        raise ConfigError(f"--hindcast takes the candidate's hindcast and the champion's, not {len(hindcast)} files")
    found, client, store = resolve_version(f"models:/{name}/{int(version)}", tracking_uri)
    registered = _registered(client, store, name)
    previous = registered.aliases.get(alias)
    if previous is not None and str(previous) == str(found.version):
        return Promotion(name, alias, str(found.version), str(previous), found.run_id, found.description or "", store)
    champion = None if previous is None else _version(client, store, name, str(previous))
    if champion is not None and len(hindcast) == 1:
        raise ConfigError(f"@{alias} names version {champion.version}: give its hindcast too, --hindcast "
                          "CANDIDATE.nc CHAMPION.nc")
    if champion is None and len(hindcast) == 2:
        raise ConfigError(f"model {name!r} has no alias @{alias} yet: give the candidate's hindcast alone")
    try:
        verdict = _gate(found, champion, [Path(path) for path in hindcast], alias, client, store)
    except GateError as error:
        if not force:
            raise ConfigError(f"{error}{FORCE_HINT}") from None
        verdict = Verdict("", (), str(error))
    if verdict.refusal is not None and not force:
        raise RefusedError(f"{verdict.refusal}{FORCE_HINT}")
    move = Move(number=0, alias=alias, version=str(found.version),
                previous_version=None if previous is None else str(previous), time=utc_now(), user=current_user(),
                evaluation=verdict.evaluation or None, figures=[row.as_dict() for row in verdict.leads],
                forced=verdict.refusal is not None, refusal=verdict.refusal)
    return _move(client, store, registered, found, move, verdict.leads)


def rollback(name: str, alias: str = DEFAULT_ALIAS, tracking_uri: str | None = None) -> Promotion:
    """Point ``alias`` of ``name`` back at the version it named before its last recorded move (no gate: the
    version was in operation), recorded as a move marked ``rollback``. A second rollback undoes the first.

    Raises
    ------
    ConfigError
        If the trail holds no move of the alias, the alias named no version before it, the alias was moved
        since by other means than ``hydroseq promote`` (it names another version than the last move set), or
        that earlier version is gone.
    UnavailableError
        If the store does not answer or stays locked.
    """
    check_alias(alias)
    client, store = open_registry(tracking_uri)
    registered = _registered(client, store, name)
    moves = read_moves(registered, alias)
    if not moves:
        raise ConfigError(f"model {name!r}: no recorded move of @{alias} to roll back (hydroseq promote records "
                          f"them); point it at a version with --version N")
    last, current = moves[0], registered.aliases.get(alias)
    if current is None or str(current) != last.version:
        raise ConfigError(f"@{alias} of {name!r} names {f'version {current}' if current else 'no version'}, not "
                          f"version {last.version} that its last recorded move set (moved by other means?); point "
                          "it at a version with --version N")
    if last.previous_version is None:
        raise ConfigError(f"@{alias} of {name!r} named no version before version {last.version} (move "
                          f"{last.number}, {last.time}): there is nothing to roll back to")
    found, _, _ = resolve_version(f"models:/{name}/{last.previous_version}", store)
    move = Move(number=0, alias=alias, version=str(found.version), previous_version=last.version, time=utc_now(),
                user=current_user(), rollback=True)
    return _move(client, store, registered, found, move, ())


def promotion_history(name: str, alias: str | None = None, tracking_uri: str | None = None) -> list[Move]:
    """The recorded moves of the aliases of ``name`` (only ``alias``'s when given), newest first.

    Raises
    ------
    ConfigError
        If the store or the model does not exist.
    UnavailableError
        If the store does not answer.
    """
    if alias is not None:
        check_alias(alias)
    client, store = open_registry(tracking_uri)
    return read_moves(_registered(client, store, name), alias)


def _gate(candidate: ModelVersion, champion: ModelVersion | None, hindcast: list[Path], alias: str,
          client: MlflowClient, store: str) -> Verdict:
    """Both versions' figures on one evaluation, judged (:func:`~hydroseq.serving.promotion_gate.judge`)."""
    mine = figures_of(candidate, hindcast[0] if hindcast else None, client, store)
    theirs = None if champion is None else figures_of(champion, hindcast[1] if hindcast else None, client, store)
    return judge(mine, theirs, alias)


def _move(client: MlflowClient, store: str, registered: RegisteredModel, found: ModelVersion, move: Move,
          figures: tuple[LeadFigures, ...]) -> Promotion:
    """Point the alias at ``found`` and record ``move``."""
    try:
        client.set_registered_model_alias(registered.name, move.alias, str(found.version))
        recorded = record_move(client, registered, move)
    except HydroseqError:
        raise
    except Exception as error:
        raise store_error(error, store, f"alias @{move.alias} of model {registered.name!r}") from None
    return Promotion(registered.name, move.alias, str(found.version), move.previous_version, found.run_id,
                     found.description or "", store, move.evaluation, figures, move.forced, move.refusal,
                     move.rollback, recorded)


def _registered(client: MlflowClient, store: str, name: str) -> RegisteredModel:
    """The registered model ``name`` with its aliases and tags."""
    try:
        return client.get_registered_model(name)
    except Exception as error:
        if getattr(error, "error_code", "") == "RESOURCE_DOES_NOT_EXIST":
            raise ConfigError(f"no registered model {name!r} in the MLflow store {store}") from None
        raise store_error(error, store, f"model {name!r}") from None


def _version(client: MlflowClient, store: str, name: str, version: str) -> ModelVersion:
    """Version ``version`` of ``name`` (the one an alias names)."""
    try:
        return client.get_model_version(name, version)
    except Exception as error:
        raise store_error(error, store, f"version {version} of model {name!r}") from None


__all__ = ["Promotion", "check_alias", "promote", "promotion_history", "rollback"]
