"""Rate limits (spec 000 §7.5, issue 9 point 4): each of the four limits
stops a turn before any request reaches the LLM, says which limit and when
it resets; Settings change the limits and 0 turns one off."""
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

from odoo.tests import tagged

from ..engine.guard.daily_costs import MARGIN, REFRESH, DailyCosts
from ..engine.guard.rate_limits import RateLimits, WindowUsage, check
from .common import AgenticCase, tool_call


@tagged("post_install", "-at_install")
class TestRateLimits(AgenticCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.setup_users()
        cls.plain.tz = "Europe/Brussels"

    def llm_calls(self, count, age, user=None, agent=None, cost=0.0, company=None):
        """``count`` LLM call rows made ``age`` (timedelta) before now, for
        ``user`` (plain) and ``agent`` (the scripted agent)."""
        values = {"user_id": (user or self.plain).id, "agent_id": (agent or self.agent).id, "cost": cost,
                  "company_id": (company or self.env.company).id}
        rows = self.env["agentic.ai.execution.log"].log_many([("llm_call", None, dict(values))] * count)
        self.env.cr.execute("UPDATE agentic_ai_execution_log SET create_date = %s WHERE id = ANY(%s)",
                            [self.env.cr.now() - age, rows.ids])
        rows.invalidate_recordset()

    def set_limits(self, **values):
        """Save the Settings form with ``values`` (field names without the
        ``agentic_ai_max_`` prefix), as an administrator does."""
        settings = self.env["res.config.settings"].create(
            {f"agentic_ai_max_{name}": value for name, value in values.items()})
        settings.execute()

    def assert_stopped(self, words, resets_in):
        """A turn of the plain user ends before any LLM request, with a reply
        naming ``words`` and the reset ``resets_in`` from now."""
        self.script({"content": "should never be sent"})
        thread, result = self.run_agent("hello", user=self.plain)
        self.assertEqual(self.scenario.chat_requests(), [], "no request reached the LLM")
        self.assertEqual((result.state, thread.state), ("error", "error"), "the thread is not left executing")
        reset = (self.env.cr.now() + resets_in).replace(tzinfo=timezone.utc).astimezone(ZoneInfo("Europe/Brussels"))
        self.assertIn(f"Rate limit reached: {words}", result.reply)
        self.assertIn(f"it resets at {reset:%H:%M:%S}", result.reply, "the reset time, in the user's time zone")
        self.assertEqual(thread.message_ids.mapped("role"), ["user", "assistant"])
        self.assertEqual(thread.message_ids[-1].content, result.reply)
        error = thread.execution_log_ids.filtered(lambda row: row.action_type == "error")
        self.assertEqual(len(error), 1, "the refusal is logged")
        self.assertIn(words, error.error_message)
        self.assertFalse(thread.execution_log_ids.filtered(lambda row: row.action_type == "llm_call"))
        return result

    # ----------------------------------------------------------- each limit
    def test_requests_per_minute(self):
        self.llm_calls(20, timedelta(seconds=25))
        result = self.assert_stopped("20 requests per minute for you", timedelta(seconds=35))
        self.assertIn("(in 35 s)", result.reply)

    def test_requests_per_hour(self):
        self.llm_calls(150, timedelta(minutes=10))
        self.llm_calls(50, timedelta(minutes=50))
        result = self.assert_stopped("200 requests per hour for you", timedelta(minutes=10))
        self.assertIn("(in 10 min)", result.reply)

    def test_cost_per_day_per_agent(self):
        """The agent's spending counts whoever it served."""
        self.llm_calls(1, timedelta(hours=1), user=self.other, cost=30.0)
        self.llm_calls(1, timedelta(hours=2), user=self.other, cost=20.0)
        result = self.assert_stopped("$50.00 of LLM cost per day for this agent", timedelta(hours=22))
        self.assertIn("(in 22 h 00 min)", result.reply)

    def test_cost_per_day_per_company(self):
        """Another agent of the company spent the company's budget; its own
        agent limit is lifted, so the company limit is the one reached."""
        other_agent = self.agent.copy({"code": "other_rate_agent"})
        self.set_limits(cost_per_day_agent=100.0)
        self.llm_calls(1, timedelta(hours=3), user=self.other, agent=other_agent, cost=60.0)
        self.assert_stopped("$50.00 of LLM cost per day for your company", timedelta(hours=21))

    # ----------------------------------------------------- what does not count
    def test_rows_outside_the_windows_and_of_others_do_not_count(self):
        self.llm_calls(19, timedelta(seconds=30))
        self.llm_calls(10, timedelta(seconds=61))
        self.llm_calls(30, timedelta(seconds=5), user=self.other, agent=self.agent.copy({"code": "x_rate_agent"}))
        self.llm_calls(1, timedelta(hours=25), cost=1000.0)
        other_company = self.env["res.company"].create({"name": "Other Rate Co"})
        self.llm_calls(1, timedelta(hours=1), user=self.other, agent=self.agent.copy({"code": "y_rate_agent"}),
                       cost=1000.0, company=other_company)
        self.script({"content": "hi"})
        _thread, result = self.run_agent("hello", user=self.plain)
        self.assertEqual((result.state, result.reply), ("completed", "hi"))
        self.assertEqual(len(self.scenario.chat_requests()), 1)

    def test_requests_are_counted_up_to_their_limit(self):
        """A check scans at most the limit's rows (``caps``): the count stops
        at the limit, and whether the limit is reached and when it resets are
        those of the whole count; a count below its cap is the whole count."""
        self.llm_calls(5, timedelta(seconds=40))
        self.llm_calls(30, timedelta(seconds=10))
        self.llm_calls(4, timedelta(minutes=30))
        log, now, keys = self.env["agentic.ai.execution.log"], self.env.cr.now(), ("requests_per_minute",
                                                                                  "requests_per_hour")
        whole = log._rate_limit_usage(self.plain.id, self.agent.id, self.env.company.id, now, keys=keys)
        capped = log._rate_limit_usage(self.plain.id, self.agent.id, self.env.company.id, now, keys=keys,
                                       caps={"requests_per_minute": 20, "requests_per_hour": 200})
        self.assertEqual((whole["requests_per_minute"].amount, capped["requests_per_minute"].amount), (35, 20))
        self.assertEqual(capped["requests_per_minute"].oldest, whole["requests_per_minute"].oldest)
        self.assertEqual(capped["requests_per_hour"], whole["requests_per_hour"], "39 rows, under the cap")
        limits = RateLimits(requests_per_minute=20)
        hit_whole, hit_capped = check(limits, whole, now), check(limits, capped, now)
        self.assertEqual((hit_capped.key, hit_capped.resets_at), (hit_whole.key, hit_whole.resets_at))
        self.assertEqual(hit_capped.resets_at, now - timedelta(seconds=40) + timedelta(minutes=1))
        below = log._rate_limit_usage(self.plain.id, self.agent.id, self.env.company.id, now, keys=keys[:1],
                                      caps={"requests_per_minute": 36})
        self.assertEqual(below["requests_per_minute"].amount, 35)
        self.assertIsNone(check(RateLimits(requests_per_minute=36), below, now))

    def test_the_daily_costs_move_a_kept_sum_forward(self):
        """engine/guard/daily_costs.py: a check sums the day once and keeps
        the sum up to a moment a little in the past; the next checks move it
        forward (rows that left the window out, new rows in) and agree with
        a sum of the whole window; an old kept sum is summed again."""
        log, costs, now = self.env["agentic.ai.execution.log"], DailyCosts(), self.env.cr.now()
        self.llm_calls(1, timedelta(hours=23, minutes=55), cost=1.0)  # leaves the window 5 minutes from now
        self.llm_calls(1, timedelta(hours=2), cost=2.0)
        self.llm_calls(1, timedelta(minutes=2), cost=4.0)  # newer than the kept sum's end

        def check(at):
            kept = log._rate_limit_usage(self.plain.id, self.agent.id, self.env.company.id, at, costs=costs)
            whole = log._rate_limit_usage(self.plain.id, self.agent.id, self.env.company.id, at)  # tests: no base
            for key in ("cost_per_day_agent", "cost_per_day_company"):
                self.assertAlmostEqual(kept[key].amount, whole[key].amount, msg=f"{key} at {at}")
                self.assertEqual(kept[key].oldest, whole[key].oldest, f"{key} at {at}")
            return whole["cost_per_day_agent"].amount

        first = check(now)
        key = (self.env.cr.dbname, "agent_id", self.agent.id)
        base = costs._bases[key]
        self.assertEqual(base.until, now - MARGIN)
        self.assertAlmostEqual(first - base.amount, 4.0, msg="the kept sum ends before the newest row")
        self.llm_calls(1, -timedelta(minutes=5), cost=8.0)  # a call five minutes from now
        self.assertAlmostEqual(check(now + timedelta(minutes=8)) - first, 8.0 - 1.0, msg="one in, one out")
        self.assertIs(costs._bases[key], base, "moved forward, not summed again")
        later = now + REFRESH + MARGIN + timedelta(minutes=1)
        check(later)
        self.assertEqual(costs._bases[key].until, later - MARGIN, "an old kept sum is summed again")

    def test_limit_reached_within_a_run(self):
        """Checked before each LLM call, not only at the start of a turn."""
        self.llm_calls(18, timedelta(seconds=10))
        search = tool_call("odoo_search_read", {"model": "res.partner", "limit": 1})
        self.script(search, search, {"content": "never asked"})
        thread, result = self.run_agent("loop", user=self.plain)
        self.assertEqual(len(self.scenario.chat_requests()), 2)
        self.assertIn("20 requests per minute for you", result.reply)
        self.assertEqual(thread.state, "error")

    def test_a_runs_own_spending_reaches_the_daily_cost_within_the_run(self):
        """The daily costs are summed once per turn; what the turn itself
        spends is added before each next call: the call after the one that
        crossed the agent's $50 is not sent."""
        self.llm_calls(1, timedelta(hours=1), user=self.other, cost=45.0)
        self.agent.llm_provider_id.input_price_per_million = 1_000_000.0  # $1 per prompt token
        search = tool_call("odoo_search_read", {"model": "res.partner", "limit": 1})
        expensive = {**search, "usage": {"prompt_tokens": 3, "completion_tokens": 0}}
        self.script(expensive, expensive, {"content": "never asked"})
        thread, result = self.run_agent("loop", user=self.plain)
        self.assertEqual(len(self.scenario.chat_requests()), 2, "45 + 3 < 50: a second call; 45 + 6 > 50: no third")
        self.assertIn("$50.00 of LLM cost per day for this agent", result.reply)
        self.assertEqual(thread.state, "error")

    # ------------------------------------------------------------- Settings
    def test_settings_show_the_defaults(self):
        values = self.env["res.config.settings"].create({})
        self.assertEqual((values.agentic_ai_max_requests_per_minute, values.agentic_ai_max_requests_per_hour,
                          values.agentic_ai_max_cost_per_day_agent, values.agentic_ai_max_cost_per_day_company),
                         (20, 200, 50.0, 50.0))

    def test_settings_change_the_limits(self):
        self.set_limits(requests_per_minute=3)
        self.llm_calls(3, timedelta(seconds=50))
        result = self.assert_stopped("3 requests per minute for you", timedelta(seconds=10))
        self.assertIn("(in 10 s)", result.reply)
        self.assertEqual(self.env["res.config.settings"].create({}).agentic_ai_max_requests_per_minute, 3)

    def test_zero_means_no_limit(self):
        self.set_limits(requests_per_minute=0, requests_per_hour=0, cost_per_day_agent=0, cost_per_day_company=0)
        self.assertEqual(self.env["ir.config_parameter"].sudo().get_param("agentic_ai.max_requests_per_minute"), "0")
        self.assertEqual(self.env["res.config.settings"].create({}).agentic_ai_max_requests_per_minute, 0)
        self.llm_calls(300, timedelta(seconds=5), cost=500.0)
        self.script({"content": "still here"})
        _thread, result = self.run_agent("hello", user=self.plain)
        self.assertEqual((result.state, result.reply), ("completed", "still here"))

    # --------------------------------------------------------- the decision
    def test_decision_order_and_reset_times(self):
        now = datetime(2026, 1, 1, 12, 0, 0)
        usage = {"requests_per_minute": WindowUsage(20, now - timedelta(seconds=40)),
                 "requests_per_hour": WindowUsage(200, now - timedelta(minutes=30)),
                 "cost_per_day_company": WindowUsage(80.0, now - timedelta(hours=1))}
        hit = check(RateLimits(), usage, now)
        self.assertEqual((hit.key, hit.resets_at, hit.seconds_left(now)),
                         ("requests_per_minute", now + timedelta(seconds=20), 20))
        hit = check(RateLimits(requests_per_minute=0), usage, now)
        self.assertEqual((hit.key, hit.resets_at), ("requests_per_hour", now + timedelta(minutes=30)))
        hit = check(RateLimits(requests_per_minute=0, requests_per_hour=201), usage, now)
        self.assertEqual((hit.key, hit.resets_at), ("cost_per_day_company", now + timedelta(hours=23)))
        self.assertIsNone(check(RateLimits(0, 0, 0, 0), usage, now))
        self.assertIsNone(check(RateLimits(), {}, now))
        self.assertIn("resets at 12:00:20 (in 20 s)", check(RateLimits(), usage, now).message(now, "UTC"))

    def test_limits_read_from_parameters(self):
        params = {"agentic_ai.max_requests_per_minute": "5", "agentic_ai.max_requests_per_hour": "junk",
                  "agentic_ai.max_cost_per_day_agent": "0", "agentic_ai.max_cost_per_day_company": "12.5"}
        self.assertEqual(RateLimits.from_params(params.get), RateLimits(5, 200, 0.0, 12.5))
        self.assertEqual(RateLimits.from_params(lambda key: False), RateLimits())
        self.assertFalse(RateLimits(0, 0, 0, 0).active)
