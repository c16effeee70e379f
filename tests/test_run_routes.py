"""Answering a paused run over the routes (issue 10 point 3): approve runs
exactly the call the user was shown, once; reject tells the model why;
cancel closes it; a new message closes it as cancelled; another user's
thread, another call id and bad input are refused clearly. And
thread/stats."""
from odoo.tests import HttpCase, new_test_user, tagged

from .common import AgenticSetupMixin, tool_call


@tagged("post_install", "-at_install")
class TestRunRoutes(AgenticSetupMixin, HttpCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.setup_agentic()
        cls.agent.require_confirmation = "destructive"
        groups = "base.group_user,agentic_ai.group_agentic_ai_user,base.group_partner_manager"
        cls.user = new_test_user(cls.env, "routes_user", groups=groups)
        cls.other = new_test_user(cls.env, "routes_other", groups=groups)

    def setUp(self):
        super().setUp()
        self.partner = self.env["res.partner"].create({"name": "Route Partner"})
        self.authenticate("routes_user", "routes_user")
        self.thread = self.call("/agentic_ai/thread/create", agent_id=self.agent.id)

    def call(self, route, **params):
        return self.make_jsonrpc_request(route, params)

    def refused(self, route, text, **params):
        """Assert ``route`` answers a JSON-RPC error whose message holds ``text``."""
        response = self.url_open(route, json={"jsonrpc": "2.0", "method": "call", "id": 1, "params": params})
        error = response.json().get("error")
        self.assertTrue(error, f"{route} accepted {params}")
        self.assertIn(text, f"{error['data']['name']}: {error['data']['message']}")

    def pause(self, reply="Deleted."):
        """Send a message whose answer deletes the partner: the run waits."""
        self.script(tool_call("odoo_unlink", {"model": "res.partner", "record_ids": [self.partner.id]}),
                    {"content": reply})
        answer = self.call("/agentic_ai/chat/send", thread_id=self.thread["id"], message="delete Route Partner")
        self.assertEqual(answer["thread"]["state"], "waiting_confirmation")
        confirmation = answer["thread"]["confirmation"]
        self.assertEqual(confirmation["records"], [{"id": self.partner.id, "name": "Route Partner"}],
                         "the confirmation names the records")
        return confirmation["tool_call_id"]

    def test_approve_runs_the_shown_call_once(self):
        call_id = self.pause()
        self.refused("/agentic_ai/confirm/approve", "waiting for another action", thread_id=self.thread["id"],
                     tool_call_id="call_something_else")
        self.assertTrue(self.partner.exists())
        answer = self.call("/agentic_ai/confirm/approve", thread_id=self.thread["id"], tool_call_id=call_id)
        self.assertEqual((answer["result"]["state"], answer["result"]["reply"]), ("completed", "Deleted."))
        self.assertFalse(self.partner.exists())
        self.assertEqual([m["role"] for m in answer["messages"]],
                         ["confirmation_response", "tool_result", "assistant"])
        self.refused("/agentic_ai/confirm/approve", "not waiting for a confirmation", thread_id=self.thread["id"],
                     tool_call_id=call_id)
        runs = self.env["agentic.ai.execution.log"].search([("thread_id", "=", self.thread["id"]),
                                                            ("action_type", "=", "tool_execution")])
        self.assertEqual(len(runs), 1, "the approved call ran once")

    def test_reject_tells_the_model(self):
        call_id = self.pause(reply="Understood, I kept it.")
        answer = self.call("/agentic_ai/confirm/reject", thread_id=self.thread["id"], tool_call_id=call_id,
                           reason="still a customer")
        self.assertEqual(answer["result"]["reply"], "Understood, I kept it.")
        self.assertTrue(self.partner.exists())
        self.assertIn("still a customer", self.scenario.chat_requests()[-1]["messages"][-1]["content"])

    def test_new_message_closes_the_confirmation(self):
        call_id = self.pause()
        self.script({"content": "Hello again."})
        answer = self.call("/agentic_ai/chat/send", thread_id=self.thread["id"], message="never mind, hello")
        self.assertEqual(answer["result"]["state"], "completed")
        self.assertTrue(self.partner.exists())
        self.refused("/agentic_ai/confirm/approve", "not waiting for a confirmation", thread_id=self.thread["id"],
                     tool_call_id=call_id)
        self.assertTrue(self.partner.exists(), "an approval after a new message ran the call")
        sent = self.scenario.chat_requests()[-1]["messages"]
        calls = [c["id"] for m in sent for c in m.get("tool_calls") or []]
        results = [m["tool_call_id"] for m in sent if m["role"] == "tool"]
        self.assertEqual(results, calls, "every call has exactly one result in what the provider sees")
        self.assertIn("[CANCELLED]", next(m for m in sent if m["role"] == "tool")["content"])

    def test_cancel_closes_the_confirmation(self):
        self.pause()
        answer = self.call("/agentic_ai/chat/cancel", thread_id=self.thread["id"])
        self.assertEqual(answer["thread"]["state"], "completed")
        self.assertIn("Cancelled", answer["result"]["reply"])
        self.assertTrue(self.partner.exists())
        self.refused("/agentic_ai/chat/cancel", "nothing running to cancel", thread_id=self.thread["id"])

    def test_another_users_thread_is_refused(self):
        call_id = self.pause()
        self.authenticate("routes_other", "routes_other")
        for route, params in (("/agentic_ai/confirm/approve", {"tool_call_id": call_id}),
                              ("/agentic_ai/confirm/reject", {"tool_call_id": call_id}),
                              ("/agentic_ai/chat/cancel", {}), ("/agentic_ai/thread/stats", {}),
                              ("/agentic_ai/thread/messages", {}), ("/agentic_ai/chat/send", {"message": "hi"})):
            with self.subTest(route=route):
                self.refused(route, "AccessError", thread_id=self.thread["id"], **params)
        self.assertTrue(self.partner.exists())

    def test_bad_input_is_refused_clearly(self):
        call_id = self.pause()
        for params, text in (({"tool_call_id": call_id}, "thread_id must be a whole number"),
                             ({"thread_id": "1; drop", "tool_call_id": call_id}, "thread_id must be a whole number"),
                             ({"thread_id": self.thread["id"]}, "confirmation_id (or tool_call_id) is required"),
                             ({"thread_id": self.thread["id"], "tool_call_id": 5}, "tool_call_id must be"),
                             ({"thread_id": self.thread["id"], "tool_call_id": "x" * 65}, "at most 64"),
                             ({"thread_id": self.thread["id"], "confirmation_id": "last"},
                              "confirmation_id must be a whole number"),
                             ({"thread_id": self.thread["id"], "confirmation_id": 2**31 - 1}, "another question"),
                             ({"thread_id": self.thread["id"], "tool_call_id": call_id, "confirmation_id": 1},
                              "another question")):
            with self.subTest(params=params):
                self.refused("/agentic_ai/confirm/approve", text, **params)
        self.refused("/agentic_ai/confirm/reject", "reason must be", thread_id=self.thread["id"],
                     tool_call_id=call_id, reason=["a list"])
        self.refused("/agentic_ai/thread/stats", "does not exist", thread_id=2**31 - 1)
        self.assertTrue(self.partner.exists())

    def test_stats_count_tokens_cost_and_calls(self):
        call_id = self.pause()
        self.call("/agentic_ai/confirm/approve", thread_id=self.thread["id"], tool_call_id=call_id)
        stats = self.call("/agentic_ai/thread/stats", thread_id=self.thread["id"])
        self.assertEqual((stats["llm_calls"], stats["tool_calls"], stats["failed_llm_calls"]), (2, 1, 0))
        self.assertGreater(stats["input_tokens"], 0)
        self.assertEqual(stats["total_tokens"], stats["input_tokens"] + stats["output_tokens"])
        expected = stats["input_tokens"] * 0.000001 + stats["output_tokens"] * 0.000002
        self.assertAlmostEqual(stats["cost"], expected, places=6)
        self.assertEqual(stats["messages"], len(self.call("/agentic_ai/thread/messages",
                                                          thread_id=self.thread["id"])["messages"]))
