"""Agent, thread and ReAct loop (spec 000 §3.2, §3.4, §4.2, §4.5); issue 2
acceptance tests (b) to (e)."""
import json

from odoo.exceptions import AccessError, UserError
from odoo.tests import tagged

from .common import AgenticCase, closed_port_url, tool_call


@tagged("post_install", "-at_install")
class TestAgentRuntime(AgenticCase):

    def _partner_count(self):
        return self.env["res.partner"].with_context(active_test=False).search_count([])

    def test_plain_answer_completes_thread(self):
        self.script({"content": "Hello! How can I help?"})
        thread = self.new_thread()
        result = self.agent.run(thread.id, "hi")
        self.assertEqual(result.state, "completed")
        self.assertEqual(result.reply, "Hello! How can I help?")
        self.assertEqual(thread.state, "completed")
        self.assertEqual(thread.message_ids.mapped("role"), ["user", "assistant"])
        self.assertGreater(result.input_tokens, 0)

    def test_system_message_is_rendered_and_sent_first(self):
        self.agent.system_prompt = "Date {current_date}; user {user_name}; company {company_name}; keep {other}."
        self.script({"content": "ok"})
        self.agent.run(self.new_thread().id, "hi")
        system = self.scenario.chat_requests()[0]["messages"][0]
        self.assertEqual(system["role"], "system")
        self.assertIn(self.env.user.name, system["content"])
        self.assertIn(self.env.company.name, system["content"])
        self.assertNotIn("{current_date}", system["content"])
        self.assertIn("{other}", system["content"])

    def test_bad_tool_calls_become_observations_and_nothing_is_written(self):
        """(b) unknown tool, invalid JSON, missing required parameter, wrong
        type, arguments cut off by finish_reason length."""
        before = self._partner_count()
        name_before = self.env["res.partner"].browse(1).name
        self.script(
            tool_call("delete_everything", {}),
            tool_call("odoo_create", '{"model": "res.partner", "values": {"name": "Broken JSON",}'),
            tool_call("odoo_create", {"model": "res.partner"}),
            tool_call("odoo_search_read", {"model": "res.partner", "limit": "ten"}),
            {**tool_call("odoo_write", '{"model": "res.partner", "record_ids": [1], "values": {"name": "Cut'),
             "finish_reason": "length"},
            {"content": "I could not do it."},
        )
        thread = self.new_thread()
        result = self.agent.run(thread.id, "break things")
        self.assertEqual(result.state, "completed")
        self.assertEqual(result.reply, "I could not do it.")
        results = thread.message_ids.filtered(lambda m: m.role == "tool_result").mapped("content")
        self.assertEqual(len(results), 5)
        self.assertIn("unknown tool 'delete_everything'", results[0])
        self.assertIn("odoo_search_read", results[0], "the model is told which tools exist")
        self.assertIn("not valid JSON", results[1])
        self.assertIn("'values' is a required parameter", results[2])
        self.assertIn("limit: 'ten' is not of type 'integer'", results[3])
        self.assertIn("cut off", results[4])
        self.assertEqual(self._partner_count(), before, "nothing may be written")
        self.assertEqual(self.env["res.partner"].browse(1).name, name_before)
        logs = self.env["agentic.ai.execution.log"].search([("thread_id", "=", thread.id), ("action_type", "=", "tool_execution")])
        self.assertEqual(len(logs), 5)
        self.assertFalse(any(logs.mapped("success")))
        # The invalid calls are replayed as valid JSON so the provider accepts the history.
        last_request = self.scenario.chat_requests()[-1]
        for message in last_request["messages"]:
            for call in message.get("tool_calls") or []:
                self.assertIsInstance(json.loads(call["function"]["arguments"]), dict)

    def test_tool_that_raises_after_writing_leaves_nothing(self):
        """(c) savepoint rollback, and the log says so."""
        tool = self.env["agentic.ai.tool"].create({
            "name": "partial_writer",
            "description": "Creates a partner, then fails.",
            "tool_type": "python_code",
            "risk_level": "medium",
            "python_code": "env['res.partner'].create({'name': 'Half Done Partner'})\n"
                           "raise UserError('supplier system refused the order')",
        })
        self.agent.tool_ids = [(4, tool.id)]
        self.script(tool_call("partial_writer", {}), {"content": "It failed."})
        thread = self.new_thread()
        self.agent.run(thread.id, "do it")
        self.assertFalse(self.env["res.partner"].search([("name", "=", "Half Done Partner")]))
        log = self.env["agentic.ai.execution.log"].search(
            [("thread_id", "=", thread.id), ("tool_name", "=", "partial_writer")])
        self.assertEqual(len(log), 1)
        self.assertFalse(log.success)
        self.assertIn("supplier system refused the order", log.error_message)
        self.assertIn("rolled back", log.error_message)
        observation = thread.message_ids.filtered(lambda m: m.role == "tool_result").content
        self.assertIn("rolled back", observation)

    def test_primary_down_fallback_answers(self):
        """(d) primary refuses connections, the fallback answers."""
        dead = self.provider.copy({"name": "Dead primary", "api_base_url": closed_port_url()})
        self.agent.write({"llm_provider_id": dead.id, "fallback_provider_id": self.provider.id})
        self.script({"content": "Answer from the fallback."})
        thread = self.new_thread()
        result = self.agent.run(thread.id, "hello")
        self.assertEqual(result.reply, "Answer from the fallback.")
        self.assertEqual(thread.state, "completed")
        calls = self.env["agentic.ai.execution.log"].search(
            [("thread_id", "=", thread.id), ("action_type", "=", "llm_call")], order="id")
        self.assertEqual(calls.mapped("success"), [False, False, True])
        self.assertEqual(calls.mapped("provider_id"), dead | self.provider)
        self.assertIn("cannot reach", calls[0].error_message)

    def test_all_providers_down_reports_error(self):
        """(d) both down: a clear message, an error log row, thread in error."""
        dead = self.provider.copy({"name": "Dead primary", "api_base_url": closed_port_url()})
        dead_too = self.provider.copy({"name": "Dead fallback", "api_base_url": closed_port_url()})
        self.agent.write({"llm_provider_id": dead.id, "fallback_provider_id": dead_too.id})
        before = self._partner_count()
        thread = self.new_thread()
        result = self.agent.run(thread.id, "create a partner")
        self.assertEqual(result.state, "error")
        self.assertEqual(thread.state, "error")
        reply = thread.message_ids.filtered(lambda m: m.role == "assistant").content
        self.assertIn("could not reach the AI service", reply)
        self.assertIn("Dead primary", reply)
        self.assertIn("Dead fallback", reply)
        errors = self.env["agentic.ai.execution.log"].search([("thread_id", "=", thread.id), ("action_type", "=", "error")])
        self.assertEqual(len(errors), 1)
        self.assertEqual(self._partner_count(), before)
        self.assertNotIn("test-key-not-secret", reply + (thread.last_error or "") + errors.error_message)

    def test_client_error_is_not_retried(self):
        self.script({"status": 401, "error": "Incorrect API key provided"}, {"content": "never reached"})
        thread = self.new_thread()
        result = self.agent.run(thread.id, "hello")
        self.assertEqual(result.state, "error")
        self.assertEqual(len(self.scenario.chat_requests()), 1, "a 401 must not be retried")
        self.assertIn("Incorrect API key provided", result.reply)

    def test_server_error_is_retried_once(self):
        self.script({"status": 503, "error": "overloaded"}, {"content": "second try worked"})
        result = self.agent.run(self.new_thread().id, "hello")
        self.assertEqual(result.reply, "second try worked")
        self.assertEqual(len(self.scenario.chat_requests()), 2)

    def test_max_iterations_gives_processing_limit_reply(self):
        """(e)"""
        self.agent.max_iterations = 3
        self.scenario.turns.clear()
        self.scenario.add(tool_call("odoo_search_read", {"model": "res.partner", "limit": 1}), uses=None)
        thread = self.new_thread()
        result = self.agent.run(thread.id, "loop forever")
        self.assertEqual(result.iterations, 3)
        self.assertIn("processing limit of 3 steps", result.reply)
        self.assertEqual(thread.message_ids[-1].role, "assistant")
        self.assertEqual(len(thread.message_ids.filtered(lambda m: m.role == "tool_call")), 3)

    def test_empty_answer_is_retried_then_reported(self):
        self.script({"content": ""}, {"content": "  "})
        result = self.agent.run(self.new_thread().id, "hello")
        self.assertIn("empty response", result.reply)
        self.assertEqual(len(self.scenario.chat_requests()), 2)

    def test_parallel_tool_calls_are_replayed_as_one_assistant_message(self):
        self.script(
            {"tool_calls": [{"name": "odoo_search_read", "arguments": {"model": "res.partner", "limit": 1}, "id": "a"},
                            {"name": "odoo_search_read", "arguments": {"model": "res.users", "limit": 1}, "id": "b"}]},
            {"content": "done"},
        )
        thread = self.new_thread()
        self.agent.run(thread.id, "two searches")
        messages = self.scenario.chat_requests()[1]["messages"]
        roles = [m["role"] for m in messages]
        self.assertEqual(roles, ["system", "user", "assistant", "tool", "tool"])
        self.assertEqual([c["id"] for c in messages[2]["tool_calls"]], ["a", "b"])
        self.assertEqual([m["tool_call_id"] for m in messages[3:]], ["a", "b"])

    def test_confirmation_rejected_gives_model_the_reason(self):
        self.agent.require_confirmation = "destructive"
        partner = self.env["res.partner"].create({"name": "Keep Me"})
        self.script(tool_call("odoo_unlink", {"model": "res.partner", "record_ids": [partner.id]}, "call_del"),
                    {"content": "Understood, I did not delete it."})
        thread = self.new_thread()
        result = self.agent.run(thread.id, "delete Keep Me")
        self.assertEqual(result.state, "waiting_confirmation")
        self.assertEqual(thread.state, "waiting_confirmation")
        self.assertTrue(partner.exists())
        self.assertEqual(json.loads(thread.pending_confirmation)["tool"], "odoo_unlink")
        with self.assertRaises(UserError):
            self.agent.run(thread.id, "another message while waiting")
        result = thread.handle_confirmation(False, "we still need this contact")
        self.assertEqual(result.state, "completed")
        self.assertTrue(partner.exists())
        replayed = self.scenario.chat_requests()[-1]["messages"][-1]
        self.assertEqual(replayed["role"], "tool")
        self.assertIn("[CONFIRMATION_REJECTED]", replayed["content"])
        self.assertIn("we still need this contact", replayed["content"])
        self.assertIn("confirmation_response", thread.message_ids.mapped("role"))

    def test_confirmation_approved_executes_the_call(self):
        self.agent.require_confirmation = "destructive"
        partner = self.env["res.partner"].create({"name": "Delete Me"})
        self.script(tool_call("odoo_unlink", {"model": "res.partner", "record_ids": [partner.id]}),
                    {"content": "Deleted."})
        thread = self.new_thread()
        self.agent.run(thread.id, "delete Delete Me")
        self.assertTrue(partner.exists())
        result = thread.handle_confirmation(True)
        self.assertEqual(result.reply, "Deleted.")
        self.assertFalse(partner.exists())
        log = self.env["agentic.ai.execution.log"].search(
            [("thread_id", "=", thread.id), ("tool_name", "=", "odoo_unlink"), ("action_type", "=", "tool_execution")])
        self.assertTrue(log.success)
        self.assertIn("Delete Me", log.before_snapshot)

    def test_async_queue_is_processed_by_cron(self):
        self.script({"content": "processed later"})
        thread = self.new_thread()
        thread._enqueue("please do this in the background")
        self.assertTrue(thread.pending_message)
        with self.enter_registry_test_mode():
            self.env.ref("agentic_ai.ir_cron_process_pending_tasks").method_direct_trigger()
        self.assertFalse(thread.pending_message)
        self.assertEqual(thread.message_ids.mapped("role"), ["user", "assistant"])
        self.assertEqual(thread.state, "completed")

    def test_start_thread_requires_active_agent(self):
        self.agent.action_set_archived()
        with self.assertRaises(UserError):
            self.agent.start_thread("hello")

    def test_activation_requires_provider(self):
        agent = self.agent.copy({"code": "no_provider", "llm_provider_id": False})
        with self.assertRaises(UserError):
            agent.action_activate()

    def test_thread_state_cannot_be_written_by_client(self):
        user = self.env.ref("base.user_demo")
        thread = self.new_thread(user=user)
        with self.assertRaises(AccessError):
            thread.with_user(user).write({"state": "completed"})
        thread.with_user(user).write({"name": "renamed"})
        self.assertEqual(thread.name, "renamed")
