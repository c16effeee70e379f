"""Guards of every turn (issue 12 point 4): identical calls repeated (BR-10),
LLM calls and wall-clock time per user message, the history trimmed to the
model's context budget without separating a call from its result (BR-25b,
BR-25c), and one cap on tool-result size with the full result in the log
only (BR-19). Real Odoo, a real scripted LLM server over HTTP."""
import base64
import io
import json
import os
import re
import time

import psycopg2
from PIL import Image

from odoo import Command
from odoo.tests import tagged
from odoo.tools import mute_logger

from ..engine.observer import MAX_CHARS
from ..engine.turn.history import HistoryFitter
from ..engine.turn.run_context import CONTEXT_MARGIN, DEFAULT_CONTEXT_WINDOW, build_run_context
from ..engine.turn.transcript import Transcript
from ..llm import ToolCall
from .common import PROVIDER_MATRIX, AdapterCase, tool_call

SYSTEM = "You are an ERP assistant."
FILLER = ("please check the partner list and the open orders of this customer before you answer the question "
          "about deliveries invoices and payments in the current month ") * 2
NOTE_RE = re.compile(r"\n\[truncated: showed (\d+) of (\d+) characters; narrow the search \(domain, fields, limit\) "
                     r"or ask for fewer fields\]$")


def wire_pairs_problem(messages):
    """Why the neutral wire ``messages`` break the call/result pairing, or
    "": every call followed by exactly one result before anything else, no
    result without its call. Native calls by id (by order when a provider
    sends no id); the prompt protocol by its ``<tool_call>``/``<tool_result>``
    blocks."""
    open_calls = []
    for index, message in enumerate(messages):
        content = message.get("content") or ""
        calls = [c.get("id") or "" for c in message.get("tool_calls") or ()]
        if message.get("role") == "assistant" and "<tool_call>" in content:
            calls += [""] * content.count("<tool_call>")
        results = []
        if message.get("role") == "tool":
            results = [message.get("tool_call_id") or ""]
        elif message.get("role") == "user" and content.lstrip().startswith("<tool_result"):
            results = [""] * content.count("<tool_result")
        if results:
            for result_id in results:
                if not open_calls:
                    return f"message {index}: a result without its call"
                if result_id and result_id in open_calls:
                    open_calls.remove(result_id)
                elif result_id and any(open_calls):
                    return f"message {index}: result {result_id} matches no open call {open_calls}"
                else:
                    open_calls.pop(0)
            continue
        if open_calls:
            return f"message {index}: calls {open_calls} have no result"
        open_calls = calls
    return f"calls {open_calls} have no result" if open_calls else ""


def png_bytes(size=256):
    """A PNG of random pixels (does not compress), base64-encoded."""
    buffer = io.BytesIO()
    Image.frombytes("RGB", (size, size), os.urandom(size * size * 3)).save(buffer, "PNG")
    return base64.b64encode(buffer.getvalue())


@tagged("post_install", "-at_install")
class TestTurnGuards(AdapterCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.big_tool = cls.env["agentic.ai.tool"].create({
            "name": "big_setting", "description": "Read the big test setting.", "tool_type": "python_code",
            "risk_level": "low", "python_code": "result = env['ir.config_parameter'].sudo().get_param("
                                                "'agentic_ai_test.big_value')"})
        cls.agent.tool_ids = [Command.set((cls.env.ref("agentic_ai.tool_odoo_search_read")
                                           | cls.env.ref("agentic_ai.tool_odoo_get_model_info") | cls.big_tool).ids)]

    def tool_rows(self, thread):
        return self.env["agentic.ai.execution.log"].sudo().search(
            [("thread_id", "=", thread.id), ("action_type", "=", "tool_execution")], order="id")

    def error_rows(self, thread):
        return self.env["agentic.ai.execution.log"].sudo().search(
            [("thread_id", "=", thread.id), ("action_type", "=", "error")])

    def assert_one_result_per_call(self, thread):
        rows = thread.message_ids
        calls = rows.filtered(lambda m: m.role == "tool_call").mapped("tool_call_id")
        results = rows.filtered(lambda m: m.role == "tool_result").mapped("tool_call_id")
        self.assertEqual(sorted(calls), sorted(results), "every call id has exactly one result")

    # ------------------------------------------------------------------ BR-10
    def test_BR_10_roles_in_order_every_provider(self):
        """A user question, a count of sale.order and its result ``3``, as
        each provider receives it: roles in order, ``3`` in the tool message."""
        arguments = {"model": "sale.order", "domain": [["state", "=", "sale"]], "fields": ["id"], "limit": 1}
        for name, adapter in self.each():
            thread = self.new_thread()
            thread.add_user_message("How many confirmed sales orders do we have?")
            thread.add_tool_call(ToolCall("call_count_1", "odoo_search_read", arguments))
            thread.add_tool_result("call_count_1", "odoo_search_read", "3", success=True)
            self.script({"content": "You have 3 confirmed sales orders."})
            messages = Transcript(thread).for_llm(SYSTEM, 100000, adapter.count_tokens)
            adapter.chat_completion(messages, [self.env.ref("agentic_ai.tool_odoo_search_read").to_llm_schema()])
            sent = self.scenario.chat_requests()[-1]["messages"]
            self.assertEqual(wire_pairs_problem(sent), "")
            if name.endswith("_prompt"):  # calls and results travel as text blocks
                self.assertEqual([m["role"] for m in sent], ["system", "user", "assistant", "user"])
                self.assertIn("<tool_call>", sent[2]["content"])
                self.assertIn("\n3\n", sent[3]["content"])
                continue
            self.assertEqual([m["role"] for m in sent], ["system", "user", "assistant", "tool"])
            self.assertEqual(sent[2]["tool_calls"][0]["function"]["name"], "odoo_search_read")
            self.assertEqual(json.loads(sent[2]["tool_calls"][0]["function"]["arguments"]), arguments)
            self.assertEqual(sent[3]["content"].strip(), "3")

    def test_BR_10_repeated_call_stopped(self):
        """A model that always sends the same call (keys in any order): runs
        twice, is refused with a reason the 3rd and 4th time, and the 5th
        ends the turn with a clear message and an ``error`` log row."""
        shapes = [{"model": "res.partner", "limit": 1}, {"limit": 1, "model": "res.partner"}]
        self.scenario.turns.clear()
        self.scenario.requests.clear()
        self.scenario.add(lambda request: tool_call("odoo_search_read", shapes[len(request["messages"]) % 2]),
                          uses=None)
        thread, result = self.run_agent("find one partner")
        self.assertEqual(result.state, "completed")
        self.assertIn("repeating the same step (odoo_search_read with the same arguments)", result.reply)
        self.assertEqual(len(self.scenario.chat_requests()), 5, "the 5th identical call ends the turn")
        observations = self.observations(thread)
        self.assertEqual(len(observations), 5)
        self.assertIn("record(s) found in res.partner", observations[0])
        self.assertIn("record(s) found in res.partner", observations[1])
        for refused in observations[2:4]:
            self.assertTrue(refused.startswith("[NOT RUN] This exact call of odoo_search_read (same arguments) "
                                               "already ran twice in this request; its result is above."), refused)
        self.assertIn("the request is stopped", observations[4])
        self.assertEqual(self.tool_rows(thread).mapped("success"), [True, True, False, False, False])
        self.assertIn("repeated call", self.error_rows(thread).error_message)
        self.assert_one_result_per_call(thread)
        self.assertEqual(thread.message_ids.sorted("id")[-1].content, result.reply)

    def test_BR_10_other_arguments_still_run(self):
        """Twice the same call, then other arguments: nothing is refused."""
        self.script(tool_call("odoo_search_read", {"model": "res.partner", "limit": 1}),
                    tool_call("odoo_search_read", {"model": "res.partner", "limit": 1}),
                    tool_call("odoo_search_read", {"model": "res.partner", "limit": 2}),
                    {"content": "done"})
        thread, result = self.run_agent("find partners")
        self.assertEqual((result.state, result.reply), ("completed", "done"))
        self.assertEqual(self.tool_rows(thread).mapped("success"), [True, True, True])

    # ------------------------------------------------------- per-turn bounds
    def never_stops(self, delay=0.0):
        """A model that keeps calling the tool, with other arguments each time."""
        self.scenario.turns.clear()
        self.scenario.requests.clear()
        self.scenario.add(lambda request: {**tool_call("odoo_search_read", {
            "model": "res.partner", "limit": 1, "offset": len(request["messages"])}), "delay": delay}, uses=None)

    def test_llm_calls_per_turn_bounded(self):
        self.agent.write({"max_llm_calls": 3, "max_iterations": 25})
        self.never_stops()
        thread, result = self.run_agent("keep going")
        self.assertEqual(result.state, "completed")
        self.assertIn("limit of 3 calls to the AI model", result.reply)
        self.assertEqual(len(self.scenario.chat_requests()), 3)
        self.assertIn("LLM call limit reached", self.error_rows(thread).error_message)
        self.assert_one_result_per_call(thread)

    def test_run_seconds_per_turn_bounded(self):
        self.agent.write({"max_run_seconds": 1, "max_iterations": 25})
        self.never_stops(delay=0.4)
        started = time.monotonic()
        thread, result = self.run_agent("keep going")
        elapsed = time.monotonic() - started
        self.assertEqual(result.state, "completed")
        self.assertIn("time limit of 1 seconds", result.reply)
        self.assertIn(len(self.scenario.chat_requests()), (2, 3), "no LLM call starts after the deadline")
        self.assertLess(elapsed, 3.0)
        self.assertIn("time limit reached", self.error_rows(thread).error_message)
        self.assert_one_result_per_call(thread)

    def test_turn_bounds_must_be_positive(self):
        with self.assertRaises(psycopg2.errors.CheckViolation), self.cr.savepoint(), mute_logger("odoo.sql_db"):
            self.agent.write({"max_llm_calls": 0})
            self.agent.flush_recordset()
        with self.assertRaises(psycopg2.errors.CheckViolation), self.cr.savepoint(), mute_logger("odoo.sql_db"):
            self.agent.write({"max_run_seconds": -1})
            self.agent.flush_recordset()

    # ------------------------------------------------------------------ BR-19
    def test_BR_19_huge_results(self):
        """Three huge results: defaults apply (row limit, files as
        placeholders), one cap with an explicit note, the full result in
        the log only, no request beyond the context budget."""
        product = self.env["product.product"].create({"name": "BR19 Big Picture", "image_1920": png_bytes()})
        big = "0123456789" * 200000  # 2,000,000 characters
        self.env["ir.config_parameter"].sudo().set_param("agentic_ai_test.big_value", big)
        self.script(tool_call("odoo_search_read", {"model": "account.move.line", "domain": []}),
                    tool_call("odoo_search_read", {"model": "product.product", "domain": [["id", "=", product.id]],
                                                   "fields": ["name", "image_1920"]}),
                    tool_call("big_setting", {}),
                    {"content": "done"})
        thread, result = self.run_agent("show me everything")
        self.assertEqual((result.state, result.reply), ("completed", "done"))
        lines, image, setting = self.observations(thread)
        rows = self.tool_rows(thread)
        self.assertEqual(rows.mapped("success"), [True, True, True])

        # account.move.line, no fields, no limit: the default limit and the summary fields
        logged = json.loads(rows[0].output_data)
        total = self.env["account.move.line"].search_count([])
        self.assertEqual(logged["total"], total)
        self.assertLessEqual(logged["count"], 20)
        self.assertEqual(len(logged["records"]), min(total, 20))
        self.assertLessEqual(len(lines), MAX_CHARS + 200)
        # A cut observation is MAX_CHARS characters and the note; a whole one has no note.
        self.assertEqual(bool(NOTE_RE.search(lines)), len(lines) > MAX_CHARS, lines[-300:])

        # image_1920 asked for: the placeholder, never base64
        self.assertIn('"image_1920": {"binary": true, "bytes": ', image)
        self.assertNotIn("iVBOR", image)
        self.assertNotIn("iVBOR", rows[1].output_data)

        # a 2 MB string: one cap, an explicit note, the whole value in the log row only
        match = NOTE_RE.search(setting)
        self.assertTrue(match, setting[-300:])
        self.assertEqual(int(match.group(1)), MAX_CHARS)
        self.assertGreaterEqual(int(match.group(2)), len(big))
        self.assertLessEqual(len(setting), MAX_CHARS + 200)
        self.assertEqual(rows[2].output_data, big, "the full result is in the execution log")
        message = thread.message_ids.filtered(lambda m: m.role == "tool_result").sorted("id")[-1]
        self.assertFalse(message.tool_result_data, "a result too large for the thread row is in the log only")
        self.assertLessEqual(len(message.content), MAX_CHARS + 300)

        context = build_run_context(self.agent, thread)
        for request in self.scenario.chat_requests():
            tokens = context.count_tokens(json.dumps(request["messages"]))
            self.assertLess(tokens, DEFAULT_CONTEXT_WINDOW - self.provider.max_tokens)

    # ------------------------------------------------------------------ BR-25
    def history_thread(self, provider, parallel_round=None, rounds=10):
        """A thread of ``rounds`` rounds (a question, a search, its result,
        an answer: 40 messages), round ``parallel_round`` with two calls."""
        self.agent.llm_provider_id = provider
        thread = self.new_thread()
        for index in range(rounds):
            thread.add_user_message(f"Question {index}: {FILLER}")
            names = ("a", "b") if index == parallel_round else ("a",)
            for name in names:
                thread.add_tool_call(ToolCall(f"call_r{index}{name}", "odoo_search_read", {
                    "model": "res.partner", "domain": [["name", "ilike", f"q{index}{name}"]], "limit": 5}))
            for name in names:
                thread.add_tool_result(f"call_r{index}{name}", "odoo_search_read",
                                       f"RESULT-{index}{name} {FILLER}", success=True)
            thread.add_assistant_message(f"Answer {index}: {FILLER}")
        return thread

    def set_budget(self, provider, thread, question, keep_from):
        """Set ``provider``'s context window so that the history budget keeps
        the messages from index ``keep_from`` on (and the new ``question``),
        not one message more, when cut message by message."""
        context = build_run_context(self.agent, thread)
        fitter = HistoryFitter(context.count_tokens)
        messages = Transcript(thread).messages
        tail = (context.count_tokens(context.system_prompt) + sum(fitter.size(m) for m in messages[keep_from:])
                + fitter.size({"role": "user", "content": question}))
        target = tail + min(3, fitter.size(messages[keep_from - 1]) - 1)
        schemas = context.history_budget - context._budget_provider.input_budget
        window = next((w for w in range(target, target * 2 + 20000)
                       if provider.max_tokens + int(w * CONTEXT_MARGIN) + target - schemas == w), None)
        self.assertTrue(window, "a context window gives the budget")
        provider.context_window = window
        self.assertEqual(build_run_context(self.agent, thread).history_budget, target)
        return target

    def run_cut_case(self, parallel_round, keep_from_of):
        """For each provider: the history cut so that a message-by-message cut
        would split a call group; returns nothing, asserts the wire."""
        question = "And what about the last one?"
        for name in PROVIDER_MATRIX:
            with self.subTest(provider=name):
                provider = self.providers[name]
                provider.max_tokens = 256
                thread = self.history_thread(provider, parallel_round)
                keep_from = keep_from_of(Transcript(thread).messages)
                self.set_budget(provider, thread, question, keep_from)
                self.script({"content": "The last one is fine."})
                result = self.agent.run(thread.id, question)
                self.assertEqual(result.state, "completed", result.error)
                sent = self.scenario.chat_requests()[0]["messages"]
                self.assertEqual(wire_pairs_problem(sent), "")
                wire = json.dumps(sent)
                system = sent[0]["content"]
                self.assertEqual(sent[0]["role"], "system")
                self.assertIn("Earlier in this conversation (summarised): ", system)
                self.assertNotIn("RESULT-", system, "no tool result text is copied into the summary")
                self.assertIn(question, sent[-1]["content"])
                self.assertNotEqual(sent[1]["role"], "tool")
                for marker in (f"RESULT-{parallel_round}a", f"RESULT-{parallel_round}b", f"q{parallel_round}a"):
                    self.assertNotIn(marker, wire, "the split group is folded into the summary")
                self.assertIn("RESULT-9a", wire, "the latest round is kept")
                self.assertIn(f'the user asked "Question {parallel_round}:', system)
                return_calls = "odoo_search_read (ok), odoo_search_read (ok)" if keep_from_of.parallel else \
                    "odoo_search_read (ok)"
                self.assertIn(f"tools called: {return_calls}", system)

    def test_BR_25b_cut_between_call_and_result(self):
        """The budget falls between round 4's call and its result."""
        def keep_from(messages):
            return next(i for i, m in enumerate(messages)
                        if m["role"] == "tool" and m["tool_call_id"] == "call_r4a")
        keep_from.parallel = False
        self.run_cut_case(4, keep_from)

    def test_BR_25c_call_kept_result_summarised(self):
        """Round 4 calls two tools: the budget falls between their results,
        the call and its second result would stay while the first result is
        summarised; the whole group goes to the summary instead."""
        def keep_from(messages):
            return next(i for i, m in enumerate(messages)
                        if m["role"] == "tool" and m["tool_call_id"] == "call_r4b")
        keep_from.parallel = True
        self.run_cut_case(4, keep_from)

    def test_a_cut_history_starts_with_a_user_message(self):
        """Issue 24 point 1: chat templates that alternate roles reject a
        history that starts with the assistant; the cut goes on to the next
        user message, and what it leaves out is summarised."""
        messages = [{"role": "user", "content": "first " * 50}, {"role": "assistant", "content": "one " * 10},
                    {"role": "assistant", "content": "two " * 10}, {"role": "user", "content": "last"}]
        fitter = HistoryFitter(lambda text: len(text.split()))
        for budget in range(20, 80, 5):
            with self.subTest(budget=budget):
                _prompt, kept = fitter.fit(messages, "System.", budget)
                self.assertEqual(kept[0]["role"], "user")
                self.assertEqual(kept[-1]["content"], "last")

    def test_history_fits_unchanged_and_tokens_counted_once(self):
        """Under budget nothing changes; each message, and the system prompt,
        is tokenised once per transcript, however many steps ask; a changed
        prompt is counted again."""
        thread = self.history_thread(self.provider)
        counted = []

        def count(text):
            counted.append(text)
            return len(text) // 4

        transcript = Transcript(thread)
        plain = transcript.for_llm(SYSTEM)
        self.assertEqual(transcript.for_llm(SYSTEM, 10 ** 6, count), plain)
        first = len(counted)
        transcript.for_llm(SYSTEM, 10 ** 6, count)
        self.assertEqual(len(counted), first, "nothing is counted again")
        self.assertIs(transcript.for_llm(SYSTEM)[0], transcript.for_llm(SYSTEM)[0],
                      "the same system message object while the prompt stays (its request text is kept by object)")
        transcript.for_llm(SYSTEM + " Be brief.", 10 ** 6, count)
        self.assertEqual(counted[first:], [SYSTEM + " Be brief."], "only the changed prompt is counted again")
        cut = transcript.for_llm(SYSTEM, 600, count)
        self.assertEqual(wire_pairs_problem(cut), "")
        self.assertEqual(cut[-1]["content"], plain[-1]["content"])
        self.assertIn(FILLER.strip()[:20], cut[0]["content"])
