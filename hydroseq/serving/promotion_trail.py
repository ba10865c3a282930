"""The trail of an alias's moves, kept as tags in the registry itself.

Every move of an alias by ``hydroseq promote`` (a promotion, forced or not, or a rollback) is one tag of
the registered model, ``hydroseq.move.<number>`` (numbered from 1 over all its aliases), whose value is the
move as JSON: the alias, the version it names now and the one it named before, the UTC time, the user
(``HYDROSEQ_USER``, else the login name), the evaluation and its figures per lead, whether it was forced
(with the gate's refusal it overrode) and whether it was a rollback. The version moved to also gets the
tag ``hydroseq.promoted.<alias>``: the same JSON, its newest move to that alias. Both are visible in
MLflow's UI; :func:`read_moves` lists them, newest first.
"""

from __future__ import annotations

import datetime as dt
import getpass
import json
import logging
import os
from dataclasses import asdict, dataclass, field
from typing import Any

from mlflow.entities.model_registry import RegisteredModel
from mlflow.tracking import MlflowClient

LOGGER = logging.getLogger(__name__)
MOVE_TAG_PREFIX = "hydroseq.move."
VERSION_TAG_PREFIX = "hydroseq.promoted."
USER_VARIABLE = "HYDROSEQ_USER"


@dataclass(frozen=True)
class Move:
    """One move of an alias, as the trail records it (``number``: its place in the model's trail, from 1).

    ``figures`` holds one ``{"lead", "candidate", "champion", "persistence"}`` per lead (median NSE; empty for
    a rollback, or a forced move without figures); ``refusal`` is the gate's line a forced move overrode.
    """

    number: int
    alias: str
    version: str
    previous_version: str | None
    time: str
    user: str
    evaluation: str | None = None
    figures: list[dict[str, Any]] = field(default_factory=list)
    forced: bool = False
    refusal: str | None = None
    rollback: bool = False

    def as_dict(self) -> dict[str, Any]:
        """The move as the tags hold it and ``--json`` prints it."""
        return asdict(self)


def current_user() -> str:
    """Who moves the alias: ``HYDROSEQ_USER`` (a scheduler's or a shared account's real author), else the
    login name, else ``unknown``."""
    named = os.environ.get(USER_VARIABLE, "").strip()
    if named:
        return named
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no login name, no passwd entry (a container's numeric user)
        return "unknown"


def utc_now() -> str:
    """The time of a move: ``2014-10-01T08:05:03Z``."""
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def read_moves(registered: RegisteredModel, alias: str | None = None) -> list[Move]:
    """The recorded moves of ``registered``'s aliases (only ``alias``'s when given), newest first.

    A tag that does not hold a move (edited by hand) is skipped with a warning.
    """
    moves = []
    for key, value in (registered.tags or {}).items():
        if not key.startswith(MOVE_TAG_PREFIX):
            continue
        try:
            record = json.loads(value)
            move = Move(**{**record, "number": int(key.removeprefix(MOVE_TAG_PREFIX))})
        except (ValueError, TypeError) as error:
            LOGGER.warning(f"model {registered.name!r}: tag {key} is not a recorded move ({error}); skipped")
            continue
        if alias is None or move.alias == alias:
            moves.append(move)
    return sorted(moves, key=lambda move: move.number, reverse=True)


def record_move(client: MlflowClient, registered: RegisteredModel, move: Move) -> Move:
    """Tag the registered model and the version moved to with ``move``, numbered after the newest move in the
    trail of ``registered`` (as read before the move); returns it with its number."""
    newest = max((int(key.removeprefix(MOVE_TAG_PREFIX)) for key in (registered.tags or {})
                  if key.startswith(MOVE_TAG_PREFIX) and key.removeprefix(MOVE_TAG_PREFIX).isdigit()), default=0)
    numbered = Move(**{**move.as_dict(), "number": newest + 1})
    record = {key: value for key, value in numbered.as_dict().items() if key != "number"}
    text = json.dumps(record, allow_nan=False, default=str)
    client.set_model_version_tag(registered.name, numbered.version, f"{VERSION_TAG_PREFIX}{numbered.alias}", text)
    client.set_registered_model_tag(registered.name, f"{MOVE_TAG_PREFIX}{numbered.number:06d}", text)
    return numbered


__all__ = ["Move", "current_user", "read_moves", "record_move", "utc_now"]
