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

``install()``, on the gevent server only, has the pool ask again while it
is full, every ``RETRY_SECONDS``, for at most ``WAIT_SECONDS``, then raise
``PoolError`` as before. A greenlet that waits holds nothing (the pool's
lock is taken only inside each ask) and yields to the others, so the
request goes on as soon as any request or run gives a connection back.
The HTTP workers and the threaded server keep Odoo's behaviour: they
serve a bounded number of requests at once.

What the wait does not change: PostgreSQL's ``max_connections`` must
still hold both of the gevent process's pools (Odoo 19 keeps a read-only
and a read-write one, each of up to ``db_maxconn_gevent``), see the
README's "What the gevent server needs".
"""
from __future__ import annotations

import functools
import time

from psycopg2.pool import PoolError

import odoo
from odoo import sql_db

WAIT_SECONDS = 30.0      # longest wait of one borrow before Odoo's PoolError is raised
RETRY_SECONDS = 0.02     # between two asks of a full pool


def waiting(borrow, seconds: float = WAIT_SECONDS, retry: float = RETRY_SECONDS):
    """``borrow`` (Odoo's ``ConnectionPool.borrow(self, connection_info)``)
    asked again while it raises ``PoolError``, for at most ``seconds``; the
    last ``PoolError`` is raised after that. Any other error is raised at
    once."""
    @functools.wraps(borrow)
    def borrow_waiting(pool, connection_info):
        deadline = None
        while True:
            try:
                return borrow(pool, connection_info)
            except PoolError:
                now = time.monotonic()
                deadline = deadline or now + seconds
                if now >= deadline:
                    raise
                time.sleep(retry)  # gevent's sleep on the gevent server: the other greenlets run meanwhile
    borrow_waiting.agentic_ai_waits = True
    return borrow_waiting


def install() -> bool:
    """On the gevent server (``odoo.evented``), make Odoo's pools wait for a
    connection (``waiting``); once per process. Returns whether the pools
    wait now."""
    borrow = sql_db.ConnectionPool.borrow
    if getattr(borrow, "agentic_ai_waits", False):
        return True
    if not getattr(odoo, "evented", False):
        return False
    sql_db.ConnectionPool.borrow = waiting(borrow)
    return True
