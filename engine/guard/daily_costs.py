"""The 24-hour cost sums of the rate limits (spec 000 §7.5), kept per
process and moved forward instead of summed again (issue 26 point 5).

The cost an agent or a company spent in the last 24 hours is a sum over
every LLM call of the day: on a busy day, tens of thousands of rows, tens of
milliseconds of PostgreSQL's CPU at each turn's first LLM call; with 200
conversations at once that was most of the database's work. A ``Base`` is
that sum once, up to a moment ``until`` a little in the past (``MARGIN``:
rows stamped before it are committed by then, runs commit each step); the
window ending ``now`` is then

    base − the rows that left the window (``until`` − 24 h, ``now`` − 24 h]
         + the rows that came since (``until``, ``now``]

two short range scans on the log's partial indexes. A base older than
``REFRESH`` is summed again by the next check (one at a time per key; the
others go on with the old base, which stays exact, only with longer
ranges). Kept per process, in memory: nothing to invalidate across servers,
since a base only holds rows older than ``MARGIN``, which no longer change
(the log is append-only; a row stamped before ``until`` but committed after
the base was summed, a transaction older than ``MARGIN``, is counted from
the next refresh).
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime, timedelta

MARGIN = timedelta(minutes=5)     # rows stamped this long ago are committed: a base holds only those
REFRESH = timedelta(minutes=15)   # a base older than this (its ``until``) is summed again


@dataclass(frozen=True)
class Base:
    """The cost (USD) of one key's LLM calls stamped in (``until`` − 24 h,
    ``until``], naive UTC."""
    until: datetime
    amount: float


class DailyCosts:
    """The bases of one process, by key (database, column, value). Safe to
    share between threads and greenlets."""

    def __init__(self):
        self._lock = threading.Lock()
        self._bases: dict[tuple, Base] = {}
        self._refreshing: set[tuple] = set()

    def base(self, key: tuple, now: datetime) -> tuple[Base | None, datetime | None]:
        """``(base, until)`` for a check of ``key`` at ``now``: the base to
        move forward (None: sum the whole window), and when the caller is
        to sum the whole window anyway, the ``until`` of the new base to
        ``keep`` with it (None: keep nothing). A base from after ``now`` (a
        transaction older than it) is not used."""
        with self._lock:
            base = self._bases.get(key)
            usable = base is not None and base.until <= now
            if usable and (now - base.until <= REFRESH or key in self._refreshing):
                return base, None
            if key in self._refreshing:  # summed by another caller right now: this one sums without keeping
                return None, None
            self._refreshing.add(key)
            return None, now - MARGIN

    def keep(self, key: tuple, base: Base | None) -> None:
        """Keep ``base`` for ``key`` (None: the sum failed; the next caller
        tries again)."""
        with self._lock:
            self._refreshing.discard(key)
            if base is not None:
                self._bases[key] = base


#: The process's bases (``agentic.ai.execution.log._rate_limit_usage``).
DAILY_COSTS = DailyCosts()
