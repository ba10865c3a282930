"""Loading and validating YAML configuration files against pydantic models."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from hydroseq.errors import ConfigError

ModelT = TypeVar("ModelT", bound=BaseModel)


class StrictModel(BaseModel):
    """Base of every config section: unknown keys are errors, not silently ignored."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)


def format_validation_error(error: ValidationError, source: str) -> str:
    """One line per problem: the dotted key, the value given and what was expected."""
    lines = [f"{source}: invalid configuration"]
    for problem in error.errors():
        key = ".".join(str(part) for part in problem["loc"]) or "<root>"
        value = problem.get("input")
        shown = "missing" if problem["type"] == "missing" else f"got {value!r}"
        lines.append(f"  {key}: {shown}; expected: {problem['msg']}")
    return "\n".join(lines)


def validate_config(data: dict[str, Any], model: type[ModelT], source: str = "<config>") -> ModelT:
    """Validate a mapping against ``model``, raising :class:`ConfigError` with a readable message."""
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise ConfigError(format_validation_error(error, source)) from None


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
    return validate_config(data, model, source=str(path))


def dump_config(config: BaseModel) -> str:
    """The resolved configuration as YAML (stored with every output for provenance)."""
    return yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False)
