"""Promote a registered model version: point an alias (``@champion``) at it, the usual MLflow pattern.

``hydroseq promote --model demo --version 3 --alias champion`` calls :func:`promote`; from then on
``hydroseq forecast --model models:/demo@champion`` (and the daily job with
``HYDROSEQ_MODEL=models:/demo@champion``) forecasts with version 3, without a new deployment. Moving the
alias back is the rollback. An alias names one version at a time; a version may carry several.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hydroseq.errors import ConfigError, HydroseqError
from hydroseq.serving import DEFAULT_ALIAS
from hydroseq.serving.model_uri import resolve_version
from hydroseq.serving.stores import store_error

ALIAS = re.compile(r"^[\w-]+$")  # MLflow's alias characters
RESERVED = re.compile(r"^(latest|[vV]\d+)$")  # names MLflow keeps for itself


@dataclass(frozen=True)
class Promotion:
    """An alias set: which version it names now, and which it named before (None: it is new)."""

    name: str
    alias: str
    version: str
    previous_version: str | None
    run_id: str | None
    description: str
    tracking_uri: str

    @property
    def uri(self) -> str:
        """``models:/NAME@ALIAS``, what the forecast reads."""
        return f"models:/{self.name}@{self.alias}"

    def summary(self) -> dict[str, str | None]:
        """The ``--json`` summary of ``hydroseq promote``."""
        return {"uri": self.uri, "name": self.name, "alias": self.alias, "version": self.version,
                "previous_version": self.previous_version, "run_id": self.run_id, "description": self.description,
                "tracking_uri": self.tracking_uri}


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


def promote(name: str, version: int | str, alias: str = DEFAULT_ALIAS, tracking_uri: str | None = None) -> Promotion:
    """Point ``alias`` of registered model ``name`` at ``version`` in the store ``tracking_uri`` (default:
    ``MLFLOW_TRACKING_URI``, else ``sqlite:///mlruns.db`` under ``HYDROSEQ_HOME``); returns what changed.

    Setting an alias to the version it already names changes nothing and is not an error.

    Raises
    ------
    ConfigError
        If the alias is not a valid name, the store does not exist, or ``name`` has no version ``version``
        (the error lists the versions there are).
    UnavailableError
        If the store does not answer or stays locked.
    """
    check_alias(alias)
    if not str(version).isdigit():
        raise ConfigError(f"--version {version!r}: a version number (1, 2, ...)")
    found, client, store = resolve_version(f"models:/{name}/{int(version)}", tracking_uri)
    try:
        previous = client.get_registered_model(name).aliases.get(alias)
        client.set_registered_model_alias(name, alias, str(found.version))
    except HydroseqError:
        raise
    except Exception as error:
        raise store_error(error, store, f"alias @{alias} of model {name!r}") from None
    return Promotion(name, alias, str(found.version), None if previous is None else str(previous), found.run_id,
                     found.description or "", store)


__all__ = ["Promotion", "check_alias", "promote"]
