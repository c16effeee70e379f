"""The commit that ends a durable step, and the lock that opens the next
(issue 26 point 3).

Once PostgreSQL has committed a step, nothing after it may turn the run
into an error: the step happened. Odoo's ``Cursor.commit()`` runs the
post-commit hooks (``cr.postcommit``: the cron wake-up
``ir.cron._notifydb``, the audit log's seal, any addon's) right after the
SQL ``COMMIT``, and the first hook that raises escapes from ``commit()``
as if the commit had failed, leaving the hooks after it unrun.
``commit_step`` asks PostgreSQL whether the transaction committed
(``pg_xact_status``, PostgreSQL 13+), and when it did, logs the hook's
failure and runs the remaining hooks, each on its own.

A step's transaction then begins by locking the thread's row. A run of the
memory-consolidation cron (or a rename) may have changed that row between
the new snapshot and the lock: PostgreSQL then refuses the lock with a
serialization failure, though the step has done nothing yet. ``lock_row``
retries it on a fresh snapshot with Odoo's own rules (the errors of
``odoo.service.model.PG_CONCURRENCY_EXCEPTIONS_TO_RETRY``, at most
``MAX_TRIES_ON_CONCURRENCY_FAILURE`` tries, a random wait doubling each
time), so a user never sees it as an error.
"""
from __future__ import annotations

import logging
import random
import time

from odoo.exceptions import LockError
from odoo.service.model import MAX_TRIES_ON_CONCURRENCY_FAILURE, PG_CONCURRENCY_EXCEPTIONS_TO_RETRY
from odoo.tools import config, str2bool

from . import run_lease

_logger = logging.getLogger(__name__)

#: Seconds of the first wait between two tries of a lock; each next wait may be twice as long. Odoo's
#: ``retrying`` waits up to 2 s, then 4 s...: a request that was not yet answered; a step's lock is
#: waited for by a user watching the stream, and the cron's transaction that took the row is short.
FIRST_WAIT = 0.05


class StepConflict(Exception):
    """A tool call of a durable step met a concurrent transaction: a
    serialization failure, a deadlock or a lock refused (Odoo's
    ``PG_CONCURRENCY_EXCEPTIONS_TO_RETRY``). The call was rolled back to its
    savepoint; under REPEATABLE READ the step's snapshot would meet the
    same row again, so the runtime rolls the step back and runs the call
    again on a fresh snapshot (``AgentRuntime._run_call``). ``args``:
    ``(tool_name, the psycopg2 error)``."""


def commit_step(cr, xid: str | None = None) -> None:
    """Commit ``cr``'s transaction; a post-commit hook that fails cannot undo it.

    ``xid``: the transaction's id (``pg_current_xact_id()``) when the caller
    read it in this very transaction (the runtime selects it with the step's
    row lock, ``transaction_columns``); else it is asked here first.

    Raises what ``cr.commit()`` raises when the ``COMMIT`` itself failed (a
    flush error, a deferred constraint, a serialization failure at commit,
    a lost connection): then nothing of the step was committed. When the
    ``COMMIT`` went through and a hook raised, the error is logged with its
    traceback, the hooks after it still run (each failure logged), and
    nothing is raised.
    """
    if xid is None:
        cr.execute("SELECT pg_current_xact_id()")  # the step's transaction id (assigning one if it wrote nothing)
        xid = cr.fetchone()[0]
    try:
        cr.commit()
        return
    except Exception:
        if not _committed(cr, xid):
            raise
        _logger.exception("A post-commit hook failed after a committed step (transaction %s): the step stands", xid)
    while len(cr.postcommit):
        try:
            cr.postcommit.run()
        except Exception:
            _logger.exception("A post-commit hook failed after a committed step (transaction %s): the step stands",
                              xid)


def _committed(cr, xid) -> bool:
    """Whether PostgreSQL committed transaction ``xid`` (False when it cannot be asked).

    Asked on ``cr`` as it is; only when a failed hook left ``cr`` in an
    aborted transaction is it rolled back first (Odoo's rollback also drops
    the hooks not run yet: that is logged)."""
    for attempt in (1, 2):
        try:
            cr.execute("SELECT pg_xact_status(%s::xid8)", [str(xid)])
            return cr.fetchone()[0] == "committed"
        except Exception:
            if attempt == 2:
                _logger.exception("Could not ask PostgreSQL whether transaction %s committed", xid)
                return False
            if len(cr.postcommit):
                _logger.warning("%s post-commit hooks after the failed one are dropped (transaction %s)",
                                len(cr.postcommit), xid)
            cr.rollback()
    return False


#: Selected with a durable run's step lock (``lock_row``'s ``columns``): the step's transaction commits
#: without waiting for its WAL to reach the disk (PostgreSQL's asynchronous commit, "Asynchronous Commit" in its
#: manual, chapter "Reliability and the Write-Ahead Log"). A commit that waits costs one flush of the WAL: 0.3 ms
#: on this project's machines with a quiet disk, 3-4 ms while the disk was busy, against 0.05-0.2 ms without; a
#: ReAct step commits three times when it calls code able to write, once for reads (issue 26 point 6). Visibility
#: is unchanged: other sessions see the step at once; what the step wrote can be lost only if PostgreSQL itself
#: (or its machine) crashes within ``wal_writer_delay`` x 3 of the commit, and then as a whole, with every later
#: transaction: the database stays consistent. A step that keeps a business change calls ``commit_durably`` and
#: waits as the server is configured to, which also flushes every step before it.
ASYNC_COMMIT = "set_config('synchronous_commit', 'off', true)"


def async_steps() -> bool:
    """Whether durable runs select ``ASYNC_COMMIT`` with their step locks:
    yes, unless Odoo's configuration file sets ``agentic_ai_synchronous_steps``
    to a true value (an operator whose policy wants every step, the audit
    rows of reads and model calls included, on disk before it returns)."""
    value = config.get("agentic_ai_synchronous_steps")
    return not (value and str2bool(str(value), default=False))


def commit_durably(cr) -> None:
    """Make ``cr``'s transaction commit as the server is configured to
    (``synchronous_commit`` back to its default for this transaction: a
    server set to ``remote_apply`` keeps waiting for its standbys), after an
    ``ASYNC_COMMIT`` step lock. For a transaction that keeps what a tool
    changed in Odoo's records, or a run's last one: a crash of PostgreSQL
    never loses a change that a user or a tool saw kept, and the WAL flush
    of this commit also covers every step committed before it. Call it
    outside any savepoint that may still be rolled back to: a rollback to a
    savepoint taken before it undoes it (``SET LOCAL``). The executor's
    held savepoint (held_savepoint.py) is one no more: it is rolled back to
    only from inside its block."""
    cr.execute("SET LOCAL synchronous_commit TO DEFAULT")


#: What a step's first statement selects besides its row (``lock_row``'s ``columns``), so that neither costs a
#: statement of its own: the transaction's id, for ``commit_step``, and its timestamp, Odoo's ``cr.now()``
#: (``odoo/sql_db.py``: ``SELECT (now() AT TIME ZONE 'UTC')``, kept for the transaction).
TRANSACTION_COLUMNS = ("pg_current_xact_id()", "(now() AT TIME ZONE 'UTC')")


def transaction_began(cr, xid: str, now, forget) -> str:
    """Keep what ``TRANSACTION_COLUMNS`` read in ``cr``'s transaction: ``now``
    becomes the transaction's ``cr.now()`` (unless the transaction already
    read it: the same value), and ``forget()`` is called if the transaction
    is rolled back (Odoo's ``cr.postrollback``), so that its ``xid`` is never
    taken for a later transaction's. Returns ``xid``."""
    if getattr(cr, "_now", False) is None:  # BaseCursor.now() reads it once per transaction, then keeps it
        cr._now = now
    cr.postrollback.add(forget)
    return xid


def retry_conflicts(attempt, what: str, undo, errors=PG_CONCURRENCY_EXCEPTIONS_TO_RETRY):
    """Odoo's retry rules (``odoo.service.model.retrying``) for one piece of
    a transaction: return ``attempt(tryno)`` (tryno 1, 2, ...); when it
    raises one of ``errors``, call ``undo(exc)`` (roll the transaction back;
    it may raise instead, to stop), then, within
    ``MAX_TRIES_ON_CONCURRENCY_FAILURE`` tries, wait a random time of at
    most ``FIRST_WAIT * 2 ** tryno`` seconds (logged with ``what``) and try
    again. The last try's error is raised after its ``undo``."""
    for tryno in range(1, MAX_TRIES_ON_CONCURRENCY_FAILURE + 1):
        try:
            return attempt(tryno)
        except errors as exc:
            undo(exc)
            if tryno == MAX_TRIES_ON_CONCURRENCY_FAILURE:
                raise
            wait = random.uniform(0.0, FIRST_WAIT * 2 ** tryno)
            cause = exc.args[1] if isinstance(exc, StepConflict) else exc
            _logger.info("%s %s, %s tries left, try again in %.3f s", type(cause).__name__, what,
                         MAX_TRIES_ON_CONCURRENCY_FAILURE - tryno, wait)
            time.sleep(wait)
    raise RuntimeError("unreachable")


def lock_row(cr, table: str, row_id: int, retry: bool = True, columns: tuple[str, ...] = ("id",)) -> tuple | None:
    """``SELECT columns ... FOR NO KEY UPDATE`` the row ``row_id`` of
    ``table`` and return its values (None: no such row); with ``retry``, as
    the first statement of a transaction, retried on a fresh snapshot when a
    concurrent transaction changed the row first (see the module docstring).

    Retry only where the transaction has done nothing yet: a retry rolls it
    back. Raises the concurrency error at once without ``retry``, the last
    one after ``MAX_TRIES_ON_CONCURRENCY_FAILURE`` tries with it.
    """
    query = f'SELECT {", ".join(columns)} FROM "{table}" WHERE id = %s FOR NO KEY UPDATE'

    def lock(_tryno):
        cr.execute(query, [row_id], log_exceptions=False)  # a refusal is expected here, not a bad query
        return cr.fetchone()
    if not retry:
        return lock(1)
    return retry_conflicts(lock, f"locking {table} {row_id}", lambda _exc: cr.rollback())


def retry_opening(env, thread_id: int, run):
    """Call ``run()`` (a run on a cursor of its own: the stream's, a queued
    run's) and return what it returns; when it raises a concurrency error,
    roll back, drop the environment's cache and look again on a fresh
    snapshot: a run that took the thread meanwhile (the usual cause: the
    thread's row changed under this run's first lock) makes it raise
    ``LockError``, as a request that finds the thread busy; otherwise (the
    memory consolidation changed the row) ``run()`` is called again, within
    Odoo's tries (``retry_conflicts``).

    What reaches here happened before the run committed anything of its
    own: from its first commit on, the runtime ends the run itself on any
    error (``AgentRuntime._guarded``), so the run is never opened twice.
    """
    def undo(_exc):
        env.cr.rollback()
        env.invalidate_all(flush=False)  # what the rolled-back try read or wrote is not kept
        if run_lease.alive(env.cr, thread_id):
            raise LockError(env._("This conversation is already being processed.")) from None
    return retry_conflicts(lambda _tryno: run(), f"opening the run of conversation {thread_id}", undo)
