"""The layout of every GRIB message in a file, checked before ecCodes decodes any.

ecCodes trusts the section lengths a message gives: a corrupted one makes it fail on a key it then cannot
find, "assume" another length and decode the fields anyway (printing on stderr), or stop the whole process
on an assertion (a bitmap section of length 0). So each message is walked here first, as ecCodes finds them
(from the next ``GRIB`` on): its total length must reach a ``7777`` end inside the file and, for GRIB2, its
sections (1 to 7, each with its number and a length no shorter than its fixed part) must fill it exactly.
"""

from __future__ import annotations

import mmap
from pathlib import Path

from hydroseq.errors import InputDataError

# GRIB2 section number -> its shortest length in bytes (the fixed part, WMO FM 92 GRIB edition 2)
SHORTEST_SECTION = {1: 21, 2: 5, 3: 14, 4: 9, 5: 11, 6: 6, 7: 5}
END = b"7777"


def check_messages(path: Path) -> int:
    """The number of GRIB messages in ``path``, each checked to be laid out as its lengths say.

    Raises
    ------
    InputDataError
        Naming the file, the message and its byte offset: a total length that runs past the file's end or
        does not end in ``7777`` (a truncated file), or a GRIB2 section whose number or length is wrong.
    """
    with path.open("rb") as handle:
        size = path.stat().st_size
        if size == 0:
            return 0
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            count, position = 0, data.find(b"GRIB")
            while position >= 0:
                count += 1
                end = _message_end(path, data, position, size, count)
                if data[position + 7] == 2:
                    _check_sections(path, data, position, end, count)
                position = data.find(b"GRIB", end)
    return count


def _message_end(path: Path, data: mmap.mmap, start: int, size: int, count: int) -> int:
    """Where message ``count`` (at byte ``start``) ends, as its total length says."""
    where = f"GRIB message {count} at byte {start}"
    if start + 16 > size:
        raise InputDataError(path, f"{where} is truncated: the file ends inside its first section")
    edition = data[start + 7]
    if edition not in (1, 2):
        raise InputDataError(path, f"{where} is corrupt: edition {edition} (GRIB 1 or 2 are read)")
    length = int.from_bytes(data[start + 8:start + 16] if edition == 2 else data[start + 4:start + 7], "big")
    end = start + length
    if end > size:
        raise InputDataError(path, f"{where} is truncated or corrupt: its length is {length} bytes, the file "
                             f"holds {size - start} from its start")
    if length < 20 or data[end - 4:end] != END:
        raise InputDataError(path, f"{where} is corrupt: its length, {length} bytes, does not end at its 7777")
    return end


def _check_sections(path: Path, data: mmap.mmap, start: int, end: int, count: int) -> None:
    """Sections 1..7 of a GRIB2 message fill it exactly, each with a length no shorter than its fixed part."""
    position, number = start + 16, 0
    while position < end - 4:
        length = int.from_bytes(data[position:position + 4], "big") if position + 5 <= end - 4 else 0
        number = data[position + 4] if position + 5 <= end - 4 else 0
        if number not in SHORTEST_SECTION:
            problem = f"no section starts at its byte {position - start} (section number {number})"
        elif length < SHORTEST_SECTION[number]:
            problem = f"section {number} gives its length as {length} bytes, shorter than its fixed part " \
                      f"({SHORTEST_SECTION[number]})"
        elif position + length > end - 4:
            problem = f"section {number} gives its length as {length} bytes, past the message's end " \
                      f"({end - start} bytes)"
        else:
            position += length
            continue
        raise InputDataError(path, f"GRIB message {count} at byte {start} is corrupt: {problem}")
    if number != 7:
        raise InputDataError(path, f"GRIB message {count} at byte {start} is corrupt: it ends after section "
                             f"{number}, without a data section (7)")
