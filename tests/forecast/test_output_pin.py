"""The files a shipped model's forecast and hindcast write, pinned by the SHA-256 of their content.

The digests were taken from the code before the output formats became a table of writers
(``hydroseq.forecast.writers``) and the plan of a run carried its window positions; any change to what the files
hold shows here. The content digested is what a reader sees: a NetCDF file's dimensions, variables (dtype, dims,
attributes, values) and global attributes, not its HDF5 bytes (a netCDF4 library update may reorder them), and
the text files as they are. hydroseq's version string is replaced by ``<version>`` so that a release does not
move them. When a change of the files is intended, run this test and copy the new digests from its failure.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import netCDF4
import numpy as np
import pytest

from hydroseq import __version__
from hydroseq.forecast import run_forecast
from tests.fixtures import REPO_ROOT

BASE_MODEL = REPO_ROOT / "models" / "caravan-camels-us-daily"
PROBABILISTIC_BASE_MODEL = REPO_ROOT / "models" / "caravan-camels-us-daily-probabilistic"
FORECAST_PINS = {
    "caravan-camels-us-daily": {
        "forecast.csv": "537555fd57780349f51f83c0c34f1fb5bd605ce473f682fe40e8ea64d616d877",
        "forecast.nc": "99f1c3fd9b3e0506d31e64e8eb5e60d3201ba78919b85045aab129bc89753dec",
        "forecast.xml": "3d2070b3f6610e78569e85914c99e54d9e9c786e578de9a6d4759c9d8c0a0cae"},
    "caravan-camels-us-daily-probabilistic": {
        "forecast.csv": "36486cf29dd38f54b6f988115d01a87d35b5f565e73bc3049eb9df172bf02277",
        "forecast.nc": "66a2f2ccbefb7343e26fc07dd0885f58a4decfef32ba33dda8f3c8556b2f8418",
        "forecast.xml": "09a23846eea03994a77befcc9ff16159dc173570bb7569af165bbeb369752597"},
}
HINDCAST_PINS = {
    "hindcast.csv": "998541f3e8ecf914813cc8ad84440e5c02636f23945110ee432f17444f868665",
    "hindcast.nc": "d881d40201d07c6569e380019f47056c2d81bf22a0c0c173eb814db44ae4b217",
    "hindcast_scores.csv": "17dd9d42a0c0294b8708c5e00f1588fc5214f13cf05e8fbf6b5ae8c32dad3d25",
    "hindcast_signatures.csv": "2560aea41fd1177d70bfd93029c5d22811e6ce29c3f49bc3b6337ca6a92b82c9",
}


def _text_digest(path: Path) -> str:
    return hashlib.sha256(path.read_text(encoding="utf-8").replace(__version__, "<version>").encode()).hexdigest()


def _netcdf_digest(path: Path) -> str:
    """Dimensions, global attributes and every variable's dtype, dims, attributes and raw values, in file order."""
    digest = hashlib.sha256()

    def add(*parts: object) -> None:
        for part in parts:
            digest.update(part if isinstance(part, bytes) else repr(part).replace(__version__, "<version>").encode())

    with netCDF4.Dataset(path) as nc:
        add([(name, len(dim), dim.isunlimited()) for name, dim in nc.dimensions.items()])
        add([(name, nc.getncattr(name)) for name in nc.ncattrs()])
        for name, variable in nc.variables.items():
            variable.set_auto_maskandscale(False)
            values = np.asarray(variable[...])
            add(name, str(variable.dtype), variable.dimensions, values.shape,
                [(key, variable.getncattr(key)) for key in variable.ncattrs()])
            add(values.tobytes() if values.dtype != object else repr(values.tolist()))
    return digest.hexdigest()


def _digests(folder: Path) -> dict[str, str]:
    """Each file of the set (the manifest aside: it names the files' byte checksums) by its name."""
    return {path.name: _netcdf_digest(path) if path.suffix == ".nc" else _text_digest(path)
            for path in sorted(folder.iterdir())
            if path.suffix in {".nc", ".csv", ".xml"} and not path.name.endswith(".manifest.json")}


@pytest.mark.parametrize("model", [BASE_MODEL, PROBABILISTIC_BASE_MODEL], ids=lambda path: path.name)
def test_a_shipped_models_forecast_files_hold_what_they_held(model: Path, ingested: Path, tmp_path: Path) -> None:
    """NetCDF, CSV and PI-XML of the shipped base models' forecast of the bundled basins at 2014-09-30."""
    run_forecast(model, ingested, "2014-09-30", out=tmp_path / "forecast.nc", show_progress=False,
                 formats=["pi-xml"])
    assert _digests(tmp_path) == FORECAST_PINS[model.name]


def test_a_shipped_models_hindcast_files_hold_what_they_held(ingested: Path, tmp_path: Path) -> None:
    """NetCDF, CSV, scores and signatures of a month's hindcast: issue steps, windows and observed leads."""
    run_forecast(BASE_MODEL, ingested, "2014-09-01..2014-09-30", out=tmp_path / "hindcast.nc", show_progress=False)
    assert _digests(tmp_path) == HINDCAST_PINS
