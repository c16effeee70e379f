"""Tokens and cost exact for every provider, streamed or not (issue 14).

Each provider of the matrix answers over real HTTP, in its own wire format,
with the usage fields its API documents (OpenAI/Azure
``prompt_tokens_details.cached_tokens`` and
``completion_tokens_details.reasoning_tokens``; Anthropic
``cache_read_input_tokens``/``cache_creation_input_tokens`` with streamed
usage cumulative across events; Gemini ``cachedContentTokenCount`` and
``thoughtsTokenCount`` with streamed usage cumulative per chunk; Ollama's
counts). Every record is checked streamed and not streamed, through the
adapter and through the engine's LLM call into the execution log, the
thread statistics and the cost report."""

from odoo.exceptions import ValidationError
from odoo.tests import Form, tagged

from ..engine.durable.audit import AuditTrail
from ..engine.turn.llm_calls import LLMCaller
from ..engine.turn.run_context import build_run_context
from ..llm import Prices, TokenTracker, Usage
from ..llm.usage import FIGURES, MAX_TOKEN_COUNT, measured_usage
from .common import MESSAGES, PROVIDER_MATRIX, AdapterCase

# The issue's prices, USD per million tokens: input, cached input (read), cache write, output.
PRICES = {"input_price_per_million": 2.00, "cache_read_price_per_million": 0.50,
          "cache_write_price_per_million": 2.50, "output_price_per_million": 8.00}
OPENAI_USAGE = {"prompt_tokens": 2000, "completion_tokens": 500, "prompt_tokens_details": {"cached_tokens": 1500},
                "completion_tokens_details": {"reasoning_tokens": 300}}
# provider -> (reply, expected figures (input, cache read, cache write, output, reasoning), cost in USD)
CASES = {
    "openai": ({"usage": OPENAI_USAGE}, (2000, 1500, 0, 500, 300), 0.00575),
    "azure": ({"usage": OPENAI_USAGE}, (2000, 1500, 0, 500, 300), 0.00575),
    "custom": ({"usage": {**OPENAI_USAGE, "prompt_tokens_details": {"cached_tokens": 1500, "cache_write_tokens": 400}}},
               (2000, 1500, 400, 500, 300), 0.00575 - 400 * 2e-6 + 400 * 2.5e-6),
    "ollama": ({"usage": {"prompt_tokens": 800, "completion_tokens": 120}}, (800, 0, 0, 120, 0), 0.00256),
    "ollama_prompt": ({"usage": {"prompt_tokens": 800, "completion_tokens": 120}}, (800, 0, 0, 120, 0), 0.00256),
    "custom_prompt": ({"usage": {"prompt_tokens": 800, "completion_tokens": 120}}, (800, 0, 0, 120, 0), 0.00256),
    "gemini": ({"gemini_usage": {"promptTokenCount": 1200, "cachedContentTokenCount": 1000,
                                 "candidatesTokenCount": 95, "thoughtsTokenCount": 400, "totalTokenCount": 1695}},
               (1200, 1000, 0, 495, 400), 200 * 2e-6 + 1000 * 0.5e-6 + 495 * 8e-6),
    "anthropic": ({"anthropic_usage": {"input_tokens": 12, "cache_read_input_tokens": 9800, "output_tokens": 350}},
                  (9812, 9800, 0, 350, 0), 0.007724),
}


def figures(usage: Usage) -> tuple:
    return tuple(getattr(usage, name) for name in FIGURES)


@tagged("post_install", "-at_install")
class TestUsageAndCost(AdapterCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        for provider in cls.providers.values():
            provider.write(PRICES)

    def answers(self, adapter, reply):
        """``(non-streamed usage, streamed usage)`` of the same scripted answer."""
        self.script({"content": "Two partners match.", **reply}, {"content": "Two partners match.", **reply})
        response = adapter.chat_completion(MESSAGES)
        streamed = list(adapter.chat_completion_stream(MESSAGES))
        self.assertIsNone(streamed[0].usage if len(streamed) > 1 else None, "usage only on the last chunk")
        return response.usage, streamed[-1].usage

    # ------------------------------------------------------------- adapters
    def test_each_provider_reads_its_documented_usage_fields_streamed_and_not(self):
        for name, adapter in self.each():
            reply, expected, cost = CASES[name]
            plain, streamed = self.answers(adapter, reply)
            self.assertEqual(figures(plain), expected)
            self.assertEqual(plain, streamed, "the same answer streamed gives the same record")
            self.assertEqual(plain.estimated, frozenset(), "every figure came from the provider")
            self.assertAlmostEqual(self.providers[name]._prices().cost(plain), cost, places=10)

    def test_the_issues_examples_to_the_cent(self):
        openai = Usage(input_tokens=2000, cache_read_tokens=1500, output_tokens=500, reasoning_tokens=300)
        prices = self.providers["openai"]._prices()
        self.assertEqual((prices.input, prices.cache_read, prices.cache_write, prices.output),
                         (2e-6, 0.5e-6, 2.5e-6, 8e-6))
        self.assertAlmostEqual(prices.cost(openai), 0.00575, places=12)
        anthropic = Usage(input_tokens=9812, cache_read_tokens=9800, output_tokens=350)
        self.assertAlmostEqual(prices.cost(anthropic), 0.007724, places=12)

    def test_anthropic_cache_writes_count_as_input_at_the_cache_write_price(self):
        adapter = self.providers["anthropic"]._get_adapter()
        plain, streamed = self.answers(adapter, {"anthropic_usage": {
            "input_tokens": 12, "cache_creation_input_tokens": 2000, "cache_read_input_tokens": 0,
            "output_tokens": 350}})
        self.assertEqual(figures(plain), (2012, 0, 2000, 350, 0))
        self.assertEqual(plain, streamed)
        self.assertAlmostEqual(self.providers["anthropic"]._prices().cost(plain),
                               12 * 2e-6 + 2000 * 2.5e-6 + 350 * 8e-6, places=12)

    def test_a_reported_zero_is_kept_only_where_it_can_be_true(self):
        """Anthropic's uncached input may be 0 (all read from the cache): the
        provider's figure. A server that does not count sends zeros: an
        input total of 0, or an output of 0 for an answer with text, cannot
        be true and is estimated (flagged); an empty answer's 0 is kept."""
        adapter = self.providers["anthropic"]._get_adapter()
        plain, streamed = self.answers(adapter, {"anthropic_usage": {
            "input_tokens": 0, "cache_read_input_tokens": 5000, "output_tokens": 7}})
        self.assertEqual(figures(plain), (5000, 5000, 0, 7, 0))
        self.assertEqual((plain.estimated, streamed), (frozenset(), plain))
        zeros = {"usage": {"prompt_tokens": 0, "completion_tokens": 0}}
        plain, streamed = self.answers(self.providers["custom"]._get_adapter(), zeros)
        self.assertEqual((plain.estimated, streamed), ({"input_tokens", "output_tokens"}, plain))
        self.assertTrue(plain.input_tokens > 0 and plain.output_tokens > 0)
        self.script({**zeros, "content": ""})
        empty = self.providers["custom"]._get_adapter().chat_completion(MESSAGES).usage
        self.assertEqual((empty.output_tokens, empty.estimated), (0, {"input_tokens"}))

    def test_an_answer_without_usage_is_estimated_and_flagged_on_every_provider(self):
        for _name, adapter in self.each():
            plain, streamed = self.answers(adapter, {"no_usage": True})
            self.assertEqual(plain.estimated, {"input_tokens", "output_tokens"})
            self.assertTrue(plain.input_tokens > 10 and plain.output_tokens > 2, figures(plain))
            self.assertEqual(plain, streamed, "estimated the same way streamed and not")

    def test_reasoning_text_without_a_count_is_estimated_within_the_output(self):
        """Ollama sends a thinking model's text but no reasoning count;
        Anthropic's thinking has no count of its own (it is inside
        output_tokens): the reasoning is estimated from the text, flagged,
        and never more than the output the provider reported."""
        thinking = "The user wants partners, so I should search res.partner first and count them."
        for name, usage in (("ollama", {"usage": {"prompt_tokens": 800, "completion_tokens": 120}}),
                            ("anthropic", {"anthropic_usage": {"input_tokens": 800, "output_tokens": 120}}),
                            ("anthropic", {"anthropic_usage": {"input_tokens": 800, "output_tokens": 5}})):
            adapter = self.providers[name]._get_adapter()
            with self.subTest(provider=name, usage=usage):
                plain, streamed = self.answers(adapter, {**usage, "reasoning": thinking})
                self.assertEqual(plain, streamed)
                self.assertEqual(plain.estimated, {"reasoning_tokens"})
                output = plain.output_tokens
                self.assertIn(output, (120, 5), "the reported output is kept")
                self.assertEqual(plain.reasoning_tokens, min(adapter.count_tokens(thinking), output))
        # Gemini reports thinking itself: its thought summary changes nothing.
        adapter = self.providers["gemini"]._get_adapter()
        plain, streamed = self.answers(adapter, {**CASES["gemini"][0], "reasoning": thinking})
        self.assertEqual((figures(plain), plain.estimated, streamed), ((1200, 1000, 0, 495, 400), frozenset(), plain))

    def test_gemini_leaves_out_zero_counts(self):
        """Proto3 JSON omits a count that is 0: a usageMetadata with a
        prompt count and no thoughts or cache count means 0 of them."""
        adapter = self.providers["gemini"]._get_adapter()
        plain, streamed = self.answers(adapter, {"gemini_usage": {"promptTokenCount": 40, "candidatesTokenCount": 7}})
        self.assertEqual((figures(plain), plain.estimated, streamed), ((40, 0, 0, 7, 0), frozenset(), plain))

    def test_nonsense_usage_never_breaks_the_invariants(self):
        hostile = [
            {"usage": {"prompt_tokens": -5, "completion_tokens": "many",
                       "prompt_tokens_details": {"cached_tokens": 10**12},
                       "completion_tokens_details": {"reasoning_tokens": 10**15}}},
            {"usage": {"prompt_tokens": True, "completion_tokens": 3.5, "prompt_tokens_details": None,
                       "completion_tokens_details": "x"}},
            {"usage": {"prompt_tokens": 10**20, "completion_tokens": 10**20,
                       "prompt_tokens_details": {"cached_tokens": 10**20, "cache_write_tokens": 10**20}}},
            {"usage": {"prompt_tokens": 100, "completion_tokens": 10, "prompt_tokens_details": {"cached_tokens": 900},
                       "completion_tokens_details": {"reasoning_tokens": 50}}},
        ]
        adapter = self.providers["custom"]._get_adapter()
        for reply in hostile:
            with self.subTest(reply=reply):
                plain, streamed = self.answers(adapter, reply)
                self.assertEqual(plain, streamed)
                for usage in (plain, streamed):
                    self.assertTrue(all(0 <= getattr(usage, name) <= MAX_TOKEN_COUNT for name in FIGURES))
                    self.assertLessEqual(usage.cache_read_tokens + usage.cache_write_tokens, usage.input_tokens)
                    self.assertLessEqual(usage.reasoning_tokens, usage.output_tokens)
        self.assertEqual(figures(plain), (100, 100, 0, 10, 10), "parts cut to their totals")
        usage = measured_usage(lambda: 7, lambda: 3, input_tokens="12", output_tokens=4.0)
        self.assertEqual((figures(usage), usage.estimated), ((7, 0, 0, 4, 0), {"input_tokens"}))

    # ------------------------------------------------- the engine and the log
    def call(self, provider, reply, stream):
        """One LLM call of the engine (relayed when ``stream``), returning
        its execution log row."""
        self.agent.write({"llm_provider_id": provider.id, "fallback_provider_id": False})
        thread = self.new_thread()
        thread.name = f"usage {provider.name} {'streamed' if stream else 'not streamed'} {thread.id}"
        self.script({"content": "Two partners match.", **reply})
        caller = LLMCaller(build_run_context(self.agent, thread), AuditTrail(thread), TokenTracker(), 0.0,
                           emit=(lambda _event, _data: None) if stream else None)
        caller.answer(MESSAGES, [], lambda calls: calls)
        return thread, thread.execution_log_ids.filtered(lambda row: row.action_type == "llm_call")

    def test_the_log_the_statistics_and_the_cost_report_count_what_the_provider_bills(self):
        Log = self.env["agentic.ai.execution.log"]
        for name in PROVIDER_MATRIX:
            reply, expected, cost = CASES[name]
            for stream in (False, True):
                with self.subTest(provider=name, streamed=stream):
                    thread, row = self.call(self.providers[name], reply, stream)
                    self.assertEqual(len(row), 1)
                    self.assertEqual(tuple(row[field] for field in FIGURES), expected)
                    self.assertAlmostEqual(row.cost, round(cost, 6), places=6)
                    self.assertEqual((row.usage_estimated, row.estimated_figures), (False, False))
                    stats = thread.get_stats()
                    self.assertEqual(tuple(stats[field] for field in FIGURES), expected)
                    self.assertEqual((stats["estimated_llm_calls"], stats["usage_estimated"]), (0, False))
                    self.assertEqual((thread.total_cache_read_tokens, thread.total_reasoning_tokens),
                                     (expected[1], expected[4]))
                    report = Log.get_cost_report(group_by="thread_id")
                    [line] = [line for line in report if line["key"] == thread.display_name]
                    self.assertEqual(tuple(line[field] for field in FIGURES), expected)
                    self.assertEqual((line["calls"], line["estimated_calls"]), (1, 0))

    def test_a_stream_without_usage_is_logged_as_an_estimate_everywhere(self):
        Log = self.env["agentic.ai.execution.log"]
        for stream in (False, True):
            with self.subTest(streamed=stream):
                thread, row = self.call(self.providers["custom"], {"no_usage": True}, stream)
                self.assertTrue(row.usage_estimated)
                self.assertEqual(row.estimated_figures, "input_tokens, output_tokens")
                self.assertGreater(row.input_tokens, 0)
                self.assertAlmostEqual(row.cost, round(row.input_tokens * 2e-6 + row.output_tokens * 8e-6, 6))
                stats = thread.get_stats()
                self.assertEqual((stats["llm_calls"], stats["estimated_llm_calls"], stats["usage_estimated"]),
                                 (1, 1, True))
                self.assertTrue(thread.usage_estimated)
                [line] = [line for line in Log.get_cost_report(group_by="thread_id")
                          if line["key"] == thread.display_name]
                self.assertEqual((line["calls"], line["estimated_calls"]), (1, 1))

    def test_a_stream_broken_mid_answer_is_billed_as_an_estimate_then_retried(self):
        """The provider billed what it streamed before the connection broke:
        the failed attempt's row has that usage, estimated, and its cost
        counts in the run's tracker; the retry is logged on its own."""
        self.agent.write({"llm_provider_id": self.providers["custom"].id, "fallback_provider_id": False})
        thread = self.new_thread()
        piece = {"id": "c", "object": "chat.completion.chunk", "model": "m",
                 "choices": [{"index": 0, "delta": {"content": "Two partners match the "}, "finish_reason": None}]}
        self.script({"raw_stream": [piece, piece]}, {"content": "Two partners match.", "usage": OPENAI_USAGE})
        tracker = TokenTracker()
        caller = LLMCaller(build_run_context(self.agent, thread), AuditTrail(thread), tracker, 0.0,
                           emit=lambda _event, _data: None)
        caller.answer(MESSAGES, [], lambda calls: calls)
        broken, answered = thread.execution_log_ids.filtered(lambda row: row.action_type == "llm_call").sorted("id")
        self.assertEqual((broken.success, broken.usage_estimated), (False, True))
        self.assertIn("ended before the answer was complete", broken.error_message)
        self.assertGreater(broken.output_tokens, 0)
        self.assertGreater(broken.cost, 0)
        self.assertEqual((answered.success, answered.usage_estimated, answered.input_tokens), (True, False, 2000))
        self.assertAlmostEqual(tracker.total_cost, broken.cost + answered.cost, places=6)
        self.assertEqual((tracker.call_count, tracker.estimated_calls), (2, 1))

    def test_budgets_count_cached_input_and_say_when_figures_are_estimated(self):
        tracker = TokenTracker()
        prices = self.providers["openai"]._prices()
        self.assertAlmostEqual(tracker.track_usage(Usage(2000, 1500, 0, 500, 300), prices), 0.00575)
        tracker.track_usage(Usage(100, 0, 0, 20, 0, estimated=frozenset({"input_tokens", "output_tokens"})), prices)
        summary = tracker.get_summary()
        self.assertEqual((summary["total_input_tokens"], summary["total_cache_read_tokens"],
                          summary["total_output_tokens"], summary["total_reasoning_tokens"],
                          summary["call_count"], summary["estimated_calls"]), (2100, 1500, 520, 300, 2, 1))
        self.assertAlmostEqual(summary["total_cost"], 0.00575 + 100 * 2e-6 + 20 * 8e-6)
        within, reason = tracker.check_budget(max_cost=0.005)
        self.assertFalse(within)
        self.assertIn("1 of 2 calls estimated", reason)
        self.assertEqual(tracker.check_budget(max_tokens=10_000), (True, ""))
        self.assertFalse(tracker.check_budget(max_tokens=2620)[0])

    # --------------------------------------------------------------- prices
    def test_prices_are_entered_per_million_and_stored_per_token(self):
        Provider = self.env["agentic.ai.llm.provider"]
        provider = Provider.create({"name": "Priced", "provider_type": "openai", "default_model": "gpt-4o",
                                    "input_price_per_million": 2.5, "cache_read_price_per_million": 0,
                                    "output_price_per_million": 10})
        self.assertEqual((provider.cost_per_input_token, provider.cost_per_output_token), (2.5e-6, 1e-5))
        self.assertEqual((provider.cache_read_price_per_million, provider.cache_write_price_per_million), (2.5, 2.5),
                         "cache prices left empty (or 0) are the input price")
        self.assertEqual(provider._prices(), Prices(input=2.5e-6, output=1e-5, cache_read=2.5e-6, cache_write=2.5e-6))
        # While equal to the input price, cache prices follow it; one set apart stays.
        provider.input_price_per_million = 3
        self.assertEqual((provider.cache_read_price_per_million, provider.cache_write_price_per_million), (3, 3))
        provider.cache_read_price_per_million = 0.3
        provider.cost_per_input_token = 4e-6
        self.assertEqual((provider.cache_read_price_per_million, provider.cache_write_price_per_million), (0.3, 4))
        usage = Usage(input_tokens=1000, cache_read_tokens=400, cache_write_tokens=100, output_tokens=10)
        self.assertAlmostEqual(provider._prices().cost(usage), 500 * 4e-6 + 400 * 0.3e-6 + 100 * 4e-6 + 10 * 1e-5)
        provider.write({"input_price_per_million": 5, "cache_write_price_per_million": 6})
        self.assertEqual((provider.cache_read_price_per_million, provider.cache_write_price_per_million), (0.3, 6))
        # Tiny prices survive the per-token storage (0.001 USD per million tokens).
        provider.output_price_per_million = 0.001
        provider.invalidate_recordset()
        self.assertEqual(provider.output_price_per_million, 0.001)
        with self.assertRaises(ValidationError), self.env.cr.savepoint():
            provider.cache_read_price_per_million = -1
            provider.flush_recordset()

    def test_cache_prices_follow_the_input_price_in_the_form(self):
        with Form(self.env["agentic.ai.llm.provider"]) as form:
            form.name, form.provider_type, form.default_model = "Form", "openai", "gpt-4o"
            form.input_price_per_million, form.output_price_per_million = 2.0, 8.0
        provider = form.record
        self.assertEqual((provider.cache_read_price_per_million, provider.cache_write_price_per_million), (2.0, 2.0))
        with Form(provider) as form:
            form.input_price_per_million = 1.25
            form.cache_write_price_per_million = 1.5
        self.assertEqual((provider.input_price_per_million, provider.cache_read_price_per_million,
                          provider.cache_write_price_per_million, provider.output_price_per_million),
                         (1.25, 1.25, 1.5, 8.0))

    def test_providers_priced_before_keep_their_prices(self):
        """Prices per token as before; at upgrade, cache prices (new, NULL
        columns) become the input price."""
        Provider = self.env["agentic.ai.llm.provider"]
        old = Provider.create({"name": "Old", "provider_type": "openai", "default_model": "gpt-4",
                               "cost_per_input_token": 0.00003, "cost_per_output_token": 0.00006})
        self.assertEqual((old.input_price_per_million, old.output_price_per_million), (30, 60))
        self.env.cr.execute("UPDATE agentic_ai_llm_provider SET cost_per_cache_read_token = NULL, "
                            "cost_per_cache_write_token = NULL WHERE id = %s", [old.id])
        Provider.init()
        old.invalidate_recordset()
        self.assertEqual((old.cost_per_cache_read_token, old.cost_per_cache_write_token), (0.00003, 0.00003))
        self.assertEqual((old.cost_per_input_token, old.cost_per_output_token), (0.00003, 0.00006))
        self.assertAlmostEqual(old._prices().cost(Usage(1000, 1000, 0, 10, 0)), 1000 * 0.00003 + 10 * 0.00006)
