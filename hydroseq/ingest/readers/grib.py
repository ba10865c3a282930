"""GRIB2 forecast runs, as agencies receive them, opened into the layout the NetCDF products have.

A run file (ECMWF open data, NOAA GFS/GEFS, a national service's feed) holds one message per
field: a parameter (``shortName``: ``tp``, ``2t``, ...), a reference time, a step and, for an
ensemble, a member (``number``; the control forecast, ``dataType`` ``cf``, is member 0 and the
perturbed ones, ``pf``, 1..N). ecCodes decodes the messages and cfgrib arranges them as
``(time, number, step, latitude, longitude)``; this module puts the parameters the config names
into one :class:`xarray.Dataset` with the names, dimensions and attributes of the NetCDF products
(``time``, ``step`` in hours, ``valid_time``, ``number``, ``latitude``, ``longitude`` in -180..180,
``units`` and ``GRIB_stepType`` per variable), so that both formats go through one reader
(:mod:`hydroseq.ingest.forecast_products`) and its checks.

Checks here, each an :class:`~hydroseq.errors.InputDataError` naming the file: a message ecCodes
cannot read to its end (a truncated or corrupt file; cfgrib itself would skip it silently), a
file with no message of a parameter the config names, and a field that is absent for some member
or step that the others have (a message lost in transfer).
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import xarray as xr

from hydroseq.errors import InputDataError

COORDINATES = ("time", "step", "valid_time", "number", "latitude", "longitude")

# cfgrib logs a corrupt message and skips it; the integrity check below reports it instead.
logging.getLogger("cfgrib").setLevel(logging.CRITICAL)


def check_messages(path: Path) -> int:
    """The number of GRIB messages in ``path``, each read by ecCodes to its end marker.

    Raises
    ------
    InputDataError
        If the file holds no GRIB message, or a message is truncated or corrupt (naming its number).
    """
    import eccodes  # the GRIB library, loaded only for GRIB sources

    count = 0
    with path.open("rb") as handle:
        while True:
            try:
                message = eccodes.codes_grib_new_from_file(handle)
            except eccodes.CodesInternalError as error:
                raise InputDataError(path, f"GRIB message {count + 1} is truncated or corrupt "
                                     f"({str(error).strip()})") from None
            if message is None:
                break
            count += 1
            eccodes.codes_release(message)
    if count == 0:
        raise InputDataError(path, "no GRIB message in the file")
    return count


def open_grib_run(path: Path, parameters: list[str], member_dim: str = "number") -> xr.Dataset:
    """The ``parameters`` (GRIB ``shortName``) of a run file as a dataset in the NetCDF products' layout.

    Times stay encoded (``seconds since 1970-01-01``) and steps are in hours, as
    ``xr.open_dataset(..., decode_times=False)`` gives them for a NetCDF product. Each variable is
    named by its ``shortName`` (cfgrib names ``2t`` ``t2m``; the config names the parameter).

    Raises
    ------
    InputDataError
        See the module.
    """
    import cfgrib

    check_messages(path)
    try:  # one pass over the file: cfgrib's index of the messages is its slow part
        parts = cfgrib.open_datasets(str(path), backend_kwargs={"indexpath": ""}, decode_times=False,
                                     decode_timedelta=False)
    except (cfgrib.dataset.DatasetBuildError, ValueError, KeyError, OSError) as error:
        raise InputDataError(path, f"cannot arrange the GRIB messages as runs ({str(error).splitlines()[0]})") from None
    found = [array for part in parts for array in part.data_vars.values()]
    variables: dict[str, xr.DataArray] = {}
    for parameter in parameters:
        arrays = [array for array in found if array.attrs.get("GRIB_shortName") == parameter]
        if not arrays:
            names = sorted({str(array.attrs.get("GRIB_shortName")) for array in found})
            raise InputDataError(path, f"no GRIB message of parameter {parameter!r} (the file has {', '.join(names)})")
        variables[parameter] = _members_together(path, parameter, arrays, member_dim)
    try:
        dataset = xr.merge([array.rename(name) for name, array in variables.items()], join="exact",
                           compat="override", combine_attrs="override")
    except ValueError:
        steps = {name: _hours(array) for name, array in variables.items()}
        raise InputDataError(path, "the parameters have different steps or grids: "
                             + "; ".join(f"{name} steps {text}" for name, text in steps.items())) from None
    for name in variables:
        _check_fields_present(path, name, dataset[name], member_dim)
    dataset.attrs = {}
    return _conventional(dataset)


def _members_together(path: Path, parameter: str, arrays: list[xr.DataArray], member_dim: str) -> xr.DataArray:
    """One array per parameter: cfgrib opens the control (``cf``) and perturbed (``pf``) members
    of an ensemble apart; they are put back together along ``number``, sorted."""
    attributes = dict(arrays[0].attrs)
    if len(arrays) == 1:
        array = arrays[0]
    else:
        with_members = [item if member_dim in item.dims else item.expand_dims(member_dim) for item in arrays]
        try:
            array = xr.concat(with_members, dim=member_dim, join="exact", coords="minimal",
                              compat="override").sortby(member_dim)
        except ValueError:
            raise InputDataError(path, f"the messages of {parameter!r} do not form one run: their steps, "
                                 "reference times or grids differ between the control and perturbed members") from None
    numbers = array[member_dim].values if member_dim in array.dims else None
    if numbers is not None and len(np.unique(numbers)) != len(numbers):
        raise InputDataError(path, f"member number(s) of {parameter!r} appear more than once")
    array.attrs = attributes
    return array


def _check_fields_present(path: Path, name: str, array: xr.DataArray, member_dim: str) -> None:
    """A field that is missing everywhere for one member/step (a lost message) is refused."""
    spatial = [dim for dim in ("latitude", "longitude") if dim in array.dims]
    absent = array.isnull().all(dim=spatial)
    if not bool(absent.any()):
        return
    first = {dim: int(index[0]) for dim, index in zip(absent.dims, np.nonzero(absent.values), strict=True)}
    where = []
    if "time" in first:
        where.append(f"reference time {np.datetime64(int(array['time'].values[first['time']]), 's')}")
    if member_dim in first:
        where.append(f"member {int(array[member_dim].values[first[member_dim]])}")
    if "step" in first:
        where.append(f"step {float(array['step'].values[first['step']]):g}h")
    raise InputDataError(path, f"the field of {name!r} is missing for {', '.join(where)} (the other "
                         f"{'members and ' if member_dim in array.dims else ''}steps have it): a lost message")


def _conventional(dataset: xr.Dataset) -> xr.Dataset:
    """Longitudes in -180..180 (GFS and GEFS write 0..360), ascending; only the coordinates the reader uses."""
    keep = [name for name in dataset.coords if name in COORDINATES or name in dataset.dims]
    dataset = dataset.reset_coords([name for name in dataset.coords if name not in keep], drop=True)
    if "longitude" in dataset.coords:
        longitudes = dataset["longitude"]
        wrapped = ((longitudes.values + 180.0) % 360.0) - 180.0
        dataset = dataset.assign_coords(longitude=(longitudes.dims, wrapped, longitudes.attrs)).sortby("longitude")
    return dataset


def _hours(array: xr.DataArray) -> str:
    values = np.atleast_1d(array["step"].values) if "step" in array.coords else np.array([])
    return ", ".join(f"{float(value):g}h" for value in values)
