"""Usage records against hostile and odd provider answers (issue 14).

Real providers and the proxies in front of them misbehave: usage that is
not an object, details of the wrong type, huge, negative, fractional or
non-finite counts, usage repeated on every streamed chunk, usage on a chunk
that also carries choices, streams cut before the usage event, Anthropic's
newer ``message_delta`` usage with input figures (``null`` when unknown,
MessageDeltaUsage's optional fields), Gemini chunks with partial
``usageMetadata``, reasoning text without counts, cache counts larger than
the prompt. Each answer is sent verbatim (``raw`` / ``raw_stream``) by the
scripted server to every provider of the matrix that speaks its wire, and
for each: the adapter raises nothing but LLMError, the ``Usage`` invariants
hold, a figure the provider did not send is flagged estimated, and the same
answer streamed and not streamed gives the same record."""
import json

from odoo.exceptions import ValidationError
from odoo.tests import Form, tagged

from ..dev.scripted_llm.wire import words
from ..engine.durable.audit import AuditTrail
from ..engine.turn.llm_calls import LLMCaller
from ..engine.turn.run_context import build_run_context
from ..llm import LLMError, TokenTracker, Usage
from ..llm.usage import FIGURES, MAX_TOKEN_COUNT
from .common import MESSAGES, PROVIDER_MATRIX, AdapterCase

TEXT = "Two partners match."
THINKING = "The user wants partners, so I should search res.partner first and count them."
OPENAI_WIRE = ("openai", "azure", "custom", "ollama", "ollama_prompt", "custom_prompt")
ESTIMATED_TOTALS = {"input_tokens", "output_tokens"}
MISSING = object()  # a key left out of the payload (not even null)
# Placeholders replaced in the JSON text by what json.dumps cannot write but a server may send.
NON_JSON = {'"__INF__"': "1e400", '"__NAN__"': "NaN", '"__HUGE_FLOAT__"': "1e30"}


def wire(name: str) -> str:
    return {"gemini": "gemini", "anthropic": "anthropic"}.get(name, "openai")


def text_of(payload) -> str:
    """``payload`` as the JSON text a server would send, placeholders of
    NON_JSON written as the non-standard numbers they stand for."""
    text = json.dumps(payload)
    for placeholder, raw in NON_JSON.items():
        text = text.replace(placeholder, raw)
    return text


def figures(usage: Usage) -> tuple:
    return tuple(getattr(usage, name) for name in FIGURES)


# ---------------------------------------------------------------- OpenAI wire
def openai_completion(usage=MISSING, reasoning=None) -> dict:
    message = {"role": "assistant", "content": TEXT}
    if reasoning:
        message["reasoning_content"] = reasoning
    body = {"id": "chatcmpl-raw", "object": "chat.completion", "model": "raw",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
    if usage is not MISSING:
        body["usage"] = usage
    return body


def openai_chunks(usage=MISSING, every=None, on_finish=MISSING, reasoning=None, cut_after_finish=False) -> list:
    """Chat completion chunks: reasoning and text in word deltas, the
    finish chunk (carrying ``on_finish`` as its usage when given), a last
    chunk with no choices carrying ``usage`` when given, ``[DONE]``.
    ``every``: usages set on the chunks in order (a server that repeats
    usage on each chunk). ``cut_after_finish``: the stream ends right after
    the finish chunk (no usage chunk, no ``[DONE]``)."""
    def chunk(delta, finish=None):
        return {"id": "chatcmpl-raw", "object": "chat.completion.chunk", "model": "raw",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks += [chunk({"reasoning_content": piece}) for piece in words(reasoning or "")]
    chunks += [chunk({"content": piece}) for piece in words(TEXT)]
    finish = chunk({}, "stop")
    if on_finish is not MISSING:
        finish["usage"] = on_finish
    chunks.append(finish)
    for item, value in zip(chunks, every or [], strict=False):
        item["usage"] = value
    if cut_after_finish:
        return [text_of(item) for item in chunks]
    if usage is not MISSING:
        chunks.append({"id": "chatcmpl-raw", "object": "chat.completion.chunk", "model": "raw", "choices": [],
                       "usage": usage})
    return [text_of(item) for item in chunks] + ["[DONE]"]


# ------------------------------------------------------------- Anthropic wire
def anthropic_message(usage=MISSING, thinking=None) -> dict:
    content = [{"type": "thinking", "thinking": thinking, "signature": "raw"}] if thinking else []
    content.append({"type": "text", "text": TEXT})
    message = {"id": "msg_raw", "type": "message", "role": "assistant", "model": "raw", "content": content,
               "stop_reason": "end_turn", "stop_sequence": None}
    if usage is not MISSING:
        message["usage"] = usage
    return message


def anthropic_events(start=MISSING, delta=MISSING, thinking=None, cut_before_delta=False) -> list:
    """The Messages streaming events: ``message_start`` (its usage
    ``start``), a thinking block when given, the text block, ``message_delta``
    (its usage ``delta``), ``message_stop``."""
    message = {"id": "msg_raw", "type": "message", "role": "assistant", "model": "raw", "content": [],
               "stop_reason": None, "stop_sequence": None}
    if start is not MISSING:
        message["usage"] = start
    events = [{"type": "message_start", "message": message}]
    blocks = ([("thinking", thinking)] if thinking else []) + [("text", TEXT)]
    for index, (kind, text) in enumerate(blocks):
        events.append({"type": "content_block_start", "index": index, "content_block": {"type": kind, kind: ""}})
        events += [{"type": "content_block_delta", "index": index, "delta": {"type": f"{kind}_delta", kind: piece}}
                   for piece in words(text)]
        events.append({"type": "content_block_stop", "index": index})
    if not cut_before_delta:
        message_delta = {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None}}
        if delta is not MISSING:
            message_delta["usage"] = delta
        events += [message_delta, {"type": "message_stop"}]
    return [text_of(event) for event in events]


# ---------------------------------------------------------------- Gemini wire
def gemini_response(usage=MISSING, thought=None) -> dict:
    parts = [{"text": thought, "thought": True}] if thought else []
    parts.append({"text": TEXT})
    response = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
                "modelVersion": "raw"}
    if usage is not MISSING:
        response["usageMetadata"] = usage
    return response


def gemini_chunks(usages, thought=None, finish=True) -> list:
    """Partial responses, one per word of the text (the thought summary
    first when given), the i-th carrying ``usages[i]`` as its
    ``usageMetadata`` (MISSING: none); the last has the finish reason."""
    pieces = ([{"text": thought, "thought": True}] if thought else []) + [{"text": w} for w in words(TEXT)]
    chunks = []
    for index, part in enumerate(pieces):
        chunk = {"candidates": [{"content": {"role": "model", "parts": [part]}, "index": 0}], "modelVersion": "raw"}
        usage = usages[index] if index < len(usages) else MISSING
        if usage is not MISSING:
            chunk["usageMetadata"] = usage
        chunks.append(chunk)
    if finish:
        chunks[-1]["candidates"][0]["finishReason"] = "STOP"
    return [text_of(chunk) for chunk in chunks]


def gemini_stream_of(usage, thought=None) -> list:
    """``usage`` on every chunk of a stream (Gemini's cumulative
    usageMetadata at its final value)."""
    return gemini_chunks([usage] * (len(words(TEXT)) + (1 if thought else 0)), thought)


def same_usage_everywhere(name: str, usage, thinking=None) -> tuple:
    """``(non-streamed reply, streamed reply)`` of provider ``name``'s wire
    carrying ``usage`` verbatim (Anthropic: in ``message_start`` with the
    output count in ``message_delta``, as the API sends it)."""
    kind = wire(name)
    if kind == "anthropic":
        delta = {"output_tokens": usage.get("output_tokens")} if isinstance(usage, dict) else usage
        start = {**usage, "output_tokens": 1} if isinstance(usage, dict) else usage
        return ({"raw": text_of(anthropic_message(usage, thinking))},
                {"raw_stream": anthropic_events(start, delta, thinking)})
    if kind == "gemini":
        return {"raw": text_of(gemini_response(usage, thinking))}, {"raw_stream": gemini_stream_of(usage, thinking)}
    return ({"raw": text_of(openai_completion(usage, thinking))},
            {"raw_stream": openai_chunks(usage, reasoning=thinking)})


@tagged("post_install", "-at_install")
class TestUsageHostile(AdapterCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        for provider in cls.providers.values():
            provider.write({"input_price_per_million": 2.0, "cache_read_price_per_million": 0.5,
                            "cache_write_price_per_million": 2.5, "output_price_per_million": 8.0})

    def assertSound(self, usage):
        """The Usage invariants (llm/usage.py), whatever the provider sent."""
        self.assertIsInstance(usage, Usage)
        for name in FIGURES:
            value = getattr(usage, name)
            self.assertIs(type(value), int, name)
            self.assertTrue(0 <= value <= MAX_TOKEN_COUNT, (name, value))
        self.assertLessEqual(usage.cache_read_tokens + usage.cache_write_tokens, usage.input_tokens)
        self.assertLessEqual(usage.reasoning_tokens, usage.output_tokens)
        self.assertLessEqual(usage.estimated, set(FIGURES))
        for name in ("input_tokens", "output_tokens"):
            if name in usage.estimated:
                self.assertGreater(getattr(usage, name), 0, f"an estimated {name} is never 0")

    def answers(self, adapter, plain_reply, stream_reply) -> tuple:
        """``(non-streamed usage, streamed usage)``, both sound; only the
        last streamed chunk carries usage."""
        self.script(plain_reply, stream_reply)
        plain = adapter.chat_completion(MESSAGES)
        chunks = list(adapter.chat_completion_stream(MESSAGES))
        self.assertEqual([chunk.usage for chunk in chunks[:-1]], [None] * (len(chunks) - 1))
        self.assertEqual("".join(chunk.content for chunk in chunks), plain.content)
        for usage in (plain.usage, chunks[-1].usage):
            self.assertSound(usage)
        return plain.usage, chunks[-1].usage

    def same(self, adapter, plain_reply, stream_reply) -> Usage:
        """The usage of the answer, asserted equal streamed and not."""
        plain, streamed = self.answers(adapter, plain_reply, stream_reply)
        self.assertEqual(plain, streamed, "the same answer streamed gives the same record")
        return plain

    # ------------------------------------------------------ every provider
    def test_usage_that_is_not_an_object_is_estimated_on_every_provider(self):
        for bad in (None, [], [1200, 80], "1200 tokens", 42, True, {}):
            for name, adapter in self.each():
                with self.subTest(usage=bad):
                    usage = self.same(adapter, *same_usage_everywhere(name, bad))
                    self.assertEqual(usage.estimated, ESTIMATED_TOTALS)
                    self.assertEqual(usage.cache_read_tokens + usage.cache_write_tokens + usage.reasoning_tokens, 0)

    def test_counts_that_are_not_counts_are_estimated_never_zero(self):
        """Negative, fractional, non-finite, text and boolean counts are
        not counts: the figure is estimated and flagged, never 0."""
        keys = {"openai": ("prompt_tokens", "completion_tokens"), "anthropic": ("input_tokens", "output_tokens"),
                "gemini": ("promptTokenCount", "candidatesTokenCount")}
        for bad in (-1, 12.5, "__INF__", "__NAN__", "1200", False, None, {"value": 3}):
            for name, adapter in self.each():
                input_key, output_key = keys[wire(name)]
                with self.subTest(bad=bad, figure="input"):
                    usage = self.same(adapter, *same_usage_everywhere(name, {input_key: bad, output_key: 80}))
                    if wire(name) == "gemini":  # without a prompt count the metadata is not Gemini's: all estimated
                        self.assertEqual(usage.estimated, ESTIMATED_TOTALS)
                    else:
                        self.assertEqual((usage.estimated, usage.output_tokens), ({"input_tokens"}, 80))
                with self.subTest(bad=bad, figure="output"):
                    usage = self.same(adapter, *same_usage_everywhere(name, {input_key: 1200, output_key: bad}))
                    self.assertEqual((usage.estimated, usage.input_tokens), ({"output_tokens"}, 1200))

    def test_huge_counts_are_held_to_what_a_column_holds(self):
        huge = {"openai": {"prompt_tokens": 10**40, "completion_tokens": "__HUGE_FLOAT__",
                           "prompt_tokens_details": {"cached_tokens": 10**40},
                           "completion_tokens_details": {"reasoning_tokens": 10**40}},
                "anthropic": {"input_tokens": MAX_TOKEN_COUNT, "cache_read_input_tokens": MAX_TOKEN_COUNT,
                              "cache_creation_input_tokens": 10**30, "output_tokens": 10**40},
                "gemini": {"promptTokenCount": MAX_TOKEN_COUNT, "toolUsePromptTokenCount": MAX_TOKEN_COUNT,
                           "cachedContentTokenCount": 10**40, "candidatesTokenCount": MAX_TOKEN_COUNT,
                           "thoughtsTokenCount": 10**40}}
        for name, adapter in self.each():
            usage = self.same(adapter, *same_usage_everywhere(name, huge[wire(name)]))
            self.assertEqual((usage.input_tokens, usage.output_tokens, usage.estimated),
                             (MAX_TOKEN_COUNT, MAX_TOKEN_COUNT, frozenset()))
            self.assertEqual(usage.cache_read_tokens, MAX_TOKEN_COUNT, "a part is cut to its total")
            self.assertEqual(usage.cache_write_tokens, 0, "nothing left of the total for cache writes")
            cost = self.providers[name]._prices().cost(usage)
            self.assertTrue(0 < cost < 1e6, cost)

    def test_parts_larger_than_their_totals_are_cut_to_them(self):
        """A provider (or proxy) reporting more cached tokens than prompt
        tokens, or more reasoning than output: the parts are cut, so the
        cost never exceeds what the totals say."""
        cases = {"openai": ({"prompt_tokens": 100, "completion_tokens": 10,
                             "prompt_tokens_details": {"cached_tokens": 900, "cache_write_tokens": 50},
                             "completion_tokens_details": {"reasoning_tokens": 50}}, (100, 100, 0, 10, 10)),
                 "gemini": ({"promptTokenCount": 100, "cachedContentTokenCount": 900, "candidatesTokenCount": 10,
                             "thoughtsTokenCount": 5}, (100, 100, 0, 15, 5))}
        for name, adapter in self.each([n for n in PROVIDER_MATRIX if wire(n) != "anthropic"]):
            reply, expected = cases[wire(name)]
            usage = self.same(adapter, *same_usage_everywhere(name, reply))
            self.assertEqual((figures(usage), usage.estimated), (expected, frozenset()))
            self.assertLessEqual(self.providers[name]._prices().cost(usage), 100 * 2e-6 + expected[3] * 8e-6)

    def test_reasoning_text_without_a_count_is_estimated_within_the_output_everywhere(self):
        counts = {"openai": {"prompt_tokens": 800, "completion_tokens": 120},
                  "anthropic": {"input_tokens": 800, "output_tokens": 120},
                  "gemini": {"promptTokenCount": 800, "candidatesTokenCount": 120}}
        for name, adapter in self.each():
            usage = self.same(adapter, *same_usage_everywhere(name, counts[wire(name)], THINKING))
            if wire(name) == "gemini":  # Gemini counts thinking itself: thoughtsTokenCount left out means 0
                self.assertEqual((figures(usage), usage.estimated), ((800, 0, 0, 120, 0), frozenset()))
                continue
            self.assertEqual((usage.input_tokens, usage.output_tokens), (800, 120))
            self.assertEqual(usage.estimated, {"reasoning_tokens"})
            self.assertEqual(usage.reasoning_tokens, adapter.count_tokens(THINKING))

    def test_reasoning_text_and_no_usage_at_all(self):
        for name, adapter in self.each():
            usage = self.same(adapter, *same_usage_everywhere(name, MISSING, THINKING))
            self.assertEqual(usage.estimated, {"input_tokens", "output_tokens", "reasoning_tokens"})
            self.assertEqual(usage.reasoning_tokens, adapter.count_tokens(THINKING))
            self.assertGreater(usage.output_tokens, usage.reasoning_tokens, "the visible text is output too")

    # ----------------------------------------------------------- OpenAI wire
    def test_openai_details_of_the_wrong_type_keep_the_totals(self):
        bad_details = [
            {"prompt_tokens_details": [900], "completion_tokens_details": "30"},
            {"prompt_tokens_details": None, "completion_tokens_details": None},
            {"prompt_tokens_details": {"cached_tokens": "900"}, "completion_tokens_details": {"reasoning_tokens": -3}},
            {"prompt_tokens_details": {"cached_tokens": {"n": 900}, "cache_write_tokens": [1]},
             "completion_tokens_details": {"reasoning_tokens": 1.5}},
            {"prompt_tokens_details": {"cached_tokens": None}, "prompt_cache_hit_tokens": "x"},
        ]
        for details in bad_details:
            for _name, adapter in self.each(OPENAI_WIRE):
                with self.subTest(details=details):
                    reply = {"prompt_tokens": 1200, "completion_tokens": 80, **details}
                    usage = self.same(adapter, {"raw": text_of(openai_completion(reply))},
                                      {"raw_stream": openai_chunks(reply)})
                    self.assertEqual((figures(usage), usage.estimated), ((1200, 0, 0, 80, 0), frozenset()))

    def test_openai_usage_repeated_on_every_chunk_the_last_one_counts(self):
        """Some OpenAI-compatible servers (vLLM's continuous usage stats,
        proxies) put usage on every chunk, growing, or even shrinking; OpenAI
        itself sends ``"usage": null`` on every chunk but the last. The last
        usage the server sent is the answer's."""
        final = {"prompt_tokens": 1200, "completion_tokens": 80, "prompt_tokens_details": {"cached_tokens": 1000},
                 "completion_tokens_details": {"reasoning_tokens": 20}}
        growing = [{"prompt_tokens": 1200, "completion_tokens": n} for n in range(1, 8)]
        shrinking = [{"prompt_tokens": 99999 - n, "completion_tokens": 9999 - n} for n in range(8)]
        for every in (growing, shrinking, [None] * 8, ["junk", [], 0] * 3):
            for _name, adapter in self.each(OPENAI_WIRE):
                with self.subTest(every=every[:2]):
                    usage = self.same(adapter, {"raw": text_of(openai_completion(final))},
                                      {"raw_stream": openai_chunks(final, every=every)})
                    self.assertEqual((figures(usage), usage.estimated), ((1200, 1000, 0, 80, 20), frozenset()))

    def test_openai_usage_on_the_chunk_that_carries_the_finish_reason(self):
        final = {"prompt_tokens": 1200, "completion_tokens": 80, "prompt_tokens_details": {"cached_tokens": 1000}}
        for _name, adapter in self.each(OPENAI_WIRE):
            usage = self.same(adapter, {"raw": text_of(openai_completion(final))},
                              {"raw_stream": openai_chunks(on_finish=final)})
            self.assertEqual((figures(usage), usage.estimated), ((1200, 1000, 0, 80, 0), frozenset()))

    def test_a_stream_cut_before_its_usage_is_estimated_and_flagged(self):
        """The connection drops after the finish chunk (no usage chunk, no
        ``[DONE]``): the answer is complete, its usage estimated exactly as
        for a server that sends none. Cut before the finish: LLMError only."""
        for _name, adapter in self.each(OPENAI_WIRE):
            usage = self.same(adapter, {"raw": text_of(openai_completion())},
                              {"raw_stream": openai_chunks(cut_after_finish=True)})
            self.assertEqual(usage.estimated, ESTIMATED_TOTALS)
            self.script({"raw_stream": openai_chunks(cut_after_finish=True)[:-1]})
            with self.assertRaises(LLMError):
                list(adapter.chat_completion_stream(MESSAGES))
        adapter = self.providers["anthropic"]._get_adapter()
        self.script({"raw_stream": anthropic_events({"input_tokens": 12, "output_tokens": 1}, cut_before_delta=True)})
        with self.assertRaises(LLMError):
            list(adapter.chat_completion_stream(MESSAGES))
        adapter = self.providers["gemini"]._get_adapter()
        self.script({"raw_stream": gemini_chunks([{"promptTokenCount": 40}], finish=False)})
        with self.assertRaises(LLMError):
            list(adapter.chat_completion_stream(MESSAGES))

    def test_openai_cache_reads_reported_with_no_prompt_count(self):
        """A proxy that drops ``prompt_tokens`` but keeps its details: the
        input total is estimated (flagged) and never smaller than the cache
        reads the provider reported, nor the output than its reasoning."""
        reply = {"completion_tokens_details": {"reasoning_tokens": 300},
                 "prompt_tokens_details": {"cached_tokens": 5000}}
        for _name, adapter in self.each(OPENAI_WIRE):
            usage = self.same(adapter, {"raw": text_of(openai_completion(reply))},
                              {"raw_stream": openai_chunks(reply)})
            self.assertEqual(usage.estimated, ESTIMATED_TOTALS)
            self.assertEqual((usage.cache_read_tokens, usage.reasoning_tokens), (5000, 300))
            self.assertGreaterEqual(usage.input_tokens, 5000)
            self.assertGreaterEqual(usage.output_tokens, 300, "the reasoning the provider reported is output")

    # -------------------------------------------------------- Anthropic wire
    def test_anthropic_message_delta_with_the_input_figures_of_the_newer_api(self):
        """Since 2025 ``message_delta`` usage may carry the input and cache
        figures too, cumulative (they replace message_start's); unknown ones
        come as ``null`` (MessageDeltaUsage's optional fields), which must
        not erase what ``message_start`` said."""
        full = {"input_tokens": 12, "cache_read_input_tokens": 9800, "cache_creation_input_tokens": 200,
                "output_tokens": 350}
        expected = (10012, 9800, 200, 350, 0)
        adapter = self.providers["anthropic"]._get_adapter()
        plain = {"raw": text_of(anthropic_message(full))}
        for start, delta in (
                ({**full, "output_tokens": 1}, full),  # the newer API: the same figures again
                ({"input_tokens": 0, "output_tokens": 0}, full),  # a gateway that knows the input only at the end
                (MISSING, full),  # no usage in message_start
                ({**full, "output_tokens": 1}, {"input_tokens": None, "cache_read_input_tokens": None,
                                                "cache_creation_input_tokens": None, "output_tokens": 350}),
                ({**full, "output_tokens": 1}, {"output_tokens": 350, "server_tool_use": None}),
        ):
            with self.subTest(start=start, delta=delta):
                usage = self.same(adapter, plain, {"raw_stream": anthropic_events(start, delta)})
                self.assertEqual((figures(usage), usage.estimated), (expected, frozenset()))

    def test_anthropic_stream_without_message_start_usage(self):
        adapter = self.providers["anthropic"]._get_adapter()
        usage = self.same(adapter, {"raw": text_of(anthropic_message({"output_tokens": 350}))},
                          {"raw_stream": anthropic_events(MISSING, {"output_tokens": 350})})
        self.assertEqual((usage.output_tokens, usage.estimated), (350, {"input_tokens"}))

    def test_anthropic_output_of_message_start_is_not_the_answers(self):
        """``message_start``'s ``output_tokens`` (1) is a running count at
        the start of the answer; a stream whose ``message_delta`` brings no
        usage never said how long the answer was: the output is estimated
        and flagged, as for the same answer not streamed without a count."""
        adapter = self.providers["anthropic"]._get_adapter()
        for delta in (MISSING, None, {}, {"output_tokens": None}):
            with self.subTest(delta=delta):
                usage = self.same(adapter, {"raw": text_of(anthropic_message({"input_tokens": 12}))},
                                  {"raw_stream": anthropic_events({"input_tokens": 12, "output_tokens": 1}, delta)})
                self.assertEqual((usage.input_tokens, usage.estimated), (12, {"output_tokens"}))

    def test_anthropic_cache_figures_without_an_input_count(self):
        adapter = self.providers["anthropic"]._get_adapter()
        reply = {"cache_read_input_tokens": 9800, "cache_creation_input_tokens": 100, "output_tokens": 350}
        usage = self.same(adapter, *same_usage_everywhere("anthropic", reply))
        self.assertEqual(usage.estimated, {"input_tokens"})
        self.assertEqual((usage.cache_read_tokens, usage.cache_write_tokens), (9800, 100))
        self.assertGreaterEqual(usage.input_tokens, 9900, "the reported cache figures are input")

    def test_usage_events_of_the_wrong_shape_raise_only_llm_errors(self):
        """Streamed events whose usage-bearing parts are not objects: the
        adapter either answers (its usage sound, the totals estimated) or
        raises LLMError, never anything else."""
        def junk_openai(event):
            return [text_of(event), *openai_chunks()]
        streams = {
            "anthropic": [[text_of({"type": "message_start", "message": "junk"})] + anthropic_events(),
                          anthropic_events(MISSING, "junk"), anthropic_events([1], [2]),
                          [text_of({"type": "message_delta", "delta": [], "usage": {"output_tokens": 3}})]
                          + anthropic_events()],
            "gemini": [gemini_chunks(["junk", 7, [1], None]), gemini_chunks([{"promptTokenCount": [1]}] * 4),
                       [text_of({"usageMetadata": {"promptTokenCount": 5}, "candidates": []})] + gemini_chunks([])],
            "openai": [junk_openai({"choices": {"0": "x"}, "usage": "junk"}), junk_openai({"usage": [1, 2]}),
                       openai_chunks(on_finish=[3]), junk_openai({"choices": [None, 3, "x"]})],
        }
        for name, adapter in self.each():
            for events in streams[wire(name)]:
                with self.subTest(events=events[:2]):
                    self.script({"raw_stream": events})
                    try:
                        chunks = list(adapter.chat_completion_stream(MESSAGES))
                    except LLMError:
                        continue
                    self.assertSound(chunks[-1].usage)
                    self.assertTrue({"input_tokens", "output_tokens"} & chunks[-1].usage.estimated)

    # ----------------------------------------------------------- Gemini wire
    def test_gemini_chunks_with_partial_usage_metadata(self):
        """Gemini's streamed usageMetadata is cumulative, but chunks (or a
        proxy) may leave figures out, send none, send it as null or junk:
        what was sent last for each figure counts."""
        final = {"promptTokenCount": 1200, "cachedContentTokenCount": 1000, "candidatesTokenCount": 95,
                 "thoughtsTokenCount": 400}
        expected = (1200, 1000, 0, 495, 400)
        adapter = self.providers["gemini"]._get_adapter()
        plain = {"raw": text_of(gemini_response(final, THINKING))}
        streams = [
            [{"promptTokenCount": 1200, "thoughtsTokenCount": 400, "cachedContentTokenCount": 1000},
             {"candidatesTokenCount": 40}, None, {"candidatesTokenCount": 95}],
            [MISSING, MISSING, "junk", final],
            [final, [], {"candidatesTokenCount": 95}, {"candidatesTokenCount": 95}],
            [final, final, final, {**final, "thoughtsTokenCount": None, "cachedContentTokenCount": None}],
            [{"promptTokenCount": 1200, "candidatesTokenCount": 0}, final, MISSING, MISSING],
        ]
        for usages in streams:
            with self.subTest(usages=usages):
                usage = self.same(adapter, plain, {"raw_stream": gemini_chunks(usages, THINKING)})
                self.assertEqual((figures(usage), usage.estimated), (expected, frozenset()))

    def test_gemini_answer_without_a_candidates_count_is_estimated_not_zero(self):
        """Proto3 leaves out a count that is 0, but an answer with text
        costs output tokens: a usageMetadata without candidatesTokenCount
        (a stream whose only one came before the answer) did not send it."""
        adapter = self.providers["gemini"]._get_adapter()
        for usages in ([{"promptTokenCount": 40}], [{"promptTokenCount": 40}] * 3,
                       [{"promptTokenCount": 40, "thoughtsTokenCount": 9}, MISSING, MISSING]):
            with self.subTest(usages=usages):
                plain = {"raw": text_of(gemini_response(usages[0]))}
                usage = self.same(adapter, plain, {"raw_stream": gemini_chunks(usages)})
                self.assertEqual((usage.input_tokens, usage.estimated), (40, {"output_tokens"}))
                self.assertGreaterEqual(usage.output_tokens, usage.reasoning_tokens)

    def test_gemini_usage_without_a_prompt_count_is_not_trusted(self):
        adapter = self.providers["gemini"]._get_adapter()
        for metadata in ({"candidatesTokenCount": 7}, {"totalTokenCount": 50}, {"promptTokenCount": None}):
            with self.subTest(metadata=metadata):
                usage = self.same(adapter, *same_usage_everywhere("gemini", metadata))
                self.assertEqual(usage.estimated, ESTIMATED_TOTALS)

    # ------------------------------------------------- the engine and the log
    def call(self, provider, reply, stream=False):
        """One LLM call of the engine on a new thread (relayed when
        ``stream``); returns the thread."""
        self.agent.write({"llm_provider_id": provider.id, "fallback_provider_id": False})
        thread = self.new_thread()
        self.script(reply)
        LLMCaller(build_run_context(self.agent, thread), AuditTrail(thread), TokenTracker(), 0.0,
                  emit=(lambda _event, _data: None) if stream else None).answer(MESSAGES, [], lambda calls: calls)
        return thread

    def test_huge_figures_go_through_the_log_the_statistics_and_the_report(self):
        """Two calls at the largest count a column holds: each row holds
        it, and the thread's statistics and the cost report sum past it."""
        provider = self.providers["custom"]
        reply = {"raw": text_of(openai_completion({"prompt_tokens": 10**40, "completion_tokens": 10**40,
                                                   "prompt_tokens_details": {"cached_tokens": 10**40}}))}
        thread = self.call(provider, reply)
        self.script(reply)
        LLMCaller(build_run_context(self.agent, thread), AuditTrail(thread), TokenTracker(), 0.0).answer(
            MESSAGES, [], lambda calls: calls)
        rows = thread.execution_log_ids.filtered(lambda row: row.action_type == "llm_call")
        self.assertEqual(rows.mapped("input_tokens"), [MAX_TOKEN_COUNT] * 2)
        self.assertEqual(rows.mapped("cache_read_tokens"), [MAX_TOKEN_COUNT] * 2)
        stats = thread.get_stats()
        self.assertEqual((stats["input_tokens"], stats["output_tokens"], stats["llm_calls"]),
                         (2 * MAX_TOKEN_COUNT, 2 * MAX_TOKEN_COUNT, 2))
        self.assertEqual(thread.total_input_tokens, 2 * MAX_TOKEN_COUNT)
        self.assertAlmostEqual(stats["cost"], round(2 * MAX_TOKEN_COUNT * (0.5e-6 + 8e-6), 6), places=2)
        [line] = [line for line in self.env["agentic.ai.execution.log"].get_cost_report(group_by="thread_id")
                  if line["key"] == thread.display_name]
        self.assertEqual((line["input_tokens"], line["calls"], line["estimated_calls"]), (2 * MAX_TOKEN_COUNT, 2, 0))

    def test_hostile_usage_is_logged_as_an_estimate(self):
        for name in PROVIDER_MATRIX:
            for stream, reply in enumerate(same_usage_everywhere(name, ["not", "usage"])):
                with self.subTest(provider=name, streamed=bool(stream)):
                    thread = self.call(self.providers[name], reply, bool(stream))
                    [row] = thread.execution_log_ids.filtered(lambda row: row.action_type == "llm_call")
                    self.assertEqual((row.usage_estimated, row.estimated_figures),
                                     (True, "input_tokens, output_tokens"))
                    self.assertTrue(row.input_tokens > 0 and row.output_tokens > 0)
                    self.assertEqual(thread.get_stats()["estimated_llm_calls"], 1)

    def test_anthropic_null_delta_figures_are_logged_as_reported_streamed(self):
        full = {"input_tokens": 12, "cache_read_input_tokens": 9800, "output_tokens": 350}
        thread = self.call(self.providers["anthropic"], {"raw_stream": anthropic_events(
            {**full, "output_tokens": 1}, {"input_tokens": None, "cache_read_input_tokens": None,
                                           "output_tokens": 350})}, stream=True)
        [row] = thread.execution_log_ids.filtered(lambda row: row.action_type == "llm_call")
        self.assertEqual(tuple(row[name] for name in FIGURES), (9812, 9800, 0, 350, 0))
        self.assertEqual((row.usage_estimated, row.cost), (False, round(12 * 2e-6 + 9800 * 0.5e-6 + 350 * 8e-6, 6)))

    # --------------------------------------------------------------- prices
    def test_prices_in_the_provider_form(self):
        with Form(self.env["agentic.ai.llm.provider"]) as form:
            form.name = "Form priced"
            form.provider_type = "openai"
            form.default_model = "gpt-4o"
            form.input_price_per_million = 2.5
            form.cache_read_price_per_million = 0.0001
            form.cache_write_price_per_million = 0.01875
            form.output_price_per_million = 0.000001
        provider = form.record
        provider.invalidate_recordset()
        self.assertEqual((provider.input_price_per_million, provider.cache_read_price_per_million,
                          provider.cache_write_price_per_million, provider.output_price_per_million),
                         (2.5, 0.0001, 0.01875, 0.000001))
        self.assertAlmostEqual(provider.cost_per_cache_read_token, 1e-10, places=20)
        self.assertAlmostEqual(provider.cost_per_output_token, 1e-12, places=20)
        usage = Usage(input_tokens=10**6, cache_read_tokens=10**6 // 2, output_tokens=10**6)
        self.assertAlmostEqual(provider._prices().cost(usage), 0.5 * 2.5 + 0.5 * 0.0001 + 0.000001, places=12)
        # Editing one price leaves the others as they were.
        with Form(provider) as form:
            form.output_price_per_million = 10
        provider.invalidate_recordset()
        self.assertEqual((provider.cost_per_input_token, provider.cost_per_cache_read_token,
                          provider.cost_per_output_token), (2.5e-6, 1e-10, 1e-5))
        # Negative prices are refused, in the form as in the database.
        for field in ("input_price_per_million", "cache_read_price_per_million", "cache_write_price_per_million",
                      "output_price_per_million"):
            self.env.invalidate_all()
            with self.subTest(field=field), self.assertRaises(ValidationError), self.cr.savepoint():
                with Form(provider) as form:
                    setattr(form, field, -1)
                self.env.flush_all()
        provider.invalidate_recordset()
        self.assertEqual(provider.output_price_per_million, 10)

    def test_editing_one_price_never_rounds_another(self):
        """A price set per token before (more decimals than the form's six
        per million) is kept when another price is edited in the form."""
        provider = self.env["agentic.ai.llm.provider"].create({
            "name": "Per token", "provider_type": "openai", "default_model": "gpt-4",
            "cost_per_input_token": 1.2345678e-7, "cost_per_cache_read_token": 3e-13})
        with Form(provider) as form:
            form.output_price_per_million = 4
        provider.invalidate_recordset()
        self.assertEqual((provider.cost_per_input_token, provider.cost_per_cache_read_token,
                          provider.cost_per_output_token), (1.2345678e-7, 3e-13, 4e-6))
