"""On Odoo's gevent server, a request that finds the connection pool full
waits for a connection instead of failing (issue 26 point 2).

Every request Odoo serves borrows a connection from its process's pool
before any controller runs (``odoo.http.Request._serve_db``: a read-only
cursor, then a read-write one for a route that is not ``readonly``), and
Odoo 19's ``sql_db.ConnectionPool.borrow`` raises ``PoolError`` at once
when all ``db_maxconn_gevent`` of them are in use: the request answers
HTTP 500. The gevent server starts a greenlet for every connection that
arrives, so a burst (200 people opening a stream within two seconds, each
request a few milliseconds of SQL) can have more requests in flight than
the pool holds, and some of them answered 500 before they did anything.

``install()``, on the gevent server only, has a borrow that finds the pool
full wait until a connection is given back to that pool (``give_back``
wakes one waiter), asked again at least every ``POLL_SECONDS`` (a leaked
connection is freed only by a borrow), for at most ``WAIT_SECONDS``; then
Odoo's ``PoolError`` is raised as before. A waiting greenlet holds nothing
and costs nothing until it is woken. How often and how long requests
waited (and how much of it the process's core was busy with other work,
engine/durable/wait_time.py) is logged as one warning ``REPORT_SECONDS``
after the first wait of a period: a gevent pool that is often full is smaller than the requests the
process serves at once. A run's own borrows (engine/durable/step_connection.py)
are counted by the run (``counted_by_caller``), not there.
The HTTP workers and the threaded server keep Odoo's behaviour: they serve
a bounded number of requests at once.

What the wait does not change: PostgreSQL's ``max_connections`` must
still hold both of the gevent process's pools (Odoo 19 keeps a read-only
and a read-write one, each of up to ``db_maxconn_gevent``), see the
README's "What the gevent server needs".
"""
from __future__ import annotations

import functools
import logging
import threading
import time
import weakref
from contextlib import contextmanager

from psycopg2.pool import PoolError

from odoo import sql_db

from . import off_loop, wait_time

_logger = logging.getLogger(__name__)

WAIT_SECONDS = 30.0      # longest wait of one borrow before Odoo's PoolError is raised
POLL_SECONDS = 0.5       # longest sleep between two asks while no connection is given back
REPORT_SECONDS = 10.0    # at most one warning about waits in this time


class _Returns:
    """The connections given back to one pool: a count, and the condition
    its waiters sleep on. On the gevent server ``threading`` is gevent's
    (Odoo monkey-patches the process), so a wait is a greenlet's."""

    def __init__(self):
        self.count = 0
        self.condition = threading.Condition()

    def given_back(self):
        with self.condition:
            self.count += 1
            self.condition.notify()


class WaitReport:
    """Borrows that waited: how many, the seconds they waited in all, the
    longest wait, and how many gave up with ``PoolError``; logged as one
    warning ``REPORT_SECONDS`` after the first wait of a period (a timer,
    so that a burst's waits are reported though no wait follows them)."""

    def __init__(self, seconds: float = REPORT_SECONDS):
        self.seconds = seconds
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._reset()

    def _reset(self) -> None:
        self.waited = self.gave_up = 0
        self.longest = 0.0
        self.waits = wait_time.Waits()  # their seconds, and the parts with the core busy or waiting for a core
        self.pool = None
        self._since = None

    def record(self, seconds: float, pool, gave_up: bool, core_busy: float = 0.0, core_queued: float = 0.0) -> None:
        """Count one borrow that waited ``seconds`` on ``pool``, ``core_busy``
        of them with this process's core busy with other work and
        ``core_queued`` with it waiting for one of the machine's cores
        (engine/durable/wait_time.py)."""
        with self._lock:
            if self._timer is None:  # the period's first wait
                self._since = time.monotonic() - seconds
                self._timer = threading.Timer(self.seconds, self.flush)
                self._timer.daemon = True
                self._timer.start()
            self.waited += 1
            self.gave_up += gave_up
            self.longest = max(self.longest, seconds)
            self.waits.add(seconds, core_busy, core_queued)
            self.pool = pool

    def flush(self) -> None:
        """Log what was counted since the last warning, if anything."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            waited, failed, longest, waits, since, pool = (
                self.waited, self.gave_up, self.longest, self.waits, self._since, self.pool)
            self._reset()
        if waited:
            _logger.warning("%d requests waited for a database connection in the last %.0f s (%.3f s in all, "
                            "%.3f s of it with this process's core busy with other work, %.3f s waiting for a core, "
                            "longest %.0f ms, %d gave up), %r: db_maxconn_gevent is smaller than the requests this "
                            "process serves at once",
                            waited, time.monotonic() - since, waits.seconds, waits.core_busy, waits.core_queued,
                            longest * 1000, failed, pool)


_caller_counts = threading.local()  # greenlet-local on the gevent server


@contextmanager
def counted_by_caller():
    """Borrows made in this block (by this thread or greenlet) are left out
    of the pool's warning: their caller counts its own waits (a run's
    connection, engine/durable/step_connection.py)."""
    before = getattr(_caller_counts, "active", False)
    _caller_counts.active = True
    try:
        yield
    finally:
        _caller_counts.active = before


_returns: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_returns_lock = threading.Lock()
report = WaitReport()


def _returns_of(pool) -> _Returns:
    with _returns_lock:
        returns = _returns.get(pool)
        if returns is None:
            returns = _returns[pool] = _Returns()
        return returns


def waiting(borrow, seconds: float = WAIT_SECONDS, poll: float = POLL_SECONDS):
    """``borrow`` (Odoo's ``ConnectionPool.borrow(self, connection_info)``)
    asked again while it raises ``PoolError``: after each connection given
    back to the pool through ``notifying(give_back)``, and at least every
    ``poll`` seconds, for at most ``seconds``; the last ``PoolError`` is
    raised after that. Any other error is raised at once."""
    @functools.wraps(borrow)
    def borrow_waiting(pool, connection_info):
        returns = _returns_of(pool)
        seen = returns.count
        try:
            return borrow(pool, connection_info)
        except PoolError:
            pass
        start = wait_time.clocks()
        deadline = start[0] + seconds
        while True:
            with returns.condition:
                if returns.count == seen:  # nothing came back since the last ask: sleep until something does
                    returns.condition.wait(max(0.0, min(poll, deadline - time.monotonic())))
                seen = returns.count
            try:
                connection = borrow(pool, connection_info)
            except PoolError:
                if time.monotonic() >= deadline:
                    if not getattr(_caller_counts, "active", False):
                        waited, busy, queued = wait_time.elapsed(start)
                        report.record(waited, pool, True, busy, queued)
                    raise
                continue
            if not getattr(_caller_counts, "active", False):
                waited, busy, queued = wait_time.elapsed(start)
                report.record(waited, pool, False, busy, queued)
            return connection
    borrow_waiting.agentic_ai_waits = True
    return borrow_waiting


def notifying(give_back):
    """``give_back`` (Odoo's ``ConnectionPool.give_back(self, connection,
    keep_in_pool=True)``) that then wakes one borrow waiting on that pool."""
    @functools.wraps(give_back)
    def give_back_notifying(pool, connection, keep_in_pool=True):
        try:
            return give_back(pool, connection, keep_in_pool)
        finally:
            _returns_of(pool).given_back()
    give_back_notifying.agentic_ai_waits = True
    return give_back_notifying


def install() -> bool:
    """On the gevent server (``odoo.evented``), make Odoo's pools wait for a
    connection (``waiting``, ``notifying``); once per process. Returns
    whether the pools wait now."""
    pool = sql_db.ConnectionPool
    if getattr(pool.borrow, "agentic_ai_waits", False):
        return True
    if not off_loop.on_gevent_server():
        return False
    pool.give_back = notifying(pool.give_back)
    pool.borrow = waiting(pool.borrow)
    return True
