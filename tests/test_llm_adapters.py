"""Every provider over real HTTP against the scripted server, in each mode:
plain, streamed, one and parallel tool calls, embeddings and failures
(spec 000 §6; issue 3). The provider × mode matrix is the product of
PROVIDERS and the test methods of this class."""
import json

from odoo.tests import tagged

from odoo.addons.agentic_ai.llm import EmbeddingsUnavailable, LLMError

from .common import AgenticCase, closed_port_url

# name: (provider_type, base path under the server root, extra values)
PROVIDERS = {
    "openai": ("openai", "/v1", {}),
    "azure": ("openai", "/v1", {"api_version": "2024-10-21"}),
    "custom": ("custom", "/v1", {}),
    "ollama": ("ollama", "/v1", {}),
    "ollama_prompt": ("ollama", "/v1", {"supports_tool_calling": False}),
    "gemini": ("gemini", "/v1beta", {}),
    "anthropic": ("anthropic", "/v1", {}),
}
TOOLS = [{"name": "odoo_search_read", "description": "Search records.", "parameters": {
    "type": "object", "properties": {"model": {"type": "string"}, "limit": {"type": "integer"}}, "required": ["model"]}}]
MESSAGES = [{"role": "system", "content": "You are an ERP assistant."}, {"role": "user", "content": "Find partners"}]
ONE_CALL = {"content": "Looking it up.", "tool_calls": [
    {"name": "odoo_search_read", "arguments": {"model": "res.partner", "limit": 5}, "id": "c1"}]}
TWO_CALLS = {"tool_calls": [
    {"name": "odoo_search_read", "arguments": {"model": "res.partner", "limit": 5}, "id": "c1"},
    {"name": "odoo_search_read", "arguments": {"model": "sale.order"}, "id": "c2"}]}


@tagged("post_install", "-at_install")
class TestLLMAdapters(AgenticCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        root = cls.llm.base_url.removesuffix("/v1")
        cls.providers = {}
        for name, (provider_type, path, extra) in PROVIDERS.items():
            cls.providers[name] = cls.env["agentic.ai.llm.provider"].create({
                "name": name, "provider_type": provider_type, "api_base_url": root + path,
                "api_key": "key-" + name, "default_model": "model-" + name, "timeout_seconds": 5, **extra})

    def each(self, names=None):
        for name in names or PROVIDERS:
            with self.subTest(provider=name):
                yield name, self.providers[name]._get_adapter()

    def script_twice(self, reply):
        self.script(reply, reply)

    def test_plain_text(self):
        for name, adapter in self.each():
            self.script({"content": "Hello there", "usage": {"prompt_tokens": 11, "completion_tokens": 3}})
            response = adapter.chat_completion(MESSAGES, TOOLS)
            self.assertEqual(response.content, "Hello there")
            self.assertEqual(response.tool_calls, [])
            self.assertEqual(response.finish_reason, "stop")
            self.assertEqual((response.input_tokens, response.output_tokens), (11, 3), "usage from the response")

    def test_streamed_text(self):
        for name, adapter in self.each():
            self.script({"content": "Hello there, how are you"})
            chunks = list(adapter.chat_completion_stream(MESSAGES, TOOLS))
            self.assertEqual("".join(c.content for c in chunks), "Hello there, how are you")
            self.assertGreater(len([c for c in chunks if c.content]), 1, "text arrives in several deltas")
            self.assertEqual(chunks[-1].finish_reason, "stop")
            self.assertGreater(chunks[-1].input_tokens, 0)

    def test_one_tool_call(self):
        for name, adapter in self.each():
            self.script(ONE_CALL if name != "ollama_prompt" else {"content": 'Looking it up. <tool_call>{"name": "odoo_search_read", "arguments": {"model": "res.partner", "limit": 5}}</tool_call>'})
            response = adapter.chat_completion(MESSAGES, TOOLS)
            self.assertEqual([(c.name, c.arguments) for c in response.tool_calls],
                             [("odoo_search_read", {"model": "res.partner", "limit": 5})])
            self.assertEqual(response.content, "Looking it up.")
            self.assertEqual(response.finish_reason, "tool_calls")

    def test_parallel_tool_calls_streamed(self):
        prompt_text = ('<tool_call>{"name": "odoo_search_read", "arguments": {"model": "res.partner", "limit": 5}}</tool_call>'
                       '<tool_call>{"name": "odoo_search_read", "arguments": {"model": "sale.order"}}</tool_call>')
        for name, adapter in self.each():
            self.script(TWO_CALLS if name != "ollama_prompt" else {"content": prompt_text})
            chunks = list(adapter.chat_completion_stream(MESSAGES, TOOLS))
            self.assertTrue(all(not c.tool_calls for c in chunks[:-1]), "calls are yielded whole, at the end")
            self.assertEqual([c.arguments for c in chunks[-1].tool_calls], [{"model": "res.partner", "limit": 5}, {"model": "sale.order"}])
            self.assertEqual("".join(c.content for c in chunks), "", "no tag or JSON reaches the text stream")
            self.assertEqual(chunks[-1].finish_reason, "tool_calls")

    def test_tools_are_sent_in_each_wire_format(self):
        for name, adapter in self.each():
            self.script({"content": "ok"})
            adapter.chat_completion(MESSAGES, TOOLS)
            body = self.scenario.requests[-1]["body"]
            if name in ("gemini",):
                self.assertEqual(body["tools"][0]["functionDeclarations"][0]["name"], "odoo_search_read")
                self.assertEqual(body["systemInstruction"]["parts"][0]["text"], "You are an ERP assistant.")
            elif name == "anthropic":
                self.assertEqual(body["tools"][0]["input_schema"]["required"], ["model"])
                self.assertEqual(body["system"], "You are an ERP assistant.")
                self.assertEqual(body["max_tokens"], 4096)
            elif name == "ollama_prompt":
                self.assertNotIn("tools", body)
                self.assertIn("<tool_call>", body["messages"][0]["content"])
            else:
                self.assertEqual(body["tools"][0], {"type": "function", "function": TOOLS[0]})

    def test_keys_travel_in_headers_only(self):
        for name, adapter in self.each():
            self.script({"content": "ok"})
            adapter.chat_completion(MESSAGES)
            request = self.scenario.requests[-1]
            headers = {k.lower(): v for k, v in request["headers"].items()}
            self.assertNotIn("key-", request["path"])
            expected = {"gemini": "x-goog-api-key", "anthropic": "x-api-key", "azure": "api-key"}.get(name, "authorization")
            self.assertIn("key-" + name, headers.get(expected, ""), name)

    def test_embeddings(self):
        for name, adapter in self.each([n for n in PROVIDERS if n != "anthropic"]):
            vectors = adapter.embed([f"text {i}" for i in range(150)])
            self.assertEqual(len(vectors), 150)
            self.assertEqual({len(v) for v in vectors}, {self.scenario.embedding_dim})
            self.assertEqual(adapter.embedding_dimension(), self.scenario.embedding_dim)
        batches = [r for r in self.scenario.requests if "embed" in r["path"].lower()]
        self.assertTrue(all(len(r["body"].get("input") or r["body"].get("requests")) <= 100 for r in batches), "batched")
        with self.assertRaises(LLMError):
            self.providers["anthropic"]._get_adapter().embed(["x"])

    def test_ollama_model_without_embeddings_degrades(self):
        self.scenario.embeddings_error = (400, 'model "llama3" does not support embeddings')
        try:
            with self.assertRaises(EmbeddingsUnavailable), self.assertLogs("odoo.addons.agentic_ai.llm.ollama_adapter", "WARNING"):
                self.providers["ollama"]._get_adapter().embed(["x"])
        finally:
            self.scenario.embeddings_error = None

    def test_failures(self):
        for name, adapter in self.each():
            self.script({"status": 401, "error": f"invalid key for {name}"})
            with self.assertRaises(LLMError) as bad:
                adapter.chat_completion(MESSAGES)
            self.assertFalse(bad.exception.retryable)
            self.assertIn(f"invalid key for {name}", str(bad.exception))
            self.assertNotIn("key-" + name, str(bad.exception))
            self.script({"status": 503, "error": "overloaded"})
            with self.assertRaises(LLMError) as busy:
                list(adapter.chat_completion_stream(MESSAGES))
            self.assertTrue(busy.exception.retryable)
            self.script({"status": 429, "error": "slow down", "headers": {"Retry-After": "2"}})
            with self.assertRaises(LLMError) as rate:
                adapter.chat_completion(MESSAGES)
            self.assertEqual((rate.exception.retryable, rate.exception.retry_after), (True, 2.0))

    def test_timeout_comes_from_the_provider(self):
        for name, provider in self.providers.items():
            with self.subTest(provider=name):
                provider.timeout_seconds = 1
                self.script({"content": "late", "delay": 1.3})
                with self.assertRaises(LLMError) as error:
                    provider._get_adapter().chat_completion(MESSAGES)
                self.assertIn("timed out", str(error.exception))
                self.assertTrue(error.exception.retryable)

    def test_connection_refused(self):
        for name in PROVIDERS:
            with self.subTest(provider=name):
                provider = self.providers[name].copy({"api_base_url": closed_port_url()})
                with self.assertRaises(LLMError) as error:
                    provider._get_adapter().chat_completion(MESSAGES)
                self.assertTrue(error.exception.retryable)

    def test_agent_round_trip_keeps_arguments_for_every_provider(self):
        """parse → store in the thread → replay to the provider → parse."""
        arguments = {"model": "res.partner", "domain": [["name", "ilike", "Azure"]], "limit": 3}
        for name in PROVIDERS:
            with self.subTest(provider=name):
                self.agent.llm_provider_id = self.providers[name]
                call = ('<tool_call>' + json.dumps({"name": "odoo_search_read", "arguments": arguments}) + '</tool_call>'
                        if name == "ollama_prompt" else None)
                self.script({"content": call} if call else {"tool_calls": [{"name": "odoo_search_read", "arguments": arguments, "id": "rt1"}]},
                            {"content": "done"})
                thread = self.new_thread()
                result = self.agent.run(thread.id, "search")
                self.assertEqual(result.reply, "done")
                stored = thread.message_ids.filtered(lambda m: m.role == "tool_call")
                self.assertEqual(json.loads(stored.tool_arguments), arguments)
                replay = self.scenario.chat_requests()[-1]["messages"]
                if name == "ollama_prompt":
                    echoed = [m for m in replay if m["role"] == "assistant"][0]["content"]
                    self.assertEqual(json.loads(echoed.split("<tool_call>")[1].split("</tool_call>")[0])["arguments"], arguments)
                else:
                    echoed = [m for m in replay if m.get("tool_calls")][0]["tool_calls"][0]
                    self.assertEqual(json.loads(echoed["function"]["arguments"]), arguments)
                    results = [m for m in replay if m["role"] == "tool"]
                    self.assertEqual(len(results), 1)
                    self.assertIn("res.partner", results[0]["content"])

    def test_keys_never_reach_logs_or_messages(self):
        for name in PROVIDERS:
            with self.subTest(provider=name):
                self.agent.llm_provider_id = self.providers[name]
                self.script({"status": 401, "error": "bad credentials"})
                thread = self.new_thread()
                result = self.agent.run(thread.id, "hello")
                self.assertEqual(result.state, "error")
                logs = self.env["agentic.ai.execution.log"].search([("thread_id", "=", thread.id)])
                stored = " ".join(filter(None, logs.mapped("error_message") + logs.mapped("input_data")
                                         + logs.mapped("output_data") + thread.message_ids.mapped("content")))
                self.assertIn("bad credentials", stored)
                self.assertNotIn("key-" + name, stored)

    def test_run_budget_is_enforced(self):
        self.agent.write({"llm_provider_id": self.providers["anthropic"].id, "max_tokens_per_run": 150})
        self.scenario.turns.clear()
        self.scenario.add({**ONE_CALL, "usage": {"prompt_tokens": 100, "completion_tokens": 60}}, uses=None)
        thread = self.new_thread()
        result = self.agent.run(thread.id, "search forever")
        self.assertEqual(result.iterations, 1)
        self.assertIn("token budget reached: 160 of 150 tokens", result.reply)

    def test_extra_headers_and_params_reach_every_provider(self):
        for name, provider in self.providers.items():
            with self.subTest(provider=name):
                provider.write({"extra_headers": '{"X-Team": "erp"}', "extra_params": '{"metadata_tag": "odoo"}'})
                self.script({"content": "ok"})
                provider._get_adapter().chat_completion(MESSAGES)
                request = self.scenario.requests[-1]
                self.assertEqual({k.lower(): v for k, v in request["headers"].items()}.get("x-team"), "erp")
                self.assertEqual(request["body"]["metadata_tag"], "odoo")

    def test_reasoning_models_get_only_the_parameters_they_accept(self):
        self.script({"content": "ok"}, {"content": "ok"})
        provider = self.providers["openai"]
        provider.default_model = "o3-mini"
        provider._get_adapter().chat_completion(MESSAGES)
        body = self.scenario.requests[-1]["body"]
        self.assertNotIn("temperature", body)
        self.assertNotIn("max_tokens", body)
        self.assertEqual(body["max_completion_tokens"], 4096)
        provider.default_model = "gpt-4o"
        provider._get_adapter().chat_completion(MESSAGES)
        self.assertEqual(self.scenario.requests[-1]["body"]["max_tokens"], 4096)
