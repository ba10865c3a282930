"""The package's shape: no stage imports a later one, and no module grows past 300 lines."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "hydroseq"
STAGES = ["ingest", "dataset", "batching", "model", "training", "export", "forecast", "cli"]
MAX_LINES = 300
FRONT_DOOR = ("__init__.py", "__main__.py")  # the package itself may re-export any stage


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _stage(module: str) -> str | None:
    """The stage a dotted ``hydroseq.<stage>...`` name belongs to (None: the ground floor)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "hydroseq" and parts[1] in STAGES else None


def _imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in names if name.startswith("hydroseq")}


@pytest.mark.parametrize("path", [p for p in _modules() if p.parent != PACKAGE or p.name not in FRONT_DOOR],
                         ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_imports_a_later_stage(path: Path) -> None:
    relative = path.relative_to(PACKAGE)
    own = _stage("hydroseq." + ".".join(relative.with_suffix("").parts))
    rank = STAGES.index(own) if own else -1
    later = {name for name in _imported(path) if (stage := _stage(name)) and STAGES.index(stage) > rank}
    assert not later, f"{path.relative_to(PACKAGE)} imports later stages: {sorted(later)}"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_is_longer_than_300_lines(path: Path) -> None:
    assert len(path.read_text().splitlines()) <= MAX_LINES


def test_the_check_sees_a_backward_import(tmp_path: Path) -> None:
    """Control: the import reader finds a dataset -> training import."""
    module = tmp_path / "m.py"
    module.write_text("from hydroseq.training.loop import train\nimport numpy\n")
    assert _imported(module) == {"hydroseq.training.loop", "hydroseq.training.loop.train"}
    assert _stage("hydroseq.training.loop") == "training" and _stage("hydroseq.grid") is None
