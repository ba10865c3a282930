"""The configuration reference as Markdown, generated from the config models so that it cannot drift.

One section per model reachable from a top-level config (a nested section, the items of a list of
models, the values of a mapping to models), each a table of its keys: the dotted key, its type, its
default (or "required") and its description. ``docs/make_config_reference.py`` writes it to
``docs/configuration.md``, and ``tests/config/test_config_reference.py`` requires the committed page
to equal it.
"""

from __future__ import annotations

import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

import annotated_types
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from hydroseq.config.ingest import IngestConfig
from hydroseq.config.template import _doc, _scalar, _shape
from hydroseq.config.train import TrainConfig

_BOUNDS = ((annotated_types.Gt, ">"), (annotated_types.Ge, ">="), (annotated_types.Lt, "<"),
           (annotated_types.Le, "<="), (annotated_types.MinLen, "length >="), (annotated_types.MaxLen, "length <="))


PAGE_HEADER = """# Configuration reference

Every key of the two YAML configs, generated from the pydantic models in `hydroseq/config/` by
`python docs/make_config_reference.py` (a test fails when this page and the models disagree). A
commented starting file: `hydroseq config --template train` (or `ingest`); the JSON schema:
`hydroseq config --schema train`. How the configs are used: [ingest.md](ingest.md),
[training.md](training.md). Dotted keys are YAML nesting (`data.splits.train.start`); `[]` marks the
items of a list, `<name>` a key you choose (a variable name)."""


def reference_page() -> str:
    """``docs/configuration.md``: :data:`PAGE_HEADER`, then the ingest and the train config."""
    return f"{PAGE_HEADER}\n\n{config_reference([('ingest', IngestConfig), ('train', TrainConfig)])}".rstrip() + "\n"


def config_reference(configs: Sequence[tuple[str, type[BaseModel]]]) -> str:
    """The Markdown reference of ``configs``, pairs of the ``hydroseq`` command and its config model.

    Parameters
    ----------
    configs
        ``(command, model)`` pairs, e.g. ``("train", TrainConfig)``, in the order of the page.

    Returns
    -------
    str
        One ``##`` section per command, one ``###`` table per model reachable from it.
    """
    lines: list[str] = []
    for command, model in configs:
        lines += [f"## `hydroseq {command}`: {model.__name__}", "", _doc(model), ""]
        first: dict[type[BaseModel], str] = {}
        for prefix, section in _sections(model, ""):
            if section in first:  # the same model again (the three periods): its keys are those above
                lines += [f"### `{prefix}`: {section.__name__}", "", f"The keys of `{first[section]}`.", ""]
                continue
            first[section] = prefix
            title = f"### `{prefix}`: {section.__name__}" if prefix else f"### `hydroseq {command}`: top level"
            lines += [title, ""]
            if prefix:
                lines += [_doc(section), ""]
            lines += ["| key | type | default | description |", "|---|---|---|---|"]
            lines += [_row(prefix, name, info) for name, info in section.model_fields.items()]
            lines.append("")
    return "\n".join(lines)


def _sections(model: type[BaseModel], prefix: str) -> list[tuple[str, type[BaseModel]]]:
    """``model`` under ``prefix``, then every model nested in it, depth first, in field order."""
    found = [(prefix, model)]
    for name, info in model.model_fields.items():
        kind, inner = _shape(info.annotation)
        if inner is not None:
            key = _key(prefix, name) + {"section": "", "list": "[]", "mapping": ".<name>"}[kind]
            found += _sections(inner, key)
    return found


def _row(prefix: str, name: str, info: FieldInfo) -> str:
    value = None if info.is_required() else info.get_default(call_default_factory=True)
    default = ("required" if info.is_required() else "the defaults below" if isinstance(value, BaseModel)
               else f"`{_scalar(value)}`")
    bounds = [f"{sign} {getattr(item, next(iter(type(item).__dataclass_fields__)))}"
              for item in info.metadata for kind, sign in _BOUNDS if isinstance(item, kind)]
    kind = _type(info.annotation) + (f" ({', '.join(bounds)})" if bounds else "")
    cells = [f"`{_key(prefix, name)}`", kind, default, info.description or _doc(_shape(info.annotation)[1])]
    return "| " + " | ".join(cell.replace("|", "\\|").replace("\n", " ") for cell in cells) + " |"


def _key(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def _type(annotation: Any) -> str:
    """A type as a user writes it in YAML: ``int``, ``list of str``, ``"a" or "b"``, ``... or null``."""
    origin, arguments = get_origin(annotation), get_args(annotation)
    if origin is Literal:
        return " or ".join(f'"{value}"' if isinstance(value, str) else _scalar(value) for value in arguments)
    if origin in (Union, types.UnionType):
        options = [_type(option) for option in arguments if option is not type(None)]
        return " or ".join(options) + (" or null" if type(None) in arguments else "")
    if origin is list:
        return f"list of {_grouped(arguments[0])}" if arguments else "list"
    if origin is dict:
        return f"mapping of {_grouped(arguments[0])} to {_grouped(arguments[1])}" if arguments else "mapping"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation.__name__
    if annotation is Path:
        return "path"
    metadata = getattr(annotation, "__metadata__", None)
    if metadata is not None:  # Annotated[...] not unwrapped by pydantic (e.g. a date read as ISO 8601)
        return _type(get_args(annotation)[0])
    return getattr(annotation, "__name__", str(annotation))


def _grouped(annotation: Any) -> str:
    """:func:`_type` in brackets when it is a choice, so that ``list of ("a" or "b")`` reads unambiguously."""
    text = _type(annotation)
    return f"({text})" if " or " in text else text
