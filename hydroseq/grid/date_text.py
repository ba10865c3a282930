"""Dates written with the day and the month before the year (``03/04/2014``): the one rule that refuses them.

``03/04/2014`` is 3 April in most of the world and March 4 in the United States. Config dates
(:mod:`hydroseq.config.dates`), issue times (:mod:`hydroseq.grid.issue_times`) and the time stamps of
input files (unless a source states its ``time_format``) all refuse such text with this phrase.
"""

from __future__ import annotations

import re

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
