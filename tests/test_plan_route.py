"""The ``/agentic_ai/thread/plan`` route (spec 000 §11.1, "获取执行计划"):
the owner gets the thread's mode and its latest (or named) plan as the
plan panel reads it; another user's thread, another thread's plan and bad
input are refused; a thread without a plan answers ``plan: null``."""
from odoo.tests import HttpCase, new_test_user, tagged

from .common import AgenticSetupMixin

STEPS = [{"description": "Create the purchase order", "tool": "create_purchase_order"},
         {"description": "Receive the goods", "tool": "validate_picking"}]


@tagged("post_install", "-at_install")
class TestPlanRoute(AgenticSetupMixin, HttpCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.setup_agentic()
        groups = "base.group_user,agentic_ai.group_agentic_ai_user"
        cls.user = new_test_user(cls.env, "plan_route_user", groups=groups)
        cls.other = new_test_user(cls.env, "plan_route_other", groups=groups)

    def setUp(self):
        super().setUp()
        self.authenticate("plan_route_user", "plan_route_user")
        self.thread = self.env["agentic.ai.thread"].browse(
            self.call("/agentic_ai/thread/create", agent_id=self.agent.id)["id"])

    def call(self, route, **params):
        return self.make_jsonrpc_request(route, params)

    def refused(self, text, **params):
        """Assert the route answers a JSON-RPC error whose message holds ``text``."""
        response = self.url_open("/agentic_ai/thread/plan",
                                 json={"jsonrpc": "2.0", "method": "call", "id": 1, "params": params})
        error = response.json().get("error")
        self.assertTrue(error, f"the route accepted {params}")
        self.assertIn(text, f"{error['data']['name']}: {error['data']['message']}")

    def new_plan(self, thread, goal):
        plan = self.env["agentic.ai.plan"].create({"thread_id": thread.id, "goal": goal,
                                                   "mode_reason": "Hybrid: complex request"})
        plan._add_steps(STEPS)
        return plan

    def test_no_plan(self):
        self.assertEqual(self.call("/agentic_ai/thread/plan", thread_id=self.thread.id),
                         {"thread_id": self.thread.id, "mode": None, "mode_reason": None, "plan": None})

    def test_owner_gets_the_latest_or_named_plan(self):
        first = self.new_plan(self.thread, "first request")
        latest = self.new_plan(self.thread, "Buy 10 Large Cabinet, then receive them")
        latest._set_state("executing")
        latest.step_ids[0].write({"state": "running"})
        latest.step_ids[0].write({"state": "completed", "result": "P00042"})
        self.thread.sudo().write({"mode_used": "plan_and_execute", "mode_reason": "Hybrid: complex request"})
        answer = self.call("/agentic_ai/thread/plan", thread_id=self.thread.id)
        self.assertEqual((answer["thread_id"], answer["mode"], answer["mode_reason"]),
                         (self.thread.id, "plan_and_execute", "Hybrid: complex request"))
        self.assertEqual(answer["plan"], latest._payload())
        self.assertEqual((answer["plan"]["state"], answer["plan"]["progress"]), ("executing", 50))
        self.assertEqual([(s["sequence"], s["state"], s["result"]) for s in answer["plan"]["steps"]],
                         [(1, "completed", "P00042"), (2, "pending", None)])
        named = self.call("/agentic_ai/thread/plan", thread_id=self.thread.id, plan_id=first.id)
        self.assertEqual(named["plan"]["goal"], "first request")

    def test_refusals(self):
        other_thread = self.agent.with_user(self.other).start_thread(name="theirs")
        other_plan = self.new_plan(other_thread, "their secret goal")
        self.refused("AccessError", thread_id=other_thread.id)
        self.refused("does not exist", thread_id=self.thread.id, plan_id=other_plan.id)
        self.refused("does not exist", thread_id=self.thread.id, plan_id=999999999)
        self.refused("must be a whole number", thread_id=self.thread.id, plan_id="x")
        self.refused("must be a whole number", thread_id=None)
