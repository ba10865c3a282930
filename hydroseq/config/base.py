"""Loading and validating YAML configuration files against pydantic models."""

from __future__ import annotations

import difflib
import logging
import os
import re
import typing
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic_core import ErrorDetails

from hydroseq.errors import ConfigError

ModelT = TypeVar("ModelT", bound=BaseModel)
LOGGER = logging.getLogger(__name__)
# ${NAME} or ${NAME:-default} inside a string value (the shell's form); nothing else is expanded
SETTING = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class StrictModel(BaseModel):
    """Base of every config section: unknown keys are errors, not silently ignored."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)


def format_validation_error(error: ValidationError, source: str, model: type[BaseModel] | None = None) -> str:
    """The problems of a config: one line if there is one, else a heading and one line per problem,
    each with the dotted key, the value given and what was expected; an unknown key of ``model`` gets the
    nearest known key of its section ("did you mean ``hidden_size``?")."""
    problems = [_format_problem(problem, model) for problem in error.errors()]
    if len(problems) == 1:
        return f"{source}: invalid configuration: {problems[0]}"
    return "\n".join([f"{source}: invalid configuration", *(f"  {problem}" for problem in problems)])


def _format_problem(problem: ErrorDetails, model: type[BaseModel] | None = None) -> str:
    if not problem["loc"] and problem["type"] == "value_error":  # a check across sections: its message says what
        return str(problem.get("ctx", {}).get("error", problem["msg"]))
    key = ".".join(str(part) for part in problem["loc"]) or "<root>"
    if problem["type"] == "extra_forbidden" and model is not None:
        known = _section_keys(model, problem["loc"][:-1])
        nearest = difflib.get_close_matches(str(problem["loc"][-1]), known, n=1, cutoff=0.6)
        hint = f"; did you mean {nearest[0]!r}?" if nearest else (f"; known keys: {', '.join(known)}" if known else "")
        return f"{key}: unknown key{hint}"
    shown = "missing" if problem["type"] == "missing" else f"got {problem.get('input')!r}"
    if problem["type"] == "value_error":  # a validator's own message says what is wrong
        return f"{key}: {shown}: {problem.get('ctx', {}).get('error', problem['msg'])}"
    return f"{key}: {shown}; expected: {problem['msg']}"


def _section_keys(model: type[BaseModel], path: tuple[int | str, ...]) -> list[str]:
    """The keys of the config section at ``path`` (list positions and mapping keys skipped), or [] if unknown."""
    current: Any = model
    for part in path:
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return []
        field = current.model_fields.get(str(part))
        if field is None:  # a list position or a mapping key: stay with the item type found so far
            continue
        current = _model_in(field.annotation)
    return list(current.model_fields) if isinstance(current, type) and issubclass(current, BaseModel) else []


def _model_in(annotation: Any) -> Any:
    """The config model inside an annotation such as ``X``, ``X | None``, ``list[X]`` or ``dict[str, X]``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for argument in typing.get_args(annotation):
        found = _model_in(argument)
        if found is not None:
            return found
    return None


def validate_config(data: dict[str, Any], model: type[ModelT], source: str = "<config>") -> ModelT:
    """Validate a mapping against ``model``, raising :class:`ConfigError` with a readable message."""
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise ConfigError(format_validation_error(error, source, model)) from None


def load_config(path: str | Path, model: type[ModelT]) -> ModelT:
    """Read a YAML file and validate it against ``model``.

    Relative paths inside the file stay relative to the current directory (the project root in
    the README's commands), so one config works from the CLI, tests and notebooks alike.
    """
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as error:
        raise ConfigError(f"{path}: cannot read configuration ({error.strerror})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ConfigError(f"{path}: not valid YAML: {error}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of keys at the top level, got {type(data).__name__}")
    data = _expand_settings(data, str(path))
    LOGGER.debug("%s: reading it as a %s", path.absolute(), model.__name__)
    return validate_config(data, model, source=str(path))


def _expand_settings(value: Any, source: str) -> Any:
    """Replace ``${NAME}`` and ``${NAME:-default}`` in every string by the environment variable NAME
    (for instance a dataset root that each user points at their own download)."""
    if isinstance(value, dict):
        return {key: _expand_settings(item, source) for key, item in value.items()}
    if isinstance(value, list):
        return [_expand_settings(item, source) for item in value]
    if not isinstance(value, str):
        return value

    def setting(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        found = os.environ.get(name) or default
        if found is None:
            raise ConfigError(f"{source}: {match.group(0)} names the environment variable {name}, which is not set")
        return found

    return SETTING.sub(setting, value)


def dump_config(config: BaseModel) -> str:
    """The resolved configuration as YAML (stored with every output for provenance)."""
    return yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False)
