"""One run per conversation without a session held for the run
(engine/durable/run_lease.py, issue 26 point 2): a run's lease on its
thread, its process's holder renewed by the heartbeat, a dead process's
runs repaired once its lease ran out, and a run that finds its lease taken
over writing nothing more."""
from odoo import sql_db
from odoo.exceptions import LockError
from odoo.tests import tagged

from ..engine.durable import run_lease
from .common import AgenticCase, live_run_elsewhere
from .probes import leave_dead_run


@tagged("post_install", "-at_install")
class TestRunLease(AgenticCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.setup_users()

    def marks(self, thread):
        self.env.cr.execute("SELECT run_token, run_holder FROM agentic_ai_thread WHERE id = %s", [thread.id])
        return self.env.cr.fetchone()

    def expire(self, holder_id):
        self.env.cr.execute("UPDATE agentic_ai_run_holder SET alive_until = (now() AT TIME ZONE 'UTC') "
                            "- interval '1 second' WHERE id = %s", [holder_id])

    def test_a_lease_is_alive_until_released_or_its_holder_runs_out(self):
        thread = self.new_thread(user=self.plain)
        self.assertFalse(run_lease.alive(self.env.cr, thread.id))
        token = run_lease.take(self.env.cr, thread.id)
        self.assertTrue(run_lease.alive(self.env.cr, thread.id))
        run_lease.release(self.env.cr, thread.id, "not-the-token")
        self.assertTrue(run_lease.alive(self.env.cr, thread.id), "another run's token does not release it")
        run_lease.release(self.env.cr, thread.id, token)
        self.assertEqual(self.marks(thread), (None, None))
        self.assertFalse(run_lease.alive(self.env.cr, thread.id))
        run_lease.take(self.env.cr, thread.id)
        self.expire(self.marks(thread)[1])
        self.assertFalse(run_lease.alive(self.env.cr, thread.id), "a holder whose lease ran out runs nothing")

    def test_the_lease_setting_is_kept_within_bounds(self):
        params = self.env["ir.config_parameter"].sudo()
        for raw, seconds in (("inf", run_lease.LEASE_SECONDS), ("1e15", run_lease.MAX_LEASE_SECONDS),
                             ("1e308", run_lease.MAX_LEASE_SECONDS), ("-5", run_lease.MIN_LEASE_SECONDS),
                             ("abc", run_lease.LEASE_SECONDS), ("nan", run_lease.LEASE_SECONDS), ("7", 7.0)):
            params.set_param("agentic_ai.run_lease_seconds", raw)
            params.flush_model()  # read in SQL
            self.assertEqual(run_lease.lease_seconds(self.env.cr), seconds, raw)
        params.set_param("agentic_ai.run_lease_seconds", "1e15")
        params.flush_model()
        self.script({"content": "Fine."})
        self.assertEqual(self.run_agent("hi", user=self.plain)[1].state, "completed", "a run still takes its lease")

    def test_a_turn_takes_the_lease_and_its_last_step_clears_it(self):
        self.script({"content": "Hello."}, {"content": "Again."})
        thread, result = self.run_agent("hi", user=self.plain)
        self.assertEqual(result.state, "completed")
        self.assertEqual(self.marks(thread), (None, None))
        with live_run_elsewhere(thread), self.assertRaisesRegex(LockError, "already being processed"):
            self.agent.with_user(self.plain).run(thread.id, "again")
        self.assertEqual(self.agent.with_user(self.plain).run(thread.id, "again").state, "completed")

    def test_a_dead_process_s_run_is_repaired_once_its_lease_ran_out(self):
        """A worker killed mid-tool leaves its lease on the thread: the
        thread is not repaired while the lease is alive, and is once the
        holder's lease ran out (one [OUTCOME UNKNOWN] result, the lease
        cleared), after which the next message runs."""
        thread = leave_dead_run(self.new_thread(user=self.plain))
        run_lease.take(self.env.cr, thread.id)
        self.assertFalse(thread._repair_dead_run(), "its process may still be alive")
        self.expire(self.marks(thread)[1])
        self.assertTrue(thread._repair_dead_run())
        self.assertEqual(thread.state, "interrupted")
        self.assertEqual(self.marks(thread), (None, None))
        self.assertEqual(sum(c.startswith("[OUTCOME UNKNOWN]") for c in self.observations(thread)), 1)
        self.script({"content": "Fine."})
        self.assertEqual(self.agent.with_user(self.plain).run(thread.id, "Did it work?").state, "completed")

    def test_a_run_whose_lease_was_taken_over_stops_at_its_next_step(self):
        thread = self.new_thread(user=self.plain)
        runtime = thread._runtime()
        runtime.lease = run_lease.take(self.env.cr, thread.id)
        runtime._lock_thread_row()  # its own lease: the step goes on
        run_lease.clear(self.env.cr, thread.id)  # a repair, while the run's process looked dead
        with self.assertRaises(run_lease.RunTakenOver):
            runtime._lock_thread_row()

    def test_the_heartbeat_renews_a_live_holder_and_never_a_dead_one(self):
        """On real sessions (the heartbeat commits on a cursor of its own)."""
        own = sql_db.db_connect(self.env.cr.dbname).cursor()
        self.addCleanup(own.close)
        own.execute("INSERT INTO agentic_ai_run_holder (host, pid, alive_until) VALUES ('test', 0, "
                    "(now() AT TIME ZONE 'UTC') + interval '1 second'), ('test', 0, (now() AT TIME ZONE 'UTC') "
                    "- interval '1 second') RETURNING id, alive_until")
        (live, live_until), (dead, dead_until) = own.fetchall()
        own.commit()

        def drop():
            own.rollback()
            own.execute("DELETE FROM agentic_ai_run_holder WHERE id IN %s", [(live, dead)])
            own.commit()
        self.addCleanup(drop)
        self.assertEqual(run_lease.renew(self.env.cr.dbname, live), run_lease.LEASE_SECONDS)
        with self.assertLogs("odoo.addons.agentic_ai.engine.durable.run_lease", "WARNING") as logged:
            run_lease.renew(self.env.cr.dbname, dead)
        self.assertIn("ran out before it was renewed", logged.output[0])
        own.execute("SELECT id, alive_until FROM agentic_ai_run_holder WHERE id IN %s ORDER BY id", [(live, dead)])
        (_, renewed), (_, still) = own.fetchall()
        self.assertGreater((renewed - live_until).total_seconds(), run_lease.LEASE_SECONDS - 5)
        self.assertEqual(still, dead_until, "a lease that ran out stays out")
