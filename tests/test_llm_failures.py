"""How provider calls fail (spec 000 §6, §4.5): HTTP errors classified as
retryable or not for every provider, timeouts and refused connections,
malformed bodies and incomplete or failed streams ending in an LLMError,
never another exception or a hang, and API keys never quoted in errors,
logs or messages."""
from odoo.exceptions import ValidationError
from odoo.tests import tagged
from odoo.tools import mute_logger

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
