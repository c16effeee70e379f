"""The gevent server's pools wait for a connection rather than fail
(engine/durable/pool_wait.py, issue 26 point 2), on a real Odoo
``ConnectionPool`` of one connection to the test database."""
import threading
import time

from psycopg2.pool import PoolError

from odoo import sql_db
from odoo.tests import TransactionCase, tagged

from ..engine.durable import pool_wait


@tagged("post_install", "-at_install")
class TestPoolWait(TransactionCase):

    def pool(self):
        """A pool of one connection, closed after the test, and the test database's connection info."""
        pool = sql_db.ConnectionPool(maxconn=1)
        self.addCleanup(pool.close_all)
        return pool, sql_db.connection_info_for(self.env.cr.dbname)[1]

    def test_a_waiting_borrow_is_woken_by_the_connection_given_back(self):
        pool, info = self.pool()
        held = pool.borrow(info)
        with self.assertRaises(PoolError, msg="Odoo's own pool does not wait"):
            pool.borrow(info)
        give_back = pool_wait.notifying(sql_db.ConnectionPool.give_back)
        threading.Timer(0.3, give_back, [pool, held]).start()
        started = time.monotonic()
        self.patch(pool_wait, "report", pool_wait.WaitReport())  # a report period of this test's own
        again = pool_wait.waiting(sql_db.ConnectionPool.borrow, seconds=10, poll=8)(pool, info)
        waited = time.monotonic() - started
        self.assertGreater(waited, 0.2, "it waited for the connection to come back")
        self.assertLess(waited, 4, "the connection given back woke it, long before its next ask")
        self.assertIs(again, held, "the connection given back is the one taken")
        self.assertEqual(pool_wait.report.waited, 1, "the wait is counted for the next warning")
        self.assertGreater(pool_wait.report.longest, 0.2)
        with self.assertLogs(pool_wait.__name__, "WARNING") as logs:
            pool_wait.report.flush()  # what the report's timer does, REPORT_SECONDS after the first wait
        self.assertIn("1 requests waited for a database connection", logs.output[0])
        self.assertRegex(logs.output[0], r"s of it with this process's core busy with other work, [\d.]+ s waiting for "
                         r"a core", "the split bench/load.py reads (engine/durable/wait_time.py)")
        self.assertFalse(pool_wait.report.waited, "counted once")
        give_back(pool, again)

    def test_a_connection_freed_without_a_wake_is_found_by_the_next_ask(self):
        pool, info = self.pool()
        held = pool.borrow(info)
        threading.Timer(0.3, pool.give_back, [held]).start()  # Odoo's own give_back: nobody is woken
        self.patch(pool_wait, "report", pool_wait.WaitReport())
        again = pool_wait.waiting(sql_db.ConnectionPool.borrow, seconds=10, poll=0.1)(pool, info)
        self.assertIs(again, held)
        with self.assertLogs(pool_wait.__name__, "WARNING"):
            pool_wait.report.flush()
        pool.give_back(again)

    def test_a_pool_that_stays_full_still_raises_after_the_wait(self):
        pool, info = self.pool()
        held = pool.borrow(info)
        self.patch(pool_wait, "report", pool_wait.WaitReport())
        started = time.monotonic()
        with self.assertRaises(PoolError):
            pool_wait.waiting(sql_db.ConnectionPool.borrow, seconds=0.2)(pool, info)
        self.assertGreaterEqual(time.monotonic() - started, 0.2)
        with self.assertLogs(pool_wait.__name__, "WARNING") as logs:
            pool_wait.report.flush()
        self.assertIn("1 requests waited for a database connection", logs.output[-1])
        self.assertIn("1 gave up", logs.output[-1])
        pool.give_back(held)

    def test_a_run_counts_its_own_waits(self):
        """A run's borrow (engine/durable/step_connection.py) is left out of the pool's warning."""
        pool, info = self.pool()
        held = pool.borrow(info)
        threading.Timer(0.2, pool_wait.notifying(sql_db.ConnectionPool.give_back), [pool, held]).start()
        self.patch(pool_wait, "report", pool_wait.WaitReport())
        with pool_wait.counted_by_caller():
            again = pool_wait.waiting(sql_db.ConnectionPool.borrow, seconds=10)(pool, info)
        self.assertFalse(pool_wait.report.waited)
        pool.give_back(again)

    def test_only_the_gevent_server_waits(self):
        """The suite's server is not the gevent process: Odoo's pool is left as it is."""
        self.assertFalse(pool_wait.install())
        self.assertFalse(getattr(sql_db.ConnectionPool.borrow, "agentic_ai_waits", False))
