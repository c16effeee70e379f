"""Every provider over real HTTP against the scripted server, in each mode
(spec 000 §6; issue 3): plain and streamed text, one and parallel tool
calls, tools and parameters in each wire format, keys in headers, extra
headers and parameters, and embeddings. The provider × mode matrix is the
product of PROVIDER_MATRIX (tests/common.py) and the test methods of this
class; the failures of the matrix are in test_llm_failures.py."""
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from odoo.tests import tagged

from ..llm import EmbeddingsUnavailable, LLMError
from ..llm.base import checked_vectors
from .common import KEY, MESSAGES, PROVIDER_MATRIX, AdapterCase

TOOLS = [{"name": "odoo_search_read", "description": "Search records.", "parameters": {
    "type": "object", "properties": {"model": {"type": "string"}, "limit": {"type": "integer"}},
    "required": ["model"]}}]
ONE_CALL = {"content": "Looking it up.", "tool_calls": [
    {"name": "odoo_search_read", "arguments": {"model": "res.partner", "limit": 5}, "id": "c1"}]}
TWO_CALLS = {"tool_calls": [
    {"name": "odoo_search_read", "arguments": {"model": "res.partner", "limit": 5}, "id": "c1"},
    {"name": "odoo_search_read", "arguments": {"model": "sale.order"}, "id": "c2"}]}
SEARCH_PARTNERS = '{"name": "odoo_search_read", "arguments": {"model": "res.partner", "limit": 5}}'
SEARCH_ORDERS = '{"name": "odoo_search_read", "arguments": {"model": "sale.order"}}'


@tagged("post_install", "-at_install")
class TestLLMAdapters(AdapterCase):

    # ------------------------------------------------------ the matrix
    def test_plain_text(self):
        for _name, adapter in self.each():
            self.script({"content": "Hello there", "usage": {"prompt_tokens": 11, "completion_tokens": 3}})
            response = adapter.chat_completion(MESSAGES, TOOLS)
            self.assertEqual(response.content, "Hello there")
            self.assertEqual(response.tool_calls, [])
            self.assertEqual(response.finish_reason, "stop")
            self.assertEqual((response.input_tokens, response.output_tokens), (11, 3), "usage from the response")

    def test_streamed_text(self):
        for _name, adapter in self.each():
            self.script({"content": "Hello there, how are you"})
            chunks = list(adapter.chat_completion_stream(MESSAGES, TOOLS))
            self.assertEqual("".join(c.content for c in chunks), "Hello there, how are you")
            self.assertGreater(len([c for c in chunks if c.content]), 1, "text arrives in several deltas")
            self.assertEqual(chunks[-1].finish_reason, "stop")
            self.assertGreater(chunks[-1].input_tokens, 0)

    def test_one_tool_call(self):
        for name, adapter in self.each():
            self.script(ONE_CALL if not name.endswith("_prompt")
                        else {"content": f"Looking it up. <tool_call>{SEARCH_PARTNERS}</tool_call>"})
            response = adapter.chat_completion(MESSAGES, TOOLS)
            self.assertEqual([(c.name, c.arguments) for c in response.tool_calls],
                             [("odoo_search_read", {"model": "res.partner", "limit": 5})])
            self.assertEqual(response.content, "Looking it up.")
            self.assertEqual(response.finish_reason, "tool_calls")

    def test_parallel_tool_calls_streamed(self):
        prompt_text = f"<tool_call>{SEARCH_PARTNERS}</tool_call><tool_call>{SEARCH_ORDERS}</tool_call>"
        for name, adapter in self.each():
            self.script(TWO_CALLS if not name.endswith("_prompt") else {"content": prompt_text})
            chunks = list(adapter.chat_completion_stream(MESSAGES, TOOLS))
            self.assertTrue(all(not c.tool_calls for c in chunks[:-1]), "calls are yielded whole, at the end")
            self.assertEqual([c.arguments for c in chunks[-1].tool_calls],
                             [{"model": "res.partner", "limit": 5}, {"model": "sale.order"}])
            self.assertEqual("".join(c.content for c in chunks), "", "no tag or JSON reaches the text stream")
            self.assertEqual(chunks[-1].finish_reason, "tool_calls")

    def test_tools_are_sent_in_each_wire_format(self):
        for name, adapter in self.each():
            self.script({"content": "ok"})
            adapter.chat_completion(MESSAGES, TOOLS)
            body = self.scenario.requests[-1]["body"]
            # Each provider of the matrix takes the one branch of its wire format.
            if name == "gemini":
                self.assertEqual(body["tools"][0]["functionDeclarations"][0]["name"], "odoo_search_read")
                self.assertEqual(body["systemInstruction"]["parts"][0]["text"], "You are an ERP assistant.")
            elif name == "anthropic":
                self.assertEqual(body["tools"][0]["input_schema"]["required"], ["model"])
                self.assertEqual(body["system"], "You are an ERP assistant.")
                self.assertEqual(body["max_tokens"], 1024)
            elif name.endswith("_prompt"):
                self.assertNotIn("tools", body)
                self.assertIn("<tool_call>", body["messages"][0]["content"])
            else:
                self.assertEqual(body["tools"][0], {"type": "function", "function": TOOLS[0]})

    def test_tools_encoded_once_per_list_are_sent_as_they_are(self):
        """The tool schemas' JSON is made once per list (``_tools_json``):
        the same list sent again gives the same tools and body; another list,
        a changed one included, its own; the other keys are all there."""
        other = [dict(TOOLS[0], name="odoo_count")]
        for name, adapter in self.each():
            if name.endswith("_prompt"):
                continue
            bodies = []
            for tools in (TOOLS, TOOLS, other, TOOLS):
                self.script({"content": "ok"})
                adapter.chat_completion(MESSAGES, tools)
                bodies.append(self.scenario.requests[-1]["body"])
            with self.subTest(provider=name):
                self.assertEqual(bodies[0], bodies[1])
                self.assertEqual(bodies[0], bodies[3])
                self.assertIn("odoo_count", json.dumps(bodies[2]["tools"]))
                self.assertNotIn("odoo_search_read", json.dumps(bodies[2]["tools"]))
                self.assertEqual(set(bodies[2]), set(bodies[0]))

    def test_history_is_sent_as_it_stands_at_each_call(self):
        """The same messages sent again give the same body; an open assistant
        message that another call joins (engine/turn/transcript.py
        MessageFolder) is sent with it, a message given new content is sent
        with it, and a new list of equal messages gives an equal body; with
        the turn's ``wire_cache`` (llm/base.py ``_messages_json``) the bodies
        are the same as without it, and each message's text is made once
        while it stays the same object."""
        call = {"id": "c1", "name": "odoo_search_read", "arguments": {"model": "res.partner"}}
        for _name, adapter in self.each(["openai", "azure", "custom", "ollama"]):
            bodies = {}
            for cache in (None, {}):
                messages = [*(dict(m) for m in MESSAGES),
                            {"role": "assistant", "content": None, "tool_calls": [dict(call)]},
                            {"role": "tool", "tool_call_id": "c1", "name": "odoo_search_read", "content": "3 records"}]
                sent = bodies[cache is None] = []
                for change in (None, None, "join", None, "content", "copy"):
                    if change == "join":
                        messages[2]["tool_calls"].append(dict(call, id="c2", arguments={"model": "sale.order"}))
                    elif change == "content":
                        messages[3]["content"] = "4 records"
                    elif change == "copy":
                        messages = [dict(message) for message in messages]
                    self.script({"content": "ok"})
                    adapter.chat_completion(messages, TOOLS, wire_cache=cache)
                    sent.append(self.scenario.requests[-1]["body"]["messages"])
                self.assertEqual(sent[0], sent[1])
                self.assertEqual([c["id"] for c in sent[2][2]["tool_calls"]], ["c1", "c2"], "the call that joined")
                self.assertEqual(sent[2], sent[3])
                self.assertEqual(sent[4][3]["content"], "4 records", "the new content is sent")
                self.assertEqual(sent[4], sent[5])
                self.assertEqual(sent[2][2]["tool_calls"][1]["function"]["arguments"], '{"model": "sale.order"}')
                if cache is not None:  # four messages, then four copies: one entry each, the changed ones made again
                    self.assertEqual(len(cache), 8)
            self.assertEqual(bodies[True], bodies[False], "the cache changes nothing in what is sent")
        for name, adapter in self.each():  # the prompt protocol's messages are new at each call: none kept
            if name.endswith("_prompt"):
                cache = {}
                self.script({"content": "ok"})
                adapter.chat_completion(MESSAGES, TOOLS, wire_cache=cache)
                self.script({"content": "ok"})
                list(adapter.chat_completion_stream(MESSAGES, TOOLS, wire_cache=cache))
                self.assertEqual(cache, {}, name)

    def test_calls_in_flight_are_not_bounded_by_the_client(self):
        """The process's HTTP client opens a connection for every call in
        flight (llm/http.py LIMITS): 80 calls to a provider that answers none
        until all 80 have arrived all get their answer. With a bound on the
        client's connections (it was 50), the calls past it waited inside
        the client's pool, unseen, and here the provider would wait for
        them in vain."""
        calls = 80
        arrived = threading.Barrier(calls, timeout=20)

        class Provider(BaseHTTPRequestHandler):
            def log_message(self, *_args):
                pass

            def do_POST(self):  # the name http.server calls
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    arrived.wait()
                    text = "together"
                except threading.BrokenBarrierError:
                    text = "alone"
                body = json.dumps({"choices": [{"message": {"role": "assistant", "content": text},
                                                "finish_reason": "stop"}], "model": "m"}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        class Server(ThreadingHTTPServer):
            request_queue_size = calls  # the listen backlog: every call connects at once
            daemon_threads = True

        server = Server(("127.0.0.1", 0), Provider)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        adapter = self.adapter(base_url=f"http://127.0.0.1:{server.server_address[1]}/v1", timeout=30.0)
        with ThreadPoolExecutor(calls) as pool:
            answers = list(pool.map(lambda _n: adapter.chat_completion(MESSAGES).content, range(calls)))
        self.assertEqual(answers, ["together"] * calls)

    def test_keys_travel_in_headers_only(self):
        for name, adapter in self.each():
            self.script({"content": "ok"})
            adapter.chat_completion(MESSAGES)
            request = self.scenario.requests[-1]
            headers = {k.lower(): v for k, v in request["headers"].items()}
            self.assertNotIn("key-", request["path"])
            expected = {"gemini": "x-goog-api-key", "anthropic": "x-api-key", "azure": "api-key"}.get(
                name, "authorization")
            self.assertIn("key-" + name, headers.get(expected, ""), name)

    def test_extra_headers_and_params_reach_every_provider(self):
        for name, provider in self.providers.items():
            with self.subTest(provider=name):
                provider.write({"extra_headers": '{"X-Team": "erp"}', "extra_params": '{"metadata_tag": "odoo"}'})
                self.script({"content": "ok"})
                provider._get_adapter().chat_completion(MESSAGES)
                request = self.scenario.requests[-1]
                self.assertEqual({k.lower(): v for k, v in request["headers"].items()}.get("x-team"), "erp")
                self.assertEqual(request["body"]["metadata_tag"], "odoo")

    def test_agent_round_trip_keeps_arguments_for_every_provider(self):
        """parse → store in the thread → replay to the provider → parse."""
        arguments = {"model": "res.partner", "domain": [["name", "ilike", "Azure"]], "limit": 3}
        call = {"name": "odoo_search_read", "arguments": arguments}
        for name in PROVIDER_MATRIX:
            with self.subTest(provider=name):
                self.script({"content": f"<tool_call>{json.dumps(call)}</tool_call>"} if name.endswith("_prompt")
                            else {"tool_calls": [{**call, "id": "rt1"}]},
                            {"content": "done"})
                thread, result = self.run_agent("search", provider=self.providers[name])
                self.assertEqual(result.reply, "done")
                stored = thread.message_ids.filtered(lambda m: m.role == "tool_call")
                self.assertEqual(json.loads(stored.tool_arguments), arguments)
                replay = self.scenario.chat_requests()[-1]["messages"]
                if name.endswith("_prompt"):  # the two prompt-protocol providers; the others' calls are native
                    echoed = next(m for m in replay if m["role"] == "assistant")["content"]
                    self.assertEqual(json.loads(echoed.split("<tool_call>")[1].split("</tool_call>")[0])["arguments"],
                                     arguments)
                else:
                    echoed = next(m for m in replay if m.get("tool_calls"))["tool_calls"][0]
                    self.assertEqual(json.loads(echoed["function"]["arguments"]), arguments)
                    results = [m for m in replay if m["role"] == "tool"]
                    self.assertEqual(len(results), 1)
                    self.assertIn("res.partner", results[0]["content"])

    # ----------------------------------------- one adapter's wire format
    def test_extra_headers_and_params_reach_the_wire(self):
        self.provider.write({"extra_headers": '{"X-Team": "erp"}', "extra_params": '{"top_p": 0.5}'})
        self.script({"content": "pong"})
        self.provider._get_adapter().chat_completion([{"role": "user", "content": "ping"}])
        request = self.scenario.requests[-1]
        self.assertEqual(request["headers"].get("X-Team"), "erp")
        self.assertEqual(request["body"]["top_p"], 0.5)
        self.assertEqual(request["headers"].get("Authorization"), "Bearer test-key-not-secret")

    def test_azure_uses_api_version_and_api_key_header(self):
        self.script({"content": "ok"})
        self.adapter(api_version="2024-10-21").chat_completion([{"role": "user", "content": "x"}])
        request = self.scenario.requests[-1]
        self.assertIn("api-version=2024-10-21", request["path"])
        self.assertEqual(request["headers"].get("api-key"), KEY)
        self.assertNotIn("Authorization", request["headers"])

    def test_tool_choice_is_sent_in_each_apis_form(self):
        """Issue 24 point 4: llama-cpp-python's function-calling format
        returns tool calls only when the request has ``tool_choice``."""
        expected = {"openai": ("tool_choice", "required"), "custom": ("tool_choice", "required"),
                    "ollama": ("tool_choice", "required"),
                    "gemini": ("toolConfig", {"functionCallingConfig": {"mode": "ANY"}}),
                    "anthropic": ("tool_choice", {"type": "any"})}
        for name, (key, value) in expected.items():
            with self.subTest(provider=name):
                provider = self.providers[name]
                provider.tool_choice = "required"
                self.script({"content": "ok"}, {"content": "ok"})
                provider._get_adapter().chat_completion(MESSAGES, TOOLS)
                self.assertEqual(self.scenario.requests[-1]["body"][key], value)
                provider.tool_choice = False
                provider._get_adapter().chat_completion(MESSAGES, TOOLS)
                self.assertNotIn(key, self.scenario.requests[-1]["body"], "unset: left to the server")

    def test_reasoning_models_get_only_the_parameters_they_accept(self):
        self.script({"content": "ok"}, {"content": "ok"})
        provider = self.providers["openai"]
        provider.default_model = "o3-mini"
        provider._get_adapter().chat_completion(MESSAGES)
        body = self.scenario.requests[-1]["body"]
        self.assertNotIn("temperature", body)
        self.assertNotIn("max_tokens", body)
        self.assertEqual(body["max_completion_tokens"], 1024)
        provider.default_model = "gpt-4o"
        provider._get_adapter().chat_completion(MESSAGES)
        self.assertEqual(self.scenario.requests[-1]["body"]["max_tokens"], 1024)

    # ------------------------------------------------------------ embeddings
    def test_embeddings(self):
        for _name, adapter in self.each([n for n in PROVIDER_MATRIX if n != "anthropic"]):
            vectors = adapter.embed([f"text {i}" for i in range(150)])
            self.assertEqual(len(vectors), 150)
            self.assertEqual({len(v) for v in vectors}, {self.scenario.embedding_dim})
            self.assertEqual(adapter.embedding_dimension(), self.scenario.embedding_dim)
        batches = [r for r in self.scenario.requests if "embed" in r["path"].lower()]
        self.assertTrue(batches)
        self.assertTrue(all(len(r["body"].get("input") or r["body"].get("requests")) <= 100 for r in batches),
                        "batched")
        with self.assertRaises(LLMError):
            self.providers["anthropic"]._get_adapter().embed(["x"])

    def test_bare_adapter_embeds_each_text(self):
        vectors = self.adapter().embed(["large desk", "office chair"])
        self.assertEqual(len(vectors), 2)
        self.assertEqual(len(vectors[0]), self.scenario.embedding_dim)

    def test_ollama_model_without_embeddings_degrades(self):
        self.scenario.embeddings_error = (400, 'model "llama3" does not support embeddings')
        try:
            with self.assertRaises(EmbeddingsUnavailable), \
                    self.assertLogs("odoo.addons.agentic_ai.llm.ollama_adapter", "WARNING"):
                self.providers["ollama"]._get_adapter().embed(["x"])
        finally:
            self.scenario.embeddings_error = None

    def test_embedding_inputs_and_answers_are_checked(self):
        adapter = self.adapter()
        self.assertEqual(len(adapter.embed("one text")), 1)
        self.assertEqual(len(adapter.embed([1, 2])), 2, "numbers are texts, not token ids")
        self.assertEqual(adapter.embed([]), [])
        for vectors in ([[0.1]], [None, [1.0]], None):
            with self.assertRaises(LLMError, msg=vectors):
                checked_vectors(vectors, 2)
