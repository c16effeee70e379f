"""Plan models (spec 000 §3.5): state transitions of plans and steps,
the current step, the progress summary and percentage, completion,
replacing the remaining steps after a replanning, and who may read or
write plans."""
from odoo.exceptions import AccessError, UserError
from odoo.tests import tagged

from .common import AgenticCase

FOUR_STEPS = [
    {"description": "Create the purchase order", "tool": "create_purchase_order"},
    {"description": "Receive the goods", "tool": "validate_picking"},
    {"description": "Create the sale order", "tool": "create_sale_order"},
    {"description": "Invoice the sale", "tool": "create_invoice"},
]


@tagged("post_install", "-at_install")
class TestPlanModels(AgenticCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.setup_users()

    def new_plan(self, user=None, steps=FOUR_STEPS):
        thread = self.new_thread(user=user or self.plain)
        plan = self.env["agentic.ai.plan"].create({"thread_id": thread.id, "goal": "Buy, receive, sell, invoice"})
        plan._add_steps(steps)
        return plan

    # ------------------------------------------------------------ transitions
    def test_plan_transitions(self):
        plan = self.new_plan()
        self.assertEqual(plan.state, "planning")
        self.assertEqual((plan.user_id, plan.agent_id, plan.company_id),
                         (self.plain, self.agent, plan.thread_id.company_id))
        for state in ("executing", "replanning", "executing", "completed"):
            plan._set_state(state)
            self.assertEqual(plan.state, state)
        for state in ("executing", "failed", "cancelled", "planning", "replanning"):
            with self.assertRaisesRegex(UserError, f"from completed to {state}"):
                plan._set_state(state)
        plan._set_state("completed", result="done")  # same state: no transition
        self.assertEqual(plan.result, "done")

    def test_plan_transitions_refused(self):
        refused = {
            "planning": ("replanning", "completed"),
            "executing": ("planning",),
            "replanning": ("completed", "planning"),
        }
        path = {"planning": [], "executing": ["executing"], "replanning": ["executing", "replanning"]}
        for start, targets in refused.items():
            for target in targets:
                plan = self.new_plan()
                for state in path[start]:
                    plan._set_state(state)
                with self.assertRaisesRegex(UserError, f"from {start} to {target}"):
                    plan.write({"state": target})
                self.assertEqual(plan.state, start)
        for terminal in ("failed", "cancelled"):
            plan = self.new_plan()
            plan._set_state(terminal, result="why")
            self.assertEqual(plan.result, "why")
            with self.assertRaisesRegex(UserError, f"from {terminal} to executing"):
                plan._set_state("executing")

    def test_step_transitions(self):
        plan = self.new_plan()
        first, second, third, fourth = plan.step_ids
        first.write({"state": "running"})
        first.write({"state": "pending"})  # an interrupted run
        first.write({"state": "running"})
        first.write({"state": "completed", "result": "P00001"})
        second.write({"state": "running"})
        second.write({"state": "failed", "error": "no price"})
        second.write({"state": "skipped"})
        third.write({"state": "skipped"})
        fourth.write({"state": "running"})
        fourth.write({"state": "skipped"})
        refused = [(first, "running"), (first, "pending"), (second, "running"), (third, "pending"),
                   (third, "completed")]
        for step, target in refused:
            with self.assertRaisesRegex(UserError, f"from {step.state} to {target}"):
                step.write({"state": target})
        failed = self.new_plan().step_ids[0]
        with self.assertRaisesRegex(UserError, "from pending to completed"):
            failed.write({"state": "completed"})
        with self.assertRaisesRegex(UserError, "from pending to failed"):
            failed.write({"state": "failed"})
        failed.write({"state": "running"})
        failed.write({"state": "failed"})
        for target in ("running", "pending", "completed"):
            with self.assertRaisesRegex(UserError, f"from failed to {target}"):
                failed.write({"state": target})

    # ---------------------------------------------------------------- reading
    def test_current_step_progress_and_summary(self):
        plan = self.new_plan()
        self.assertEqual(plan.step_ids.mapped("sequence"), [1, 2, 3, 4])
        self.assertEqual(plan.step_ids.mapped("tool"), [s["tool"] for s in FOUR_STEPS])
        self.assertEqual(plan.get_current_step(), plan.step_ids[0])
        self.assertEqual(plan.progress, 0)
        self.assertFalse(plan.is_complete())
        first, second, third, fourth = plan.step_ids
        first.write({"state": "running"})
        self.assertEqual(plan.get_current_step(), first)
        first.write({"state": "completed", "result": "Purchase order P00012\ncreated"})
        second.write({"state": "running"})
        self.assertEqual(plan.get_current_step(), second)
        self.assertEqual(plan.progress, 25)
        self.assertEqual(plan.get_progress_summary(), "\n".join([
            "Plan: 1 of 4 steps done (25%)",
            "- [x] 1. Create the purchase order — Purchase order P00012 created",
            "- [ ] 2. Receive the goods (running)",
            "- [ ] 3. Create the sale order",
            "- [ ] 4. Invoice the sale",
        ]))
        second.write({"state": "failed", "error": "x" * 300})
        third.write({"state": "skipped"})
        self.assertEqual(plan.get_current_step(), fourth)
        self.assertEqual(plan.progress, 50)
        self.assertEqual(plan.get_progress_summary(), "\n".join([
            "Plan: 2 of 4 steps done (50%)",
            "- [x] 1. Create the purchase order — Purchase order P00012 created",
            "- [!] 2. Receive the goods — failed: " + "x" * 200,
            "- [-] 3. Create the sale order (skipped)",
            "- [ ] 4. Invoice the sale",
        ]))
        fourth.write({"state": "running"})
        fourth.write({"state": "completed"})
        self.assertFalse(plan.get_current_step())
        self.assertEqual(plan.get_current_step()._name, "agentic.ai.plan.step")
        self.assertFalse(plan.is_complete(), "a failed step leaves the plan incomplete")
        second.write({"state": "skipped"})
        self.assertTrue(plan.is_complete(), "skipped steps count as done")
        self.assertEqual(plan.progress, 100)
        self.assertEqual(plan.get_progress_summary().splitlines()[-1], "- [x] 4. Invoice the sale")

    def test_empty_plan(self):
        plan = self.new_plan(steps=[])
        self.assertEqual(plan.progress, 0)
        self.assertFalse(plan.is_complete())
        self.assertFalse(plan.get_current_step())
        self.assertEqual(plan.get_progress_summary(), "Plan: 0 of 0 steps done (0%)")
        self.assertEqual(plan._payload()["steps"], [])

    def test_payload(self):
        plan = self.new_plan(steps=FOUR_STEPS[:3])
        plan.mode_reason = 'Hybrid: complex request ("then", 63 words)'
        plan.step_ids[0].write({"state": "running"})
        plan.step_ids[0].write({"state": "completed", "result": "ok"})
        payload = plan._payload()
        self.assertEqual(payload["progress"], 33)
        self.assertEqual({k: payload[k] for k in ("id", "state", "goal", "mode_reason", "replan_count",
                                                  "max_replanning", "result")},
                         {"id": plan.id, "state": "planning", "goal": "Buy, receive, sell, invoice",
                          "mode_reason": 'Hybrid: complex request ("then", 63 words)', "replan_count": 0,
                          "max_replanning": 2, "result": None})
        self.assertEqual(payload["steps"][0], {
            "id": plan.step_ids[0].id, "sequence": 1, "description": "Create the purchase order",
            "tool": "create_purchase_order", "state": "completed", "result": "ok", "error": None})
        self.assertEqual([step["state"] for step in payload["steps"]], ["completed", "pending", "pending"])

    # ---------------------------------------------------------------- writing
    def test_replace_remaining_steps(self):
        plan = self.new_plan()
        first, second, third, fourth = plan.step_ids
        first.write({"state": "running"})
        first.write({"state": "completed", "result": "P00012"})
        second.write({"state": "running"})
        second.write({"state": "failed", "error": "no price"})
        new = plan._replace_remaining_steps([
            {"description": "Set the vendor price", "tool": "odoo_create"},
            {"description": "Receive the goods", "tool": "validate_picking"},
            {"description": "Sell and invoice", "tool": ""},
        ])
        self.assertFalse((third | fourth).exists(), "pending steps are deleted")
        self.assertEqual((second.state, second.error, second.result),
                         ("skipped", "no price", "replaced by the new plan"))
        self.assertEqual(first.state, "completed")
        self.assertEqual(new.mapped("sequence"), [3, 4, 5])
        self.assertEqual(new.mapped("state"), ["pending"] * 3)
        self.assertFalse(new[2].tool)
        self.assertEqual(plan.step_ids, first | second | new)
        self.assertEqual(plan.get_current_step(), new[0])
        self.assertEqual(plan.replan_count, 0, "the engine counts replanning")
        self.assertEqual(plan.get_progress_summary().splitlines()[:3], [
            "Plan: 2 of 5 steps done (40%)",
            "- [x] 1. Create the purchase order — P00012",
            "- [-] 2. Receive the goods (skipped)",
        ])

    def test_thread_current_plan_and_agent_settings(self):
        thread = self.new_thread(user=self.plain)
        self.assertFalse(thread._current_plan())
        plans = self.env["agentic.ai.plan"].create([{"thread_id": thread.id, "goal": g} for g in ("a", "b")])
        self.assertEqual(thread._current_plan(), plans[1])
        self.assertEqual(thread.plan_ids, plans)
        self.assertEqual(thread.plan_count, 2)
        self.assertEqual((self.agent.max_replanning, self.agent.max_plan_steps), (2, 10))
        with self.assertRaises(AccessError):
            thread.with_user(self.plain).write({"mode_used": "plan_and_execute"})
        thread.sudo().write({"mode_used": "plan_and_execute", "mode_reason": "complex"})
        self.assertEqual(thread.mode_used, "plan_and_execute")
        thread.unlink()
        self.assertFalse(plans.exists(), "plans go with their conversation")

    # ----------------------------------------------------------------- access
    def test_access(self):
        plan_a = self.new_plan(user=self.plain)
        plan_b = self.new_plan(user=self.other)
        Plan, Step = self.env["agentic.ai.plan"], self.env["agentic.ai.plan.step"]
        self.assertEqual(Plan.with_user(self.plain).search([("id", "in", (plan_a | plan_b).ids)]), plan_a)
        self.assertEqual(Step.with_user(self.plain).search([("plan_id", "in", (plan_a | plan_b).ids)]),
                         plan_a.step_ids)
        with self.assertRaises(AccessError):
            plan_b.with_user(self.plain).read(["goal"])
        with self.assertRaises(AccessError):
            plan_b.step_ids[0].with_user(self.plain).read(["description"])
        self.assertEqual(Plan.with_user(self.operator).search([("id", "in", (plan_a | plan_b).ids)]),
                         plan_a | plan_b)
        self.assertEqual(plan_b.with_user(self.operator).get_progress_summary().splitlines()[0],
                         "Plan: 0 of 4 steps done (0%)")
        for user in (self.plain, self.operator, self.ai_admin):
            with self.assertRaises(AccessError):
                plan_a.with_user(user).write({"goal": "changed"})
            with self.assertRaises(AccessError):
                plan_a.step_ids[0].with_user(user).write({"state": "skipped"})
            with self.assertRaises(AccessError):
                Plan.with_user(user).create({"thread_id": plan_a.thread_id.id})
            with self.assertRaises(AccessError):
                plan_a.with_user(user).unlink()
        self.assertEqual(plan_a.step_ids[0].state, "pending")
