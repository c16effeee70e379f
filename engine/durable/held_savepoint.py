"""A tool call's savepoint, left for the transaction's end to release,
and for the addon's own reads sent with the call's first statement
(issue 26 point 6: the executor's cost around a call).

Odoo's ``cr.savepoint()`` costs two round trips to PostgreSQL: ``SAVEPOINT``
before the block and ``RELEASE SAVEPOINT`` after it. ``held_savepoint(cr)``
costs one, and none when ``first_statement`` is set:

- **Held.** A savepoint that nothing will roll back to any more need not be
  released: the transaction's ``COMMIT`` or ``ROLLBACK`` ends it with
  everything else, and a durable run commits after each call
  (engine/runtime.py ``_checkpoint``). Releasing it would not free much
  either: a released subtransaction's XID stays in the backend's list until
  the top transaction ends (PostgreSQL documentation, "Subtransactions");
  what a held one keeps is one nesting level.
- **Sent with the first statement** (``first_statement``). A savepoint only
  has to exist before the block's first statement: until then the block
  changed nothing in the database. So ``SAVEPOINT`` can go in front of that
  statement, in the same query string (psycopg2 sends it with the simple
  query protocol, where PostgreSQL runs the statements of one string in
  order inside the open transaction; the results are the last one's). A
  block that sends no statement then makes no savepoint at all. On a
  database on another host a round trip is a network one. The limit:
  PostgreSQL parses the whole string before it runs any of it, so a
  statement it cannot parse is refused with the savepoint, and the
  transaction is left aborted with nothing to go back to. Only a caller
  whose statements the ORM builds asks for it (the executor, for the read
  tools of this addon's ``tools/`` package: the model's words reach their
  SQL as parameters, never as text; not for tools other addons register);
  any other block gets its savepoint as a statement of its own first. Should
  such a refusal still happen, the block's own error is raised, not the
  missing savepoint's.

The first statement is caught where Odoo 19's ``odoo.sql_db.Cursor`` sends
every statement: its psycopg2 cursor ``_obj`` (``Cursor.execute`` calls
``self._obj.execute``), which ``_FirstStatement`` stands in for until then,
as engine/durable/step_connection.py stands in for it while a run waits.
Anything else asked of it before that statement that sends SQL (such as
``copy_expert``) has the savepoint sent alone first; code that kept the
stand-in reaches the psycopg2 cursor through it afterwards. Other cursors
(Odoo's ``TestCursor``, which keeps its own savepoint under the
transaction) get the ``SAVEPOINT`` statement at once.

Otherwise it behaves as ``cr.savepoint()`` (the ORM flushed before and
after, its cache and pending writes cleared on a rollback). At most ``HELD``
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

import psycopg2
import psycopg2.errors
from psycopg2 import errorcodes

from odoo import sql_db
from odoo.tools import SQL

HELD = 4  # savepoints held in one transaction before they are released again
_COUNT = "agentic_ai.held_savepoints"
# The psycopg2 cursor's ways of sending SQL other than ``execute``: the savepoint is sent alone before them.
_SENDS = frozenset({"executemany", "callproc", "copy_from", "copy_to", "copy_expert"})


class TransactionEnded(RuntimeError):
    """The block committed or rolled back the transaction its savepoint was
    in: what it did is not what the savepoint guards any more."""


class _FirstStatement:
    """Stands for an ``odoo.sql_db.Cursor``'s psycopg2 cursor until the
    block's first statement, which it sends behind ``SAVEPOINT name;``;
    then the psycopg2 cursor is the cursor's again, and what still holds
    this stand-in reaches it through it. ``made``: whether the server made
    the savepoint (not when nothing was sent: psycopg2 refused the
    statement before sending it, with no SQLSTATE; nor when the transaction
    was already aborted, SQLSTATE 25P02, and the server refused the
    savepoint with the statement)."""

    def __init__(self, cr, statement: str):
        self.cr = cr
        self.real = cr._obj
        self.statement = statement
        self.made = False
        self.sent = False

    def give_back(self) -> None:
        """The psycopg2 cursor is the cursor's again (unless something else
        stands for it now, or the cursor was closed)."""
        if self.cr.__dict__.get("_obj") is self:
            self.cr._obj = self.real

    def execute(self, query, params=None):
        self.give_back()
        if self.sent:
            return self.real.execute(query, params)
        if isinstance(query, str):
            query = f"{self.statement}; {query}"
        elif isinstance(query, bytes):
            query = f"{self.statement}; ".encode() + query
        else:  # a psycopg2 ``sql.Composable``: sent as it is, after the savepoint
            self.send_alone()
            return self.real.execute(query, params)
        self.sent = True
        try:
            result = self.real.execute(query, params)
        except psycopg2.Error as exc:  # the savepoint went first, unless nothing was sent or it was refused too
            self.made = exc.pgcode is not None and exc.pgcode != errorcodes.IN_FAILED_SQL_TRANSACTION
            raise
        self.made = True
        return result

    def send_alone(self) -> None:
        """Send the savepoint statement by itself (once)."""
        self.give_back()
        if not self.sent:
            self.sent = True
            self.real.execute(self.statement)
            self.made = True

    def __getattr__(self, name):
        if name in _SENDS:
            self.send_alone()
        return getattr(self.real, name)


@contextmanager
def held_savepoint(cr, first_statement: bool = False):
    """Run the block in a savepoint of ``cr`` (an Odoo cursor, test cursors
    included): an exception rolls the block back to it (and is raised
    again); a success leaves it to the transaction's end, within ``HELD``
    per transaction. One round trip against Odoo's two; none with
    ``first_statement`` on an ``odoo.sql_db.Cursor`` (the savepoint goes
    with the block's first statement: only for blocks whose statements the
    ORM builds, see the module docstring). Raises TransactionEnded when the
    block committed or rolled back itself."""
    count = cr.prerollback.data.get(_COUNT, 0)
    if count >= HELD:
        with cr.savepoint():
            yield
        return
    cr.flush()
    name = SQL.identifier(f"agentic_ai_call_{count}")
    first = None
    if first_statement and type(cr) is sql_db.Cursor:
        first = cr._obj = _FirstStatement(cr, f"SAVEPOINT {name.code}")
    else:
        cr.execute(SQL("SAVEPOINT %s", name))
    cr.prerollback.data[_COUNT] = count + 1
    try:
        yield
        cr.flush()
    except BaseException:  # a savepoint made means its statement was sent: the stand-in gave the cursor back
        if _COUNT not in cr.prerollback.data:  # the block ended the transaction: no savepoint to go back to
            raise
        cr.clear()  # what the ORM kept of the block (cache, pending writes) goes with it, as in Odoo's savepoint
        if first is not None and not first.made:
            raise  # no savepoint was made, and nothing reached the database after it: nothing to go back to
        try:
            cr.execute(SQL("ROLLBACK TO SAVEPOINT %s", name), log_exceptions=False)
        except psycopg2.errors.InvalidSavepointSpecification:
            if first is None:
                raise
            # Refused whole at parse time, the savepoint with it (module docstring): the transaction stays
            # aborted, and the block's own error says why.
        raise
    finally:
        if first is not None:
            first.give_back()
    if _COUNT not in cr.prerollback.data:
        raise TransactionEnded("the call committed or rolled back the transaction itself; what it did is not "
                               "known to be kept or undone as one call")
