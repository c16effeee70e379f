"""A run's connection given back to Odoo's pool while it waits on its model
(engine/durable/step_connection.py, issue 26 point 2), on real Odoo cursors
of their own (not the test's transaction): the pool gets the connection
back, the cursor refuses any use meanwhile, and the next step's
transaction begins on a connection set as Odoo sets its own."""
import os
import subprocess
import sys
import time

from psycopg2.extensions import ISOLATION_LEVEL_REPEATABLE_READ

from odoo import sql_db
from odoo.tests import TransactionCase, tagged

from ..engine.durable import step_connection, wait_time
from ..engine.durable.wait_time import Waits

PROBE = "agentic_ai_step_connection_probe"


@tagged("post_install", "-at_install")
class TestStepConnection(TransactionCase):

    def cursor(self):
        cr = sql_db.db_connect(self.env.cr.dbname).cursor()
        self.addCleanup(cr.close)
        return cr

    @staticmethod
    def in_use(cr):
        return sum(1 for cnx in cr._Cursor__pool._connections if cnx._pool_in_use)

    def test_the_connection_is_in_the_pool_while_the_run_waits(self):
        cr = self.cursor()
        self.assertTrue(step_connection.can_give_back(cr))
        cr.execute("SELECT 1")
        before, waits = self.in_use(cr), Waits()
        with step_connection.given_back(cr, waits):
            self.assertEqual(self.in_use(cr), before - 1, "the pool has the connection back")
            with self.assertRaises(step_connection.ConnectionAway):
                cr.execute("SELECT 1")
            with self.assertRaises(step_connection.ConnectionAway):
                cr.commit()
        self.assertEqual(self.in_use(cr), before)
        self.assertEqual(waits.count, 1)
        cr.execute("SELECT current_setting('transaction_isolation')")
        self.assertEqual(cr.fetchone()[0], "repeatable read")
        self.assertEqual(cr.connection.isolation_level, ISOLATION_LEVEL_REPEATABLE_READ)
        step_connection.release_gate(cr)

    def test_a_wait_leaves_nothing_of_the_transaction_and_its_gate_slot_is_given_back(self):
        cr = self.cursor()
        cr.execute(f"DROP TABLE IF EXISTS {PROBE}; CREATE TABLE {PROBE} (x int)")
        cr.commit()

        def drop():
            with sql_db.db_connect(self.env.cr.dbname).cursor() as dropper:
                dropper.execute(f"DROP TABLE IF EXISTS {PROBE}")
        self.addCleanup(drop)
        cr.execute(f"INSERT INTO {PROBE} VALUES (1)")  # not committed by the caller: rolled back, as said
        gate = step_connection._the_gate()
        with step_connection.given_back(cr):
            pass
        free = gate._value
        cr.execute(f"SELECT count(*) FROM {PROBE}")
        self.assertEqual(cr.fetchone()[0], 0)
        cr.rollback()  # before the table is dropped
        step_connection.release_gate(cr)
        self.assertEqual(gate._value, free + 1, "the run's slot is free once it lets go")
        step_connection.release_gate(cr)
        self.assertEqual(gate._value, free + 1, "a slot is given back once")

    def test_run_cursor_passes_the_gate_and_commits_on_leaving(self):
        gate = step_connection._the_gate()
        free = gate._value
        with step_connection.run_cursor(self.env.cr.dbname) as cr:
            self.assertEqual(gate._value, free - 1)
            cr.execute("SELECT 1")
        self.assertTrue(cr.closed)
        self.assertEqual(gate._value, free)

    def test_a_wait_tells_a_busy_core_from_an_idle_one(self):
        """A wait's seconds, and those of them the waiting thread's core
        spent working (engine/durable/wait_time.py): a sleep is all idle,
        work done meanwhile is busy, never more than the wait."""
        waits = Waits()
        with waits.timing():
            time.sleep(0.05)
        self.assertGreaterEqual(waits.seconds, 0.05)
        self.assertLess(waits.core_busy, 0.025, "a thread asleep leaves its core idle")
        slept = waits.seconds
        with waits.timing():
            started = time.thread_time()
            while time.thread_time() - started < 0.05:
                pass
        self.assertEqual(waits.count, 2)
        self.assertGreaterEqual(waits.core_busy, 0.05)
        self.assertLessEqual(waits.core_busy, waits.seconds)
        self.assertGreaterEqual(waits.seconds - waits.core_busy, slept - 0.025, "the sleep stays idle")
        busy = waits.core_busy
        waits.add(1.0, 2.0)  # the clocks read a moment apart: busy is bounded by the wait
        self.assertEqual((waits.count, round(waits.core_busy - busy, 6)), (3, 1.0))
        queued = waits.core_queued
        waits.add(1.0, 0.75, 0.5)  # and busy and queued together
        self.assertEqual((round(waits.core_busy - busy, 6), round(waits.core_queued - queued, 6)), (1.75, 0.25))

    def test_a_wait_for_one_of_the_machines_cores_is_not_an_idle_core(self):
        """A thread ready to run while every core of the machine runs other
        processes: its CPU clock stands still, and the time counts as
        ``core_queued`` (Linux's schedstat of the thread), not as a wait
        with the core idle (engine/durable/wait_time.py)."""
        self.assertTrue(os.path.exists(wait_time.SCHEDSTAT), "the machines this project runs on are Linux")
        cores = len(os.sched_getaffinity(0))
        spin = "import time\nend = time.monotonic() + 1.5\nwhile time.monotonic() < end: pass"
        hogs = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(cores + 1)]  # a core short
        try:
            time.sleep(0.2)  # every hog running
            waits = Waits()
            with waits.timing():
                started = time.monotonic()
                while time.monotonic() - started < 0.5:  # runs when the machine lets it: busy, or ready to run
                    pass
        finally:
            for hog in hogs:
                hog.kill()
                hog.wait()
        self.assertGreater(waits.core_queued, 0.05, "the thread waited for a core while the hogs ran")
        self.assertLess(waits.idle(), 0.1 * waits.seconds, "ready to run the whole time: hardly ever idle")
        self.assertAlmostEqual(waits.core_busy + waits.core_queued + waits.idle(), waits.seconds, places=6)
