"""Dates written with the day and the month before the year (``03/04/2014``), which nothing here guesses.

``03/04/2014`` is 3 April in most of the world and March 4 in the United States; pandas would read
a column of them by the order its first row suggests, so the same file read from another day
could flip. Input files must then state their order (a source's ``time_format``); dates in configs
and on the command line are ISO 8601 (``YYYY-MM-DD``), and :data:`IsoDate` / :data:`IsoDateTime`
reject such text with a message saying so.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated

from pydantic import BeforeValidator

from hydroseq.grid.date_text import day_month_order_problem


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
