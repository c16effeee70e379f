"""A tool call's savepoint, left for the transaction's end to release
(issue 26 point 6: the executor's cost around a call).

Odoo's ``cr.savepoint()`` costs two round trips to PostgreSQL: ``SAVEPOINT``
before the block and ``RELEASE SAVEPOINT`` after it. A savepoint that
nothing will roll back to any more need not be released: the transaction's
``COMMIT`` or ``ROLLBACK`` ends it with everything else, and a durable run
commits after each call (engine/runtime.py ``_checkpoint``). Releasing it
would not free much either: a released subtransaction's XID stays in the
backend's list until the top transaction ends (PostgreSQL documentation,
"Subtransactions"); what a held one keeps is one nesting level.

So ``held_savepoint(cr)`` behaves as ``cr.savepoint()`` (the ORM flushed
before and after, its cache and pending writes cleared on a rollback) but
does not release the savepoint of a block that succeeded. At most ``HELD``
are held in one transaction, counted in ``cr.prerollback.data`` (Odoo
empties it at every commit and rollback, odoo/sql_db.py); past that, the
savepoint is Odoo's own. Few: held ones nest, and a write in the innermost
gives each enclosing one a transaction id of its own (PostgreSQL caches 64
per session before every other session's snapshots slow down), which
matters for a caller that makes many calls in one transaction.

A block that ended the transaction itself (code that commits or rolls
back) fails as it does with Odoo's savepoint, whose ``RELEASE`` then finds
no savepoint: the count gone from ``cr.prerollback.data`` tells it,
without a statement."""
from __future__ import annotations

from contextlib import contextmanager

from odoo.tools import SQL

HELD = 4  # savepoints held in one transaction before they are released again
_COUNT = "agentic_ai.held_savepoints"


class TransactionEnded(RuntimeError):
    """The block committed or rolled back the transaction its savepoint was
    in: what it did is not what the savepoint guards any more."""


@contextmanager
def held_savepoint(cr):
    """Run the block in a savepoint of ``cr`` (an Odoo cursor, test cursors
    included): an exception rolls the block back to it (and is raised
    again); a success leaves it to the transaction's end, within ``HELD``
    per transaction. One round trip instead of Odoo's two. Raises
    TransactionEnded when the block committed or rolled back itself."""
    count = cr.prerollback.data.get(_COUNT, 0)
    if count >= HELD:
        with cr.savepoint():
            yield
        return
    cr.flush()
    name = SQL.identifier(f"agentic_ai_call_{count}")
    cr.execute(SQL("SAVEPOINT %s", name))
    cr.prerollback.data[_COUNT] = count + 1
    try:
        yield
        cr.flush()
    except BaseException:
        if _COUNT not in cr.prerollback.data:  # the block ended the transaction: no savepoint to go back to
            raise
        cr.clear()  # what the ORM kept of the block (cache, pending writes) goes with it, as in Odoo's savepoint
        cr.execute(SQL("ROLLBACK TO SAVEPOINT %s", name))
        raise
    if _COUNT not in cr.prerollback.data:
        raise TransactionEnded("the call committed or rolled back the transaction itself; what it did is not "
                               "known to be kept or undone as one call")
