"""Forecast steps written as ECMWF writes them: ``FIRST/LAST/BY`` ranges in hours (``0/90/1``, ``93/144/3``) or
single hours. One reader for the ingest config's ``steps`` and ``hydroseq fetch --steps``."""

from __future__ import annotations

from collections.abc import Iterable


def step_hours(ranges: Iterable[str | int | float], whole_hours: bool = False) -> list[float]:
    """The hours ``ranges`` name, sorted, without repeats.

    Raises
    ------
    ValueError
        If an item is not an hour or ``FIRST/LAST/BY`` with ``0 <= FIRST <= LAST`` and ``BY > 0`` (whole
        hours with ``whole_hours``), naming it.
    """
    hours: set[float] = set()
    for item in ranges:
        text = str(item).strip()
        try:
            numbers = [float(part) for part in text.split("/")]
        except ValueError:
            numbers = []
        if len(numbers) == 1:
            numbers = [numbers[0], numbers[0], 1.0]
        if (len(numbers) != 3 or numbers[0] < 0 or numbers[1] < numbers[0] or numbers[2] <= 0
                or (whole_hours and any(number != int(number) for number in numbers))):
            raise ValueError(f"{text!r} is not an hour or FIRST/LAST/BY{' in whole hours' if whole_hours else ''} "
                             "with 0 <= FIRST <= LAST and BY > 0 (e.g. 0/72/6)")
        first, last, by = numbers
        count = round((last - first) / by) + 1
        hours.update(round(first + k * by, 6) for k in range(count) if first + k * by <= last + 1e-9)
    return sorted(hours)
