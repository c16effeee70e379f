"""Agent and thread models and the ReAct loop (spec 000 §3.2, §3.4, §4.2,
§4.5): threads, answers, provider fallback and retries seen from the loop,
the confirmation flow, the async queue, and what the loop does with
malformed model answers (too many calls, invalid names or ids, empty or odd
answers, message limits, text that cannot be stored). Issue 2 acceptance
tests (b), (d) and (e); (c), the savepoint rollback, is in
test_tool_execution.py."""
import json

from odoo.exceptions import UserError
from odoo.tests import tagged
from odoo.tools import mute_logger

from ..engine.durable.audit import AuditTrail
from ..engine.runtime import AgentRuntime
from ..engine.turn.transcript import Transcript
from ..llm import ToolCall
from .common import AgenticCase, closed_port_url, tool_call


@tagged("post_install", "-at_install")
class TestAgentRuntime(AgenticCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.setup_users()

    def _partner_count(self):
        return self.env["res.partner"].with_context(active_test=False).search_count([])

    # ------------------------------------------------------ agent and thread
    def test_start_thread_requires_active_agent(self):
        self.agent.action_set_archived()
        with self.assertRaises(UserError):
            self.agent.start_thread("hello")

    def test_activation_requires_provider(self):
        agent = self.agent.copy({"code": "no_provider", "llm_provider_id": False})
        with self.assertRaises(UserError):
            agent.action_activate()

    def test_archived_agent_does_not_answer(self):
        thread = self.new_thread(user=self.plain)
        self.agent.action_set_archived()
        with self.assertRaises(UserError):
            self.agent.with_user(self.plain).run(thread.id, "hello")
        self.assertFalse(thread.message_ids, "nothing is added to the thread")

    # ------------------------------------------------------------- the loop
    def test_every_transcript_row_carries_its_thread_s_user_and_company(self):
        """A row's user and company are its thread's, whether the engine gave
        them (read once per turn, issue 26 point 6) or the row computed them;
        record rules read them (security/agentic_ai_rules.xml)."""
        thread, _result = self.run_agent("hello", user=self.plain)
        self.script(tool_call("odoo_search_read", {"model": "res.partner", "limit": 1}), {"content": "ok"})
        self.agent.with_user(self.plain).run(thread.id, "one call")
        thread._add_message("assistant", "a row the engine wrote without them")
        rows = thread.message_ids
        self.assertGreaterEqual(len(rows), 6)
        self.assertEqual((rows.user_id, rows.company_id), (self.plain, thread.company_id))
        self.assertEqual(thread.with_user(self.plain).message_ids, rows.with_user(self.plain),
                         "the owner reads every row of the conversation")

    def test_plain_answer_completes_thread(self):
        self.script({"content": "Hello! How can I help?"})
        thread, result = self.run_agent("hi")
        self.assertEqual(result.state, "completed")
        self.assertEqual(result.reply, "Hello! How can I help?")
        self.assertEqual(thread.state, "completed")
        self.assertEqual(thread.message_ids.mapped("role"), ["user", "assistant"])
        self.assertGreater(result.input_tokens, 0)

    def test_system_message_is_rendered_and_sent_first(self):
        self.agent.system_prompt = "Date {current_date}; user {user_name}; company {company_name}; keep {other}."
        self.script({"content": "ok"})
        self.run_agent("hi")
        system = self.scenario.chat_requests()[0]["messages"][0]
        self.assertEqual(system["role"], "system")
        self.assertIn(self.env.user.name, system["content"])
        self.assertIn(self.env.company.name, system["content"])
        self.assertNotIn("{current_date}", system["content"])
        self.assertIn("{other}", system["content"])

    def test_max_iterations_gives_processing_limit_reply(self):
        """(e)"""
        self.agent.max_iterations = 3
        self.scenario.turns.clear()
        self.scenario.add(tool_call("odoo_search_read", {"model": "res.partner", "limit": 1}), uses=None)
        thread, result = self.run_agent("loop forever")
        self.assertEqual(result.iterations, 3)
        self.assertIn("processing limit of 3 steps", result.reply)
        self.assertEqual(thread.message_ids[-1].role, "assistant")
        self.assertEqual(len(thread.message_ids.filtered(lambda m: m.role == "tool_call")), 3)

    def test_parallel_tool_calls_are_replayed_as_one_assistant_message(self):
        self.script(
            {"tool_calls": [
                {"name": "odoo_search_read", "arguments": {"model": "res.partner", "limit": 1}, "id": "a"},
                {"name": "odoo_search_read", "arguments": {"model": "res.users", "limit": 1}, "id": "b"}]},
            {"content": "done"},
        )
        self.run_agent("two searches")
        messages = self.scenario.chat_requests()[1]["messages"]
        roles = [m["role"] for m in messages]
        self.assertEqual(roles, ["system", "user", "assistant", "tool", "tool"])
        self.assertEqual([c["id"] for c in messages[2]["tool_calls"]], ["a", "b"])
        self.assertEqual([m["tool_call_id"] for m in messages[3:]], ["a", "b"])

    # ------------------------------------------- providers seen from the loop
    def test_primary_down_fallback_answers(self):
        """(d) primary refuses connections, the fallback answers."""
        dead = self.provider.copy({"name": "Dead primary", "api_base_url": closed_port_url()})
        self.agent.write({"llm_provider_id": dead.id, "fallback_provider_id": self.provider.id})
        self.script({"content": "Answer from the fallback."})
        thread, result = self.run_agent("hello")
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
        thread, result = self.run_agent("create a partner")
        self.assertEqual(result.state, "error")
        self.assertEqual(thread.state, "error")
        reply = thread.message_ids.filtered(lambda m: m.role == "assistant").content
        self.assertIn("The AI service did not answer", reply)
        self.assertIn("Dead primary", reply)
        self.assertIn("Dead fallback", reply)
        errors = self.env["agentic.ai.execution.log"].search(
            [("thread_id", "=", thread.id), ("action_type", "=", "error")])
        self.assertEqual(len(errors), 1)
        self.assertEqual(self._partner_count(), before)
        self.assertNotIn("test-key-not-secret", reply + (thread.last_error or "") + errors.error_message)

    def test_client_error_is_not_retried(self):
        self.script({"status": 401, "error": "Incorrect API key provided"}, {"content": "never reached"})
        _thread, result = self.run_agent("hello")
        self.assertEqual(result.state, "error")
        self.assertEqual(len(self.scenario.chat_requests()), 1, "a 401 must not be retried")
        self.assertIn("Incorrect API key provided", result.reply)

    def test_server_error_is_retried_once(self):
        self.script({"status": 503, "error": "overloaded"}, {"content": "second try worked"})
        _thread, result = self.run_agent("hello")
        self.assertEqual(result.reply, "second try worked")
        self.assertEqual(len(self.scenario.chat_requests()), 2)

    def test_negative_or_nan_retry_after_ends_in_an_error_not_a_crash(self):
        self.script({"status": 429, "error": "slow", "headers": {"Retry-After": "-1"}},
                    {"status": 429, "error": "slow", "headers": {"Retry-After": "nan"}})
        _thread, result = self.run_agent("hi")
        self.assertEqual(result.state, "error")
        self.assertEqual(len(self.scenario.chat_requests()), 2, "the 429 was retried once")
        self.assertIn("slow", result.reply, "the provider's own message is shown")

    def test_malformed_answers_fall_back_instead_of_crashing(self):
        fallback = self.provider.copy({"name": "Fallback"})
        self.agent.fallback_provider_id = fallback
        for raw in ({"choices": ["x"]}, {"choices": [{"message": "hello"}]},
                    {"choices": [{"message": {"content": "x", "tool_calls": {"a": 1}}}]}, [1, 2], "not json"):
            self.script({"raw": raw}, {"raw": raw}, {"content": "fallback answer"})
            with mute_logger("odoo.addons.agentic_ai.llm.base"):
                _thread, result = self.run_agent("hi")
            self.assertEqual(result.reply, "fallback answer", raw)

    # --------------------------------------------------------- confirmation
    def test_confirmation_rejected_gives_model_the_reason(self):
        thread, partner = self.pending_deletion("Keep Me", reply="Understood, I did not delete it.")
        self.assertEqual(json.loads(thread.pending_confirmation)["tool"], "odoo_unlink")
        result = thread.handle_confirmation(False, "we still need this contact")
        self.assertEqual(result.state, "completed")
        self.assertTrue(partner.exists())
        replayed = self.scenario.chat_requests()[-1]["messages"][-1]
        self.assertEqual(replayed["role"], "tool")
        self.assertIn("[CONFIRMATION_REJECTED]", replayed["content"])
        self.assertIn("we still need this contact", replayed["content"])
        self.assertIn("confirmation_response", thread.message_ids.mapped("role"))

    def test_confirmation_approved_executes_the_call(self):
        thread, partner = self.pending_deletion("Delete Me", reply="Deleted.")
        result = thread.handle_confirmation(True)
        self.assertEqual(result.reply, "Deleted.")
        self.assertFalse(partner.exists())
        log = self.env["agentic.ai.execution.log"].search(
            [("thread_id", "=", thread.id), ("tool_name", "=", "odoo_unlink"),
             ("action_type", "=", "tool_execution")])
        self.assertTrue(log.success)
        self.assertIn("Delete Me", log.before_snapshot)

    def test_confirmation_is_refused_once_the_agent_is_archived(self):
        thread, partner = self.pending_deletion("Guarded", user=self.plain)
        self.agent.action_set_archived()
        with self.assertRaises(UserError):
            thread.with_user(self.plain).handle_confirmation(True)
        self.assertTrue(partner.exists())
        self.assertEqual(thread.state, "waiting_confirmation")

    def test_approval_must_be_a_boolean(self):
        thread, partner = self.pending_deletion("Strict", user=self.plain)
        for value in ("false", 0.0001, None):
            with self.assertRaises(UserError, msg=repr(value)):
                thread.with_user(self.plain).handle_confirmation(value)
        self.assertTrue(partner.exists())

    # ---------------------------------------------- malformed model answers
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
        thread, result = self.run_agent("break things")
        self.assertEqual(result.state, "completed")
        self.assertEqual(result.reply, "I could not do it.")
        results = self.observations(thread)
        self.assertEqual(len(results), 5)
        self.assertIn("unknown tool 'delete_everything'", results[0])
        self.assertIn("odoo_search_read", results[0], "the model is told which tools exist")
        self.assertIn("not valid JSON", results[1])
        self.assertIn("'values' is a required parameter", results[2])
        self.assertIn("limit: 'ten' is not of type 'integer'", results[3])
        self.assertIn("cut off", results[4])
        self.assertEqual(self._partner_count(), before, "nothing may be written")
        self.assertEqual(self.env["res.partner"].browse(1).name, name_before)
        logs = self.env["agentic.ai.execution.log"].search(
            [("thread_id", "=", thread.id), ("action_type", "=", "tool_execution")])
        self.assertEqual(len(logs), 5)
        self.assertFalse(any(logs.mapped("success")))
        # The invalid calls are replayed as valid JSON so the provider accepts the history.
        replayed = [call for message in self.scenario.chat_requests()[-1]["messages"]
                    for call in message.get("tool_calls") or []]
        self.assertEqual(len(replayed), 5)
        for call in replayed:
            self.assertIsInstance(json.loads(call["function"]["arguments"]), dict)

    def test_empty_answer_is_retried_then_reported(self):
        self.script({"content": ""}, {"content": "  "})
        _thread, result = self.run_agent("hello")
        self.assertIn("empty response", result.reply)
        self.assertEqual(len(self.scenario.chat_requests()), 2)

    def test_odd_but_valid_answers_are_read(self):
        self.script({"raw": {"model": ["x"], "usage": {"prompt_tokens": "12", "completion_tokens": None},
                             "choices": [{"finish_reason": None, "message": {"content": [
                                 {"type": "text", "text": "Hello "}, {"type": "text", "text": "there"}]}}]}})
        _thread, result = self.run_agent("hi")
        self.assertEqual(result.reply, "Hello there")
        self.assertGreater(result.input_tokens, 0)

    def test_deeply_nested_or_huge_arguments_are_refused(self):
        self.script(tool_call("odoo_search_read", "[" * 100000), {"content": "ok"})
        thread, result = self.run_agent("hi")
        self.assertEqual(result.reply, "ok")
        self.assertIn("not valid JSON", self.observations(thread)[0])

    def test_at_most_ten_calls_of_one_answer_are_run(self):
        calls = [{"name": "odoo_create", "arguments": {"model": "res.partner", "values": {"name": f"Bulk {i}"}}}
                 for i in range(15)]
        self.script({"tool_calls": calls}, {"content": "ok"})
        thread, _result = self.run_agent("create the contacts " + ", ".join(f"Bulk {i}" for i in range(15)))
        self.assertEqual(self.env["res.partner"].search_count([("name", "=like", "Bulk %")]), 10)
        self.assertEqual(len(self.observations(thread)), 15, "each call gets an answer, run or not")

    def test_invalid_names_and_colliding_ids_are_normalised(self):
        self.script({"tool_calls": [
            {"name": "", "arguments": {}, "id": "same"},
            {"name": "bad name!", "arguments": {}, "id": "same"},
            {"name": "odoo_search_read", "arguments": {"model": "res.partner", "limit": 1}, "id": "same"}]},
            {"content": "ok"})
        thread, _result = self.run_agent("x")
        calls = thread.message_ids.filtered(lambda m: m.role == "tool_call")
        self.assertEqual(len(set(calls.mapped("tool_call_id"))), 3)
        self.assertEqual(calls.mapped("tool_name"), ["unnamed_tool", "invalid_bad_name_", "odoo_search_read"])
        replayed = self.scenario.chat_requests()[-1]["messages"][2]["tool_calls"]
        self.assertEqual(len({c["id"] for c in replayed}), 3)

    def test_user_message_length_type_and_nul_characters_are_checked(self):
        thread = self.new_thread()
        with self.assertRaises(UserError):
            self.agent.run(thread.id, "x" * 20001)
        with self.assertRaises(UserError):
            self.agent.run(thread.id, {"not": "text"})
        self.script({"content": "ok"})
        self.agent.run(thread.id, "hello\x00world")
        self.assertEqual(thread.message_ids[0].content, "helloworld")

    def test_unstorable_text_from_the_llm_is_cleaned(self):
        self.agent.require_confirmation = "destructive"
        partner = self.env["res.partner"].create({"name": "Unicode"})
        self.script({"tool_calls": [{"name": "odoo_search_read", "arguments": {"model": "res.partner", "limit": 1},
                                     "id": "bad\x00id" + "f" * 100}]},
                    {"content": "hello\x00 \ud800world"},
                    tool_call("odoo_unlink", {"model": "res.partner", "record_ids": [partner.id]}),
                    {"content": "ok"})
        thread, result = self.run_agent("hi \ud800")
        self.assertEqual(result.reply, "hello \ufffdworld")
        self.agent.run(thread.id, "delete")
        result = thread.handle_confirmation(False, "no\x00 \ud800")
        self.assertEqual(result.state, "completed")
        self.assertTrue(all(len(m.tool_call_id or "") <= 64 for m in thread.message_ids))

    # ------------------------------------------------- one pass per call (issue 8)
    def test_call_ids_are_final_before_they_are_logged(self):
        """The provider sends no id, an id already used and an invalid one:
        the transcript, the LLM call's log row, the tool rows and the replay
        all carry the same final ids."""
        self.script({"tool_calls": [{"name": "odoo_search_read", "arguments": {"model": "res.partner", "limit": 1}},
                                    {"name": "odoo_search_read", "arguments": {"model": "res.users", "limit": 1},
                                     "id": "dup"},
                                    {"name": "odoo_search_read", "arguments": {"model": "res.company", "limit": 1},
                                     "id": "dup"}]},
                    {"content": "done"})
        thread = self.new_thread()
        self.agent.run(thread.id, "three searches")
        transcript = thread.message_ids.filtered(lambda m: m.role == "tool_call").mapped("tool_call_id")
        self.assertEqual(len(set(transcript)), 3, transcript)
        logs = self.env["agentic.ai.execution.log"].search([("thread_id", "=", thread.id)], order="id")
        answer = json.loads(logs.filtered(lambda r: r.action_type == "llm_call")[0].output_data)
        self.assertEqual([call["id"] for call in answer["tool_calls"]], transcript)
        self.assertEqual(logs.filtered(lambda r: r.action_type == "tool_execution").mapped("tool_call_id"), transcript)
        replayed = self.scenario.chat_requests()[-1]["messages"]
        self.assertEqual([c["id"] for c in replayed[2]["tool_calls"]], transcript)
        self.assertEqual([m["tool_call_id"] for m in replayed[3:6]], transcript)

    def test_history_is_read_once_per_turn_and_kept_equal_to_the_rows(self):
        """The transcript the loop keeps in memory is what reading the thread
        gives, after calls, results, a rejection and answers."""
        self.agent.require_confirmation = "destructive"
        partner = self.env["res.partner"].create({"name": "Kept"})
        self.script({"content": "first", "tool_calls": [
                        {"name": "odoo_search_read", "arguments": {"model": "res.partner", "limit": 1}},
                        {"name": "odoo_unlink", "arguments": {"model": "res.partner", "record_ids": [partner.id]}},
                        {"name": "odoo_search_read", "arguments": {"model": "res.users", "limit": 1}}]},
                    {"content": "Not deleted."}, {"content": "Hello again."})
        thread = self.new_thread()
        runtime = AgentRuntime(self.agent, thread)
        runtime.run_turn("search then delete")
        self.assertEqual(runtime.transcript.messages, Transcript(thread).messages)
        resumed = AgentRuntime(self.agent, thread)
        resumed.resume_after_confirmation(False, "keep it")
        self.assertEqual(resumed.transcript.messages, Transcript(thread).messages)
        again = AgentRuntime(self.agent, thread)
        again.run_turn("hi")
        self.assertEqual(again.transcript.messages, Transcript(thread).messages)
        self.assertEqual(again.transcript.messages, thread.get_messages_for_llm())
        call = thread.message_ids.filtered(lambda m: m.role == "tool_call" and m.tool_name == "odoo_unlink")
        self.assertEqual(call.tool_status, "rejected")
        self.assertTrue(partner.exists())

    def test_rows_the_engine_inserts_are_what_create_would_store(self):
        """Transcript rows are one INSERT each (``_append``, issue 26 point
        6): what Odoo's cache holds after it is the row as stored, the same
        as ``create`` stores; the call a result answers is marked in the same
        statement; the thread's cached messages include the new rows; a bad
        row is refused before anything is written."""
        Message = self.env["agentic.ai.thread.message"].sudo()
        thread = self.new_thread()
        self.assertFalse(thread.message_ids)  # read and cached before the rows
        call = thread.add_tool_call(ToolCall(id="c1", name="odoo_search_read", arguments={"model": "res.partner"},
                                             provider_data={"thoughtSignature": "s"}), content="looking")
        self.assertTrue(Message._insert_statement()[2], "the addon's own rows go in with SQL")
        # A write pending on the call's row, as from a step before (its write_date then pending too): flushed before
        # the row is marked, never after it.
        self.env.flush_all()
        self.env.cr.execute("UPDATE agentic_ai_thread_message SET write_date = write_date - interval '1 hour' "
                            "WHERE id = %s", [call.id])
        call.invalidate_recordset()
        call.sudo().write({"content": "looking again"})
        with self.assertNoLogs("odoo.fields", "ERROR"):  # Odoo's word on a cache value set over a pending write
            result = thread.add_tool_result("c1", "odoo_search_read", "1 record", data={"records": [{"id": 7}]},
                                            untrusted=True, call=call)
        answer = thread.add_assistant_message("**done**", input_tokens=12, output_tokens=3, references=[{"a": 1}])
        by_create = Message.create({"thread_id": thread.id, "role": "assistant", "content": "**done**",
                                    "input_tokens": 12, "output_tokens": 3, "references": [{"a": 1}]})
        self.assertEqual(thread.message_ids, call + result + answer + by_create)
        stored = [name for name, field in Message._fields.items() if field.store]
        rows = call + result + answer

        def values(records):
            return [{name: record[name] for name in stored} for record in records]
        cached = values(rows)
        html = answer.content_html
        self.env.invalidate_all()
        self.assertEqual(values(rows), cached, "the cache held the rows as stored")
        self.assertEqual(answer.content_html, html)
        self.assertEqual((call.tool_status, result.tool_status, result.untrusted_content), ("done", "done", True))
        self.assertEqual((call.tool_provider_data, json.loads(result.tool_result_data)),
                         ({"thoughtSignature": "s"}, {"records": [{"id": 7}]}))
        made = {name: value for name, value in values(answer)[0].items()
                if name not in ("id", "create_date", "write_date")}
        self.assertEqual(made, {name: value for name, value in values(by_create)[0].items()
                                if name not in ("id", "create_date", "write_date")})
        self.assertEqual((answer.user_id, answer.company_id, answer.create_uid),
                         (thread.user_id, thread.company_id, self.env.user))
        for bad in ({"role": "not_a_role"}, {"role": "assistant", "not_a_field": 1},
                    {"role": "tool_result", "tool_status": "maybe"}):
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                thread._add_message(bad.pop("role"), "refused", **bad)
        with self.assertRaises(ValueError):
            thread.add_tool_result("c9", "odoo_search_read", "mislabelled", call=thread)
        self.assertEqual(thread.message_ids, call + result + answer + by_create, "nothing was written")
        self.assertEqual(call.content, "looking again")

    def test_rows_of_a_step_are_written_at_its_end_in_order(self):
        """The audit rows of an LLM call and the tool calls it asks for are
        written together when the step ends, in the order they happened;
        outside a step a row is written at once."""
        thread = self.new_thread()
        Log = self.env["agentic.ai.execution.log"]
        audit = AuditTrail(thread)
        with audit.step():
            audit.record("llm_call", llm_model="m", input_tokens=3)
            audit.record("tool_execution", tool_name="odoo_search_read", tool_call_id="c1", success=False)
            self.assertFalse(Log.search([("thread_id", "=", thread.id)]), "nothing is written before the step ends")
        rows = Log.search([("thread_id", "=", thread.id)], order="id")
        self.assertEqual([(r.action_type, r.tool_call_id, r.success) for r in rows],
                         [("llm_call", False, True), ("tool_execution", "c1", False)])
        audit.record("error", success=False, error_message="alone")
        self.assertEqual(Log.search_count([("thread_id", "=", thread.id)]), 3)
        self.assertEqual(thread.execution_log_ids, Log.search([("thread_id", "=", thread.id)]))

    def test_confirmation_request_is_logged_after_the_step_that_asked_for_it(self):
        self.agent.require_confirmation = "destructive"
        partner = self.env["res.partner"].create({"name": "Asked"})
        self.script({"tool_calls": [{"name": "odoo_search_read", "arguments": {"model": "res.partner", "limit": 1}},
                                    {"name": "odoo_unlink", "arguments": {"model": "res.partner",
                                                                          "record_ids": [partner.id]}}]},
                    {"content": "ok"})
        thread = self.new_thread()
        self.agent.run(thread.id, "look then delete")
        rows = self.env["agentic.ai.execution.log"].search([("thread_id", "=", thread.id)], order="id")
        self.assertEqual(rows.mapped("action_type"), ["llm_call", "tool_execution", "confirmation_request"])

    # ------------------------------------------------ hostile answers (issue 8 round)
    def test_deeply_nested_arguments_are_refused_and_the_run_goes_on(self):
        nested = []
        for _ in range(500):
            nested = [nested]
        self.script(tool_call("odoo_search_read", {"model": "res.partner", "domain": nested}), {"content": "ok"})
        thread = self.new_thread()
        result = self.agent.run(thread.id, "deep")
        self.assertEqual((result.state, result.reply), ("completed", "ok"))
        self.assertIn("arguments are nested deeper than 50 levels",
                      thread.message_ids.filtered(lambda m: m.role == "tool_result").content)

    def test_token_counts_a_provider_exaggerates_are_kept_storable(self):
        self.script({"content": "big", "usage": {"prompt_tokens": 2**31, "completion_tokens": 10**12}})
        thread = self.new_thread()
        result = self.agent.run(thread.id, "hi")
        self.assertEqual((result.state, result.input_tokens, result.output_tokens), ("completed", 2**31 - 1, 2**31 - 1))
        self.assertEqual(thread.message_ids[-1].input_tokens, 2**31 - 1)

    def test_unreadable_pending_confirmation_frees_the_thread(self):
        thread, partner = self.pending_deletion("Unreadable", user=self.plain)
        thread._set_runtime_state(pending_confirmation="{not json")
        result = thread.with_user(self.plain).handle_confirmation(True)
        self.assertEqual(result.state, "error")
        self.assertIn("could not be read, so nothing was run", result.reply)
        self.assertTrue(partner.exists())
        self.assertFalse(thread.pending_confirmation)
        self.script({"content": "free again"})
        self.assertEqual(self.agent.with_user(self.plain).run(thread.id, "hello").reply, "free again")
