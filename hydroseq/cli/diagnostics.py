"""``--diagnostics PATH``: a command's log lines as a Delft-FEWS PI diagnostics file.

A General Adapter (``docs/fews.md``) reads the diagnostics file its ``<diagnosticFile>`` names after each
command it runs. With ``--diagnostics PATH`` every ``hydroseq`` command writes one there when it ends,
whatever its exit status: a ``Diag`` document of PI version 1.2 (namespace ``http://www.wldelft.nl/fews/PI``),
one ``<line level="..." description="..."/>`` per line the command logged from INFO on (DEBUG with ``-v``),
in order (the warnings: stations not forecast, stale gauges; the error line of a command that failed; the
summary), then a last line with the exit status (info for 0, warning for 5, error otherwise). Levels are
the PI schema's: 0 fatal, 1 error, 2 warning, 3 info, 4 debug. The file is written atomically (a reader
sees the old file or the whole new one); its folder is checked when the command starts (exit 3 if it
cannot be written).
"""

from __future__ import annotations

import logging
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from hydroseq.errors import ConfigError, ExitCode, OutputPathError
from hydroseq.fileio.atomic import prepare_output_file, write_bytes_atomic

PI_NAMESPACE = "http://www.wldelft.nl/fews/PI"
XSI_NAMESPACE = "http://www.w3.org/2001/XMLSchema-instance"
SCHEMA_LOCATION = f"{PI_NAMESPACE} http://fews.wldelft.nl/schemas/version1.0/pi-schemas/pi_diag.xsd"
PI_VERSION = "1.2"
FATAL, ERROR, WARNING, INFO, DEBUG = 0, 1, 2, 3, 4
NOT_XML = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|[\x00-\x08\x0b\x0c\x0e-\x1f]")  # colour codes, characters XML forbids


def pi_level(levelno: int) -> int:
    """The PI diagnostics level of a Python logging level."""
    if levelno >= logging.CRITICAL:
        return FATAL
    if levelno >= logging.ERROR:
        return ERROR
    if levelno >= logging.WARNING:
        return WARNING
    return INFO if levelno >= logging.INFO else DEBUG


def pi_diagnostics(lines: list[tuple[int, str]]) -> str:
    """The PI ``Diag`` document of ``(level, description)`` lines."""
    ET.register_namespace("", PI_NAMESPACE)
    ET.register_namespace("xsi", XSI_NAMESPACE)
    root = ET.Element(f"{{{PI_NAMESPACE}}}Diag", {f"{{{XSI_NAMESPACE}}}schemaLocation": SCHEMA_LOCATION,
                                                  "version": PI_VERSION})
    for level, description in lines:
        ET.SubElement(root, f"{{{PI_NAMESPACE}}}line", {"level": str(level), "description": description})
    ET.indent(root)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n{ET.tostring(root, encoding="unicode")}\n'


class DiagnosticsFile(logging.Handler):
    """Collects the command's log lines and writes them to ``path`` (:meth:`write`) as PI diagnostics.

    Raises
    ------
    ConfigError
        When created, if ``path`` is a folder or its folder cannot be made.
    """

    def __init__(self, path: Path, level: int) -> None:
        super().__init__(level)
        try:
            self.path = prepare_output_file(path)
        except OutputPathError as error:
            raise ConfigError(f"--diagnostics {path}: {error.problem}") from None
        self.lines: list[tuple[int, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        """Keep each line of the record (a traceback has several) with its PI level."""
        text = NOT_XML.sub("", self.format(record))
        self.lines.extend((pi_level(record.levelno), line) for line in text.splitlines() or [""])

    def write(self, command: str, status: int) -> None:
        """Write the lines collected so far and a last one with the exit status, atomically, in UTF-8 (raises
        the errors of :func:`write_bytes_atomic`)."""
        name = ExitCode(status).name if status in {code.value for code in ExitCode} else "unknown"
        level = INFO if status == ExitCode.OK else WARNING if status == ExitCode.PARTIAL else ERROR
        last = (level, f"hydroseq {command}: exit status {status} ({name})")
        write_bytes_atomic(self.path, pi_diagnostics([*self.lines, last]).encode("utf-8"))
