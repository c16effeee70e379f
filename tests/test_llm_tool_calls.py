"""Tool calls in every wire format (spec 000 §6.2, §4.2; issue 3): sent
with their schemas, parsed from answers and streams (native calls, the
``<tool_call>`` prompt protocol, calls written in the text), stored and
replayed in the history each provider accepts. The BR-xx cases reproduce
public bug reports against other systems: each input is the one reported,
each assertion the right value."""
import json

from odoo.tests import tagged

from ..llm import AnthropicAdapter, parse_tool_arguments
from ..llm.prompt_tools import parse_tool_calls
from .common import AdapterCase, tool_call

A = '{"name": "a", "arguments": {"x": 1}}'
B = '{"name": "b", "arguments": {"y": 2}}'
SEARCH = '{"name": "odoo_search_read", "arguments": {"model": "res.partner", "limit": 1}}'


def chunk(delta, finish=None):
    """One OpenAI chat.completion.chunk event."""
    return {"id": "x", "object": "chat.completion.chunk", "model": "gpt-4o",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


@tagged("post_install", "-at_install")
class TestLLMToolCalls(AdapterCase):

    # ------------------------------------------------- sent and parsed
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

    def test_stream_yields_text_and_whole_tool_calls(self):
        self.script({"content": "Looking it up now",
                     **tool_call("odoo_search_read", {"model": "res.partner", "limit": 5})})
        chunks = list(self.adapter().chat_completion_stream([{"role": "user", "content": "find"}]))
        text = "".join(c.content for c in chunks)
        self.assertEqual(text, "Looking it up now")
        final = chunks[-1]
        self.assertEqual(final.finish_reason, "tool_calls")
        self.assertEqual(len(final.tool_calls), 1)
        self.assertEqual(final.tool_calls[0].arguments, {"model": "res.partner", "limit": 5})
        self.assertTrue(all(not c.tool_calls for c in chunks[:-1]), "no partial tool call is ever yielded")
        self.assertGreater(final.input_tokens, 0)

    def test_history_replays_arguments_as_json_text(self):
        self.script({"content": "ok"})
        history = [{"role": "user", "content": "x"},
                   {"role": "assistant", "content": None,
                    "tool_calls": [{"id": "c1", "name": "t", "arguments": {"a": 1}}]},
                   {"role": "tool", "tool_call_id": "c1", "name": "t", "content": "result"}]
        self.adapter().chat_completion(history)
        sent = self.scenario.requests[-1]["body"]["messages"]
        self.assertEqual(sent[1]["tool_calls"][0]["function"]["arguments"], '{"a": 1}')
        self.assertEqual(sent[2]["tool_call_id"], "c1")

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

    def test_pathological_texts_parse_in_linear_time(self):
        self.assertEqual(parse_tool_calls("```" + " " * 20000 + "x")[0], [])
        self.assertIn("not valid JSON", parse_tool_arguments("```" + " " * 150000 + "x")[1])

    def test_br01_arguments_as_json_text_object_or_double_encoded_string_are_read(self):
        """BR-01: arguments as JSON text, as an object, or JSON-encoded twice
        are read; a JSON array or nothing is refused or read as {}."""
        # Three limits: a 3rd identical call would not be run (issue 12, BR-10).
        shapes = ['{"model": "res.partner", "limit": 1}', {"model": "res.partner", "limit": 2},
                  json.dumps('{"model": "res.partner", "limit": 3}')]
        self.script(*[tool_call("odoo_search_read", shape) for shape in shapes],
                    tool_call("odoo_search_read", '["res.partner"]'),
                    tool_call("odoo_search_read", ""),
                    tool_call("odoo_get_available_models", ""),
                    {"content": "done"})
        thread, result = self.run_agent()
        self.assertEqual(result.reply, "done")
        calls = thread.message_ids.filtered(lambda m: m.role == "tool_call")
        self.assertEqual([json.loads(c.tool_arguments) for c in calls[:3]],
                         [{"model": "res.partner", "limit": n} for n in (1, 2, 3)])
        results = self.observations(thread)
        self.assertTrue(all("record(s) found" in r for r in results[:3]), results[:3])
        self.assertIn("arguments must be a JSON object", results[3])
        self.assertIn("'model' is a required parameter", results[4], "empty arguments do not satisfy a required one")
        self.assertFalse(results[5].startswith("Error"), "a tool without required parameters runs with {}")
        replayed = [call for message in self.scenario.chat_requests()[-1]["messages"]
                    for call in message.get("tool_calls") or []]
        self.assertEqual(len(replayed), 6)
        for call in replayed:
            self.assertIsInstance(json.loads(call["function"]["arguments"]), dict, "json.dumps, never a repr")

    def test_br02_malformed_or_cut_off_json_is_never_run_and_fenced_json_is_read(self):
        """BR-02: a trailing comma or arguments cut off by the token limit
        are reported, never run; JSON in a code fence or followed by prose
        is read."""
        partner = self.env["res.partner"].create({"name": "Never Deleted"})
        self.script(
            tool_call("odoo_unlink", '{"model": "res.partner", "record_ids": [%d], }' % partner.id),
            {**tool_call("odoo_write", '{"model": "res.partner", "record_ids": [%d], "values": {"name": "Cut'
                         % partner.id), "finish_reason": "length"},
            tool_call("odoo_search_read", '```json\n{"model": "res.partner", "limit": 1}\n```'),
            tool_call("odoo_search_read", '{"model": "res.partner", "limit": 1} Now I will look at the result.'),
            {"content": "done"})
        thread, result = self.run_agent()
        results = self.observations(thread)
        self.assertTrue(partner.exists())
        self.assertEqual(partner.name, "Never Deleted")
        self.assertIn("odoo_unlink", results[0])
        self.assertIn("not valid JSON", results[0])
        self.assertIn('"record_ids"', results[0], "a short preview of what was sent")
        self.assertIn("cut off", results[1])
        self.assertIn("record(s) found", results[2])
        self.assertIn("record(s) found", results[3])
        self.assertEqual(result.reply, "done", "the provider accepted the history with the invalid calls")

    def test_br03_streamed_call_fragments_are_joined_by_index_and_id(self):
        """BR-03: a streamed call's arguments arrive in pieces; a second call
        may reuse index 0 with a new id."""
        def pieces(b_index, b_id):
            return [
                chunk({"role": "assistant", "tool_calls": [{"index": 0, "id": "call_A", "type": "function",
                                                             "function": {"name": "odoo_search_read",
                                                                          "arguments": ""}}]}),
                chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"model":'}}]}),
                chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"res.partner",'}}]}),
                chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"limit":5}'}}]}),
                chunk({"tool_calls": [{"index": b_index, "id": b_id, "type": "function", "function": {
                    "name": "search_count", "arguments": '{"model":"sale.order"}'}}]}),
                chunk({}, "tool_calls"), "[DONE]"]
        adapter = self.adapter(provider_type="openai", model="gpt-4o")
        for variant in ((1, "call_B"), (0, "call_B")):
            with self.subTest(b_index=variant[0]):
                self.script({"raw_stream": pieces(*variant)})
                chunks = list(adapter.chat_completion_stream([{"role": "user", "content": "x"}]))
                calls = chunks[-1].tool_calls
                self.assertEqual([(c.id, c.name, c.arguments) for c in calls],
                                 [("call_A", "odoo_search_read", {"model": "res.partner", "limit": 5}),
                                  ("call_B", "search_count", {"model": "sale.order"})])
                self.assertEqual("".join(c.content for c in chunks), "", "no partial JSON shown as text")

    def test_br04_tool_calls_with_finish_reason_stop_are_run(self):
        """BR-04: calls are run whatever the finish reason says."""
        self.script({**tool_call("odoo_search_read", {"model": "res.partner", "limit": 1}), "finish_reason": "stop"},
                    {"content": "done"})
        thread, result = self.run_agent()
        self.assertIn("record(s) found", self.observations(thread)[0])
        self.assertEqual(result.reply, "done")

    def test_br04_ollama_call_before_the_stop_chunk_is_kept(self):
        """BR-04: Ollama sends the call, then finish_reason stop in a later chunk."""
        self.script({"raw_stream": [
            chunk({"role": "assistant", "tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {
                "name": "odoo_search_read", "arguments": '{"model": "res.partner"}'}}]}),
            chunk({"content": ""}, "stop"), "[DONE]"]})
        adapter = self.providers["ollama"]._get_adapter()
        chunks = list(adapter.chat_completion_stream([{"role": "user", "content": "x"}]))
        self.assertEqual([c.arguments for c in chunks[-1].tool_calls], [{"model": "res.partner"}])

    def test_br04_gemini_malformed_function_call_is_retried_then_reported(self):
        self.script({"content": "", "gemini_finish": "MALFORMED_FUNCTION_CALL"}, {"content": "Recovered answer"})
        _thread, result = self.run_agent(provider=self.providers["gemini"])
        self.assertEqual(result.reply, "Recovered answer", "retried once")
        self.script({"content": "", "gemini_finish": "MALFORMED_FUNCTION_CALL"},
                    {"content": "", "gemini_finish": "MALFORMED_FUNCTION_CALL"})
        thread, result = self.run_agent(provider=self.providers["gemini"])
        self.assertEqual(result.state, "error")
        self.assertIn("MALFORMED_FUNCTION_CALL", result.reply)
        self.assertFalse(thread.message_ids.filtered(lambda m: m.role == "assistant" and not m.content.strip()))

    def test_br04_gemini_call_with_finish_reason_stop_is_run(self):
        self.script(tool_call("odoo_search_read", {"model": "res.partner", "limit": 1}), {"content": "done"})
        thread, result = self.run_agent(provider=self.providers["gemini"])
        self.assertIn("record(s) found", self.observations(thread)[0])
        self.assertEqual(result.reply, "done")

    # --------------------------------------------- the prompt protocol
    def test_prompt_protocol_keeps_every_call(self):
        cases = {
            f"<tool_call>{A}\n<tool_call>{B}</tool_call>": ["a", "b"],
            f"<tool_call>[{A},{B}]</tool_call>": ["a", "b"],
            f"<tool_call>\n{A}\n{B}\n</tool_call>": ["a", "b"],
            f"[{A},{B}]": ["a", "b"],
            '{"type": "function", "function": {"name": "f", "arguments": {"k": 1}}}': ["f"],
        }
        for text, names in cases.items():
            calls, rest = parse_tool_calls(text)
            self.assertEqual([c.name for c in calls], names, text)
            self.assertEqual(rest, "", text)
        calls, rest = parse_tool_calls('<tool_call>{"name": "w", "arguments": {"text": "use </tool_call> to end"}}'
                                       '</tool_call>')
        self.assertEqual((calls[0].arguments, rest), ({"text": "use </tool_call> to end"}, ""))
        calls, _rest = parse_tool_calls("<tool_call>{\"name\": \"a\", \"arguments\": {'x': 1}}</tool_call>")
        self.assertEqual(calls[0].name, "a")
        self.assertIn("not valid JSON", calls[0].parse_error, "an unparsable call is reported, not dropped")

    def test_prompt_protocol_stream_keeps_the_prose_around_calls(self):
        adapter = self.providers["ollama_prompt"]._get_adapter()
        self.script({"content": f"Using {{placeholder}} syntax here. <tool_call>{A}</tool_call>\n"
                                "Then I will summarize."})
        chunks = list(adapter.chat_completion_stream([{"role": "user", "content": "hi"}],
                                                     [{"name": "a", "description": "", "parameters": {}}]))
        self.assertEqual("".join(c.content for c in chunks),
                         "Using {placeholder} syntax here. \nThen I will summarize.")
        self.assertEqual([c.name for c in chunks[-1].tool_calls], ["a"])

    def test_prompt_protocol_never_reaches_the_screen_however_the_tokens_are_split(self):
        """Issue 24 point 4: a server that streams one token a chunk (llama.cpp)
        split the marker ("<", "tool", "_call>"), and its first pieces were
        relayed. Now no piece of the protocol is, for any OpenAI-compatible
        provider with tool calling off."""
        answer = f"Let me look. <tool_call>{A}</tool_call>"
        for name in ("ollama_prompt", "custom_prompt"):
            adapter = self.providers[name]._get_adapter()
            for size in (1, 2, 3, 5):
                with self.subTest(provider=name, chunk_chars=size):
                    self.script({"content": answer, "chunk_chars": size})
                    chunks = list(adapter.chat_completion_stream([{"role": "user", "content": "hi"}],
                                                                 [{"name": "a", "description": "", "parameters": {}}]))
                    shown = "".join(c.content for c in chunks)
                    self.assertEqual(shown, "Let me look. ")
                    self.assertEqual([c.name for c in chunks[-1].tool_calls], ["a"])
                    request = self.scenario.chat_requests()[-1]
                    self.assertNotIn("tools", request, "the protocol replaces the API's tools")
                    self.assertIn("<tool_call>", request["messages"][0]["content"])
        # Held text still yields a chunk for every chunk read, so Stop and the time limit are checked meanwhile.
        self.script({"content": "{" + "x" * 40 + "}", "chunk_chars": 1})
        chunks = list(self.providers["custom_prompt"]._get_adapter().chat_completion_stream(
            [{"role": "user", "content": "hi"}], [{"name": "a", "description": "", "parameters": {}}]))
        self.assertGreaterEqual(len(chunks), 42)
        self.assertEqual("".join(c.content for c in chunks), "{" + "x" * 40 + "}")
        # Text that only looks like the start of a marker is shown whole, in the end.
        self.script({"content": "Use <b> for bold, and `code`.", "chunk_chars": 1})
        chunks = list(self.providers["custom_prompt"]._get_adapter().chat_completion_stream(
            [{"role": "user", "content": "hi"}], [{"name": "a", "description": "", "parameters": {}}]))
        self.assertEqual("".join(c.content for c in chunks), "Use <b> for bold, and `code`.")

    def test_prompt_protocol_history_alternates_roles(self):
        """Issue 24 point 1: consecutive tool results are one user turn,
        and an assistant's calls with no text replay as text."""
        adapter = self.providers["custom_prompt"]._get_adapter()
        self.script({"content": "done"})
        adapter.chat_completion([
            {"role": "system", "content": "You are an ERP assistant."},
            {"role": "user", "content": "Find partners and users"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "name": "a", "arguments": {}}, {"id": "c2", "name": "b", "arguments": {}}]},
            {"role": "tool", "tool_call_id": "c1", "name": "a", "content": "one"},
            {"role": "tool", "tool_call_id": "c2", "name": "b", "content": "two"},
        ], [{"name": "a", "description": "", "parameters": {}}])
        roles = [m["role"] for m in self.scenario.chat_requests()[-1]["messages"]]
        self.assertEqual(roles, ["system", "user", "assistant", "user"])
        last = self.scenario.chat_requests()[-1]["messages"][-1]["content"]
        self.assertIn('<tool_result name="a">', last)
        self.assertIn('<tool_result name="b">', last)

    def test_a_streamed_call_repeating_its_id_and_name_in_every_chunk_is_one_call(self):
        """llama-cpp-python's server streams a tool call with its id and name
        repeated in every chunk, next to a legacy ``function_call``, and no
        usage (recorded: ../shared/wire curl-fc-stream-named.txt)."""
        call_id = "call__0_get_weather_cmpl-5a9636d6"
        pieces = ['{"', "city", '":', ' "', "Paris", '"}']
        events = [{"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gemma3", "choices": [{
            "index": 0, "finish_reason": None, "delta": {"role": "assistant", "content": None, "function_call": None,
                                                          "tool_calls": None}}]}]
        events += [{"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gemma3", "choices": [{
            "index": 0, "finish_reason": None, "delta": {
                "role": None, "content": None, "function_call": {"name": "get_weather", "arguments": piece},
                "tool_calls": [{"index": 0, "id": call_id, "type": "function",
                                "function": {"name": "get_weather", "arguments": piece}}]}}]} for piece in pieces]
        events += [{"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gemma3", "choices": [{
            "index": 0, "finish_reason": "tool_calls", "delta": {}}]}, "[DONE]"]
        self.script({"raw_stream": events})
        chunks = list(self.providers["custom"]._get_adapter().chat_completion_stream(
            [{"role": "user", "content": "weather?"}], [{"name": "get_weather", "description": "", "parameters": {}}]))
        calls = chunks[-1].tool_calls
        self.assertEqual([(c.id, c.name, c.arguments) for c in calls], [(call_id, "get_weather", {"city": "Paris"})])
        self.assertTrue(chunks[-1].usage.estimated, "no usage in the stream: estimated, and flagged so")

    def test_replayed_tool_calls_carry_empty_content_not_null(self):
        """Issue 24 point 1: llama-cpp-python's server answers ``"content":
        null`` on an assistant message with tool calls with HTTP 500
        (../shared/wire curl-replay-null.txt); "" is what every
        OpenAI-compatible server accepts."""
        for name in ("openai", "custom", "ollama"):
            with self.subTest(provider=name):
                self.script({"content": "done"})
                self.providers[name]._get_adapter().chat_completion([
                    {"role": "user", "content": "Find partners"},
                    {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "name": "a", "arguments": {}}]},
                    {"role": "tool", "tool_call_id": "c1", "name": "a", "content": "one"},
                ], [{"name": "a", "description": "", "parameters": {}}])
                replayed = self.scenario.chat_requests()[-1]["messages"][1]
                self.assertEqual(replayed["content"], "")
                self.assertEqual(replayed["tool_calls"][0]["function"]["name"], "a")

    def test_br05_tool_calls_written_in_the_text_are_run_and_json_prose_is_not(self):
        """BR-05: calls written in the text (tags, several, "parameters",
        a code fence, a missing closing tag) are run once each; JSON that is
        not a call stays text; an unknown tool is an observation."""
        cases = [
            (f"<tool_call>{SEARCH}</tool_call>", 1),
            (f"<tool_call>{SEARCH}</tool_call>\n<tool_call>" + SEARCH.replace("res.partner", "res.users")
             + "</tool_call>", 2),
            ('{"name": "odoo_search_read", "parameters": {"model": "res.partner", "limit": 1}}', 1),
            (f"```json\n{SEARCH}\n```", 1),
            (f"<tool_call>{SEARCH}", 1),
        ]
        ollama_prompt = self.providers["ollama_prompt"]
        for text, expected in cases:
            with self.subTest(text=text[:40]):
                self.script({"content": text}, {"content": "final answer"})
                thread, result = self.run_agent(provider=ollama_prompt)
                calls = thread.message_ids.filtered(lambda m: m.role == "tool_call")
                self.assertEqual(len(calls), expected)
                self.assertEqual(len(set(calls.mapped("tool_call_id"))), expected)
                self.assertTrue(all("record(s) found" in r for r in self.observations(thread)))
                self.assertEqual(result.reply, "final answer")
                self.assertFalse(any("<tool_call>" in (m.content or "") for m in thread.message_ids))
        self.script({"content": 'The partner looks like {"id": 1, "name": "Azure"} in the data.'})
        thread, result = self.run_agent(provider=ollama_prompt)
        self.assertEqual(result.reply, 'The partner looks like {"id": 1, "name": "Azure"} in the data.')
        self.script({"content": '<tool_call>{"name": "drop_database", "arguments": {}}</tool_call>'}, {"content": "ok"})
        thread, result = self.run_agent(provider=ollama_prompt)
        self.assertIn("unknown tool 'drop_database'", self.observations(thread)[0])
        self.assertIn("odoo_search_read", self.observations(thread)[0])

    # ------------------------------------- provider-specific histories
    def test_br06_calls_without_ids_get_distinct_ids_and_results(self):
        """BR-06: Gemini's parallel calls come without ids: each gets its
        own id and its own result, and no id is sent back to Gemini."""
        belgium, france = self.env.ref("base.be"), self.env.ref("base.fr")
        self.env["res.partner"].create([{"name": "Bruxelles Meubles", "country_id": belgium.id},
                                        {"name": "Paris Bureaux", "country_id": france.id}])
        fields = ["name", "country_id"]
        self.script({"tool_calls": [
            {"name": "odoo_search_read", "arguments": {"model": "res.partner", "fields": fields,
                                                       "domain": [["country_id.code", "=", "BE"]]}},
            {"name": "odoo_search_read", "arguments": {"model": "res.partner", "fields": fields,
                                                       "domain": [["country_id.code", "=", "FR"]]}}]},
            {"content": "done"})
        thread, _result = self.run_agent(provider=self.providers["gemini"])
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
        self.script({"tool_calls": [{"name": "odoo_search_read", "arguments": {"model": "res.partner", "limit": 1},
                                     "id": "g-1"}]},
                    {"content": "done"})
        self.run_agent(provider=self.providers["gemini"])
        replay = self.scenario.requests[-1]["body"]["contents"]
        self.assertEqual([p["functionResponse"].get("id") for c in replay for p in c["parts"]
                          if "functionResponse" in p], ["g-1"])

    def test_br08_anthropic_gets_no_blank_text_blocks(self):
        """BR-08: empty or blank-looking assistant and user texts are not
        sent as text blocks, which Anthropic refuses."""
        adapter = self.adapter(AnthropicAdapter, provider_type="anthropic", model="claude-sonnet-4-5")
        history = [{"role": "user", "content": "delete the draft"},
                   {"role": "assistant", "content": "",
                    "tool_calls": [{"id": "t1", "name": "odoo_search_read", "arguments": {}}]},
                   {"role": "tool", "tool_call_id": "t1", "content": "1 record"},
                   {"role": "assistant", "content": "<p><br></p>",
                    "tool_calls": [{"id": "t2", "name": "odoo_search_read", "arguments": {}}]},
                   {"role": "tool", "tool_call_id": "t2", "content": "2 records"},
                   {"role": "user", "content": "   "}]
        self.script({"content": "ok"})
        self.assertEqual(adapter.chat_completion(history).content, "ok")
        body = self.scenario.requests[-1]["body"]
        texts = [block["text"] for message in body["messages"] for block in message["content"]
                 if block["type"] == "text"]
        self.assertEqual(texts, ["delete the draft"], "the only text block is the user's request")
        roles = [m["role"] for m in body["messages"]]
        self.assertEqual(roles, ["user", "assistant", "user", "assistant", "user"])
        self.assertEqual([b["type"] for b in body["messages"][1]["content"]], ["tool_use"])

    def test_anthropic_history_rules(self):
        _system, messages = AnthropicAdapter.to_messages([
            {"role": "user", "content": "<invoice id=\"3\"/>"},
            {"role": "assistant", "content": None,
             "tool_calls": [{"id": "functions.t:0", "name": "t", "arguments": {}}]},
            {"role": "user", "content": "also this"},
            {"role": "tool", "tool_call_id": "functions.t:0", "content": "result"}])
        self.assertEqual(messages[0]["content"][0]["text"], '<invoice id="3"/>')
        self.assertEqual(messages[1]["content"][0]["id"], "functions_t_0")
        self.assertEqual([b["type"] for b in messages[2]["content"]], ["tool_result", "text"])
        self.assertEqual(messages[2]["content"][0]["tool_use_id"], "functions_t_0")

    def test_br09_gemini_gets_its_schema_subset_and_values_are_coerced_back(self):
        """BR-09: Gemini accepts a subset of JSON Schema (no $schema,
        additionalProperties, type lists, non-string enums); values it sends
        in that subset are coerced back to the tool's schema."""
        schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
                  "additionalProperties": False,
                  "properties": {"level": {"type": "integer", "enum": [0, 1, 2, 3]},
                                 "note": {"type": ["string", "null"]},
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
        thread, result = self.run_agent(provider=self.providers["gemini"])
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
        results = self.observations(thread)
        self.assertIn('"level": 2', results[0], "the string enum value came back as the integer 2")
        self.assertIn('"options": {"a": 1}', results[0])
        self.assertIn("Additional properties are not allowed", results[1])
        self.assertEqual(result.reply, "done")

    def test_gemini_boolean_enums_and_thought_signatures_round_trip(self):
        gemini_3 = self.env["agentic.ai.llm.provider"].create({
            "name": "G3", "provider_type": "gemini", "default_model": "gemini-3-pro",
            "api_base_url": self.root + "/v1beta"})
        flag = self.env["agentic.ai.tool"].create({
            "name": "set_flag", "description": "Echo.", "tool_type": "python_code", "risk_level": "low",
            "parameter_schema": json.dumps({"type": "object", "required": ["flag"],
                                            "properties": {"flag": {"type": "boolean", "enum": [True, False]}}}),
            "python_code": "result = params"})
        self.agent.tool_ids = [(4, flag.id)]
        self.script({"raw": {"candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"name": "set_flag", "args": {"flag": "true"}}, "thoughtSignature": "sig-abc"}]},
            "finishReason": "STOP"}]}}, {"content": "done"})
        thread, result = self.run_agent("flag it", provider=gemini_3)
        self.assertEqual(result.reply, "done")
        body = self.scenario.requests[0]["body"]
        self.assertEqual(body["tools"][0]["functionDeclarations"][-1]["parameters"]["properties"]["flag"]["enum"],
                         ["true", "false"])
        self.assertIn('"flag": true', self.observations(thread)[0])
        replay = self.scenario.requests[-1]["body"]["contents"]
        model_turn = next(c for c in replay if c["role"] == "model")
        self.assertEqual(model_turn["parts"][0]["thoughtSignature"], "sig-abc")
        response = next(p["functionResponse"] for c in replay for p in c["parts"] if "functionResponse" in p)
        self.assertEqual(response["name"], "set_flag")
