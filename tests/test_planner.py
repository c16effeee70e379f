"""The planner's own tests (spec 000 §4.3, §4.4, §4.8; case BR-22): how
Hybrid routes a message by its complexity, and what the runtime does with
each kind of planner answer (a plan in prose or a fenced block, a cut
plan asked again once, prose falling back to ReAct, a plan longer than the
agent's maximum). The runs go through the real loop and the scripted LLM
over HTTP, like tests/test_plan_execute.py, whose set-up they share."""
import json

from odoo.tests import tagged

from .test_plan_execute import FOUR_STEPS, PlanCase, is_planner, is_synthesis, plan_reply, step, system_of


@tagged("post_install", "-at_install")
class TestPlanner(PlanCase):

    def test_hybrid_routes_by_complexity(self):
        self.agent.execution_mode = "hybrid"
        self.script({"content": "There are 3."})
        thread, result = self.turn("How many sale orders are there?")
        self.assertEqual(result.reply, "There are 3.")
        self.assertEqual((thread.mode_used, bool(thread.plan_ids)), ("react", False))
        self.assertIn("Hybrid: simple request", thread.mode_reason)
        self.script((plan_reply([{"description": "Look up the quotations of Gemini", "tool": ""},
                                 {"description": "Count the quotations found", "tool": ""}]), is_planner),
                    ({"content": "Found 2 quotations."}, step(1)),
                    ({"content": "2 in all."}, step(2)),
                    ({"content": "Gemini has 2 quotations."}, is_synthesis))
        thread, result = self.turn("先查找 Gemini 的报价单，然后统计数量")
        self.assertEqual(result.reply, "Gemini has 2 quotations.")
        self.assertEqual(thread.mode_used, "plan_and_execute")
        self.assertIn("先…然后", thread.mode_reason)
        self.assertEqual(self.plan_of(thread).step_ids.mapped("result"), ["Found 2 quotations.", "2 in all."])

    # ------------------------------------------------------------ BR-22
    def test_BR_22_planner_output_variants(self):
        """(a)–(d) give the same 4 steps in order, the empty tool left to refinement."""
        array = json.dumps(FOUR_STEPS)
        unclosed = array[: len(array) // 2]
        stray = [dict(FOUR_STEPS[0]), *FOUR_STEPS[1:]]
        stray[1] = {**stray[1], "tool": ""}
        variants = {
            "a": f"Here is the plan.\n```json\n{array}\n```\nI will start now.",
            "b": f"```json\n{unclosed}\n```\nSorry, again:\n```json\n{array}\n```",
            "c": json.dumps({"plan": {"steps": FOUR_STEPS}}),
            "d": f"{json.dumps(stray)}\nLet me know if that works",
        }
        for name, content in variants.items():
            with self.subTest(variant=name):
                self.script(({"content": content}, is_planner),
                            *(({"content": f"Step {n} noted."}, step(n)) for n in range(1, 5)),
                            ({"content": "Done."}, is_synthesis))
                thread, result = self.turn()
                plan = self.plan_of(thread)
                self.assertEqual(result.reply, "Done.")
                self.assertEqual(plan.step_ids.sorted("sequence").mapped("description"),
                                 [s["description"] for s in FOUR_STEPS])
                if name == "d":  # the one variant whose second step names no tool
                    self.assertFalse(plan.step_ids.sorted("sequence")[1].tool, "the empty tool is left to the step")
                self.assertEqual(len(self.planner_requests()), 1)

    def test_BR_22e_cut_plan_asked_again_once(self):
        cut = json.dumps(FOUR_STEPS)[:190]  # inside step 3
        self.script(({"content": cut, "finish_reason": "length"}, is_planner),
                    (plan_reply(FOUR_STEPS), is_planner),
                    *(({"content": f"Step {n} noted."}, step(n)) for n in range(1, 5)),
                    ({"content": "Done."}, is_synthesis))
        thread, result = self.turn()
        self.assertEqual(result.reply, "Done.")
        self.assertEqual(len(self.planner_requests()), 2, "exactly 2 planner calls")
        self.assertEqual(self.plan_of(thread).state, "completed")

    def test_BR_22f_cut_twice_fails_in_the_same_turn(self):
        cut = json.dumps(FOUR_STEPS)[:190]
        purchases = self.count("purchase.order", [])
        self.script(({"content": cut, "finish_reason": "length"}, is_planner),
                    ({"content": cut, "finish_reason": "length"}, is_planner))
        thread, result = self.turn()
        plan = self.plan_of(thread)
        self.assertEqual((result.state, plan.state), ("completed", "failed"))
        self.assertIn("cut off twice", result.reply)
        self.assertEqual(self.count("purchase.order", []), purchases, "nothing ran from the cut text")
        self.assertEqual(len(self.scenario.chat_requests()), 2)

    def test_BR_22g_prose_falls_back_to_react(self):
        self.script(({"content": "Sorry, I cannot plan this."}, is_planner),
                    ({"content": "Here is what I can tell you."}, lambda r: not system_of(r).startswith("You are "
                                                                                                   "the planner")))
        thread, result = self.turn()
        self.assertEqual(result.reply, "Here is what I can tell you.")
        self.assertEqual(len(self.planner_requests()), 1)
        self.assertEqual((thread.mode_used, self.plan_of(thread)), ("react", self.env["agentic.ai.plan"]))
        self.assertIn("the planner gave no plan", thread.mode_reason)
        row = self.env["agentic.ai.execution.log"].search([("thread_id", "=", thread.id),
                                                          ("action_type", "=", "plan_generated")])
        self.assertEqual((row.success, row.level), (False, "warning"), "no plan is expected, not an error")

    def test_BR_22_plan_longer_than_maximum_refused(self):
        self.agent.max_plan_steps = 3
        self.script((plan_reply(FOUR_STEPS), is_planner))
        thread, result = self.turn()
        self.assertEqual(self.plan_of(thread).state, "failed")
        self.assertIn("4 steps, more than this agent's limit of 3", result.reply)
        self.assertEqual(len(self.scenario.chat_requests()), 1)

