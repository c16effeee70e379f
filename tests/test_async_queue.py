"""The asynchronous queue (spec 000 §11.1 send_async/poll, §12 Async Task
Processor; issue 10, point 4): the routes over HTTP, and the queue's
own rules on the model (busy threads, cancel, "Process now")."""
from odoo.exceptions import AccessError, UserError
from odoo.tests import HttpCase, new_test_user, tagged
from odoo.tests.common import JsonRpcException
from odoo.tools import mute_logger

from .common import AgenticCase, AgenticSetupMixin

CRON = "agentic_ai.ir_cron_process_pending_tasks"


def cron_triggers(env):
    cron = env.ref(CRON)
    return env["ir.cron.trigger"].sudo().search([("cron_id", "=", cron.id)])


@tagged("post_install", "-at_install")
class TestAsyncQueueRoutes(AgenticSetupMixin, HttpCase):
    """/agentic_ai/chat/send_async and /agentic_ai/chat/poll as a user."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.setup_agentic()
        cls.cron = cls.env.ref(CRON)

    def rpc_error(self, route, params):
        """The ``error.data`` of a JSON-RPC call ({name, message, ...}); {} when it succeeded."""
        response = self.url_open(route, json={"jsonrpc": "2.0", "method": "call", "id": 1, "params": params})
        return response.json().get("error", {}).get("data", {})

    def test_send_async_returns_at_once_and_poll_reads_the_run(self):
        self.script({"content": "processed in the background"})
        self.authenticate("demo", "demo")
        created = self.make_jsonrpc_request("/agentic_ai/thread/create", {"agent_id": self.agent.id})
        cron_triggers(self.env).unlink()
        answer = self.make_jsonrpc_request("/agentic_ai/chat/send_async",
                                           {"thread_id": created["id"], "message": "Summarise my week"})
        self.assertEqual((answer["state"], answer["thread"]["state"], answer["after_id"]), ("queued", "queued", 0))
        thread = self.env["agentic.ai.thread"].browse(created["id"])
        self.assertEqual((thread.state, thread.pending_message, thread.queue_attempts),
                         ("queued", "Summarise my week", 0))
        self.assertTrue(thread.async_requested_at)
        self.assertFalse(self.scenario.chat_requests(), "nothing is run before the processor")
        self.assertEqual(len(cron_triggers(self.env)), 1, "send_async wakes the processor at once")

        polled = self.make_jsonrpc_request("/agentic_ai/chat/poll", {"thread_id": thread.id, "after_id": 0})
        self.assertEqual((polled["state"], polled["done"], polled["messages"]), ("queued", False, []))

        self.cron.method_direct_trigger()  # HttpCase: the registry is in test mode already
        polled = self.make_jsonrpc_request("/agentic_ai/chat/poll", {"thread_id": thread.id, "after_id": 0})
        self.assertEqual((polled["state"], polled["done"], polled["error"]), ("completed", True, None))
        self.assertEqual([(m["role"], m["content"]) for m in polled["messages"]],
                         [("user", "Summarise my week"), ("assistant", "processed in the background")])
        later = self.make_jsonrpc_request("/agentic_ai/chat/poll",
                                          {"thread_id": thread.id, "after_id": polled["messages"][0]["id"]})
        self.assertEqual([m["role"] for m in later["messages"]], ["assistant"])
        self.assertFalse(thread.pending_message or thread.queue_claimed_at)
        self.assertEqual(self.cron.failure_count, 0)

    def test_busy_thread_refuses_a_second_queued_message(self):
        self.authenticate("demo", "demo")
        created = self.make_jsonrpc_request("/agentic_ai/thread/create", {"agent_id": self.agent.id})
        params = {"thread_id": created["id"], "message": "first"}
        self.make_jsonrpc_request("/agentic_ai/chat/send_async", params)
        error = self.rpc_error("/agentic_ai/chat/send_async", {**params, "message": "second"})
        # A busy thread is a LockError (HTTP 409 in every language: its kind, never its words, issue 25 point 3).
        self.assertEqual(error.get("name"), "odoo.exceptions.LockError", error)
        self.assertIn("busy (Queued)", error.get("message", ""))
        self.assertEqual(self.env["agentic.ai.thread"].browse(created["id"]).pending_message, "first",
                         "the first queued message is kept")

    def test_routes_refuse_another_users_thread(self):
        owner = new_test_user(self.env, "queue_owner", groups="base.group_user")
        new_test_user(self.env, "queue_intruder", groups="base.group_user")
        thread = self.agent.with_user(owner).start_thread(name="private")
        self.authenticate("queue_intruder", "queue_intruder")
        for route, params in (("/agentic_ai/chat/send_async", {"thread_id": thread.id, "message": "hello"}),
                              ("/agentic_ai/chat/poll", {"thread_id": thread.id})):
            with self.assertRaises(JsonRpcException, msg=route) as error:
                self.make_jsonrpc_request(route, params)
            self.assertIn("AccessError", str(error.exception), route)
        self.assertEqual((thread.state, thread.pending_message), ("active", False))

    def test_bad_async_parameters_get_clear_errors(self):
        self.authenticate("demo", "demo")
        thread = self.make_jsonrpc_request("/agentic_ai/thread/create", {"agent_id": self.agent.id})
        cases = [
            ("/agentic_ai/chat/send_async", {"thread_id": thread["id"]}, "message"),
            ("/agentic_ai/chat/send_async", {"thread_id": thread["id"], "message": "   "}, "message"),
            ("/agentic_ai/chat/send_async", {"thread_id": thread["id"], "message": {"a": 1}}, "message"),
            ("/agentic_ai/chat/send_async", {"thread_id": "abc", "message": "hi"}, "thread_id"),
            ("/agentic_ai/chat/send_async", {"thread_id": thread["id"], "message": "x" * 20001}, "too long"),
            ("/agentic_ai/chat/poll", {}, "thread_id"),
            ("/agentic_ai/chat/poll", {"thread_id": thread["id"], "after_id": -1}, "after_id"),
            ("/agentic_ai/chat/poll", {"thread_id": thread["id"], "after_id": [3]}, "after_id"),
        ]
        for route, params, needle in cases:
            error = self.rpc_error(route, params)
            self.assertEqual(error.get("name"), "odoo.exceptions.UserError", f"{route} {params}: {error}")
            self.assertIn(needle, error.get("message", ""), f"{route} {params}: {error}")
        self.assertEqual(self.env["agentic.ai.thread"].browse(thread["id"]).state, "active", "nothing was queued")


class QueueCase(AgenticCase):
    """Users, and the processor cron run in the test's transaction."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.setup_users()
        cls.cron = cls.env.ref(CRON)

    def run_cron(self):
        with self.enter_registry_test_mode():
            self.cron.method_direct_trigger()
        self.assertEqual(self.cron.failure_count, 0, "the processor never fails")


@tagged("post_install", "-at_install")
class TestAsyncQueueModel(QueueCase):
    """The queue's rules on the thread: enqueue, cancel, Process now, and
    the processor on one conversation at a time."""

    def test_queued_message_is_run_by_the_cron_as_its_user(self):
        self.script({"content": "processed later"})
        thread = self.new_thread(user=self.plain)
        thread.with_user(self.plain)._enqueue("please do this in the background")
        self.run_cron()
        self.assertEqual(thread.message_ids.mapped("role"), ["user", "assistant"])
        self.assertEqual((thread.state, thread.pending_message, thread.queue_attempts), ("completed", False, 1))
        logs = self.env["agentic.ai.execution.log"].search([("thread_id", "=", thread.id)])
        self.assertEqual(logs.user_id, self.plain, "the run is logged in the name of the user who asked")

    def test_failing_queued_message_does_not_block_the_queue(self):
        self.env["ir.config_parameter"].set_param("agentic_ai.queue_max_attempts", "1")
        self.script({"content": "good answer"})
        poison = self.new_thread(user=self.plain)
        good = self.new_thread(user=self.other)
        poison.with_user(self.plain)._enqueue("first")
        good.with_user(self.other)._enqueue("second")
        # The poison: its user loses access to the agent before the cron runs.
        self.agent.user_ids = [(6, 0, self.other.ids)]
        with mute_logger("odoo.addons.agentic_ai.models.agent_thread_queue"):
            self.run_cron()
        self.assertEqual(poison.state, "error")
        self.assertIn("not allowed", poison.last_error)
        self.assertEqual((poison.message_ids[0].role, poison.message_ids[0].content), ("user", "first"),
                         "the message given up is kept in the transcript")
        self.assertEqual(good.state, "completed")
        self.assertEqual(good.message_ids[-1].content, "good answer")

    def test_busy_threads_refuse_a_queued_message(self):
        thread = self.new_thread(user=self.plain)
        for state in ("executing", "waiting_confirmation"):
            thread._set_runtime_state(state=state)
            with self.assertRaises(UserError, msg=state):
                thread.with_user(self.plain)._enqueue("hello")
            self.assertFalse(thread.pending_message)
        with self.assertRaises(AccessError):
            self.new_thread(user=self.plain).with_user(self.other)._enqueue("not mine")

    def test_queue_fields_cannot_be_written_by_users(self):
        thread = self.new_thread(user=self.plain)
        for values in ({"queue_attempts": 9}, {"queue_claimed_at": "2020-01-01 00:00:00"}, {"pending_message": "x"}):
            with self.assertRaises(AccessError, msg=values):
                thread.with_user(self.plain).write(values)

    def test_cancel_queued_drops_the_message_before_it_runs(self):
        thread = self.new_thread(user=self.plain)
        mine = thread.with_user(self.plain)
        with self.assertRaises(UserError):
            mine._cancel_queued()  # nothing queued
        mine._enqueue("never mind")
        with self.assertRaises(AccessError):
            thread.with_user(self.other)._cancel_queued()
        note = mine._cancel_queued()
        self.assertEqual((thread.state, thread.pending_message), ("active", False))
        self.assertEqual(thread.message_ids, note.sudo())
        self.assertIn("cancelled before it ran", note.content)
        self.script({"content": "unused"})
        self.run_cron()
        self.assertFalse(self.scenario.chat_requests(), "a cancelled message is never run")
        mine._enqueue("again")
        thread._set_runtime_state(queue_claimed_at="2020-01-01 00:00:00")  # a processor took it
        with self.assertRaises(UserError):
            mine._cancel_queued()
        self.assertEqual(thread.pending_message, "again")

    def test_process_now_triggers_the_cron_and_commits_nothing(self):
        thread = self.new_thread(user=self.plain)
        thread.with_user(self.plain)._enqueue("soon")
        cron_triggers(self.env).unlink()
        # A commit would raise here: TransactionCase forbids it.
        action = thread.with_user(self.operator).action_process_queue_now()
        self.assertEqual(action["tag"], "display_notification")
        self.assertEqual(len(cron_triggers(self.env)), 1)
        self.assertEqual((thread.state, thread.message_ids.ids), ("queued", []), "nothing ran in the caller")
        with self.assertRaises(AccessError):
            thread.with_user(self.plain).action_process_queue_now()


@tagged("post_install", "-at_install")
class TestQueuedAnswers(QueueCase):
    """An answer to a confirmation queued for the processor (issue 26 point
    1): the chat's way when its stream reaches a multi-process HTTP worker,
    which must not be held while the approved call and the model run."""

    def test_a_queued_approval_runs_the_call_once_in_the_processor(self):
        thread, partner = self.pending_deletion("Queued Approval", user=self.plain, reply="deleted it")
        question = thread.get_pending_confirmation()
        requests = len(self.scenario.chat_requests())
        cron_triggers(self.env).unlink()
        thread.with_user(self.plain)._enqueue_answer(True, confirmation_id=question["confirmation_id"])
        self.assertEqual((thread.state, thread.pending_message), ("queued", "Approved"))
        self.assertEqual(thread.pending_answer, {"approved": True, "reason": "", "tool_call_id": "call_del",
                                                 "confirmation_id": question["confirmation_id"]})
        self.assertTrue(partner.exists(), "nothing runs before the processor")
        self.assertEqual(len(self.scenario.chat_requests()), requests, "the model is not asked before the processor")
        self.assertEqual(len(cron_triggers(self.env)), 1, "the processor is woken at once")
        mine = thread.with_user(self.plain)
        with self.assertRaises(UserError, msg="a second answer: the question no longer waits"):
            mine._enqueue_answer(True, confirmation_id=question["confirmation_id"])
        with self.assertRaises(UserError):
            mine.handle_confirmation(True, confirmation_id=question["confirmation_id"])
        with self.assertRaises(UserError, msg="busy: a message waits for the answer's run"):
            mine._enqueue("and then?")
        self.run_cron()
        self.assertFalse(partner.exists(), "the approved call ran")
        self.assertEqual((thread.state, thread.pending_message, thread.pending_answer), ("completed", False, False))
        self.assertEqual(thread.message_ids.sorted("id").mapped("role")[-3:],
                         ["confirmation_response", "tool_result", "assistant"])
        self.assertEqual(thread.message_ids.sorted("id")[-1].content, "deleted it")
        executed = [("thread_id", "=", thread.id), ("tool_name", "=", "odoo_unlink"),
                    ("action_type", "=", "tool_execution")]
        runs = self.env["agentic.ai.execution.log"].search(executed)
        self.assertEqual((len(runs), runs.user_id), (1, self.plain), "run once, in the name of the user who asked")
        self.run_cron()
        self.assertEqual(self.env["agentic.ai.execution.log"].search_count(executed), 1)

    def test_a_queued_rejection_tells_the_model_and_runs_nothing(self):
        thread, partner = self.pending_deletion("Queued Rejection", user=self.plain, reply="kept it")
        thread.with_user(self.plain)._enqueue_answer(False, "keep this contact", tool_call_id="call_del")
        self.assertEqual(thread.pending_message, "Rejected: keep this contact")
        self.run_cron()
        self.assertTrue(partner.exists())
        self.assertEqual(thread.state, "completed")
        told = self.scenario.chat_requests()[-1]["messages"][-1]
        self.assertIn("CONFIRMATION_REJECTED", told["content"])
        self.assertIn("keep this contact", told["content"])

    def test_a_queued_answer_is_checked_at_once_and_can_be_withdrawn(self):
        thread, partner = self.pending_deletion("Queued Withdrawn", user=self.plain)
        question = thread.get_pending_confirmation()
        with self.assertRaises(UserError):
            thread.with_user(self.plain)._enqueue_answer(True, confirmation_id=question["confirmation_id"] + 1)
        with self.assertRaises(UserError):
            thread.with_user(self.plain)._enqueue_answer(True, tool_call_id="call_other")
        with self.assertRaises(UserError):
            thread.with_user(self.plain)._enqueue_answer("yes", tool_call_id="call_del")
        with self.assertRaises(AccessError):
            thread.with_user(self.other)._enqueue_answer(True, tool_call_id="call_del")
        self.assertEqual((thread.state, thread.pending_answer), ("waiting_confirmation", False), "nothing queued")
        thread.with_user(self.plain)._enqueue_answer(True, tool_call_id="call_del")
        note = thread.with_user(self.plain).cancel_current()
        self.assertIn("withdrawn", note.reply)
        self.assertEqual((thread.state, thread.pending_message, thread.pending_answer),
                         ("waiting_confirmation", False, False))
        self.assertEqual(thread.get_pending_confirmation()["confirmation_id"], question["confirmation_id"],
                         "the same question waits")
        self.run_cron()
        self.assertTrue(partner.exists(), "a withdrawn answer never runs")
        result = thread.with_user(self.plain).handle_confirmation(True, confirmation_id=question["confirmation_id"])
        self.assertEqual(result.state, "completed")
        self.assertFalse(partner.exists())
        self.assert_result_follows_its_call()

    def assert_result_follows_its_call(self):
        """In the history last sent to the model, the call's result comes
        right after the assistant message that asked for it: a note of the
        queue in between (the answer withdrawn, given up) is the agent's
        words, never sent (providers refuse a history where it is)."""
        messages = self.scenario.chat_requests()[-1]["messages"]
        asked = next(i for i, m in enumerate(messages) if any(
            c.get("id") == "call_del" for c in m.get("tool_calls") or ()))
        self.assertEqual((messages[asked + 1]["role"], messages[asked + 1].get("tool_call_id")), ("tool", "call_del"))
        self.assertFalse([m for m in messages if "still waits for your answer" in str(m.get("content"))])

    def test_an_answer_the_processor_cannot_run_leaves_the_question_waiting(self):
        self.env["ir.config_parameter"].set_param("agentic_ai.queue_max_attempts", "1")
        thread, partner = self.pending_deletion("Queued Lost Access", user=self.plain)
        thread.with_user(self.plain)._enqueue_answer(True, tool_call_id="call_del")
        self.agent.user_ids = [(6, 0, self.other.ids)]  # the user loses the agent before the processor runs
        with mute_logger("odoo.addons.agentic_ai.models.agent_thread_queue"):
            self.run_cron()
        self.assertTrue(partner.exists())
        self.assertEqual((thread.state, thread.pending_answer), ("waiting_confirmation", False))
        self.assertIn("not allowed", thread.last_error)
        self.assertIn("still waits for your answer", thread.message_ids.sorted("id")[-1].content)
        self.agent.user_ids = [(6, 0, [])]  # the agent open to every AI user again: the question is answered
        result = thread.with_user(self.plain).handle_confirmation(True, tool_call_id="call_del")
        self.assertEqual(result.state, "completed", result.error)
        self.assertFalse(partner.exists())
        self.assert_result_follows_its_call()
