"""A provider's own request limit (spec 000 §3.1 ``rate_limit_rpm``, issue
27 point 5): counted for every user, agent and worker of the database
together (engine/guard/provider_rate.py); when it is reached the agent's
fallback provider answers, else the request waits for a free slot up to a
bound, then the turn says the limit was reached. Runs through the real loop
and the scripted LLM over HTTP; the concurrent slots are taken by threads on
connections of their own, as workers do."""
import threading

from odoo import sql_db
from odoo.modules.registry import Registry
from odoo.tests import new_test_user, tagged
from odoo.tools import SQL

from ..engine.guard import provider_rate
from ..engine.guard.provider_rate import WINDOW_SECONDS, decide
from .common import AgenticCase


@tagged("post_install", "-at_install")
class TestProviderRate(AgenticCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.setup_users()
        cls.env["ir.config_parameter"].sudo().set_param("agentic_ai.max_requests_per_minute", "1000")
        cls.fallback = cls.provider.copy({"name": "Scripted fallback", "default_model": "fallback-model"})
        cls.other_agent = cls.agent.copy({"name": "Second agent", "code": "second_agent_rate"})
        cls.other_agent.action_activate()

    def setUp(self):
        super().setUp()
        # The slots are committed on connections of their own, as in production: no count left by another test.
        with Registry(self.env.cr.dbname).cursor() as cr:
            cr.execute(SQL("DELETE FROM %s WHERE provider_id IN %s", SQL.identifier(provider_rate.TABLE),
                           (self.provider.id, self.fallback.id)))

    def models_asked(self):
        return [request["model"] for request in self.scenario.chat_requests()]

    # ------------------------------------------------------------- the count
    def test_no_sixty_seconds_hold_more_than_the_limit(self):
        """Limit 3: three at once, the fourth waits until the first is 60 s
        old; a burst at a minute's end and one at the next minute's start
        are one window (a per-minute count would let 6 through)."""
        start = 29_000_000 * WINDOW_SECONDS + 57  # 57 s into a minute
        stamps = []
        for n in range(3):
            wait, stamps = decide(3, stamps, start + n * 0.1)
            self.assertEqual(wait, 0.0, f"request {n + 1} of 3")
        wait, same = decide(3, stamps, start + 15)  # the next minute's 12th second
        self.assertEqual(same, stamps, "a refused request changes nothing")
        self.assertAlmostEqual(wait, 45.0, places=2)
        wait, after = decide(3, stamps, start + 60.05)
        self.assertEqual((wait, len(after)), (0.0, 3), "the first left the window: one slot")
        wait, _stamps = decide(2, stamps, start + 1)  # the limit lowered under what was taken
        self.assertAlmostEqual(wait, 59.1, places=2, msg="two must leave the window")
        wait, after = decide(3, stamps, start + 3600)
        self.assertEqual((wait, after), (0.0, [start + 3600]), "old requests count nothing")

    def test_workers_at_once_take_exactly_the_limit(self):
        """20 connections ask 5 slots each at once, limit 30: 30 are taken,
        each refusal says how long to wait. The row lock orders them."""
        provider = self.provider.copy({"name": "Shared", "rate_limit_rpm": 30})
        taken, waits, errors = [], [], []
        barrier = threading.Barrier(20)

        def worker():
            try:
                # Not Registry(db).cursor(): the test runner holds the registries' lock (a worker does not).
                with sql_db.db_connect(self.env.cr.dbname).cursor() as cr:
                    barrier.wait(10)
                    for _ in range(5):
                        wait = provider_rate.reserve(cr, provider.id, 30)
                        (waits if wait else taken).append(wait)
            except Exception as error:  # noqa: BLE001 - reported by the assertion below
                errors.append(repr(error))

        threads = [threading.Thread(target=worker) for _ in range(20)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        self.assertEqual(errors, [])
        self.assertEqual((len(taken), len(waits)), (30, 70))
        self.assertTrue(all(0 < wait <= 2 * WINDOW_SECONDS for wait in waits))

    # ------------------------------------------------------------- in runs
    def test_every_user_and_agent_counts_then_the_fallback_answers(self):
        """Limit 2: two turns of two users on two agents take the slots; the
        third turn is answered by the fallback provider, and the log says
        why the provider was skipped."""
        self.provider.rate_limit_rpm = 2
        for agent in (self.agent, self.other_agent):
            agent.fallback_provider_id = self.fallback
        self.script({"content": "one"}, {"content": "two"}, {"content": "three"})
        _thread, first = self.run_agent("hello", user=self.plain)
        other_user = new_test_user(self.env, "rate_other", groups="base.group_user,agentic_ai.group_agentic_ai_user")
        thread = self.other_agent.with_user(other_user).start_thread()
        second = thread.with_user(other_user).send_message("hello")
        thread, third = self.run_agent("hello", user=self.plain)
        self.assertEqual([first.reply, second.reply, third.reply], ["one", "two", "three"])
        self.assertEqual(self.models_asked(), ["scripted-model", "scripted-model", "fallback-model"])
        skipped = thread.execution_log_ids.filtered(lambda row: row.action_type == "error")
        self.assertEqual((skipped.provider_id, skipped.level), (self.provider, "warning"))
        self.assertIn("its limit of 2 requests a minute", skipped.error_message)
        self.assertIn("the next provider was asked", skipped.error_message)
        llm_rows = thread.execution_log_ids.filtered(lambda row: row.action_type == "llm_call")
        self.assertEqual(llm_rows.provider_id, self.fallback, "no llm_call row for the request not sent")

    def test_without_fallback_the_turn_says_the_limit_was_reached(self):
        """Limit 1, no fallback: the second turn would wait most of a
        minute, longer than the bound: it ends at once, saying so."""
        self.provider.rate_limit_rpm = 1
        self.agent.fallback_provider_id = False
        self.script({"content": "one"}, {"content": "never sent"})
        _thread, first = self.run_agent("hello", user=self.plain)
        _thread, second = self.run_agent("hello", user=self.plain)
        self.assertEqual(first.reply, "one")
        self.assertEqual((second.state, len(self.scenario.chat_requests())), ("error", 1))
        self.assertIn("limit of requests a minute set on its provider", second.reply)
        self.assertIn("its limit of 1 requests a minute", second.reply)
        self.assertIn("a slot frees in about", second.reply)
        self.assertIn("longer than a request waits (20 s)", second.reply)

    def test_without_fallback_the_request_waits_for_a_slot(self):
        """The provider's window full of requests made 58 s ago: a slot
        frees about 2 s later; the turn waits for it, without its
        connection, and is answered."""
        self.provider.rate_limit_rpm = 3
        self.agent.fallback_provider_id = False
        now = self.clock()
        with Registry(self.env.cr.dbname).cursor() as cr:  # committed, as the runs' slots are
            cr.execute(SQL("INSERT INTO %s (provider_id, stamps) VALUES (%s, %s::double precision[])",
                           SQL.identifier(provider_rate.TABLE), self.provider.id, [now - 58.0] * 3))
        self.script({"content": "answered after the wait"})
        _thread, result = self.run_agent("hello", user=self.plain)
        self.assertEqual(result.reply, "answered after the wait")
        with Registry(self.env.cr.dbname).cursor() as cr:
            cr.execute(SQL("SELECT stamps FROM %s WHERE provider_id = %s",
                           SQL.identifier(provider_rate.TABLE), self.provider.id))
            stamps = cr.fetchone()[0]
        self.assertEqual(len(stamps), 1, "the old requests left the window, the turn's took a slot")
        self.assertGreaterEqual(stamps[0], now + 1.9, "taken once the slot was free, about 2 s later")

    def clock(self):
        """The database server's clock, unix seconds (the one the slots are counted by)."""
        self.env.cr.execute("SELECT EXTRACT(EPOCH FROM clock_timestamp())")
        return float(self.env.cr.fetchone()[0])
