"""The commit that ends a durable step and the lock that opens the next
(engine/durable/step_commit.py, issue 26 point 3), on real PostgreSQL
sessions of their own: what a hook does after a COMMIT cannot undo it, a
COMMIT that fails still fails, and a lock refused because a concurrent
transaction changed the row is retried on a fresh snapshot."""
import io
import threading
import time
from unittest.mock import patch

import psycopg2
from psycopg2 import errors

from odoo import SUPERUSER_ID, api, sql_db
from odoo.exceptions import LockError
from odoo.tests import TransactionCase, tagged
from odoo.tools import config, mute_logger

from ..engine.durable import run_lease, step_commit
from ..engine.durable.held_savepoint import HELD, TransactionEnded, held_savepoint

PROBE = "agentic_ai_step_commit_probe"


@tagged("post_install", "-at_install")
class TestStepCommit(TransactionCase):

    def session(self):
        """A real session of its own (not the test's transaction), closed after the test."""
        cr = sql_db.db_connect(self.env.cr.dbname).cursor()
        self.addCleanup(cr.close)
        return cr

    def probe_table(self):
        """A committed table with one row, dropped after the test: two sessions must both see it."""
        cr = self.session()
        cr.execute(f"DROP TABLE IF EXISTS {PROBE}; CREATE TABLE {PROBE} (id int PRIMARY KEY, v int NOT NULL)")
        cr.execute(f"INSERT INTO {PROBE} VALUES (1, 0)")
        cr.commit()

        def drop():
            with sql_db.db_connect(self.env.cr.dbname).cursor() as dropper:
                dropper.execute(f"DROP TABLE IF EXISTS {PROBE}")
        self.addCleanup(drop)

    def test_a_hook_that_fails_after_the_commit_leaves_the_step_committed(self):
        cr = self.session()
        cr.execute("CREATE TEMP TABLE step (x int)")
        cr.commit()
        cr.execute("INSERT INTO step VALUES (1)")
        ran = []

        def notify_fails():
            raise ConnectionError("connection pool is full")  # what ir.cron._notifydb met under load (issue 26)
        cr.postcommit.add(notify_fails)
        cr.postcommit.add(lambda: ran.append("seal"))
        with self.assertLogs("odoo.addons.agentic_ai.engine.durable.step_commit", "ERROR") as logged:
            step_commit.commit_step(cr)
        self.assertIn("the step stands", logged.output[0])
        self.assertEqual(ran, ["seal"], "the hooks after the failed one still ran")
        cr.rollback()
        cr.execute("SELECT count(*) FROM step")
        self.assertEqual(cr.fetchone()[0], 1, "the step's row was committed: a rollback does not take it back")

    def test_a_commit_that_fails_still_raises_and_runs_no_hook(self):
        cr = self.session()
        cr.execute("CREATE TEMP TABLE step (x int UNIQUE DEFERRABLE INITIALLY DEFERRED)")
        cr.commit()
        cr.execute("INSERT INTO step VALUES (1), (1)")  # checked at COMMIT only
        ran = []
        cr.postcommit.add(lambda: ran.append("hook"))
        with self.assertRaises(errors.UniqueViolation):
            step_commit.commit_step(cr)
        self.assertEqual(ran, [], "no post-commit hook ran for a transaction that did not commit")
        cr.rollback()
        cr.execute("SELECT count(*) FROM step")
        self.assertEqual(cr.fetchone()[0], 0)

    def concurrent_update(self, then):
        """Session B changes the probe row and holds it; ``then(env)`` (on session A) runs in a thread and
        meets the lock; B commits 0.3 s later. Returns what ``then`` returned or raised."""
        self.probe_table()
        other, mine = self.session(), self.session()
        env = api.Environment(mine, SUPERUSER_ID, {})  # made here: an Environment is made under the registry's lock
        other.execute(f"UPDATE {PROBE} SET v = v + 1 WHERE id = 1")
        outcome = {}

        def work():
            try:
                outcome["value"] = then(env)
            except Exception as exc:  # noqa: BLE001 - reported to the test
                outcome["error"] = exc
        worker = threading.Thread(target=work)
        worker.start()
        time.sleep(0.3)
        other.commit()
        worker.join(30)
        self.assertFalse(worker.is_alive(), "the session that met the lock ended")
        return outcome

    def test_a_plain_lock_of_a_row_changed_meanwhile_is_refused(self):
        """The case itself, without the retry: REPEATABLE READ refuses the lock."""
        def plain(env):
            cr = env.cr
            cr.execute("SELECT 1")  # the snapshot, before the other session's commit
            cr.execute(f"SELECT id FROM {PROBE} WHERE id = 1 FOR NO KEY UPDATE")
        self.assertIsInstance(self.concurrent_update(plain).get("error"), errors.SerializationFailure)

    def test_the_step_lock_is_retried_on_a_fresh_snapshot(self):
        def locked(env):
            cr = env.cr
            cr.execute("SELECT 1")  # the snapshot, before the other session's commit, as after a step's commit
            step_commit.lock_row(cr, PROBE, 1)
            cr.execute(f"SELECT v FROM {PROBE} WHERE id = 1")
            return cr.fetchone()[0]
        # The first try is refused (the test above); the value 1 is read on the fresh snapshot of the second.
        outcome = self.concurrent_update(locked)
        self.assertEqual(outcome, {"value": 1}, "the lock was taken on a snapshot that sees the other commit")

    def test_a_held_savepoint_is_one_statement_and_rolls_back_its_block_only(self):
        """engine/durable/held_savepoint.py on a real session: a block that
        succeeds leaves its savepoint held (no RELEASE), one that fails is
        rolled back to it alone (a statement the server cannot parse
        included), past HELD the savepoints are Odoo's, and a block that
        commits or rolls back the transaction itself fails, as with Odoo's
        savepoint (whose RELEASE finds none)."""
        cr = self.session()
        cr.execute("CREATE TEMP TABLE held (x int)")
        sent = self.sent_statements(cr)
        with held_savepoint(cr):
            cr.execute("INSERT INTO held VALUES (1)")
        self.assertEqual(sent[-2:], ['SAVEPOINT "agentic_ai_call_0"', "INSERT INTO held VALUES (1)"])
        with self.assertRaises(ZeroDivisionError), held_savepoint(cr):
            cr.execute("INSERT INTO held VALUES (2)")
            raise ZeroDivisionError
        with mute_logger("odoo.sql_db"), self.assertRaises(errors.SyntaxError), held_savepoint(cr):
            cr.execute("SELEC 1")
        for value in range(4, 3 + HELD):
            with held_savepoint(cr):
                cr.execute("INSERT INTO held VALUES (%s)", [value])
        cr.execute("SELECT array_agg(x ORDER BY x) FROM held")
        self.assertEqual(cr.fetchone()[0], [1, *range(4, 3 + HELD)], "only the failed blocks were undone")
        self.assertEqual(len([s for s in sent if s.startswith('SAVEPOINT "agentic_ai_call_')]), HELD)
        self.assertFalse([s for s in sent if s.startswith('RELEASE SAVEPOINT "agentic_ai_call_')])
        self.assertEqual(len([s for s in sent if s.startswith("RELEASE SAVEPOINT")]), 2,
                         "past HELD, Odoo's savepoints (released)")
        cr.commit()
        for end in (cr.rollback, cr.commit):
            with self.subTest(end=end.__name__), self.assertRaises(TransactionEnded), held_savepoint(cr):
                cr.execute("INSERT INTO held VALUES (100)")
                end()
            cr.rollback()
        with held_savepoint(cr):  # the count starts again with the transaction
            cr.execute("SELECT 1")
        self.assertEqual(sent[-2], 'SAVEPOINT "agentic_ai_call_0"')

    def test_a_savepoint_sent_with_the_first_statement_costs_no_round_trip(self):
        """``first_statement`` (the addon's own reads): the savepoint goes to
        the server in front of the block's first statement, in the same
        query string; a block that sends no statement makes none; a failure
        is rolled back to it, also when the first statement went another way
        (COPY) or through code that kept the psycopg2 cursor (every later
        statement passes through, none carries the savepoint again); a
        statement psycopg2 refused before sending it leaves the transaction
        as it was; in a transaction already aborted the block fails with
        that error; and a statement the server cannot parse, refused whole
        with its savepoint, fails with its own error (the module
        docstring's limit: such blocks do not ask for it)."""
        cr = self.session()
        cr.execute("CREATE TEMP TABLE held (x int)")
        sent = self.sent_statements(cr)
        with held_savepoint(cr, first_statement=True):
            cr.execute("INSERT INTO held VALUES (1)")
        self.assertEqual(sent[-1], 'SAVEPOINT "agentic_ai_call_0"; INSERT INTO held VALUES (1)')
        before = len(sent)
        with held_savepoint(cr, first_statement=True):  # nothing sent: no savepoint
            pass
        self.assertEqual(len(sent), before)
        with self.assertRaises(ZeroDivisionError), held_savepoint(cr, first_statement=True):
            cr._obj.copy_expert("COPY held FROM STDIN", io.StringIO("7\n"))
            raise ZeroDivisionError
        with self.assertRaises(ZeroDivisionError), held_savepoint(cr, first_statement=True):
            kept = cr._obj  # as psycopg2.extras.execute_values(cr._obj, ...) keeps it
            kept.execute("INSERT INTO held VALUES (%s)", [8])
            self.assertEqual(kept.query.decode(), 'SAVEPOINT "agentic_ai_call_3"; INSERT INTO held VALUES (8)')
            kept.execute("INSERT INTO held VALUES (%s)", [9])
            self.assertEqual(kept.query.decode(), "INSERT INTO held VALUES (9)")
            raise ZeroDivisionError
        cr.execute("SELECT array_agg(x ORDER BY x) FROM held")
        self.assertEqual(cr.fetchone()[0], [1], "the COPY and the kept cursor's inserts were undone")
        cr.rollback()

        with mute_logger("odoo.sql_db"), self.assertRaises(psycopg2.ProgrammingError), \
                held_savepoint(cr, first_statement=True):
            cr.execute("INSERT INTO held VALUES (%s)", [object()])  # can't adapt: nothing sent
        cr.execute("SELECT 1")  # the transaction is as it was
        with held_savepoint(cr, first_statement=True), self.assertRaises(errors.InvalidTextRepresentation), \
                mute_logger("odoo.sql_db"), held_savepoint(cr, first_statement=True):
            cr.execute("SELECT 'abc'::int")  # refused by the server: back to the inner savepoint
        cr.execute("SELECT 1")
        cr.rollback()

        with mute_logger("odoo.sql_db"), self.assertRaises(errors.DivisionByZero):
            cr.execute("SELECT 1 / 0")
        with mute_logger("odoo.sql_db"), self.assertRaises(errors.InFailedSqlTransaction), \
                held_savepoint(cr, first_statement=True):
            cr.execute("SELECT 1")  # a ROLLBACK TO a savepoint never made would raise another error
        cr.rollback()
        with mute_logger("odoo.sql_db"), self.assertRaises(errors.SyntaxError), \
                held_savepoint(cr, first_statement=True):
            cr.execute("SELEC 1")
        cr.rollback()

    def sent_statements(self, cr) -> list[str]:
        """Each round trip of ``cr`` from now on, its query string as psycopg2
        sent it (not the test's own cursor's: ``assertRaises`` takes a
        savepoint of it)."""
        sent = []
        current = threading.current_thread()
        hooks = getattr(current, "query_hooks", ())
        current.query_hooks = (*hooks, lambda hooked, *_args: hooked is cr and sent.append(hooked._obj.query.decode()))
        self.addCleanup(setattr, current, "query_hooks", hooks)
        return sent

    @staticmethod
    def opening(thread_id, calls):
        """An opening of ``thread_id``'s run through ``retry_opening`` whose
        run takes its snapshot before the other session's commit and then
        locks the probe's row (refused the first time); each try is counted
        in ``calls``."""
        def opening(env):
            cr = env.cr

            def run():
                calls.append(1)
                cr.execute("SELECT 1")
                cr.execute(f"SELECT id FROM {PROBE} WHERE id = 1 FOR NO KEY UPDATE")
                return "opened"
            return step_commit.retry_opening(env, thread_id, run)
        return opening

    def test_an_opening_refused_by_a_concurrent_change_is_run_again(self):
        calls = []
        outcome = self.concurrent_update(self.opening(0, calls))
        self.assertEqual(outcome, {"value": "opened"})
        self.assertEqual(len(calls), 2, "refused once, opened on the second try")

    def test_an_opening_refused_because_another_run_took_the_thread_answers_busy(self):
        """The usual cause of a refused opening: another request's run took
        the thread meanwhile (five sends at once). It is seen on the fresh
        snapshot and answered as a busy thread (LockError: 409), not run
        again and not an internal error."""
        with sql_db.db_connect(self.env.cr.dbname).cursor() as setup:
            env = api.Environment(setup, SUPERUSER_ID, {})
            agent = env.ref("agentic_ai.agent_general_assistant")
            thread_id = env["agentic.ai.thread"].create({"agent_id": agent.id, "name": "step commit probe"}).id
            run_lease.take(setup, thread_id)  # the winner's lease, committed with the set-up

        def remove():
            with sql_db.db_connect(self.env.cr.dbname).cursor() as cleanup:
                cleanup.execute("DELETE FROM agentic_ai_run_holder WHERE id = (SELECT run_holder FROM "
                                "agentic_ai_thread WHERE id = %s)", [thread_id])
                api.Environment(cleanup, SUPERUSER_ID, {})["agentic.ai.thread"].browse(thread_id).unlink()
        self.addCleanup(remove)
        calls = []
        self.assertIsInstance(self.concurrent_update(self.opening(thread_id, calls)).get("error"), LockError)
        self.assertEqual(len(calls), 1, "not run a second time")

    def test_an_asynchronous_step_commits_durably_when_asked_and_only_for_itself(self):
        """Issue 26 point 6: ``ASYNC_COMMIT`` selected with the step's lock
        makes that transaction's commit asynchronous; ``commit_durably``
        gives it back the server's setting; the next transaction has the
        server's setting whatever the last one did (``SET LOCAL``)."""
        self.probe_table()
        cr = self.session()
        cr.execute("SHOW synchronous_commit")
        configured = cr.fetchone()[0]
        row = step_commit.lock_row(cr, PROBE, 1, columns=("id", step_commit.ASYNC_COMMIT))
        self.assertEqual(row, (1, "off"))
        cr.execute(f"UPDATE {PROBE} SET v = 7 WHERE id = 1")
        step_commit.commit_step(cr)
        cr.execute("SHOW synchronous_commit")
        self.assertEqual(cr.fetchone()[0], configured, "the setting ended with its transaction")
        with sql_db.db_connect(self.env.cr.dbname).cursor() as other:
            other.execute(f"SELECT v FROM {PROBE} WHERE id = 1")
            self.assertEqual(other.fetchone()[0], 7, "an asynchronous commit is seen by others at once")
        step_commit.lock_row(cr, PROBE, 1, columns=("id", step_commit.ASYNC_COMMIT))
        step_commit.commit_durably(cr)
        cr.execute("SHOW synchronous_commit")
        self.assertEqual(cr.fetchone()[0], configured)
        cr.rollback()

    def test_an_operator_may_keep_every_step_synchronous(self):
        """``agentic_ai_synchronous_steps`` in Odoo's configuration file turns
        the asynchronous steps off; a value that is not a boolean keeps them."""
        for value, wanted in ((None, True), ("True", False), ("1", False), ("0", True), ("maybe", True)):
            with self.subTest(value=value), patch.dict(config.options.maps[0], {"agentic_ai_synchronous_steps": value}):
                self.assertEqual(step_commit.async_steps(), wanted)
