"""Errors that reach the user as one clear message instead of a traceback."""

from __future__ import annotations


class HydroseqError(Exception):
    """Base class: the CLI prints ``str(error)`` and exits with status 2."""


class ConfigError(HydroseqError):
    """A configuration file is missing, unreadable or does not validate."""


class InputDataError(HydroseqError):
    """A data file cannot be used.

    Parameters
    ----------
    path
        The offending file.
    problem
        What is wrong, in words a hydrologist understands.
    where
        The line number, timestamp or variable concerned, if known.
    """

    def __init__(self, path: object, problem: str, where: str | None = None) -> None:
        self.path = str(path)
        self.problem = problem
        self.where = where
        location = f" ({where})" if where else ""
        super().__init__(f"{self.path}{location}: {problem}")


class OutputPathError(HydroseqError):
    """An output cannot be written where it was asked for (a read-only folder, a parent that is a
    file, a folder where a file should go).

    Parameters
    ----------
    path
        The output that cannot be written.
    problem
        Why, in words.
    """

    def __init__(self, path: object, problem: str) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")
