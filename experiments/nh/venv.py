"""Create NeuralHydrology's own virtual environment (never hydroseq's).

``python -m experiments.nh.venv [--venv experiments/.nh-venv]``

torch is installed first, pinned to the release hydroseq uses, because neuralhydrology asks for
an unpinned torch and pip would otherwise fetch a multi-GB CUDA build; with the pinned torch
already present pip leaves it alone, and :func:`create_nh_venv` checks that it did.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

from experiments.protocol import REPO_ROOT

DEFAULT_VENV = REPO_ROOT / "experiments" / ".nh-venv"
TORCH_PIN = "torch==2.13.0"
NEURALHYDROLOGY_PIN = "neuralhydrology==1.13.0"
READY_MARKER = ".hydroseq-bench-ready"


class NHSetupError(RuntimeError):
    """The NeuralHydrology environment could not be created or is not usable."""


def venv_python(venv: Path = DEFAULT_VENV) -> Path:
    """The interpreter of the NeuralHydrology venv."""
    return venv / "bin" / "python"


def is_ready(venv: Path = DEFAULT_VENV) -> bool:
    """Whether a previous :func:`create_nh_venv` finished and verified this venv."""
    return (venv / READY_MARKER).exists() and venv_python(venv).exists()


def _run(command: list[str], what: str) -> str:
    completed = subprocess.run(command, capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        tail = (completed.stderr or completed.stdout)[-2000:]
        raise NHSetupError(f"{what} failed (exit {completed.returncode}):\n{tail}")
    return completed.stdout


def installed_versions(venv: Path = DEFAULT_VENV) -> dict[str, str]:
    """torch and neuralhydrology versions as the venv's own interpreter reports them."""
    probe = ("import json, torch; from importlib import metadata; "
             "print(json.dumps({'torch': torch.__version__, "
             "'neuralhydrology': metadata.version('neuralhydrology')}))")
    return json.loads(_run([str(venv_python(venv)), "-c", probe], "importing torch and neuralhydrology"))


def create_nh_venv(venv: Path = DEFAULT_VENV, python: str = sys.executable, force: bool = False) -> Path:
    """Create (or reuse) the venv with pinned torch and neuralhydrology; return its interpreter.

    Raises
    ------
    NHSetupError
        If a pip step fails or the installed torch is not the pinned release.
    """
    if is_ready(venv) and not force:
        return venv_python(venv)
    if venv.exists():
        shutil.rmtree(venv)
    _run([python, "-m", "venv", str(venv)], "creating the venv")
    pip = [str(venv_python(venv)), "-m", "pip", "install", "--quiet"]
    _run([*pip, TORCH_PIN], f"pip install {TORCH_PIN}")
    _run([*pip, NEURALHYDROLOGY_PIN], f"pip install {NEURALHYDROLOGY_PIN}")
    versions = installed_versions(venv)
    wanted = TORCH_PIN.split("==")[1]
    if not versions["torch"].startswith(wanted):
        raise NHSetupError(f"neuralhydrology's install replaced torch {wanted} with {versions['torch']}")
    (venv / READY_MARKER).write_text(json.dumps(versions) + "\n")
    return venv_python(venv)


def main(argv: list[str] | None = None) -> int:
    """Command line: create the venv and print the versions."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venv", type=Path, default=DEFAULT_VENV)
    parser.add_argument("--force", action="store_true", help="recreate even if it is ready")
    args = parser.parse_args(argv)
    try:
        create_nh_venv(args.venv, force=args.force)
    except NHSetupError as error:
        print(f"experiments.nh.venv: error: {error}", file=sys.stderr)
        return 2
    print(json.dumps(installed_versions(args.venv)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
