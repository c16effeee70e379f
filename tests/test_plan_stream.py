"""A plan over /agentic_ai/chat/stream (issue 12 point 3): the user sees the
plan (``plan_update``) before anything runs and its steps' states live;
the planner's JSON is never streamed as the answer; each step is committed
as it completes; a plan whose worker died is closed when the thread is
repaired, never left open."""
import json

from odoo.tests import HttpCase, new_test_user, tagged

from .common import AgenticSetupMixin, tool_call
from .sse_client import open_stream

PLAN = [{"description": "Find the partner Streamed Planner", "tool": "odoo_search_read"},
        {"description": "Say how many were found", "tool": ""}]


def system_of(request):
    return request["messages"][0]["content"] if request["messages"][0]["role"] == "system" else ""


@tagged("post_install", "-at_install")
class TestPlanStream(AgenticSetupMixin, HttpCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.setup_agentic()
        cls.agent.execution_mode = "hybrid"
        cls.user = new_test_user(cls.env, "plan_stream_user",
                                 groups="base.group_user,agentic_ai.group_agentic_ai_user,base.group_partner_manager")

    def setUp(self):
        super().setUp()
        self.thread = self.agent.with_user(self.user).start_thread(name="plan stream")
        self.authenticate("plan_stream_user", "plan_stream_user")

    def test_plan_shown_before_it_runs_and_steps_live(self):
        partner = self.env["res.partner"].create({"name": "Streamed Planner"})
        self.script(({"content": json.dumps(PLAN)}, lambda r: system_of(r).startswith("You are the planner")),
                    (tool_call("odoo_search_read", {"model": "res.partner", "domain": [["id", "=", partner.id]],
                                                    "fields": ["name"]}), lambda r: "Do step 1 of 2" in system_of(r)),
                    ({"content": "One found."}, lambda r: "Do step 2 of 2" in system_of(r)),
                    ({"content": "Found Streamed Planner once."}, lambda r: "is finished" in system_of(r)))
        with open_stream(self, {"thread_id": self.thread.id,
                                "message": "First find Streamed Planner, then tell me how many there are"}) as stream:
            events = [e for e in stream.events() if e.name != "comment"]
        names = [e.name for e in events]
        self.assertLess(names.index("plan_update"), names.index("tool_call"), "the plan is shown before it runs")
        first = next(e.data for e in events if e.name == "plan_update")
        self.assertEqual([s["description"] for s in first["plan"]["steps"]], [s["description"] for s in PLAN])
        self.assertIn("Hybrid: complex request", first["mode_reason"])
        streamed = "".join(e.data.get("text", "") for e in events if e.name == "token")
        self.assertNotIn("description", streamed, "the plan's JSON is not streamed as the answer")
        self.assertIn("Found Streamed Planner once.", streamed)
        states = [[s["state"] for s in e.data["plan"]["steps"]] for e in events if e.name == "plan_update"]
        self.assertIn(["running", "pending"], states)
        self.assertIn(["completed", "running"], states)
        self.assertEqual(names[-1], "done")
        # Committed: another request reads the finished plan.
        answer = self.make_jsonrpc_request("/agentic_ai/thread/plan", {"thread_id": self.thread.id})
        self.assertEqual(answer["plan"]["state"], "completed")
        self.assertEqual([s["state"] for s in answer["plan"]["steps"]], ["completed", "completed"])
        self.assertEqual(answer["mode"], "plan_and_execute")

    def test_dead_run_mid_plan_closes_the_plan(self):
        thread = self.thread
        thread.add_user_message("First buy, then sell")
        plan = self.env["agentic.ai.plan"].sudo().create({"thread_id": thread.id, "goal": "First buy, then sell"})
        plan._add_steps([{"description": "Buy the goods", "tool": ""}, {"description": "Sell them", "tool": ""}])
        plan._set_state("executing")
        plan.step_ids.sorted("sequence")[0].write({"state": "running"})
        thread._set_runtime_state(state="executing")
        loaded = self.make_jsonrpc_request("/agentic_ai/thread/messages", {"thread_id": thread.id})
        self.assertEqual(loaded["thread"]["state"], "interrupted")
        plan.invalidate_recordset()
        self.assertEqual(plan.state, "failed")
        self.assertEqual(plan.step_ids.sorted("sequence").mapped("state"), ["failed", "pending"])
        self.assertIn("worker stopped", plan.result)
