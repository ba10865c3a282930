"""A registered model version (``models:/NAME@ALIAS``, ``models:/NAME/VERSION``) as an exported model directory.

>>> from hydroseq.forecast import run_forecast
>>> with registered_model("models:/demo@champion") as model:  # doctest: +SKIP
...     run = run_forecast(model.model_dir, "runs/demo/caravan_daily.nc", "2014-09-30")

The alias is resolved to a version once; that version's ``exported_model/`` artifact (the exported
model directory the pyfunc model runs: ``model.onnx``, ``metadata.json``) is downloaded into a private
temporary folder, removed when the block ends, so a forecast never reads a half-written copy and
nothing is left behind. The forecast then reads it as it reads any exported directory (checksums
verified), so it equals the forecast from that run's ``hydroseq export`` directory.
"""

from __future__ import annotations

import contextlib
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import mlflow
import yaml
from mlflow.entities.model_registry import ModelVersion
from mlflow.tracking import MlflowClient

from hydroseq.errors import ConfigError, HydroseqError
from hydroseq.fileio.space import space_errno
from hydroseq.serving import MODEL_URI_PREFIX
from hydroseq.serving.stores import no_artifact_progress_bars, open_registry, store_error

EXPORTED_MODEL_ARTIFACT = "exported_model"  # the pyfunc model's artifact key (hydroseq.serving.pyfunc_model)
URI = re.compile(r"^models:/(?P<name>[^/@]+)(?:/(?P<version>\d+)|@(?P<alias>[\w-]+))$")
FORMS = "models:/NAME@ALIAS (models:/demo@champion) or models:/NAME/VERSION (models:/demo/3)"
LISTED = 10  # names, versions or aliases an error lists at most


@dataclass(frozen=True)
class RegisteredModel:
    """A registered model version and where its exported model directory is while the block runs."""

    uri: str  # as given: models:/demo@champion
    name: str
    version: str
    alias: str | None
    run_id: str | None
    tracking_uri: str
    model_dir: Path

    def summary(self) -> dict[str, str | None]:
        """What a command's ``--json`` summary says about the model it read."""
        return {"uri": self.uri, "name": self.name, "version": self.version, "alias": self.alias,
                "run_id": self.run_id, "tracking_uri": self.tracking_uri}


def parse_model_uri(uri: str) -> tuple[str, str | None, str | None]:
    """``(name, version, alias)`` of ``models:/NAME/VERSION`` or ``models:/NAME@ALIAS`` (one of the two is None).

    Raises
    ------
    ConfigError
        For any other form (a stage name such as ``/Production``, ``latest``, a logged model id).
    """
    match = URI.match(uri.strip())
    if match is None:
        raise ConfigError(f"--model {uri!r} is not a registered model's URI: write {FORMS}")
    return match.group("name"), match.group("version"), match.group("alias")


def resolve_version(uri: str, tracking_uri: str | None = None) -> tuple[ModelVersion, MlflowClient, str]:
    """The model version ``uri`` names (an alias resolved now), the client and the store's URI.

    Raises
    ------
    ConfigError
        If the URI is malformed, the store does not exist, or the name, version or alias is not in it
        (the error lists the ones that are).
    UnavailableError
        If the store does not answer (a server down) or stays locked.
    """
    name, version, alias = parse_model_uri(uri)
    client, store = open_registry(tracking_uri)
    try:
        try:
            found = (client.get_model_version_by_alias(name, alias) if alias is not None
                     else client.get_model_version(name, str(version)))
        except Exception as error:
            if getattr(error, "error_code", "") not in ("RESOURCE_DOES_NOT_EXIST", "INVALID_PARAMETER_VALUE"):
                raise
            raise ConfigError(f"--model {uri}: {_what_is_there(client, store, name, version, alias)}") from None
    except HydroseqError:
        raise
    except Exception as error:
        raise store_error(error, store, f"model {uri}") from None
    if found.status != "READY":
        raise ConfigError(f"--model {uri}: version {found.version} of {name!r} is {found.status}, not READY")
    return found, client, store


@contextlib.contextmanager
def registered_model(uri: str, tracking_uri: str | None = None) -> Iterator[RegisteredModel]:
    """The model version ``uri`` names, its exported model directory downloaded for the block.

    Raises
    ------
    ConfigError
        As :func:`resolve_version`; also when the version is not a hydroseq forecaster (no
        ``exported_model`` artifact) or its artifacts are gone.
    UnavailableError
        If the store or its artifact server does not answer.
    """
    found, client, store = resolve_version(uri, tracking_uri)
    name, _, alias = parse_model_uri(uri)
    with tempfile.TemporaryDirectory(prefix="hydroseq-model-") as tmp:
        model_dir = _download_exported_model(client, store, name, str(found.version), Path(tmp))
        yield RegisteredModel(uri, name, str(found.version), alias, found.run_id, store, model_dir)


def _download_exported_model(client: MlflowClient, store: str, name: str, version: str, into: Path) -> Path:
    """Download version ``version``'s ``MLmodel``, then the folder its pyfunc artifact ``exported_model`` names."""
    what = f"the artifacts of models:/{name}/{version}"
    try:
        root = client.get_model_version_download_uri(name, version).rstrip("/")
        with no_artifact_progress_bars():
            mlmodel = Path(mlflow.artifacts.download_artifacts(
                artifact_uri=f"{root}/MLmodel", dst_path=str(into / "meta"), tracking_uri=store))
            flavor = (yaml.safe_load(mlmodel.read_text()) or {}).get("flavors", {}).get("python_function", {})
            path = (flavor.get("artifacts") or {}).get(EXPORTED_MODEL_ARTIFACT, {}).get("path")
            if not path:
                raise ConfigError(f"models:/{name}/{version} is not a hydroseq forecast model: its MLmodel names no "
                                  f"{EXPORTED_MODEL_ARTIFACT!r} artifact")
            return Path(mlflow.artifacts.download_artifacts(
                artifact_uri=f"{root}/{path}", dst_path=str(into / "model"), tracking_uri=store))
    except HydroseqError:
        raise
    except OSError as error:
        if space_errno(error) is not None:
            raise  # the CLI's no-space line and exit 7
        raise ConfigError(f"{what} cannot be read ({error.strerror or error}): were they moved or deleted?") from None
    except Exception as error:
        raise store_error(error, store, what) from None


def _what_is_there(client: MlflowClient, store: str, name: str, version: str | None, alias: str | None) -> str:
    """Why ``name`` / ``version`` / ``alias`` is not found, with what the store holds instead."""
    models = client.search_registered_models(f"name = '{name}'") if "'" not in name else []
    if not models:
        names = sorted(model.name for model in client.search_registered_models(max_results=LISTED))
        return (f"no registered model {name!r} in the MLflow store {store} (registered: "
                f"{', '.join(names) if names else 'none'}; name the store with --tracking-uri or MLFLOW_TRACKING_URI)")
    if alias is not None:
        aliases = models[0].aliases or {}
        there = ", ".join(f"@{key} -> {value}" for key, value in sorted(aliases.items())[:LISTED]) or "none"
        return (f"model {name!r} has no alias {alias!r} (aliases: {there}; set one with hydroseq promote --model "
                f"{name} --version N --alias {alias})")
    versions = sorted(int(found.version) for found in client.search_model_versions(f"name = '{name}'"))
    listed = ", ".join(map(str, versions[-LISTED:])) or "none"
    return f"model {name!r} has no version {version} (versions: {listed})"


__all__ = ["MODEL_URI_PREFIX", "RegisteredModel", "parse_model_uri", "registered_model", "resolve_version"]
