"""Option values the command line checks itself: argparse ``type`` functions, a bad value a usage error (exit 2)."""

from __future__ import annotations

import argparse
import math


def _number(text: str, low: float, high: float, expected: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not low <= value <= high or math.isinf(value):
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
    return value


def hours_value(text: str) -> float:
    """A number of hours, 0 or more."""
    return _number(text, 0.0, math.inf, "hours (0 or more)")


def non_negative_number(text: str) -> float:
    """A number, 0 or more (seconds, hours)."""
    return _number(text, 0.0, math.inf, "a number, 0 or more")


def positive_number(text: str) -> float:
    """A number above 0 (seconds)."""
    value = _number(text, 0.0, math.inf, "a number above 0")
    if value == 0:
        raise argparse.ArgumentTypeError(f"expected a number above 0, got {text!r}")
    return value


def share_value(text: str) -> float:
    """A share from 0 to 1."""
    return _number(text, 0.0, 1.0, "a share from 0 to 1")


def positive_count(text: str) -> int:
    """A whole number, 1 or more."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number, 1 or more, got {text!r}")
    return int(text)


def version_number(text: str) -> int:
    """A model version number, 1 or more."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a version number (1, 2, ...), got {text!r}")
    return int(text)


def name_list(text: str) -> list[str]:
    """Names separated by commas (``pi-xml`` or ``netcdf,csv,pi-xml``), none of them empty."""
    names = [name.strip() for name in text.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(f"expected names separated by commas, got {text!r}")
    return names
