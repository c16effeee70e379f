"""One run per conversation, without a database session held for the run
(issue 26 point 2; models/agent_thread_run.py).

A run used to hold a PostgreSQL session advisory lock for its whole
length, which kept a connection for every run, most of it spent waiting
for the model, and does not hold behind PgBouncer in transaction pooling.
A run now holds a *lease*:

- each Odoo process that runs conversations has one ``agentic_ai_run_holder``
  row; a thread of that process (a greenlet on the gevent server) renews
  its ``alive_until`` every ``lease/3`` seconds, in a transaction of a few
  milliseconds, to ``now() + lease`` (``agentic_ai.run_lease_seconds``,
  ``LEASE_SECONDS`` by default);
- a run writes its token and its process's holder on its thread's row when
  it starts (the row locked, in the run's first transaction) and clears
  them in its last;
- a run is alive while its thread carries a token and the holder's
  ``alive_until`` is later than the reading transaction's ``now()``. Read in
  any snapshot, a live process's row is at most ``lease/3`` seconds old, so
  it always reads alive; a process that died (killed, its machine gone)
  reads dead ``lease`` seconds after its last renewal, and its runs are
  then repaired (engine/durable/durability.py). A lease that ran out is
  never renewed: the process takes a new holder row, so a run once judged
  dead stays dead;
- a run checks its token on its thread's row each time it locks the row to
  begin a step (``RunTakenOver`` when another request repaired the thread
  because its process looked dead): it then stops without writing.

Renewals touch only the holder's row, which no foreign key references: no
run's write waits on them or fails because of them.
"""
from __future__ import annotations

import logging
import math
import os
import socket
import threading
import uuid

from odoo.modules import module as odoo_module

from .step_connection import pool_cursor

_logger = logging.getLogger(__name__)

LEASE_SECONDS = 30.0      # default of agentic_ai.run_lease_seconds: how long a dead process's runs look alive
MIN_LEASE_SECONDS = 2.0
MAX_LEASE_SECONDS = 3600.0
RETRY_SECONDS = 0.5       # wait before renewing again after a renewal failed (a full pool, a lost connection)
RENEW_WAIT = 1.0          # longest wait of one renewal for a connection of a full pool
PURGE_AFTER = "1 day"     # holder rows dead for longer are deleted by the heartbeat

_NOW = "(now() AT TIME ZONE 'UTC')"  # Odoo's Datetime columns are naive UTC timestamps


class RunTakenOver(Exception):
    """A run found its token gone from its thread: its process looked dead
    (its lease ran out) and another request repaired the thread. The run
    must stop and write nothing more."""


def client_check(cr) -> str:
    """An SQL expression that, selected first thing in a step's transaction,
    has PostgreSQL (14 and later) check every few seconds, even while a
    statement waits on a lock, that the step's client is still connected,
    for that transaction only. A worker killed while its step waited on a
    row (a stuck tool) would otherwise leave its session, and the locks of
    the step with it, alive until the wait ended."""
    if cr.connection.server_version >= 140000:
        return "set_config('client_connection_check_interval', '5s', true)"
    return "NULL"


def alive(cr, thread_id: int) -> bool:
    """Whether a live run holds ``thread_id`` (see the module docstring),
    read in ``cr``'s snapshot."""
    cr.execute(f"""SELECT 1 FROM agentic_ai_thread t JOIN agentic_ai_run_holder h ON h.id = t.run_holder
                   WHERE t.id = %s AND t.run_token IS NOT NULL AND h.alive_until > {_NOW}""", [thread_id])
    return bool(cr.fetchone())


def take(cr, thread_id: int) -> str:
    """Mark ``thread_id`` as run by a new run of this process; returns the
    run's token. The caller holds the thread's row locked and checked that
    no live run holds it (``alive``); the mark is seen by others once the
    caller's transaction commits."""
    token = uuid.uuid4().hex
    cr.execute("UPDATE agentic_ai_thread SET run_token = %s, run_holder = %s WHERE id = %s",
               [token, holder(cr), thread_id])
    return token


def release(cr, thread_id: int, token: str) -> None:
    """Clear the mark ``take`` made, if it is still this run's."""
    cr.execute("UPDATE agentic_ai_thread SET run_token = NULL, run_holder = NULL WHERE id = %s AND run_token = %s",
               [thread_id, token])


def clear(cr, thread_id: int) -> None:
    """Clear whatever mark ``thread_id`` carries (a repair, the row locked:
    its run is dead)."""
    cr.execute("UPDATE agentic_ai_thread SET run_token = NULL, run_holder = NULL "
               "WHERE id = %s AND run_token IS NOT NULL", [thread_id])


# ------------------------------------------------------------ this process
class _ThisProcess:
    """This process's holder rows (database name → id) and the thread that
    renews them; a forked process (a prefork worker) starts afresh."""

    def __init__(self):
        self.lock = threading.Lock()
        self.pid: int | None = None
        self.holders: dict[str, int] = {}
        self.beat: threading.Thread | None = None

    def holder(self, dbname: str) -> int:
        with self.lock:
            if self.pid != os.getpid():
                self.pid, self.beat = os.getpid(), None
                self.holders.clear()
            holder_id = self.holders.get(dbname)
            if holder_id is None:
                with pool_cursor(dbname) as own:
                    holder_id = self.holders[dbname] = _insert_holder(own, lease_seconds(own))
            if self.beat is None or not self.beat.is_alive():
                self.beat = threading.Thread(target=_heartbeat, name="agentic-ai-run-leases", daemon=True)
                self.beat.start()
            return holder_id

    def current(self) -> dict[str, int] | None:
        """The holder rows to renew; None once this is not the process that made them."""
        with self.lock:
            return dict(self.holders) if self.pid == os.getpid() else None

    def forget(self, dbname: str, holder_id: int) -> None:
        with self.lock:
            if self.holders.get(dbname) == holder_id:
                del self.holders[dbname]


_PROCESS = _ThisProcess()


def holder(cr) -> int:
    """This process's holder row on ``cr``'s database, made (and committed,
    on a cursor of its own) the first time, with the heartbeat that renews
    it. Under tests the row is made in ``cr``'s transaction and nothing
    renews it: a test's transaction keeps one ``now()``."""
    if odoo_module.current_test:
        return _insert_holder(cr, lease_seconds(cr))
    return _PROCESS.holder(cr.dbname)


def lease_seconds(cr) -> float:
    """``agentic_ai.run_lease_seconds`` within [MIN_LEASE_SECONDS,
    MAX_LEASE_SECONDS]; LEASE_SECONDS when unset or not a finite number."""
    cr.execute("SELECT value FROM ir_config_parameter WHERE key = 'agentic_ai.run_lease_seconds'")
    row = cr.fetchone()
    try:
        seconds = float(row[0]) if row else LEASE_SECONDS
    except (TypeError, ValueError):
        return LEASE_SECONDS
    return min(max(seconds, MIN_LEASE_SECONDS), MAX_LEASE_SECONDS) if math.isfinite(seconds) else LEASE_SECONDS


def _insert_holder(cr, seconds: float) -> int:
    cr.execute(f"""INSERT INTO agentic_ai_run_holder (host, pid, started_at, alive_until)
                   VALUES (%s, %s, {_NOW}, {_NOW} + make_interval(secs => %s)) RETURNING id""",
               [socket.gethostname()[:200], os.getpid(), seconds])
    return cr.fetchone()[0]


def _heartbeat() -> None:
    """Renew this process's holder rows every third of their lease, for as
    long as the process lives (a daemon thread; a greenlet under gevent).
    A renewal that failed (the pool full, the connection lost) is tried
    again after RETRY_SECONDS, not a third of a lease later: one failure
    must not let a short lease run out under live runs."""
    seconds = {}  # database name → its lease, as last read
    while (holders := _PROCESS.current()) is not None:
        wait = LEASE_SECONDS / 3
        for dbname, holder_id in holders.items():
            try:
                seconds[dbname] = renew(dbname, holder_id)
                wait = min(wait, seconds[dbname] / 3)
            except Exception:  # try again soon; the lease still runs for a while
                _logger.warning("Could not renew the run lease of this process on %s; trying again in %s s",
                                dbname, RETRY_SECONDS, exc_info=True)
                wait = min(wait, RETRY_SECONDS)
        threading.Event().wait(wait)


def renew(dbname: str, holder_id: int) -> float:
    """Renew ``holder_id`` on ``dbname`` for one more lease; returns the
    lease's seconds. A lease that already ran out is not renewed: the
    process forgets the row (its next run takes a new one). Waits for a
    connection while the pool is full, RENEW_WAIT seconds at most (the
    heartbeat then tries again soon: engine/durable/step_connection.py)."""
    with pool_cursor(dbname, RENEW_WAIT) as cr:
        seconds = lease_seconds(cr)
        cr.execute(f"""UPDATE agentic_ai_run_holder SET alive_until = {_NOW} + make_interval(secs => %s)
                       WHERE id = %s AND alive_until > {_NOW} RETURNING id""", [seconds, holder_id])
        if not cr.fetchone():
            _logger.warning("The run lease of this process on %s ran out before it was renewed (the process was "
                            "stalled for more than %s s); its runs are judged dead", dbname, seconds)
            _PROCESS.forget(dbname, holder_id)
        cr.execute(f"DELETE FROM agentic_ai_run_holder WHERE alive_until < {_NOW} - interval '{PURGE_AFTER}'")
    return seconds
