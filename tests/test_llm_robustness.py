"""Odd provider answers and settings found by adversarial testing of the
adapters: each ends in a clear LLMError or the right result, never another
exception, a hang, a lost tool call or a leaked key."""
import json

from odoo.exceptions import ValidationError
from odoo.tests import tagged
from odoo.tools import mute_logger

from odoo.addons.agentic_ai.llm import (AnthropicAdapter, GeminiAdapter, LLMError, OpenAIAdapter, ProviderConfig,
                                        parse_tool_arguments)
from odoo.addons.agentic_ai.llm.prompt_tools import parse_tool_calls

from .common import AgenticCase

MESSAGES = [{"role": "user", "content": "hi"}]
KEY = "sk-test-0123456789abcdef"
A = '{"name": "a", "arguments": {"x": 1}}'
B = '{"name": "b", "arguments": {"y": 2}}'


@tagged("post_install", "-at_install")
class TestLLMRobustness(AgenticCase):

    def adapter(self, cls=OpenAIAdapter, path="/v1", **values):
        root = self.llm.base_url.removesuffix("/v1")
        return cls(ProviderConfig(**{"provider_type": "x", "base_url": root + path, "model": "m", "api_key": KEY,
                                     "timeout": 5, **values}))

    def test_keys_are_never_quoted(self):
        with self.assertRaises(LLMError) as bad_key:
            self.adapter(api_key=KEY + "\n").chat_completion(MESSAGES)
        self.assertNotIn(KEY, str(bad_key.exception))
        self.assertFalse(bad_key.exception.retryable, "a configuration error is not retried")
        with self.assertRaises(LLMError):
            self.adapter(api_key=KEY + "\xa0").chat_completion(MESSAGES)
        self.script({"status": 401, "error": f"Incorrect API key provided: {KEY}"})
        with self.assertRaises(LLMError) as echoed:
            self.adapter().chat_completion(MESSAGES)
        self.assertNotIn(KEY, str(echoed.exception))
        self.assertIn("Incorrect API key provided: ***", str(echoed.exception))
        with self.assertRaises(ValidationError):
            self.provider.api_key = "sk-abc def"
        self.provider.api_key = f"  {KEY}  "
        self.assertEqual(self.provider._get_provider_config().api_key, KEY)

    def test_pathological_texts_parse_in_linear_time(self):
        self.assertEqual(parse_tool_calls("```" + " " * 20000 + "x")[0], [])
        self.assertIn("not valid JSON", parse_tool_arguments("```" + " " * 150000 + "x")[1])

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
        calls, rest = parse_tool_calls('<tool_call>{"name": "w", "arguments": {"text": "use </tool_call> to end"}}</tool_call>')
        self.assertEqual((calls[0].arguments, rest), ({"text": "use </tool_call> to end"}, ""))
        calls, _rest = parse_tool_calls("<tool_call>{\"name\": \"a\", \"arguments\": {'x': 1}}</tool_call>")
        self.assertEqual(calls[0].name, "a")
        self.assertIn("not valid JSON", calls[0].parse_error, "an unparsable call is reported, not dropped")

    def test_incomplete_or_failed_streams_raise(self):
        chunk = {"choices": [{"index": 0, "delta": {"content": "partial"}, "finish_reason": None}]}
        cases = [
            [chunk],                                                   # no finish, no [DONE]
            [chunk, {"error": {"message": "server overloaded"}}],      # error in the middle
        ]
        for events in cases:
            self.script({"raw_stream": events})
            with self.assertRaises(LLMError, msg=events):
                list(self.adapter().chat_completion_stream(MESSAGES))
        self.script({"raw_stream": [{"type": "message_start", "message": {"model": "c", "usage": {"input_tokens": 1}}}]})
        with self.assertRaises(LLMError):
            list(self.adapter(AnthropicAdapter).chat_completion_stream(MESSAGES))
        self.script({"raw_stream": [{"promptFeedback": {"blockReason": "SAFETY"}}]})
        with self.assertRaises(LLMError):
            list(self.adapter(GeminiAdapter, "/v1beta").chat_completion_stream(MESSAGES))

    def test_malformed_bodies_raise_llm_errors_only(self):
        bodies = [[1], "x", {"candidates": {"a": 1}}, {"candidates": [{"content": "x"}]},
                  {"candidates": [{"content": {"parts": [{"text": 5}]}, "finishReason": "STOP"}], "usageMetadata": [1]},
                  "[" * 50000 + "]" * 50000]
        for body in bodies:
            self.script({"raw": body})
            with self.assertRaises(LLMError, msg=str(body)[:60]), mute_logger("odoo.addons.agentic_ai.llm.base"):
                self.adapter(GeminiAdapter, "/v1beta").chat_completion(MESSAGES)

    def test_gemini_boolean_enums_and_thought_signatures_round_trip(self):
        self.agent.llm_provider_id = self.env["agentic.ai.llm.provider"].create({
            "name": "G3", "provider_type": "gemini", "default_model": "gemini-3-pro",
            "api_base_url": self.llm.base_url.removesuffix("/v1") + "/v1beta"})
        flag = self.env["agentic.ai.tool"].create({
            "name": "set_flag", "description": "Echo.", "tool_type": "python_code", "risk_level": "low",
            "parameter_schema": json.dumps({"type": "object", "properties": {"flag": {"type": "boolean", "enum": [True, False]}},
                                            "required": ["flag"]}),
            "python_code": "result = params"})
        self.agent.tool_ids = [(4, flag.id)]
        self.script({"raw": {"candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"name": "set_flag", "args": {"flag": "true"}}, "thoughtSignature": "sig-abc"}]},
            "finishReason": "STOP"}]}}, {"content": "done"})
        thread = self.new_thread()
        self.assertEqual(self.agent.run(thread.id, "flag it").reply, "done")
        body = self.scenario.requests[0]["body"]
        self.assertEqual(body["tools"][0]["functionDeclarations"][-1]["parameters"]["properties"]["flag"]["enum"], ["true", "false"])
        self.assertIn('"flag": true', thread.message_ids.filtered(lambda m: m.role == "tool_result").content)
        replay = self.scenario.requests[-1]["body"]["contents"]
        model_turn = next(c for c in replay if c["role"] == "model")
        self.assertEqual(model_turn["parts"][0]["thoughtSignature"], "sig-abc")
        response = next(p["functionResponse"] for c in replay for p in c["parts"] if "functionResponse" in p)
        self.assertEqual(response["name"], "set_flag")

    def test_anthropic_history_rules(self):
        system, messages = AnthropicAdapter.to_messages([
            {"role": "user", "content": "<invoice id=\"3\"/>"},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "functions.t:0", "name": "t", "arguments": {}}]},
            {"role": "user", "content": "also this"},
            {"role": "tool", "tool_call_id": "functions.t:0", "content": "result"}])
        self.assertEqual(messages[0]["content"][0]["text"], '<invoice id="3"/>')
        self.assertEqual(messages[1]["content"][0]["id"], "functions_t_0")
        self.assertEqual([b["type"] for b in messages[2]["content"]], ["tool_result", "text"])
        self.assertEqual(messages[2]["content"][0]["tool_use_id"], "functions_t_0")

    def test_embedding_inputs_and_answers_are_checked(self):
        adapter = self.adapter()
        self.assertEqual(len(adapter.embed("one text")), 1)
        self.assertEqual(len(adapter.embed([1, 2])), 2, "numbers are texts, not token ids")
        self.assertEqual(adapter.embed([]), [])
        from odoo.addons.agentic_ai.llm.base import checked_vectors
        for vectors in ([[0.1]], [None, [1.0]], None):
            with self.assertRaises(LLMError, msg=vectors):
                checked_vectors(vectors, 2)

    def test_prompt_protocol_stream_keeps_the_prose_around_calls(self):
        from odoo.addons.agentic_ai.llm import OllamaAdapter
        adapter = self.adapter(OllamaAdapter, supports_tool_calling=False)
        self.script({"content": f"Using {{placeholder}} syntax here. <tool_call>{A}</tool_call>\nThen I will summarize."})
        chunks = list(adapter.chat_completion_stream(MESSAGES, [{"name": "a", "description": "", "parameters": {}}]))
        self.assertEqual("".join(c.content for c in chunks), "Using {placeholder} syntax here. \nThen I will summarize.")
        self.assertEqual([c.name for c in chunks[-1].tool_calls], ["a"])
