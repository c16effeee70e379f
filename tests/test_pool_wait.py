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

    def test_a_full_pool_is_asked_again_until_a_connection_comes_back(self):
        pool, info = self.pool()
        held = pool.borrow(info)
        with self.assertRaises(PoolError, msg="Odoo's own pool does not wait"):
            pool.borrow(info)
        threading.Timer(0.3, pool.give_back, [held]).start()
        started = time.monotonic()
        again = pool_wait.waiting(sql_db.ConnectionPool.borrow, seconds=10)(pool, info)
        self.assertGreater(time.monotonic() - started, 0.2, "it waited for the connection to come back")
        self.assertIs(again, held, "the connection given back is the one taken")
        pool.give_back(again)

    def test_a_pool_that_stays_full_still_raises_after_the_wait(self):
        pool, info = self.pool()
        held = pool.borrow(info)
        started = time.monotonic()
        with self.assertRaises(PoolError):
            pool_wait.waiting(sql_db.ConnectionPool.borrow, seconds=0.2)(pool, info)
        self.assertGreaterEqual(time.monotonic() - started, 0.2)
        pool.give_back(held)

    def test_only_the_gevent_server_waits(self):
        """The suite's server is not the gevent process: Odoo's pool is left as it is."""
        self.assertFalse(pool_wait.install())
        self.assertFalse(getattr(sql_db.ConnectionPool.borrow, "agentic_ai_waits", False))
