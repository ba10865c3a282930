"""The package's shape: no stage imports a later one, no import circle, no module past 300 lines, no scoring
module outside :mod:`hydroseq.scoring`."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "hydroseq"
STAGES = ["ingest", "dataset", "batching", "model", "training", "export", "forecast", "report", "serving", "cli"]
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


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_graph() -> dict[str, set[str]]:
    """Module -> the package modules it names, type-only imports included; ``from hydroseq.stage import x``
    names the stage's ``__init__`` (and ``x`` where that is a module), so a circle through it counts."""
    modules = {_module_name(path): path for path in _modules()}
    return {name: {other for other in _imported(path) if other in modules and other != name}
            for name, path in modules.items()}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in graph[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while (member := stack.pop()) != node:
                group.append(member)
            if group:
                circles.append(sorted([*group, node]))

    for node in graph:
        if node not in index:
            visit(node)
    return circles


def test_no_import_circle_in_the_package() -> None:
    assert _circles(_import_graph()) == []


def test_the_circle_check_sees_a_circle_through_a_package_init() -> None:
    """Control: a module importing its own package's ``__init__``, which imports it back, is a circle."""
    graph = {"p": {"p.a"}, "p.a": {"p", "p.b"}, "p.b": set()}
    assert _circles(graph) == [["p", "p.a"]]


def test_no_scoring_module_at_the_top_of_the_package() -> None:
    top = {path.stem for path in PACKAGE.glob("*.py")}
    assert top <= {"__init__", "__main__", "errors", "grid", "ingested"}, sorted(top)


def test_a_single_forecast_never_imports_the_plotting_stack(exported: Path, ingested: Path) -> None:
    """``run_forecast`` at one issue time writes NetCDF and CSV only: matplotlib stays unloaded, and so do
    scipy.stats and scipy.signal (threshold fitting and peak scores)."""
    script = ("import sys, tempfile\nfrom hydroseq.forecast import run_forecast\n"
              "out = tempfile.mkdtemp() + '/f.nc'\n"
              f"run = run_forecast({str(exported)!r}, {str(ingested)!r}, '2014-09-30', out=out, show_progress=False)\n"
              "assert run.published is not None\n"
              "print(sorted(m for m in sys.modules if m.split('.')[0] == 'matplotlib'\n"
              "             or m.startswith(('scipy.stats', 'scipy.signal'))))\n")
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert completed.returncode == 0, completed.stderr[-2000:]
    assert completed.stdout.strip() == "[]"


def test_the_forecast_command_loads_no_fitting_or_peak_finding_code() -> None:
    """``hydroseq forecast`` (the daily job starts it every day) imports the scoring package for ``--hindcast``
    but not scipy.stats and scipy.signal, which only fitting thresholds and scoring peaks need: a second less
    of every start (measured: 2.9 s -> 1.7 s for the command's imports)."""
    script = ("import sys\nimport hydroseq.cli.forecast\n"
              "print(sorted(m for m in sys.modules if m.startswith(('scipy.stats', 'scipy.signal'))))\n")
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert completed.returncode == 0, completed.stderr[-2000:]
    assert completed.stdout.strip() == "[]"



HEAVY = ("torch", "mlflow")


@pytest.mark.parametrize("path", sorted((PACKAGE / "forecast").glob("*.py")), ids=lambda p: p.name)
def test_no_forecast_module_imports_torch_or_mlflow(path: Path) -> None:
    """The forecast stage runs in the ``[forecast]`` install (the CPU image); the served model is serving's."""
    imported = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            imported.update(alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            imported.add(node.module.partition(".")[0])
    assert not imported & set(HEAVY), f"forecast/{path.name} imports {sorted(imported & set(HEAVY))}"


def test_the_forecast_stage_has_at_most_20_modules() -> None:
    assert len(list((PACKAGE / "forecast").glob("*.py"))) <= 20


WINDOW_CUT = re.compile(r"-\s*[\w.]*(seq_len|seq_len|length|lengths)\b\s*\+\s*1\b")


def test_the_history_window_is_cut_in_one_place() -> None:
    """``end - length + 1``: only :mod:`hydroseq.dataset.window` computes where a window starts."""
    cutting = sorted(str(path.relative_to(PACKAGE)) for path in _modules()
                     if WINDOW_CUT.search(re.sub(r'""".*?"""', "", path.read_text(), flags=re.S)))
    assert cutting == ["dataset/window.py"]


def test_torch_threads_are_decided_in_one_place() -> None:
    """``training.threads`` (or each process's share of the cores): only :func:`hydroseq.training.runtime.set_threads`
    sets torch's threads, so distributed training does not overwrite what the loop set."""
    setting = sorted(str(path.relative_to(PACKAGE)) for path in _modules() if "set_num_threads(" in path.read_text())
    assert setting == ["training/runtime.py"]
