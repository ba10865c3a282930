"""Is a NetCDF file complete? Its header's sizes against the file's length, before any data is read.

The netCDF library reads a truncated classic-format file without complaint and returns fill values
or zeros for the missing bytes (0 K air temperature, 0 mm of rain). The header of the classic
formats (CDF-1 classic, CDF-2 64-bit offset, CDF-5 64-bit data; "NetCDF Classic Format
Specification") gives every variable's begin offset, its shape and the number of records, so the
bytes the data needs can be computed. A netCDF4 (HDF5) file's superblock records its end-of-file
address. A file shorter than either is truncated.
"""

from __future__ import annotations

import math
import struct
from pathlib import Path
from typing import BinaryIO

from hydroseq.errors import InputDataError

_HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"
_TYPE_SIZES = {1: 1, 2: 1, 3: 2, 4: 4, 5: 4, 6: 8, 7: 1, 8: 2, 9: 4, 10: 8, 11: 8}
_ABSENT, _DIMENSION, _VARIABLE, _ATTRIBUTE = 0, 10, 11, 12
_STREAMING = 0xFFFFFFFF


def check_complete(path: Path) -> None:
    """Raise :class:`InputDataError` ("truncated: header expects N bytes, file has M") if ``path``
    is shorter than its header says. Files of other formats are left to the reader."""
    size = path.stat().st_size
    with path.open("rb") as handle:
        start = handle.read(8)
        signatures = (b"CDF\x01", b"CDF\x02", _HDF5_SIGNATURE)
        if len(start) < 8 and any(signature.startswith(start) for signature in signatures):
            raise InputDataError(path, "the file is empty" if not start else
                                 f"truncated: the header is incomplete (file has {size} bytes)")
        if start[:3] == b"CDF" and start[3:4] in (b"\x01", b"\x02", b"\x05"):
            handle.seek(4)
            expected: int | None = _classic_size(_Header(path, handle, start[3], size))
        elif start == _HDF5_SIGNATURE:
            handle.seek(0)
            expected = _hdf5_size(handle.read(64))
        else:
            return
    if expected is not None and size < expected:
        raise InputDataError(path, f"truncated: header expects {expected} bytes, file has {size}")


class _Header:
    """A cursor over the big-endian classic header."""

    def __init__(self, path: Path, handle: BinaryIO, version: int, size: int) -> None:
        self.path, self.handle, self.size, self.position = path, handle, size, 4
        self.version = version
        self.wide = version == 5  # CDF-5: 64-bit counts, sizes and dimension ids

    def take(self, count: int) -> bytes:
        if self.position + count > self.size:
            raise InputDataError(self.path, f"truncated: the header is incomplete (file has {self.size} bytes)")
        self.position += count
        return self.handle.read(count)

    def integer(self, wide: bool = False) -> int:
        return struct.unpack(">Q", self.take(8))[0] if wide else struct.unpack(">I", self.take(4))[0]

    def count(self) -> int:
        return self.integer(self.wide)

    def name(self) -> None:
        length = self.count()
        self.take(4 * math.ceil(length / 4))

    def tagged_list(self) -> int:
        tag, count = self.integer(), self.count()
        if tag not in (_ABSENT, _DIMENSION, _VARIABLE, _ATTRIBUTE) or (tag == _ABSENT and count):
            raise InputDataError(self.path, f"not a valid classic NetCDF header "
                                            f"(list tag {tag} at byte {self.position - 8})")
        return count

    def attributes(self) -> None:
        for _ in range(self.tagged_list()):
            self.name()
            kind, length = self.integer(), self.count()
            self.take(4 * math.ceil(length * _TYPE_SIZES.get(kind, 1) / 4))


def _classic_size(header: _Header) -> int:
    """The bytes the data of a classic / 64-bit-offset / 64-bit-data file needs."""
    path, version = header.path, header.version
    records = header.count()
    lengths = []
    for _ in range(header.tagged_list()):
        header.name()
        lengths.append(header.count())
    header.attributes()
    variables = []  # (begin, bytes per record or in all, is a record variable)
    for _ in range(header.tagged_list()):
        header.name()
        dims = [header.count() for _ in range(header.count())]
        header.attributes()
        kind = header.integer()
        header.count()  # vsize: recomputed below, it saturates for variables over 4 GiB
        begin = header.integer(wide=version != 1)
        if kind not in _TYPE_SIZES or any(dim >= len(lengths) for dim in dims):
            raise InputDataError(path, "not a valid classic NetCDF header (variable type or dimension)")
        shape = [lengths[dim] for dim in dims]
        is_record = bool(shape) and shape[0] == 0
        count = math.prod(shape[1:] if is_record else shape)
        variables.append((begin, count * _TYPE_SIZES[kind], is_record))
    in_records = [nbytes for _, nbytes, is_record in variables if is_record]
    # One record variable is stored unpadded; several are each padded to 4 bytes per record.
    record_size = in_records[0] if len(in_records) == 1 else sum(4 * math.ceil(n / 4) for n in in_records)
    expected = header.position
    for begin, nbytes, is_record in variables:
        if not is_record:
            expected = max(expected, begin + nbytes)
        elif records != _STREAMING and records > 0:
            expected = max(expected, begin + (records - 1) * record_size + nbytes)
    return expected


def _hdf5_size(superblock: bytes) -> int | None:
    """The end-of-file address an HDF5 superblock (versions 0 to 3) records, or ``None``."""
    if len(superblock) < 12:
        return None
    version = superblock[8]
    if version in (0, 1):
        offsets = superblock[13]
        first = 24 + (4 if version == 1 else 0)  # base address, free space, end of file, ...
        fields = 4
    elif version in (2, 3):
        offsets = superblock[9]
        first, fields = 12, 3  # base address, superblock extension, end of file
    else:
        return None
    if offsets not in (2, 4, 8) or len(superblock) < first + fields * offsets:
        return None
    code = {2: "<H", 4: "<I", 8: "<Q"}[offsets]

    def address(index: int) -> int:
        return struct.unpack(code, superblock[first + index * offsets:first + (index + 1) * offsets])[0]

    undefined = 2 ** (8 * offsets) - 1
    if undefined in (address(0), address(2)):
        return None
    return address(0) + address(2)
