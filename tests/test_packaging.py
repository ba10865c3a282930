"""What each install of hydroseq needs and says (pyproject.toml's extras), and the package's pointers
into the documentation.

The forecast path (a forecast and a hindcast from an exported model: the daily job's CPU image,
``hydroseq[forecast]``) runs in a process where the training stack cannot be imported; a command run
without its extra says which to install, in one line; every ``docs/...md`` path (and heading) the
package names, in its source or in ``hydroseq config --template``, exists.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from hydroseq.cli import EXTRA_OF_MODULE, main

REPO_ROOT = Path(__file__).resolve().parents[1]
TRAINING_STACK = sorted(module for module, extra in EXTRA_OF_MODULE.items() if extra == "train")
# Runs hydroseq's main with the blocked packages unimportable as in an install without them: the
# path finder does not find them (importlib.util.find_spec says None, import raises ModuleNotFoundError).
BLOCKED_MAIN = """
import sys
from importlib.machinery import PathFinder

_find = PathFinder.find_spec

def find_spec(name, path=None, target=None):
    return None if name.partition(".")[0] in {blocked!r} else _find(name, path, target)

PathFinder.find_spec = staticmethod(find_spec)
from hydroseq.cli import main
status = main(sys.argv[1:])
loaded = sorted({{name.partition(".")[0] for name in sys.modules}} & {blocked!r})
print("loaded:", ",".join(loaded), file=sys.stderr)
sys.exit(status)
"""


def _without(blocked: list[str], *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", BLOCKED_MAIN.format(blocked=set(blocked)), *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def _pyproject() -> dict:
    return tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]


def _names(requirements: list[str]) -> set[str]:
    """Distribution names of requirement strings, lower case, extras kept (``dask[distributed]``)."""
    return {re.match(r"[A-Za-z0-9_.\-]+(\[[^\]]*\])?", item).group(0).lower() for item in requirements}


def test_forecast_hindcast_and_page_run_without_the_training_stack(ingested: Path, exported: Path,
                                                              tmp_path: Path) -> None:
    for issue, name in (("2014-09-30", "forecast.nc"), ("2014-06-01..2014-06-30", "hindcast.nc")):
        done = _without(TRAINING_STACK, "-q", "forecast", "--model", str(exported), "--data", str(ingested),
                        "--issue-time", issue, "--out", str(tmp_path / name), cwd=tmp_path)
        assert done.returncode == 0, done.stderr[-3000:]
        assert done.stderr.strip().splitlines()[-1] == "loaded:", done.stderr[-3000:]
        assert (tmp_path / name).exists() and (tmp_path / name).with_suffix(".csv").exists()
    assert (tmp_path / "hindcast_scores.csv").exists()
    for page in (["--forecast", "forecast.nc", "--hindcast", "hindcast.nc"], ["--hindcast", "hindcast.nc"]):
        done = _without(TRAINING_STACK, "-q", "report", *page, "--data", str(ingested), "--out", "page.html",
                        cwd=tmp_path)  # the forecaster's page too, as the daily job's image makes it
        assert done.returncode == 0 and done.stderr.strip().splitlines()[-1] == "loaded:", done.stderr[-3000:]
        assert "</html>" in (tmp_path / "page.html").read_text()


def test_every_module_of_the_forecast_and_report_stages_imports_without_the_training_stack(tmp_path: Path) -> None:
    """What the ``[forecast]`` install (the CPU image) can import: every module of ``forecast/`` and ``report/``."""
    modules = [f"hydroseq.{stage}.{path.stem}" for stage in ("forecast", "report")
               for path in sorted((REPO_ROOT / "hydroseq" / stage).glob("*.py")) if path.stem != "__init__"]
    script = BLOCKED_MAIN.split("from hydroseq.cli import main")[0].format(blocked=set(TRAINING_STACK)) + (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n    importlib.import_module(name)\n"
        f"print(sorted({{n.partition('.')[0] for n in sys.modules}} & {set(TRAINING_STACK)!r}))\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "[]" and len(modules) >= 25


def test_the_blocker_blocks(tmp_path: Path) -> None:
    """The forecast test above would pass vacuously if the blocked modules could still be imported."""
    done = _without(["torch"], "-q", "train", "--config", str(REPO_ROOT / "configs" / "train_demo_quick.yaml"),
                    cwd=tmp_path)
    assert done.returncode == 3, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    (line, loaded) = done.stderr.strip().splitlines()
    assert line == ("hydroseq train: error: torch is not installed, and this command needs it: "
                    "pip install '.[train]' in the hydroseq clone")
    assert loaded == "loaded:"


def test_every_extra_module_is_in_its_extra_and_not_in_the_base() -> None:
    project = _pyproject()
    base = _names(project["dependencies"])
    extras = {name: _names(requirements) for name, requirements in project["optional-dependencies"].items()}
    # import name -> the requirement that brings it (sqlalchemy and alembic: full mlflow's local stores)
    distribution = {"distributed": "dask[distributed]", "ecmwf": "ecmwf-opendata", "herbie": "herbie-data",
                    "mlflow": "mlflow-skinny", "sqlalchemy": "mlflow", "alembic": "mlflow"}
    for module, extra in EXTRA_OF_MODULE.items():
        assert distribution.get(module, module) in extras[extra], f"{module}: not in hydroseq[{extra}]"
        assert module not in base, f"{module} is in the base dependencies: every install would carry it"
    assert "hydroseq[forecast]" in extras["train"] and "hydroseq[train]" in extras["test"]
    assert "torch==2.13.0" in project["optional-dependencies"]["train"]  # the Makefile's and the image's pin


def test_license_is_an_spdx_expression() -> None:
    assert _pyproject()["license"] == "BSD-3-Clause"


def test_evaluate_period_has_a_help_text(capsys: pytest.CaptureFixture[str],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "1000")
    with pytest.raises(SystemExit):
        main(["evaluate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    period = text[text.index("--period {train,validation,test}"):text.index("--data DATA ")]
    assert "default: test" in period and "data.splits" in period, period


DOCS_PATH = re.compile(r"docs/([\w.-]+\.md)(?:#([\w-]+))?")


def _anchors(markdown: str) -> set[str]:
    """GitHub's anchors of the headings of a page (lower case, punctuation dropped, spaces to hyphens)."""
    text = re.sub(r"^```.*?^```", "", markdown, flags=re.S | re.M)
    return {re.sub(r"[^\w\- ]", "", heading.replace("`", "").lower()).replace(" ", "-")
            for heading in re.findall(r"^#{1,6}\s+(.+?)\s*$", text, re.M)}


def _dangling(text: str) -> list[str]:
    missing = []
    for page, anchor in DOCS_PATH.findall(text):
        path = REPO_ROOT / "docs" / page
        if not path.exists():
            missing.append(f"docs/{page}")
        elif anchor and anchor not in _anchors(path.read_text()):
            missing.append(f"docs/{page}#{anchor}")
    return missing


def test_every_docs_path_the_package_names_exists(capsys: pytest.CaptureFixture[str]) -> None:
    sources = {str(path.relative_to(REPO_ROOT)): path.read_text() for path in (REPO_ROOT / "hydroseq").rglob("*.py")}
    for kind in ("train", "ingest"):
        assert main(["config", "--template", kind]) == 0
        sources[f"hydroseq config --template {kind}"] = capsys.readouterr().out
    assert "docs/forecast.md#weather-forecast-inputs" in sources["hydroseq config --template train"]
    dangling = {where: missing for where, text in sources.items() if (missing := _dangling(text))}
    assert dangling == {}


def test_the_docs_path_check_finds_a_missing_page_and_heading() -> None:
    assert _dangling("see docs/forecast.md#weather-forecast-inputs and docs/forecast.md") == []
    assert _dangling("docs/forecast-inputs.md, docs/forecast.md#no-such-heading") == [
        "docs/forecast-inputs.md", "docs/forecast.md#no-such-heading"]


def test_a_broken_install_is_a_setup_error_not_a_retry(tmp_path: Path) -> None:
    """A base package missing (rich: the command line itself needs it; xarray: a command's module does) is one
    line naming it and exit 3, not Python's 1 (the status a scheduler retries) nor 70 (a bug); the installed
    ``hydroseq`` command goes through that guard."""
    assert _pyproject()["scripts"]["hydroseq"] == "hydroseq.__main__:main"
    guarded = BLOCKED_MAIN.format(blocked={"rich"}).replace(
        "from hydroseq.cli import main\nstatus = main(sys.argv[1:])",
        "from hydroseq.__main__ import main\nstatus = main()")
    done = subprocess.run([sys.executable, "-c", guarded, "--json", "config", "--schema", "train"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 3, done.stderr[-3000:]
    (line, _) = done.stderr.strip().splitlines()
    assert line == "hydroseq: error: broken install: rich cannot be imported (No module named 'rich'); reinstall " \
                   "hydroseq in this environment"
    assert '"exit_code": 3, "status": "CONFIG"' in done.stdout
    done = _without(["xarray"], "forecast", "--model", "m", "--data", "d.nc", "--issue-time", "2014-09-30",
                    cwd=tmp_path)
    assert done.returncode == 3 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert done.stderr.strip().splitlines()[0] == ("hydroseq forecast: error: broken install: xarray cannot be "
                                                   "imported (No module named 'xarray'); reinstall hydroseq in this "
                                                   "environment")
