"""Dates written with the day and the month before the year (``03/04/2014``), which nothing here guesses.

``03/04/2014`` is 3 April in most of the world and March 4 in the United States; pandas would read
a column of them by the order its first row suggests, so the same file read from another day
could flip. Input files must then state their order (a source's ``time_format``); dates in configs
and on the command line are ISO 8601 (``YYYY-MM-DD``), and :data:`IsoDate` / :data:`IsoDateTime`
reject such text with a message saying so.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated

from pydantic import BeforeValidator

DAY_MONTH_YEAR = re.compile(r"^\s*(\d{1,2})([/.-])(\d{1,2})\2(\d{4}|\d{2})(?!\d)")


def day_month_order_problem(text: str) -> str | None:
    """What is wrong with ``text``, as a phrase to follow it, if it starts with a day and a month
    (in some order) before the year; None otherwise.

    >>> day_month_order_problem("03/04/2014")
    'has an ambiguous day/month order (2014-04-03 if day first, 2014-03-04 if month first)'
    """
    match = DAY_MONTH_YEAR.match(text)
    if match is None:
        return None
    first, second, year = int(match.group(1)), int(match.group(3)), match.group(4)
    if first != second and 1 <= first <= 12 and 1 <= second <= 12:
        return (f"has an ambiguous day/month order ({year}-{second:02d}-{first:02d} if day first, "
                f"{year}-{first:02d}-{second:02d} if month first)")
    return "has the day and the month before the year, in an order nothing states"


def _iso_text(value: object) -> object:
    """Pydantic before-validator: text in day/month order is an error naming both readings."""
    if isinstance(value, str):
        problem = day_month_order_problem(value)
        if problem is not None:
            raise ValueError(f"the date {problem}; write dates as YYYY-MM-DD")
    return value


IsoDate = Annotated[dt.date, BeforeValidator(_iso_text)]
"""A config date: ``2014-03-04`` (YAML's own date or ISO text); ``03/04/2014`` is an error."""

IsoDateTime = Annotated[dt.datetime, BeforeValidator(_iso_text)]
"""A config date-time: ``2014-03-04T06:00:00`` or ``2014-03-04 06:00``; ``03/04/2014 06:00`` is an error."""
