"""Provider model, OpenAI adapter over real HTTP, tokens and cost
(spec 000 §3.1, §6.1, §6.2, §6.5)."""
import json

from odoo.exceptions import UserError, ValidationError
from odoo.tests import tagged
from odoo.tools import mute_logger

from odoo.addons.agentic_ai.llm import (LLMError, OpenAIAdapter, ProviderConfig, TokenTracker, count_tokens,
                                        parse_tool_arguments)

from .common import AgenticCase, closed_port_url, tool_call


@tagged("post_install", "-at_install")
class TestLLMProviders(AgenticCase):

    def adapter(self, **overrides):
        values = {"provider_type": "custom", "base_url": self.llm.base_url, "model": "scripted-model",
                  "api_key": "k-123", "timeout": 5.0, **overrides}
        return OpenAIAdapter(ProviderConfig(**values))

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
        self.env.cr.execute("UPDATE agentic_ai_llm_provider SET extra_headers = 'oops', extra_params = '[1]' WHERE id = %s",
                            [self.provider.id])
        self.provider.invalidate_recordset()
        with mute_logger("odoo.addons.agentic_ai.models.llm_provider"):
            config = self.provider._get_provider_config()
        self.assertEqual((config.extra_headers, config.extra_params), ({}, {}))

    def test_extra_headers_and_params_reach_the_wire(self):
        self.provider.write({"extra_headers": '{"X-Team": "erp"}', "extra_params": '{"top_p": 0.5}'})
        self.script({"content": "pong"})
        self.provider._get_adapter().chat_completion([{"role": "user", "content": "ping"}])
        request = self.scenario.requests[-1]
        self.assertEqual(request["headers"].get("X-Team"), "erp")
        self.assertEqual(request["body"]["top_p"], 0.5)
        self.assertEqual(request["headers"].get("Authorization"), "Bearer test-key-not-secret")

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

    def test_every_provider_type_has_its_adapter(self):
        from odoo.addons.agentic_ai.llm import AnthropicAdapter, GeminiAdapter, OllamaAdapter
        expected = {"openai": OpenAIAdapter, "custom": OpenAIAdapter, "ollama": OllamaAdapter,
                    "gemini": GeminiAdapter, "anthropic": AnthropicAdapter}
        for provider_type, cls in expected.items():
            provider = self.env["agentic.ai.llm.provider"].create({
                "name": provider_type, "provider_type": provider_type, "default_model": "m",
                "api_base_url": "http://127.0.0.1:1/v1"})
            self.assertIs(type(provider._get_adapter()), cls, provider_type)

    # ------------------------------------------------------------ adapter
    def test_chat_completion_sends_tools_and_parses_calls(self):
        self.script(tool_call("odoo_search_read", {"model": "res.partner", "limit": 5}, "call_9"))
        tools = [self.env.ref("agentic_ai.tool_odoo_search_read").to_llm_schema()]
        response = self.adapter().chat_completion([{"role": "user", "content": "find"}], tools)
        body = self.scenario.requests[-1]["body"]
        self.assertEqual(body["tools"][0]["type"], "function")
        self.assertEqual(body["tools"][0]["function"]["name"], "odoo_search_read")
        self.assertEqual(response.finish_reason, "tool_calls")
        self.assertEqual(response.tool_calls[0].id, "call_9")
        self.assertEqual(response.tool_calls[0].arguments, {"model": "res.partner", "limit": 5})
        self.assertGreater(response.input_tokens, 0)

    def test_usage_comes_from_the_response(self):
        self.script({"content": "hi", "usage": {"prompt_tokens": 123, "completion_tokens": 45}})
        response = self.adapter().chat_completion([{"role": "user", "content": "x"}])
        self.assertEqual((response.input_tokens, response.output_tokens), (123, 45))

    def test_stream_yields_text_and_whole_tool_calls(self):
        self.script({"content": "Looking it up now", **tool_call("odoo_search_read", {"model": "res.partner", "limit": 5})})
        chunks = list(self.adapter().chat_completion_stream([{"role": "user", "content": "find"}]))
        text = "".join(c.content for c in chunks)
        self.assertEqual(text, "Looking it up now")
        final = chunks[-1]
        self.assertEqual(final.finish_reason, "tool_calls")
        self.assertEqual(len(final.tool_calls), 1)
        self.assertEqual(final.tool_calls[0].arguments, {"model": "res.partner", "limit": 5})
        self.assertTrue(all(not c.tool_calls for c in chunks[:-1]), "no partial tool call is ever yielded")
        self.assertGreater(final.input_tokens, 0)

    def test_embeddings(self):
        vectors = self.adapter().embed(["large desk", "office chair"])
        self.assertEqual(len(vectors), 2)
        self.assertEqual(len(vectors[0]), self.scenario.embedding_dim)

    def test_errors_are_classified_and_never_leak_the_key(self):
        self.script({"status": 429, "error": "slow down", "headers": {"Retry-After": "3"}},
                    {"status": 400, "error": "bad request: unknown parameter"})
        with self.assertRaises(LLMError) as rate:
            self.adapter().chat_completion([{"role": "user", "content": "x"}])
        self.assertTrue(rate.exception.retryable)
        self.assertEqual(rate.exception.retry_after, 3.0)
        with self.assertRaises(LLMError) as bad:
            self.adapter().chat_completion([{"role": "user", "content": "x"}])
        self.assertFalse(bad.exception.retryable)
        self.assertIn("unknown parameter", str(bad.exception))
        with self.assertRaises(LLMError) as down:
            self.adapter(base_url=closed_port_url()).chat_completion([{"role": "user", "content": "x"}])
        self.assertTrue(down.exception.retryable)
        for exc in (rate.exception, bad.exception, down.exception):
            self.assertNotIn("k-123", str(exc))
        self.assertNotIn("k-123", repr(self.adapter().config))

    def test_azure_uses_api_version_and_api_key_header(self):
        self.script({"content": "ok"})
        self.adapter(api_version="2024-10-21").chat_completion([{"role": "user", "content": "x"}])
        request = self.scenario.requests[-1]
        self.assertIn("api-version=2024-10-21", request["path"])
        self.assertEqual(request["headers"].get("api-key"), "k-123")
        self.assertNotIn("Authorization", request["headers"])

    def test_history_replays_arguments_as_json_text(self):
        self.script({"content": "ok"})
        history = [{"role": "user", "content": "x"},
                   {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "name": "t", "arguments": {"a": 1}}]},
                   {"role": "tool", "tool_call_id": "c1", "name": "t", "content": "result"}]
        self.adapter().chat_completion(history)
        sent = self.scenario.requests[-1]["body"]["messages"]
        self.assertEqual(sent[1]["tool_calls"][0]["function"]["arguments"], '{"a": 1}')
        self.assertEqual(sent[2]["tool_call_id"], "c1")

    # ------------------------------------------------------------ parsing
    def test_argument_shapes(self):
        expected = {"model": "res.partner"}
        self.assertEqual(parse_tool_arguments('{"model": "res.partner"}'), (expected, None))
        self.assertEqual(parse_tool_arguments({"model": "res.partner"}), (expected, None))
        self.assertEqual(parse_tool_arguments(json.dumps('{"model": "res.partner"}')), (expected, None))
        self.assertEqual(parse_tool_arguments(""), ({}, None))
        self.assertEqual(parse_tool_arguments(None), ({}, None))
        args, error = parse_tool_arguments('["res.partner"]')
        self.assertEqual(args, {})
        self.assertIn("must be a JSON object", error)
        args, error = parse_tool_arguments('{"model": "sale.order", "ids": [7], }')
        self.assertEqual(args, {})
        self.assertIn("not valid JSON", error)
        self.assertEqual(parse_tool_arguments('```json\n{"model": "res.partner"}\n```')[0], expected)
        self.assertEqual(parse_tool_arguments('{"model": "res.partner"} I will now search.')[0], expected)

    # ------------------------------------------------------- tokens & cost
    def test_count_tokens_offline_never_raises(self):
        self.assertEqual(count_tokens("Hello world", "gpt-4"), 2)
        self.assertGreater(count_tokens("Hello world", "gpt-4o"), 0)
        self.assertGreater(count_tokens("Hello world", "some-local-model:7b"), 0)
        self.assertEqual(count_tokens("", "gpt-4o"), 0)
        self.assertGreater(count_tokens("<|endoftext|> special", None), 0)

    def test_token_tracker(self):
        tracker = TokenTracker(cost_per_input_token=0.001, cost_per_output_token=0.002)
        self.assertAlmostEqual(tracker.track(100, 50), 0.2)
        tracker.track(10, 10)
        summary = tracker.get_summary()
        self.assertEqual((summary["total_input_tokens"], summary["total_output_tokens"], summary["call_count"]), (110, 60, 2))
        self.assertAlmostEqual(summary["total_cost"], 0.23)
        self.assertEqual(tracker.check_budget(max_cost=1.0), (True, ""))
        ok, reason = tracker.check_budget(max_cost=0.1)
        self.assertFalse(ok)
        self.assertIn("cost budget", reason)
        self.assertFalse(tracker.check_budget(max_tokens=100)[0])

    def test_run_cost_uses_provider_prices(self):
        self.script({"content": "ok", "usage": {"prompt_tokens": 1000, "completion_tokens": 500}})
        result = self.agent.run(self.new_thread().id, "hi")
        self.assertAlmostEqual(result.cost, 1000 * 0.000001 + 500 * 0.000002)
