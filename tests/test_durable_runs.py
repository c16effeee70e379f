"""A run that dies (issue 10 point 1, case BR-25a): the thread a dead run
left ``executing`` is repaired when it is next loaded, for every provider,
and the call whose outcome is unknown is never run again blindly. A
running request stopped by its user ends ``interrupted`` at its next step
boundary."""
import json
from unittest.mock import patch

from odoo import Command
from odoo.tests import HttpCase, new_test_user, tagged

from ..engine.durable import durability, step_commit
from ..engine.executor import Executor
from .common import PROVIDER_MATRIX, AgenticSetupMixin, live_run_elsewhere


@tagged("post_install", "-at_install")
class TestDurableRuns(AgenticSetupMixin, HttpCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.setup_agentic()
        cls.user = new_test_user(cls.env, "durable_user", groups="base.group_user,agentic_ai.group_agentic_ai_user,"
                                                                  "account.group_account_invoice")
        cls.root = cls.llm.base_url.removesuffix("/v1")
        partner = cls.env["res.partner"].create({"name": "BR25 Customer"})
        cls.invoice = cls.env["account.move"].create({
            "move_type": "out_invoice", "partner_id": partner.id,
            "invoice_line_ids": [Command.create({"name": "Service", "quantity": 1, "price_unit": 100})]})
        cls.invoice.action_post()

    def dead_run(self, question="Post the invoice, please."):
        """A thread as a worker killed during post_invoice leaves it: the
        user's message and the model's call are committed, no result, state
        executing, nobody holding the run's lock."""
        thread = self.agent.with_user(self.user).start_thread(name="dead run")
        thread.add_user_message(question)
        thread.add_tool_call(tool_call_record("call_post_1", "post_invoice", {"invoice": self.invoice.id}))
        thread._set_runtime_state(state="executing")
        return thread

    def test_br25a_dangling_call_is_closed_for_every_provider(self):
        """BR-25a: the user asks "Did it work?" after the worker died in
        post_invoice; the provider gets exactly one result per call id, the
        dangling one says the outcome is unknown, post_invoice is not run
        again; the thread is usable for every provider."""
        self.authenticate("durable_user", "durable_user")
        for name, (provider_type, path, extra) in PROVIDER_MATRIX.items():
            with self.subTest(provider=name):
                provider = self.env["agentic.ai.llm.provider"].create({
                    "name": name, "provider_type": provider_type, "api_base_url": self.root + path,
                    "api_key": "key-" + name, "default_model": "model-" + name, "timeout_seconds": 5, **extra})
                self.agent.llm_provider_id = provider
                thread = self.dead_run()
                self.script({"content": "I checked: the invoice is posted."})
                loaded = self.make_jsonrpc_request("/agentic_ai/thread/messages", {"thread_id": thread.id})
                self.assertEqual(loaded["thread"]["state"], "interrupted")
                results = [m for m in loaded["messages"] if m["role"] == "tool_result"]
                self.assertEqual(len(results), 1)
                self.assertEqual(results[0]["tool_status"], "unknown")
                self.assertIn("[OUTCOME UNKNOWN]", results[0]["content"])
                answer = self.make_jsonrpc_request("/agentic_ai/chat/send",
                                                   {"thread_id": thread.id, "message": "Did it work?"})
                self.assertEqual(answer["result"]["state"], "completed", answer["result"])
                sent = self.scenario.chat_requests()[-1]["messages"]
                texts = [m.get("content") or "" for m in sent]
                self.assertEqual(sum(t.count("[OUTCOME UNKNOWN]") for t in texts), 1, "one result for the call")
                # Native tool calls (every provider of the matrix but the two *_prompt ones): ids pair calls and
                # results; the prompt protocol has no ids, and its one result is counted above.
                if extra.get("supports_tool_calling", True):
                    calls = [c["id"] for m in sent for c in m.get("tool_calls") or []]
                    answered = [m["tool_call_id"] for m in sent if m["role"] == "tool"]
                    self.assertEqual(len(calls), 1)
                    self.assertEqual(answered, calls, "exactly one result per call id")
                self.assertFalse(thread.execution_log_ids.filtered(lambda r: r.action_type == "tool_execution"),
                                 "post_invoice was run again")
                self.assertEqual(self.invoice.state, "posted")

    def test_repair_happens_once_and_is_logged(self):
        thread = self.dead_run()
        self.assertTrue(thread._repair_dead_run())
        self.assertFalse(thread._repair_dead_run(), "a repaired thread is repaired again")
        self.assertEqual(thread.state, "interrupted")
        self.assertIn("unknown outcome", thread.last_error)
        log = thread.execution_log_ids.filtered(lambda r: r.action_type == "error")
        self.assertEqual(json.loads(log.input_data)["unknown_outcome_calls"][0]["tool"], "post_invoice")
        self.assertEqual(thread.message_ids.filtered(lambda m: m.role == "tool_call").tool_status, "unknown")

    def test_queue_cron_repairs_dead_runs(self):
        thread = self.dead_run()
        self.env.ref("agentic_ai.ir_cron_process_pending_tasks").method_direct_trigger()
        self.assertEqual(thread.state, "interrupted")
        self.assertEqual(thread.message_ids.filtered(lambda m: m.role == "tool_call").tool_status, "unknown")

    def test_a_live_run_is_not_repaired(self):
        """A thread whose run holds the lock in another session (another
        worker) is left alone, and cancelling it asks the run to stop."""
        thread = self.dead_run()
        with live_run_elsewhere(thread):
            self.assertFalse(thread._repair_dead_run())
            self.assertEqual(thread.state, "executing")
            self.authenticate("durable_user", "durable_user")
            answer = self.make_jsonrpc_request("/agentic_ai/chat/cancel", {"thread_id": thread.id})
            self.assertIsNone(answer["result"])
            self.assertEqual((answer["thread"]["state"], answer["thread"]["stop_requested"]), ("executing", True))
        self.assertTrue(thread._repair_dead_run(), "once the other run's lease is gone, the run is dead")

    def test_user_stops_a_running_request(self):
        """Stop pressed while the model answers (the flag another request
        commits): the run stops at its next step boundary, ends
        interrupted, and each call of the answer gets its one result."""
        partner = self.env["res.partner"].create({"name": "Stop Me"})
        thread = self.agent.with_user(self.user).start_thread(name="stop")
        search = {"model": "res.partner", "domain": [["id", "=", partner.id]]}

        def answer_while_user_presses_stop(_request):
            durability.request_stop(self.env.cr, thread.id)  # as chat/cancel does, from another request
            return {"tool_calls": [{"id": "c1", "name": "odoo_search_read", "arguments": search},
                                   {"id": "c2", "name": "odoo_search_read", "arguments": search}]}

        self.script(answer_while_user_presses_stop, {"content": "never asked"})
        result = self.agent.with_user(self.user).run(thread.id, "search twice")
        self.assertEqual(result.state, "interrupted")
        self.assertIn("the user stopped it", result.reply)
        results = thread.message_ids.filtered(lambda m: m.role == "tool_result")
        self.assertEqual(results.mapped("tool_call_id"), ["c1", "c2"])
        self.assertEqual(set(results.mapped("tool_status")), {"cancelled"})
        self.assertEqual(len(self.scenario.chat_requests()), 1)
        self.assertFalse(thread.stop_requested)

    def test_user_stops_a_request_while_the_model_writes_its_answer(self):
        """Stop pressed while the model writes a text answer (no tool call
        to hold back): the turn ends interrupted with what the model wrote
        kept, not completed as if the stop had not been asked."""
        thread = self.agent.with_user(self.user).start_thread(name="stop the answer")

        def answer_while_user_presses_stop(_request):
            durability.request_stop(self.env.cr, thread.id)  # as chat/cancel does, from another request
            return {"content": "Here is the long answer"}

        self.script(answer_while_user_presses_stop)
        result = self.agent.with_user(self.user).run(thread.id, "tell me everything")
        self.assertEqual(result.state, "interrupted")
        self.assertIn("Here is the long answer", result.reply)
        self.assertIn("the user stopped it", result.reply)
        self.assertFalse(thread.stop_requested)

    def test_a_step_of_reads_commits_its_answer_with_the_first_result(self):
        """Issue 26 point 6: when an answer's calls are the addon's own reads,
        the answer is committed with the first call's result, never alone
        (a row lock and a commit fewer a step); each result is committed, so
        a stop asked meanwhile is seen before the next call. A call of code
        the addon does not own (which may write past the ORM) has its answer
        committed before it runs, and its result after, as before. Seen at
        each commit of a real durable run (``/agentic_ai/chat/send``)."""
        reader = self.env["agentic.ai.tool"].create({
            "name": "custom_count", "description": "Counts.", "tool_type": "python_code", "risk_level": "low",
            "python_code": "result = 1"})
        self.agent.tool_ids = [Command.link(reader.id)]
        thread = self.agent.with_user(self.user).start_thread(name="commits")
        seen = []
        commit_step = step_commit.commit_step

        def spy(cr, xid=None):
            cr.execute("SELECT role, tool_call_id FROM agentic_ai_thread_message WHERE thread_id = %s ORDER BY id",
                       [thread.id])
            seen.append(cr.fetchall())
            return commit_step(cr, xid)

        search = {"model": "res.partner", "fields": ["name"], "limit": 2}
        self.script({"tool_calls": [{"id": "r1", "name": "odoo_search_read", "arguments": search},
                                    {"id": "r2", "name": "odoo_search_read", "arguments": {**search, "offset": 2}}]},
                    {"tool_calls": [{"id": "c1", "name": "custom_count", "arguments": {}}]},
                    {"content": "Done."})
        self.authenticate("durable_user", "durable_user")
        with patch.object(step_commit, "commit_step", side_effect=spy):
            answer = self.make_jsonrpc_request("/agentic_ai/chat/send", {"thread_id": thread.id, "message": "go"})
        self.assertEqual(answer["result"]["state"], "completed", answer["result"])
        for rows in seen:
            self.assertFalse(("tool_call", "r1") in rows and ("tool_result", "r1") not in rows,
                             f"the reads' answer was committed without the first result: {rows}")
        with_r1 = [rows for rows in seen if ("tool_result", "r1") in rows]
        self.assertNotIn(("tool_result", "r2"), with_r1[0], "the second read's result is committed on its own")
        kept = [rows for rows in seen if ("tool_call", "c1") in rows]
        self.assertNotIn(("tool_result", "c1"), kept[0], "the custom tool's call was committed before it ran")
        self.assertIn(("tool_result", "c1"), kept[1], "and its result right after")

    def test_a_stop_asked_while_reads_run_is_seen_before_the_next_one(self):
        """Stop committed (as ``chat/cancel`` does) while the first of two
        reads of one answer runs: the second is not run, and the model is
        not asked again (a review's probe of the one-transaction step)."""
        thread = self.agent.with_user(self.user).start_thread(name="stop during reads")
        search = {"model": "res.partner", "fields": ["name"], "limit": 1}
        self.script({"tool_calls": [{"id": "r1", "name": "odoo_search_read", "arguments": search},
                                    {"id": "r2", "name": "odoo_search_read", "arguments": search}]},
                    {"content": "never asked"})
        execute_call = Executor.execute_call

        def stop_after_r1(executor, call, *args, **kwargs):
            result = execute_call(executor, call, *args, **kwargs)
            if call.id == "r1":
                durability.request_stop(executor.env.cr, thread.id)
            return result

        self.authenticate("durable_user", "durable_user")
        with patch.object(Executor, "execute_call", stop_after_r1):
            answer = self.make_jsonrpc_request("/agentic_ai/chat/send", {"thread_id": thread.id, "message": "go"})
        self.assertEqual(answer["result"]["state"], "interrupted", answer["result"])
        self.assertEqual(len(self.scenario.chat_requests()), 1, "the model was not asked again")
        statuses = {m.tool_call_id: m.tool_status for m in thread.message_ids if m.role == "tool_result"}
        self.assertEqual(statuses, {"r1": "done", "r2": "cancelled"})

def tool_call_record(call_id, name, arguments):
    """An ``llm.ToolCall`` as a provider would have sent it."""
    from ..llm import ToolCall
    return ToolCall(id=call_id, name=name, arguments=arguments, raw_arguments=json.dumps(arguments))
