"""What the container writes stays on its volumes (no Docker engine here: the Dockerfile is read, then replayed).

The first test resolves, with the Dockerfile's ``ENV`` and ``WORKDIR``, every path a command run in
the image writes by default or with the shipped configs (the MLflow store and artifacts, checkpoints,
caches, stats, forecasts, the daily job's files, the ``docker run`` commands of docs/container.md) and
checks each is under a declared ``VOLUME``. The second replays those commands outside Docker: the image's
working directory and volumes are folders, the environment is the Dockerfile's; ``hydroseq train``
runs there, everything it wrote outside the volumes is removed (what ``docker run --rm`` discards),
then, with the training folder gone, ``hydroseq export --run`` from another working directory and
``evaluate`` in a fresh "container" still find the run, its checkpoint (an artifact) and its data.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path, PurePosixPath

import pytest
import yaml

from hydroseq.cli import build_parser
from hydroseq.config import DataConfig, TrainConfig, dump_config, load_config
from hydroseq.config.stores import local_store_path, resolve_tracking_uri
from hydroseq.forecast.run import DEFAULT_FORECAST_DIR
from hydroseq.grid import GridSpec
from hydroseq.training.tracking import resolve_artifact_root
from tests.fixtures import write_ingested

REPO_ROOT = Path(__file__).resolve().parents[2]
IMAGE_ROOT = "/srv/hydroseq"  # the Dockerfile's paths under it are mapped onto a folder in the replay


def _instructions() -> list[tuple[str, str]]:
    joined = re.sub(r"\\\n", " ", (REPO_ROOT / "Dockerfile").read_text())
    lines = [line.strip() for line in joined.splitlines() if line.strip() and not line.strip().startswith("#")]
    return [(keyword.upper(), rest.strip()) for keyword, _, rest in (line.partition(" ") for line in lines)]


def _image() -> tuple[PurePosixPath, list[PurePosixPath], dict[str, str], list[PurePosixPath]]:
    """The runtime WORKDIR, the VOLUMEs, the ENV and what COPY puts into the working directory of the default
    (last) stage, the training image; the forecast stage has the same layout (tests/pipelines/test_dockerfile.py)."""
    instructions = _instructions()
    instructions = instructions[max(i for i, (key, _) in enumerate(instructions) if key == "FROM"):]
    workdir = PurePosixPath([rest for key, rest in instructions if key == "WORKDIR"][-1])
    volumes = [PurePosixPath(v) for key, rest in instructions if key == "VOLUME" for v in yaml.safe_load(rest)]
    env = dict(word.split("=", 1) for key, rest in instructions if key == "ENV" for word in shlex.split(rest))
    copied = [PurePosixPath(rest.split()[-1]) for key, rest in instructions if key == "COPY"]
    return workdir, volumes, env, [path for path in copied if workdir in path.parents]


def _on_a_volume(path: PurePosixPath, volumes: list[PurePosixPath]) -> bool:
    return any(path == volume or volume in path.parents for volume in volumes)


def _docker_run_commands(page: Path) -> list[list[str]]:
    """The ``docker run`` commands of a Markdown page's bash blocks, as argument lists."""
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", page.read_text(), re.S):
        joined = re.sub(r"\\\n\s*", " ", block)
        commands += [shlex.split(line.split("#")[0]) for line in joined.splitlines() if line.startswith("docker run")]
    return commands


def _readme_container_commands() -> list[list[str]]:
    """The ``docker run`` commands of docs/container.md (the container's page) and of the README and
    docs/forecast.md, should they show any, as argument lists."""
    commands = _docker_run_commands(REPO_ROOT / "docs" / "container.md")
    assert len(commands) >= 3, "docs/container.md shows no train, export and forecast docker run commands"
    for page in (REPO_ROOT / "README.md", REPO_ROOT / "docs" / "forecast.md"):
        commands += _docker_run_commands(page)
    return commands


def test_every_path_the_container_writes_is_on_a_volume(monkeypatch: pytest.MonkeyPatch) -> None:
    workdir, volumes, env, _ = _image()
    assert {"HYDROSEQ_HOME", "MLFLOW_TRACKING_URI", "HYDROSEQ_ARTIFACT_ROOT"} <= set(env)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    written: dict[str, PurePosixPath] = {}
    configs = {path.name: load_config(path, TrainConfig) for path in sorted((REPO_ROOT / "configs").glob("train_*"))}
    defaults = {"dynamic_inputs": ["p"], "splits": {name: {"start": f"{1990 + i}-01-01", "end": f"{1990 + i}-12-31"}
                                                     for i, name in enumerate(("train", "validation", "test"))}}
    configs["(defaults)"] = TrainConfig(data=DataConfig.model_validate(defaults))
    for name, config in configs.items():
        store = local_store_path(resolve_tracking_uri(config.tracking))
        assert store is not None, name
        written[f"{name}: MLflow store"] = PurePosixPath(store)
        written[f"{name}: artifacts"] = PurePosixPath(resolve_artifact_root(config.tracking))
        written[f"{name}: checkpoints"] = workdir / config.training.output_dir
        written[f"{name}: cache"] = workdir / config.data.cache_dir
    stats = build_parser().parse_args(["stats", "--config", "c.yaml"])
    written["stats --out default"] = workdir / stats.out
    written["forecast --out default"] = workdir / DEFAULT_FORECAST_DIR
    for name in ("XDG_CACHE_HOME", "MPLCONFIGDIR"):  # the libraries' caches (onnxruntime's, matplotlib's fonts)
        written[name] = PurePosixPath(env[name])
    daily = (REPO_ROOT / "pipelines" / "daily_forecast.sh").read_text()
    for variable in ("HYDROSEQ_DATA", "HYDROSEQ_PUBLISH_DIR", "HYDROSEQ_WORK_DIR"):
        default = re.search(rf"\${{{variable}:-([^}}]+)}}", daily).group(1)
        written[f"daily job {variable}"] = workdir / default
    for command in _readme_container_commands():
        mounts = [PurePosixPath(command[i + 1].split(":")[1]) for i, word in enumerate(command) if word == "-v"]
        assert all(mount in volumes for mount in mounts), command
        for i, word in enumerate(command):
            if word == "--out":
                written[f"docker run {command[command.index('hydroseq:0.1.0') + 1]} --out"] = workdir / command[i + 1]
                assert _on_a_volume(workdir / command[i + 1], mounts), f"{command}: --out is not on a mounted volume"
    outside = {what: str(path) for what, path in written.items() if not _on_a_volume(path, volumes)}
    assert outside == {}, f"written outside the volumes {[str(v) for v in volumes]}"


def _train_config(config_dir: Path) -> Path:
    """The shipped per-step config made tiny (3 basins, 1981-1988, hidden 8, 2 batches), its tracking,
    output and cache paths as shipped (relative to the working directory)."""
    values = load_config(REPO_ROOT / "configs" / "train_caravan_per_step.yaml", TrainConfig).model_dump(mode="json")
    values["data"].update({"seq_len": 60, "min_len": 10, "spin_up": 5, "splits": {
        "train": {"start": "1981-01-01", "end": "1984-12-31"},
        "validation": {"start": "1985-01-01", "end": "1986-12-31"},
        "test": {"start": "1987-01-01", "end": "1988-12-31"}}})
    values["model"]["hidden_size"] = 8
    values["training"].update({"epochs": 1, "max_batches_per_epoch": 2, "threads": 1})
    values["tracking"]["example_issue_time"] = None  # the tiny data end in 1988: the validation period's end
    path = config_dir / "train_tiny.yaml"
    path.write_text(dump_config(TrainConfig.model_validate(values)))
    return path


def _files_outside(root: Path, kept: list[Path]) -> list[str]:
    return sorted(str(path.relative_to(root)) for path in root.rglob("*")
                  if path.is_file() and not any(k == path or k in path.parents for k in kept))


@pytest.mark.slow
def test_the_readme_container_commands_keep_the_model(tmp_path: Path) -> None:
    workdir, volumes, image_env, copied = _image()
    root = tmp_path / "image"

    def host(path: PurePosixPath) -> Path:
        return root / path.relative_to(IMAGE_ROOT)

    for volume in volumes:
        host(volume).mkdir(parents=True)
    work = host(workdir)
    (work / "configs").mkdir()
    config = _train_config(work / "configs")
    static = load_config(config, TrainConfig).data.static_inputs
    write_ingested(host(workdir / "data") / "small.nc", ["01022500", "02064000", "03015500"], GridSpec("1D"), static,
                   last_day="1988-12-31")
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_TRACKING", "HYDROSEQ_"))},
           **{k: v.replace(IMAGE_ROOT, str(root)) for k, v in image_env.items()},
           "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}

    def hydroseq(cwd: Path, *args: str) -> subprocess.CompletedProcess:
        finished = subprocess.run([sys.executable, "-m", "hydroseq.cli", *args], cwd=cwd, env=env,
                                  capture_output=True, text=True, timeout=600)
        assert finished.returncode == 0, f"hydroseq {args[0]}: {finished.stderr[-3000:]}"
        return finished

    trained = hydroseq(work, "train", "--config", "configs/train_tiny.yaml", "--data", "data/small.nc")
    run_id = re.search(r"MLflow run id: (\w+)", trained.stdout).group(1)
    kept = [host(v) for v in volumes] + [host(path) for path in copied]
    assert _files_outside(root, kept) == []  # nothing that `docker run --rm` would throw away
    assert (host(workdir / "mlflow") / "mlruns.db").is_file() and (host(workdir / "mlflow") / "mlartifacts").is_dir()
    assert (host(workdir / "runs") / "cache").is_dir()

    shutil.rmtree(host(workdir / "runs") / "train")  # not needed: the run's artifacts hold its checkpoint
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    model = host(workdir / "runs") / "model"
    hydroseq(elsewhere, "export", "--run", run_id, "--seq-len", "60", "--out", str(model))
    assert (model / "metadata.json").is_file() and list(elsewhere.iterdir()) == []
    hydroseq(work, "evaluate", "--run", run_id, "--period", "test")
    assert _files_outside(root, kept) == []
