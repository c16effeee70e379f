"""How provider calls fail (spec 000 §6, §4.5): HTTP errors classified as
retryable or not for every provider, timeouts and refused connections,
malformed bodies and incomplete or failed streams ending in an LLMError,
never another exception or a hang, and API keys never quoted in errors,
logs or messages."""
import threading
import time
from unittest.mock import patch

from odoo.exceptions import ValidationError
from odoo.tests import tagged
from odoo.tools import config, mute_logger

from ..engine.runtime import AgentRuntime
from ..llm import AnthropicAdapter, GeminiAdapter, LLMError
from .common import KEY, MESSAGES, PROVIDER_MATRIX, AdapterCase, closed_port_url

USER_MESSAGE = [{"role": "user", "content": "hi"}]


@tagged("post_install", "-at_install")
class TestLLMFailures(AdapterCase):

    # ------------------------------------------------------ the matrix
    def test_http_errors_are_classified_for_every_provider(self):
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
        for name in PROVIDER_MATRIX:
            with self.subTest(provider=name):
                provider = self.providers[name].copy({"api_base_url": closed_port_url()})
                with self.assertRaises(LLMError) as error:
                    provider._get_adapter().chat_completion(MESSAGES)
                self.assertTrue(error.exception.retryable)

    def test_keys_never_reach_logs_or_messages(self):
        for name in PROVIDER_MATRIX:
            with self.subTest(provider=name):
                self.script({"status": 401, "error": "bad credentials"})
                thread, result = self.run_agent("hello", provider=self.providers[name])
                self.assertEqual(result.state, "error")
                logs = self.env["agentic.ai.execution.log"].search([("thread_id", "=", thread.id)])
                stored = " ".join(filter(None, logs.mapped("error_message") + logs.mapped("input_data")
                                         + logs.mapped("output_data") + thread.message_ids.mapped("content")))
                self.assertIn("bad credentials", stored)
                self.assertNotIn("key-" + name, stored)

    # ------------------------------------------------------- one adapter
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
            self.assertNotIn(KEY, str(exc))
        self.assertNotIn(KEY, repr(self.adapter().config))

    def test_keys_are_never_quoted(self):
        with self.assertRaises(LLMError) as bad_key:
            self.adapter(api_key=KEY + "\n").chat_completion(USER_MESSAGE)
        self.assertNotIn(KEY, str(bad_key.exception))
        self.assertFalse(bad_key.exception.retryable, "a configuration error is not retried")
        with self.assertRaises(LLMError):
            self.adapter(api_key=KEY + "\xa0").chat_completion(USER_MESSAGE)
        self.script({"status": 401, "error": f"Incorrect API key provided: {KEY}"})
        with self.assertRaises(LLMError) as echoed:
            self.adapter().chat_completion(USER_MESSAGE)
        self.assertNotIn(KEY, str(echoed.exception))
        self.assertIn("Incorrect API key provided: ***", str(echoed.exception))
        with self.assertRaises(ValidationError):
            self.provider.api_key = "sk-abc def"
        self.provider.api_key = f"  {KEY}  "
        self.assertEqual(self.provider._get_provider_config().api_key, KEY)

    # ------------------------------------------------- malformed answers
    def test_incomplete_or_failed_streams_raise(self):
        chunk = {"choices": [{"index": 0, "delta": {"content": "partial"}, "finish_reason": None}]}
        cases = [
            [chunk],                                                   # no finish, no [DONE]
            [chunk, {"error": {"message": "server overloaded"}}],      # error in the middle
        ]
        for events in cases:
            self.script({"raw_stream": events})
            with self.assertRaises(LLMError, msg=events):
                list(self.adapter().chat_completion_stream(USER_MESSAGE))
        self.script({"raw_stream": [{"type": "message_start",
                                     "message": {"model": "c", "usage": {"input_tokens": 1}}}]})
        with self.assertRaises(LLMError):
            list(self.adapter(AnthropicAdapter).chat_completion_stream(USER_MESSAGE))
        self.script({"raw_stream": [{"promptFeedback": {"blockReason": "SAFETY"}}]})
        with self.assertRaises(LLMError):
            list(self.adapter(GeminiAdapter, "/v1beta").chat_completion_stream(USER_MESSAGE))

    def test_malformed_bodies_raise_llm_errors_only(self):
        bodies = [[1], "x", {"candidates": {"a": 1}}, {"candidates": [{"content": "x"}]},
                  {"candidates": [{"content": {"parts": [{"text": 5}]}, "finishReason": "STOP"}],
                   "usageMetadata": [1]},
                  "[" * 50000 + "]" * 50000]
        for body in bodies:
            self.script({"raw": body})
            with self.assertRaises(LLMError, msg=str(body)[:60]), mute_logger("odoo.addons.agentic_ai.llm.base"):
                self.adapter(GeminiAdapter, "/v1beta").chat_completion(USER_MESSAGE)


OVERFLOW = ("This model's maximum context length is 4096 tokens. However, your messages resulted in 5210 tokens. "
            "Please reduce the length of the messages.")


@tagged("post_install", "-at_install")
class TestModelFailuresInATurn(AdapterCase):
    """Issue 24 point 2: a turn's failures are named, never fed back as the
    model's words, and each leaves a WARNING in Odoo's log."""

    def long_thread(self, provider):
        self.agent.llm_provider_id = provider
        thread = self.new_thread()
        for index in range(6):
            thread.add_user_message(f"Earlier question {index}: " + "words " * 60)
            thread.add_assistant_message(f"Earlier answer {index}: " + "words " * 60)
        return thread

    def test_a_context_overflow_trims_the_history_once_then_says_so(self):
        for name in ("custom", "ollama", "gemini", "anthropic"):
            with self.subTest(provider=name):
                thread = self.long_thread(self.providers[name])
                self.script({"status": 400, "error": OVERFLOW}, {"content": "Answered from the recent messages."})
                result = self.agent.run(thread.id, "And now?")
                self.assertEqual((result.state, result.reply), ("completed", "Answered from the recent messages."))
                first, second = self.scenario.chat_requests()
                self.assertLess(len(second["messages"]), len(first["messages"]), "the history was trimmed")
                self.assertIn("[Summary of the", " ".join(str(m.get("content")) for m in second["messages"]))
                self.assertEqual(second["messages"][-1]["content"], "And now?")
        thread = self.long_thread(self.providers["custom"])
        self.script({"status": 400, "error": OVERFLOW}, {"status": 400, "error": OVERFLOW})
        with self.assertLogs("odoo.addons.agentic_ai.engine.runtime", "WARNING") as logged:
            result = self.agent.run(thread.id, "And now?")
        self.assertEqual(result.state, "error")
        self.assertIn("too long for the AI model", result.reply)
        self.assertEqual(len(self.scenario.chat_requests()), 2, "trimmed once, then told")
        self.assertIn(f"Conversation {thread.id}: the turn failed on the model", logged.output[0])
        # The failure is the agent's words: the next turn's prompt does not carry it as the model's answer.
        self.script({"content": "Fine now."})
        self.assertEqual(self.agent.run(thread.id, "Try again").state, "completed")
        sent = self.scenario.chat_requests()[-1]["messages"]
        self.assertFalse([m for m in sent if m["role"] == "assistant" and "too long" in (m.get("content") or "")])

    def test_a_refused_request_is_not_retried_and_shows_the_providers_message(self):
        self.script({"status": 400, "error": "unknown parameter: top_k"})
        with self.assertLogs("odoo.addons.agentic_ai.engine.runtime", "WARNING"):
            thread, result = self.run_agent("hello", provider=self.providers["custom"])
        self.assertEqual(result.state, "error")
        self.assertIn("refused the request", result.reply)
        self.assertIn("unknown parameter: top_k", result.reply)
        self.assertEqual(len(self.scenario.chat_requests()), 1)
        self.assertTrue(thread.message_ids.filtered(lambda m: m.role == "assistant").llm_failure)
        # The next turn: the unanswered question and the new one are one user turn (roles still alternate).
        self.script({"content": "Hello."})
        self.agent.run(thread.id, "again")
        roles = [(m["role"], m["content"]) for m in self.scenario.chat_requests()[-1]["messages"]]
        self.assertEqual([role for role, _content in roles], ["system", "user"])
        self.assertEqual(roles[-1][1], "hello\n\nagain")

    def test_a_context_overflow_in_a_plan_trims_the_history_once_too(self):
        thread = self.long_thread(self.providers["custom"])
        self.agent.execution_mode = "plan_and_execute"
        self.env["ir.config_parameter"].sudo().set_param("agentic_ai.max_requests_per_minute", "1000")
        self.script({"status": 400, "error": OVERFLOW}, {"content": "[]"}, {"content": "Nothing to plan: hello."})
        result = self.agent.run(thread.id, "And now?")
        self.assertNotEqual(result.state, "error", result.reply)
        first, second = self.scenario.chat_requests()[:2]
        self.assertLess(len(second["messages"]), len(first["messages"]), "the planner's history was trimmed")

    def test_a_context_overflow_goes_to_the_fallback_first(self):
        """Found by the review: a small local model overflowing, with a
        larger fallback configured, is answered by the fallback."""
        self.agent.write({"llm_provider_id": self.providers["custom"].id,
                          "fallback_provider_id": self.providers["openai"].id})
        self.script({"status": 400, "error": OVERFLOW}, {"content": "The fallback answered."})
        thread = self.new_thread()
        result = self.agent.run(thread.id, "hi")
        self.assertEqual((result.state, result.reply), ("completed", "The fallback answered."))
        self.assertEqual([r["model"] for r in self.scenario.chat_requests()], ["model-custom", "model-openai"])

    def test_a_max_tokens_too_large_for_the_window_is_the_providers_setting_not_the_conversation(self):
        """vLLM's 400 for a max_tokens larger than the window names the
        window too: it is a refused request (its message shown), not a
        conversation too long."""
        self.script({"status": 400, "error": "'max_tokens' or 'max_completion_tokens' is too large: 4096. This "
                                             "model's maximum context length is 4096 tokens and your request has "
                                             "30 input tokens (4096 > 4096 - 30)."})
        with self.assertLogs("odoo.addons.agentic_ai.engine.runtime", "WARNING"):
            _thread, result = self.run_agent("hello", provider=self.providers["custom"])
        self.assertIn("refused the request", result.reply)
        self.assertIn("'max_tokens' or 'max_completion_tokens' is too large", result.reply)
        self.assertEqual(len(self.scenario.chat_requests()), 1)

    def test_a_failed_stream_is_tried_again_as_a_plain_call(self):
        """An empty streamed 200 (llama-cpp-python's answer to a streamed
        overflow or tool call) and a 500: the second try is a plain call,
        its answer relayed whole."""
        for first in ({"raw_stream": []}, {"status": 500, "error": "pydantic validation error"}):
            with self.subTest(first=str(first)[:30]):
                self.agent.llm_provider_id = self.providers["custom"]
                thread = self.new_thread()
                tokens = []
                self.script(first, {"content": "Hello from a plain call."})
                result = AgentRuntime(self.agent, thread, emit=lambda event, data, tokens=tokens: tokens.append(data)
                                      if event == "token" else None).run_turn("hi")
                self.assertEqual((result.state, result.reply), ("completed", "Hello from a plain call."))
                requests = self.scenario.chat_requests()
                self.assertEqual([bool(r.get("stream")) for r in requests], [True, False])
                self.assertIn("Hello from a plain call.", "".join(t.get("text", "") for t in tokens))

    def test_a_turn_ends_before_the_servers_own_time_limit(self):
        """Issue 24 point 3: the provider's timeout, the retries and the
        turn's budget stay below the time Odoo gives the request
        (limit_time_real, which restarts the server when a thread passes
        it): no call starts without time left, and a call's timeout is cut
        to what is left."""
        current = threading.current_thread()
        self.addCleanup(setattr, current, "start_time", getattr(current, "start_time", None))
        provider = self.providers["custom"]
        provider.timeout_seconds = 60
        with patch.dict(config.options, {"limit_time_real": 120}):
            current.start_time = time.time() - 112  # 8 s left, less the margin kept free: no call starts
            self.script({"content": "never asked"})
            _thread, result = self.run_agent("hi", provider=provider)
            self.assertEqual(result.state, "completed")
            self.assertIn("limit_time_real", result.reply)
            self.assertEqual(self.scenario.chat_requests(), [])
            current.start_time = time.time() - 104  # 16 s left: one call, its timeout cut to about 6 s, no retry
            self.script({"content": "too late", "delay": 7}, {"content": "never asked"})
            with self.assertLogs("odoo.addons.agentic_ai.engine.runtime", "WARNING"):
                _thread, result = self.run_agent("hi", provider=provider)
            self.assertEqual(result.state, "error")
            self.assertIn("timed out", result.reply)
            self.assertEqual(len(self.scenario.chat_requests()), 1)
