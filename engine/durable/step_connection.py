"""A run's database connection, given back to Odoo's pool while the run
waits on its model (issue 26 point 2).

Most of a run's length is the model's: seconds per answer, against a few
milliseconds of database work per step. A durable run commits its step
before it calls the model (engine/runtime.py), so nothing of its
transaction is left open, and ``given_back`` returns the connection under
its cursor to Odoo's pool for the length of the wait; on leaving, the
cursor takes a connection again and the next step's transaction begins.
Concurrent runs are then bounded by the model, not by the pool or by
PostgreSQL's ``max_connections``.

The cursor object stays the same (its environments, records and caches
are the run's): only the connection under it changes, which is how Odoo 19's
``odoo.sql_db.Cursor`` keeps it (``_cnx``, its psycopg2 cursor ``_obj``, and
the pool it borrowed from, ``__pool``; the connection's settings as
``Cursor.__init__`` makes them). While the connection is away, any use of
the cursor raises ``ConnectionAway``: nothing may touch the database there.

Taking a connection again waits, rather than fail as Odoo's pool does when
it is full (``PoolError``): at most ``gate_size()`` runs of this process
hold one at a time, which leaves most of the pool to the requests of
everyone else (a plain read never meets a pool the agent filled), and a
pool still full is asked again until ``BORROW_SECONDS`` have passed.
"""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager, nullcontext

from psycopg2.extensions import ISOLATION_LEVEL_REPEATABLE_READ
from psycopg2.pool import PoolError

import odoo
from odoo import sql_db
from odoo.modules.registry import Registry
from odoo.tools import config

from . import pool_wait
from .wait_time import Waits

BORROW_SECONDS = 60.0    # longest wait for a connection once the run's turn at the gate came
BORROW_RETRY = 0.05      # seconds between two asks of a full pool


class ConnectionAway(RuntimeError):
    """The run used its cursor while its connection was given back."""


class _Away:
    """Stands for the connection and the psycopg2 cursor while they are away."""
    closed = False

    def __getattr__(self, name):
        raise ConnectionAway(f"the run's database connection is given back while it waits on the model "
                             f"(engine/durable/step_connection.py); {name!r} cannot be used now")


_AWAY = _Away()
_gate: threading.BoundedSemaphore | None = None
_gate_lock = threading.Lock()


def gate_size() -> int:
    """How many runs of this process may hold a connection at once: the
    ``agentic_ai_run_connections`` option of Odoo's configuration file when
    set to a positive number, else a quarter of Odoo's pool for this process (``db_maxconn``, or
    ``db_maxconn_gevent`` on the gevent server, as ``sql_db.db_connect``
    sizes it), at least 2.

    A quarter: a run's step is a few milliseconds of SQL and Python, and the
    gevent server runs Python on one core, so a few runs working at once
    keep it busy; more would only hold connections while they wait for the
    core. The rest of the pool is the requests' (every request of the
    gevent server takes one from it; there a request finding it full waits,
    engine/durable/pool_wait.py, elsewhere it answers 500)."""
    try:
        configured = int(config.get("agentic_ai_run_connections") or 0)
    except (TypeError, ValueError):  # not a number: the default, rather than no run at all
        configured = 0
    if configured > 0:
        return configured
    evented = getattr(odoo, "evented", False)
    maxconn = int((config["db_maxconn_gevent"] if evented else 0) or config["db_maxconn"])
    return max(2, maxconn // 4)


def _the_gate() -> threading.BoundedSemaphore:
    global _gate  # noqa: PLW0603 - one gate per process, made once the server's kind is known
    with _gate_lock:
        if _gate is None:
            _gate = threading.BoundedSemaphore(gate_size())
        return _gate


@contextmanager
def run_cursor(dbname: str, waits: Waits | None = None):
    """A cursor of its own for a run on ``dbname`` (``Registry.cursor()``,
    committed and closed on leaving as Odoo's cursor context does), taken
    through the gate and waiting for the pool as ``given_back`` takes its
    connection again; ``waits`` counts that wait (engine/durable/wait_time.py). Raises
    ``PoolError`` after ``BORROW_SECONDS`` of a full pool."""
    gate = _the_gate()
    cr = _through_gate(gate, lambda: Registry(dbname).cursor(), waits)
    cr._agentic_gate = gate
    try:
        with cr:
            yield cr
    finally:
        release_gate(cr)


def is_away(cr) -> bool:
    """Whether ``cr``'s connection is given back (and was not taken again)."""
    return cr._cnx is _AWAY if type(cr) is sql_db.Cursor else False


def pool_cursor(dbname: str, seconds: float = BORROW_SECONDS):
    """``Registry(dbname).cursor()``, asked again while the pool is full
    (for at most ``seconds``), outside the runs' gate: for the engine's own
    short transactions (the run leases' heartbeat)."""
    return _borrow(lambda: Registry(dbname).cursor(), seconds)


def can_give_back(cr) -> bool:
    """Whether ``cr`` is one of Odoo's own cursors on a connection of its
    own (a test's cursor shares the test's transaction: it keeps it)."""
    return type(cr) is sql_db.Cursor and not cr.closed


@contextmanager
def given_back(cr, waits: Waits | None = None):
    """Give ``cr``'s connection back to its pool for the length of the
    block, then take one again (waiting at the gate, then for the pool).

    The caller committed or rolled back first: the transaction in progress
    is rolled back. ``waits`` counts the wait for a connection on leaving
    (engine/durable/wait_time.py). Raises ``PoolError`` when no connection came
    within ``BORROW_SECONDS``, and what connecting raises; inside the block,
    any use of ``cr`` raises ``ConnectionAway``."""
    pool = cr._Cursor__pool
    cnx = cr._cnx
    cnx.rollback()
    cr._obj.close()
    pool.give_back(cnx)
    cr._cnx = cr._obj = _AWAY
    release_gate(cr)
    gate = _the_gate()
    try:
        yield
    finally:
        dsn = sql_db.connection_info_for(cr.dbname, readonly=pool.readonly)[1]
        cnx = _through_gate(gate, lambda: pool.borrow(dsn), waits)
        cnx.set_isolation_level(ISOLATION_LEVEL_REPEATABLE_READ)
        cnx.set_session(readonly=pool.readonly)
        cr._cnx, cr._obj = cnx, cnx.cursor()
        cr._agentic_gate = gate  # released by ``release_gate`` when the run gives the connection back or ends


def release_gate(cr) -> None:
    """Let the next run through the gate (``cr`` gives its connection back,
    or its run ends); nothing when ``cr`` did not pass it."""
    gate = cr.__dict__.pop("_agentic_gate", None)
    if gate is not None:
        gate.release()


def _through_gate(gate, take, waits: Waits | None):
    """``take()`` once ``gate`` let this run through (the slot is given back
    when it raises), asked again while the pool is full (``_borrow``);
    ``waits`` counts the wait both made (the gevent pool's warning leaves
    them out, engine/durable/pool_wait.py: the run counts them)."""
    with waits.timing() if waits is not None else nullcontext():
        gate.acquire()
        try:
            with pool_wait.counted_by_caller():
                return _borrow(take)
        except BaseException:
            gate.release()
            raise


def _borrow(take, seconds: float = BORROW_SECONDS):
    """``take()``, asked again while it raises ``PoolError``, for at most
    ``seconds`` (on the gevent server one ask may itself wait, up to
    ``pool_wait.WAIT_SECONDS``: at most ``seconds`` plus that in all)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return take()
        except PoolError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(BORROW_RETRY)
