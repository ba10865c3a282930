"""A commented starting YAML for a config model, generated from the model itself so that it cannot drift.

Every key appears with its default and, above it, its description (a section without one gets its
model's docstring) and the allowed values of a choice. Required keys, which have no default, get
the value of :data:`EXAMPLES`, and optional sections that are off by default (``null``, ``[]``)
are written out commented. :func:`config_template` raises if a required key has no example or an
example names a key that no longer exists; ``tests/cli/test_config_command.py`` loads the
templates back through :func:`hydroseq.config.load_config`.
"""

from __future__ import annotations

import textwrap
import types
from collections.abc import Mapping
from typing import Any, Literal, Union, get_args, get_origin

import yaml
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined, to_jsonable_python

from hydroseq.config.forecast_source import ForecastSourceConfig
from hydroseq.config.ingest import GridConfig, SourceConfig, StationsConfig
from hydroseq.config.network import BaseCorrectionConfig
from hydroseq.config.outlines import OutlinesConfig
from hydroseq.config.train import DataConfig, ForecastInput

_CARAVAN_VARIABLES: dict[str, dict[str, object]] = {
    name: {"source": name, "units": "degC" if name.startswith("temperature") else "mm/d",
           "aggregation": "mean" if name in ("temperature_2m_mean", "streamflow") else "sum"}
    for name in ("total_precipitation_sum", "temperature_2m_mean", "potential_evaporation_sum", "streamflow")}
_CARAVAN_VARIABLES["potential_evaporation_sum"]["valid_min"] = -20  # ERA5-Land's is negative on condensation days
# The example source is configs/ingest_caravan_daily.yaml's: its dates name the local standard-time day each value
# covers (interval_start; the default interval_end would put each value on the day before), on a grid whose days
# end when every CONUS basin's day has ended (Etc/GMT+8). tests/config/test_template.py ingests it.
EXAMPLES: dict[tuple[type[BaseModel], str], object] = {
    (StationsConfig, "path"): "data/stations/caravan_camels_us.csv",
    (OutlinesConfig, "path"): "data/stations/caravan_camels_us_outlines.geojson",
    (SourceConfig, "path"): "data/daily_caravan_camels_us/[0-9]*.csv",
    (SourceConfig, "format"): "caravan_csv",
    (SourceConfig, "frequency"): "1D",
    (SourceConfig, "timestamp"): "interval_start",
    (SourceConfig, "timezone"): "station_standard",
    (SourceConfig, "time_format"): "%Y-%m-%d",
    (SourceConfig, "variables"): _CARAVAN_VARIABLES,
    (GridConfig, "start"): "1981-01-01",
    (GridConfig, "end"): "2014-12-31",
    (GridConfig, "timezone"): "Etc/GMT+8",
    (ForecastSourceConfig, "name"): "weather forecast",
    (ForecastSourceConfig, "path"): "data/forecasts/*.nc",
    (ForecastSourceConfig, "layout"): "station",
    (ForecastSourceConfig, "variables"): {"total_precipitation_sum_forecast": {
        "source": "tp", "units": "m", "aggregation": "sum", "accumulation": "since_reference"}},
    (ForecastSourceConfig, "latency"): "6h",
    (ForecastSourceConfig, "issue_frequency"): "1D",
    (ForecastSourceConfig, "horizon"): 3,
    (DataConfig, "dynamic_inputs"): ["total_precipitation_sum", "temperature_2m_mean", "potential_evaporation_sum"],
    (DataConfig, "splits"): {"train": {"start": "1981-01-01", "end": "2001-09-30"},
                             "validation": {"start": "2001-10-01", "end": "2006-09-30"},
                             "test": {"start": "2006-10-01", "end": "2014-12-31"}},
    (ForecastInput, "variable"): "total_precipitation_sum_forecast",
    (ForecastInput, "source"): "ingested",
    (BaseCorrectionConfig, "base_leads"): [1, 2, 3],
    (BaseCorrectionConfig, "base_members"): 3,
}
# Comments for keys whose field has no description of its own
NOTES: dict[tuple[type[BaseModel], str], str] = {
    (SourceConfig, "timestamp"): "what a stamp marks: interval_start (the value covers the source step from it; "
    "a date without a time of day names the day it covers), interval_end (the step ending at it) or instantaneous "
    "(a reading); a source of dates that does not set it is refused",
}
WIDTH = 100


class TemplateError(ValueError):
    """The models and :data:`EXAMPLES` disagree: a required key without an example, or an example
    for a key that does not exist."""


def config_template(model: type[BaseModel], command: str) -> str:
    """The commented YAML of ``model`` (``command``: the ``hydroseq`` command that reads it)."""
    for owner, name in EXAMPLES:
        if name not in owner.model_fields:
            raise TemplateError(f"EXAMPLES names {owner.__name__}.{name}, which is not a field")
    title = f"A starting config for `hydroseq {command}` ({model.__name__}): {_doc(model)}"
    header = [*(f"# {line}" for line in textwrap.wrap(title, WIDTH - 2, break_on_hyphens=False)),
              "# Generated from the config models: every key with its default and description. Required keys",
              "# hold example values to replace; commented blocks are optional sections, off by default.",
              f"# JSON schema: hydroseq config --schema {command}", ""]
    return "\n".join([*header, *_fields(model, None, 0)]) + "\n"


def _fields(model: type[BaseModel], given: Mapping[str, Any] | None, indent: int) -> list[str]:
    lines: list[str] = []
    for name, info in model.model_fields.items():
        value = given[name] if given is not None and name in given else EXAMPLES.get((model, name), PydanticUndefined)
        lines += _entry(model, name, info, value, indent, NOTES.get((model, name)))
    return lines


def _entry(model: type[BaseModel], name: str, info: FieldInfo, value: object, indent: int,
           note: str | None = None) -> list[str]:
    """The lines of one key: its comment (``note`` where the field has no description), then ``name: value``
    or its block (``value``: the example or given value, else undefined)."""
    pad = " " * indent
    kind, inner = _shape(info.annotation)
    if value is PydanticUndefined:
        if not info.is_required():
            value = info.get_default(call_default_factory=True)
        elif kind in ("scalar", "mapping"):
            raise TemplateError(f"{model.__name__}.{name} is required and has no example in EXAMPLES")
        else:  # a required section or list: built from its model's defaults and examples
            value = [None] if kind == "list" else None
    lines = [f"{pad}# {line}" for line in textwrap.wrap(_note(info, inner, note), WIDTH - indent - 2,
                                                        break_on_hyphens=False)]
    if inner is None:
        return [*lines, f"{pad}{name}: {_scalar(value)}"]
    if kind == "section":
        if value is None and not info.is_required():  # an optional section, off by default
            return [*lines, *_commented(pad, [f"{name}:", *_fields(inner, None, 2)])]
        given = value.model_dump() if isinstance(value, BaseModel) else value
        assert given is None or isinstance(given, Mapping)
        return [*lines, f"{pad}{name}:", *_fields(inner, given, indent + 2)]
    if kind == "list":
        assert isinstance(value, list)
        if not value:  # none by default: one item, commented
            return [*lines, *_commented(pad, [f"{name}:", *_item(inner, None, 2)])]
        return [*lines, f"{pad}{name}:", *(line for item in value for line in _item(inner, item, indent + 2))]
    assert isinstance(value, Mapping)
    if not value:
        return [*lines, f"{pad}{name}: {{}}"]
    (first, spec), *others = value.items()  # the first entry with every key, the others short
    return [*lines, f"{pad}{name}:", f"{pad}  {first}:", *_fields(inner, spec, indent + 4),
            *(f"{pad}  {key}: {_scalar(item)}" for key, item in others)]


def _item(model: type[BaseModel], given: Mapping[str, Any] | None, indent: int) -> list[str]:
    """One list item: the fields of ``model``, the first key after ``- ``."""
    body = _fields(model, given, indent + 2)
    first = next(k for k, line in enumerate(body) if not line.lstrip().startswith("#"))
    body[first] = f"{' ' * indent}- {body[first][indent + 2:]}"
    return body


def _commented(pad: str, block: list[str]) -> list[str]:
    return [f"{pad}# {line}" for line in block]


def _note(info: FieldInfo, inner: type[BaseModel] | None, note: str | None = None) -> str:
    """A key's comment: its description (else ``note``; a section's: else its model's), choices, whether it is
    required."""
    choices = _choices(info.annotation)
    parts = (info.description or note or _doc(inner), f"(one of: {', '.join(choices)})" if choices else "",
             "[required]" if info.is_required() else "")
    return " ".join(part for part in parts if part)


def _shape(annotation: Any) -> tuple[str, type[BaseModel] | None]:
    """``("section" | "list" | "mapping", model)`` for a model, a list of models or a mapping to models
    (optional or not), else ``("scalar", None)``."""
    options = [option for option in get_args(annotation) if option is not type(None)] \
        if get_origin(annotation) in (Union, types.UnionType) else [annotation]
    if len(options) != 1:
        return "scalar", None
    inner, origin, arguments = options[0], get_origin(options[0]), get_args(options[0])
    if _is_model(inner):
        return "section", inner
    if origin is list and arguments and _is_model(arguments[0]):
        return "list", arguments[0]
    if origin is dict and len(arguments) == 2 and _is_model(arguments[1]):
        return "mapping", arguments[1]
    return "scalar", None


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _choices(annotation: Any) -> list[str]:
    """The allowed values of a choice, as YAML: its ``Literal`` values (``bool | Literal["auto"]``: true,
    false, auto); none for other types."""
    if get_origin(annotation) is Literal:
        return [_scalar(choice) for choice in get_args(annotation)]
    if get_origin(annotation) in (Union, types.UnionType):
        options = get_args(annotation)
        literals = [choice for option in options for choice in _choices(option)]
        return ["true", "false", *literals] if literals and bool in options else literals
    return []


def _scalar(value: object) -> str:
    """``value`` as YAML on one line (lists and mappings in flow style)."""
    text = yaml.safe_dump(to_jsonable_python(value), default_flow_style=True, width=10_000, sort_keys=False).strip()
    return text.removesuffix("\n...").strip()


def _doc(model: type[BaseModel] | None) -> str:
    """The first paragraph of a model's docstring, on one line."""
    if model is None:
        return ""
    return " ".join((model.__doc__ or "").strip().split("\n\n")[0].split()).replace("``", "`")
