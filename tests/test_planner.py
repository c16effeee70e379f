"""The planner's own tests (spec 000 §4.3, §4.4, §4.8; case BR-22): how
Hybrid routes a message by its complexity, and what the runtime does with
each kind of planner answer (a plan in prose or a fenced block, a cut
plan asked again once, prose falling back to ReAct, a plan longer than the
agent's maximum). The runs go through the real loop and the scripted LLM
over HTTP, like tests/test_plan_execute.py, whose set-up they share."""
import json

from odoo.tests import new_test_user, tagged

from ..engine.memory_manager import MEMORY_HEADER, RAG_HEADER
from ..engine.planner import CONTEXT_HEADER
from .common import tool_call
from .test_plan_execute import FOUR_STEPS, PlanCase, is_planner, is_replanner, is_synthesis, plan_reply, step, system_of


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


    # ------------------------------------------- issue 27 point 2: context
    def test_plan_made_and_remade_with_the_agent_the_memories_and_the_knowledge(self):
        """Spec 000 §4.3 step 1: the planning and replanning calls get the
        turn's system prompt (the agent's instructions, the user's recalled
        memories, the knowledge excerpts found, as data). The scripted
        planner plans from what it is sent, as a model would: a stored
        preference names the vendor, a knowledge excerpt adds a step; the
        replanner after a failed step gets both again."""
        self.agent.write({"enable_memory": True,
                          "system_prompt": "You are the purchasing desk of {company_name}. Sign as Furniture Desk."})
        asked = "Buy 10 Large Cabinet from our usual vendor, then receive them"

        def plan_for(request):
            system = system_of(request)
            vendor = "Deco Addict" if "cabinets only from Deco Addict" in system else "the cheapest vendor"
            steps = [{"description": f"Buy 10 Large Cabinet from {vendor}", "tool": ""}]
            if "counted against the purchase order" in system:
                steps.append({"description": "Count the cabinets against the purchase order", "tool": ""})
            return plan_reply([*steps, {"description": "Receive the cabinets", "tool": ""}])

        def run(*first_step):
            self.script((plan_for, is_planner), *first_step)
            self.scenario.add({"content": "Done."}, lambda r: "Do step " in system_of(r), uses=None)
            self.scenario.add({"content": "Bought and received."}, is_synthesis)
            thread, result = self.turn(asked)
            self.assertEqual(result.state, "completed", result.reply)
            return self.plan_of(thread).step_ids.sorted("sequence"), self.planner_requests()

        steps, (request,) = run()
        self.assertEqual(steps.mapped("description"),
                         ["Buy 10 Large Cabinet from the cheapest vendor", "Receive the cabinets"])
        self.assertIn("Sign as Furniture Desk.", system_of(request), "the agent's own instructions")
        self.assertIn(f"purchasing desk of {self.env.company.name}", system_of(request), "filled in")
        self.assertNotIn(MEMORY_HEADER, system_of(request))

        self.env["agentic.ai.memory"].with_user(self.user).store(
            "cabinet vendor", "Buys cabinets only from Deco Addict")
        steps, (request,) = run()
        self.assertEqual(steps.mapped("description"),
                         ["Buy 10 Large Cabinet from Deco Addict", "Receive the cabinets"], "the preference")
        self.assertIn(f"{MEMORY_HEADER}\n- cabinet vendor: Buys cabinets only from Deco Addict",
                      system_of(request))

        operator = new_test_user(self.env, "plan_operator",
                                 groups="base.group_user,agentic_ai.group_agentic_ai_operator")
        source = self.env["agentic.ai.knowledge.source"].with_user(operator).create({
            "name": "Receiving Policy", "source_type": "text",
            "raw_text": "Every delivery of furniture is counted against the purchase order before it is validated."})
        source.sudo().agent_ids = self.agent
        source.action_index()
        self.run_knowledge_cron()
        self.assertEqual(source.sudo().state, "indexed", source.sudo().error)
        failing = tool_call("create_purchase_order", {"vendor": "No Such Vendor XYZ",
                                                      "lines": [{"product": "Large Cabinet", "quantity": 10}]})
        steps, (request,) = run((failing, step(1)), (plan_for, is_replanner))
        self.assertEqual(steps.mapped("description"), [
            "Buy 10 Large Cabinet from Deco Addict", "Buy 10 Large Cabinet from Deco Addict",
            "Count the cabinets against the purchase order", "Receive the cabinets"],
            "the excerpt's step in the replanned steps (the failed attempt kept, skipped)")
        self.assertEqual(steps.mapped("state"), ["skipped", "completed", "completed", "completed"])
        replanner = [r for r in self.scenario.chat_requests() if is_replanner(r)]
        self.assertEqual(len(replanner), 1)
        for call in (request, replanner[0]):
            system = system_of(call)
            self.assertIn(f"{RAG_HEADER}\n[1] Receiving Policy: Every delivery of furniture", system)
            self.assertIn("- cabinet vendor: Buys cabinets only from Deco Addict", system)
            self.assertIn("Sign as Furniture Desk.", system)
            self.assertTrue(system.startswith("You are the planner"), "the planner's role first")
            self.assertLess(system.index("You are the planner"), system.index(CONTEXT_HEADER))
        self.assertIn("ran into a problem", system_of(replanner[0]))
