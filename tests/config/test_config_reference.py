"""docs/configuration.md is what the config models give, and it lists every key with its type, default and text."""

from __future__ import annotations

import subprocess
import sys
import types
from pathlib import Path
from typing import Literal, Union, get_args, get_origin

from pydantic import BaseModel, Field

from hydroseq.config import IngestConfig, TrainConfig
from hydroseq.config.reference import config_reference, reference_page

REPO_ROOT = Path(__file__).resolve().parents[2]
PAGE = REPO_ROOT / "docs" / "configuration.md"


def test_the_committed_page_is_what_the_models_give() -> None:
    stale = "docs/configuration.md is stale: run python docs/make_config_reference.py"
    assert PAGE.read_text() == reference_page(), stale


def test_the_script_writes_the_page_and_checks_it(tmp_path: Path) -> None:
    out = tmp_path / "configuration.md"
    script = [sys.executable, str(REPO_ROOT / "docs" / "make_config_reference.py")]
    assert subprocess.run([*script, "--out", str(out)], capture_output=True, timeout=120).returncode == 0
    assert out.read_text() == reference_page()
    assert subprocess.run([*script, "--check", "--out", str(out)], capture_output=True, timeout=120).returncode == 0
    out.write_text(out.read_text().replace("| `data.seq_len` | int (> 0) | `365` |", "| `data.seq_len` | int | `90` |"))
    stale = subprocess.run([*script, "--check", "--out", str(out)], capture_output=True, text=True, timeout=120)
    assert stale.returncode == 1 and "out of date" in stale.stderr


def _keys(model: type[BaseModel], prefix: str = "") -> list[str]:
    """Every dotted key of ``model``, as the page writes it."""
    keys = []
    for name, info in model.model_fields.items():
        key = f"{prefix}.{name}" if prefix else name
        keys.append(key)
        annotation = info.annotation
        union = get_origin(annotation) in (Union, types.UnionType)
        for option in (a for a in (get_args(annotation) if union else (annotation,)) if a is not type(None)):
            inner = get_args(option)
            if isinstance(option, type) and issubclass(option, BaseModel):
                keys += _keys(option, key)
            elif inner and isinstance(inner[-1], type) and issubclass(inner[-1], BaseModel):
                keys += _keys(inner[-1], key + ("[]" if get_origin(option) is list else ".<name>"))
    return keys


def test_every_key_of_both_configs_has_a_row() -> None:
    page = reference_page()
    rows = {line.split("`")[1] for line in page.splitlines() if line.startswith("| `")}
    repeated = {"data.splits.validation", "data.splits.test"}  # the same Period as data.splits.train
    expected = {key for key in _keys(IngestConfig) + _keys(TrainConfig)
                if not any(key.startswith(f"{r}.") for r in repeated)}
    assert expected - rows == set()
    assert "sources[].variables.<name>.units" in rows and "forecast_sources[].horizon" in rows


def test_a_row_says_type_default_and_description() -> None:
    class Inner(BaseModel):
        """A nested part."""

        level: float = Field(0.5, gt=0, lt=1, description="a level | between 0 and 1")

    class Example(BaseModel):
        """An example config."""

        mode: Literal["a", "b"] = "a"
        count: int = Field(description="how many")
        inner: Inner = Inner()
        items: list[Inner] = []

    page = config_reference([("example", Example)])
    assert "## `hydroseq example`: Example\n\nAn example config." in page
    assert '| `mode` | "a" or "b" | `a` |  |' in page
    assert "| `count` | int | required | how many |" in page
    assert "| `inner` | Inner | the defaults below | A nested part. |" in page
    assert "| `inner.level` | float (> 0, < 1) | `0.5` | a level \\| between 0 and 1 |" in page
    assert "### `items[]`: Inner\n\nThe keys of `inner`." in page
