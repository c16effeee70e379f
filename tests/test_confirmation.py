"""Confirmation (spec 000 §7.3, seed 001; issue 9 points 5, 6 and 9): what
the user is shown (records by name, values before → after, risk, why),
the wizard, approve / reject / cancel end to end for every policy and kind
of call (the confirmation matrix), rejected calls not asked again in the
turn, the values before every change kept in the log, and calls made as
the agent's Run As user marked there."""
import json

from odoo import Command
from odoo.exceptions import AccessError, UserError
from odoo.tests import new_test_user, tagged

from .common import ACCOUNTANT_GROUPS, ToolCase, tool_call

# Which calls each confirmation policy asks about (odoo_write is medium
# risk, odoo_unlink high, odoo_method_call variable; reads never ask).
ASKED = {"never": set(), "destructive": {"unlink", "method"}, "always": {"write", "unlink", "method"}}


@tagged("post_install", "-at_install")
class TestConfirmation(ToolCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.user = new_test_user(cls.env, "confirm_user", groups=ACCOUNTANT_GROUPS + ",base.group_partner_manager")
        cls.product = cls.env.ref("product.product_product_8")
        # The matrix makes ~40 LLM requests as one user within a minute: no rate limit here (test_rate_limits).
        cls.env["ir.config_parameter"].sudo().set_param("agentic_ai.max_requests_per_minute", "0")

    def turn(self, call, reply="done", message="go", thread=None):
        """Script ``call`` then ``reply`` and run one turn as ``self.user``
        (on ``thread`` when given); returns ``(thread, result)``."""
        self.script(call, {"content": reply})
        agent = self.agent.with_user(self.user)
        thread = thread or agent.start_thread(name="confirm")
        return thread, agent.run(thread.id, message)

    def quotation(self):
        return self.env["sale.order"].with_user(self.user).create({"partner_id": self.customer.id, "order_line": [
            Command.create({"product_id": self.product.id, "product_uom_qty": 1})]})

    def case(self, operation):
        """``(call, effect)``: a tool call doing ``operation`` on a new record
        and a function telling whether its effect happened."""
        partner = self.env["res.partner"].create({"name": f"Matrix {operation}"})
        if operation == "read":
            return (tool_call("odoo_search_read", {"model": "res.partner", "domain": [["id", "=", partner.id]]}),
                    lambda: True)
        if operation == "write":
            return (tool_call("odoo_write", {"model": "res.partner", "record_ids": [partner.id],
                                             "values": {"name": "Matrix renamed"}}),
                    lambda: partner.name == "Matrix renamed")
        if operation == "unlink":
            return (tool_call("odoo_unlink", {"model": "res.partner", "record_ids": [partner.id]}),
                    lambda: not partner.exists())
        order = self.quotation()
        return (tool_call("odoo_method_call", {"model": "sale.order", "record_ids": [order.id],
                                               "method": "action_confirm"}),
                lambda: order.state == "sale")

    # ------------------------------------------------------------- matrix
    def test_confirmation_matrix(self):
        """never / destructive / always × read / write / unlink / method call;
        every asked cell answered with approve, reject and cancel."""
        passed = 0
        for policy, asked in ASKED.items():
            self.agent.require_confirmation = policy
            for operation in ("read", "write", "unlink", "method"):
                answers = ("approve", "reject", "cancel") if operation in asked else (None,)
                for answer in answers:
                    with self.subTest(policy=policy, operation=operation, answer=answer):
                        call, effect = self.case(operation)
                        thread, result = self.turn(call)
                        if answer is None:  # not asked under this policy: every other case has its three answers
                            self.assertEqual(result.state, "completed", result.reply)
                            self.assertTrue(effect(), "ran without asking")
                            passed += 1
                            continue
                        self.assertEqual(result.state, "waiting_confirmation")
                        self.assertFalse(effect(), "nothing runs before the answer")
                        requests = len(self.scenario.chat_requests())
                        as_user = thread.with_user(self.user)
                        if answer == "approve":
                            after = as_user.handle_confirmation(True)
                            self.assertTrue(effect(), "the approved call ran")
                            self.assertEqual(after.reply, "done")
                        elif answer == "reject":
                            after = as_user.handle_confirmation(False, "not now")
                            self.assertFalse(effect())
                            last = self.scenario.chat_requests()[-1]["messages"][-1]["content"]
                            self.assertIn("[CONFIRMATION_REJECTED]", last)
                            self.assertIn("not now", last)
                        else:
                            after = as_user.cancel_confirmation()
                            self.assertFalse(effect())
                            self.assertEqual(len(self.scenario.chat_requests()), requests, "no LLM call")
                        self.assertEqual((after.state, thread.state), ("completed", "completed"))
                        self.assertFalse(thread.pending_confirmation)
                        passed += 1
        self.assertEqual(passed, 22)  # 7 cells that run at once + 5 asked cells, 3 answers each

    # ----------------------------------------------------------- contents
    def test_request_shows_records_by_name_and_values_before_and_after(self):
        self.agent.require_confirmation = "always"
        partner = self.env["res.partner"].create({"name": "Old Name", "type": "contact"})
        parent = self.env["res.partner"].create({"name": "Parent Company", "is_company": True})
        _thread, result = self.turn(tool_call("odoo_write", {
            "model": "res.partner", "record_ids": [partner.id],
            "values": {"name": "New Name", "parent_id": parent.id}}))
        request = result.confirmation
        self.assertEqual((request.model, request.operation, request.source, request.risk_level),
                         ("res.partner", "write", "policy", "medium"))
        self.assertEqual(request.records, ({"id": partner.id, "name": "Old Name"},))
        changes = {change["field"]: (change["before"], change["after"]) for change in request.changes}
        self.assertEqual(changes["name"], ("Old Name", "New Name"))
        self.assertEqual(changes["parent_id"], ("(empty)", f"Parent Company (#{parent.id})"))
        self.assertIn("Old Name → New Name", result.reply)
        self.assertIn("Risk: medium", result.reply)
        self.assertIn("asks before every change", result.reply)

    def test_deletion_and_method_requests_name_their_records(self):
        self.agent.require_confirmation = "destructive"
        order = self.quotation()
        _thread, result = self.turn(tool_call("odoo_method_call", {"model": "sale.order", "record_ids": [order.id],
                                                                   "method": "action_confirm"}))
        self.assertEqual(result.confirmation.operation, "method:action_confirm")
        self.assertEqual(result.confirmation.records, ({"id": order.id, "name": order.name},))
        self.assertIn(f"run action_confirm on Sales Order (sale.order).\n1 record: {order.name}", result.reply)

    def test_records_the_user_cannot_read_are_named_by_id_only(self):
        self.agent.require_confirmation = "always"
        salesman = self.salesman  # own documents only
        order = self.quotation()
        # A method call never runs before approval: it is asked about, its records named by id only.
        self.script(tool_call("odoo_method_call", {"model": "sale.order", "record_ids": [order.id],
                                                   "method": "action_cancel"}), {"content": "x"})
        thread = self.agent.with_user(salesman).start_thread(name="x")
        result = self.agent.with_user(salesman).run(thread.id, "cancel it")
        self.assertEqual(result.confirmation.records, ({"id": order.id, "name": "(not readable for you)"},))
        # A deletion runs up to its first change first: it cannot, so it is not asked about (issue 23 point 5).
        self.script(tool_call("odoo_unlink", {"model": "sale.order", "record_ids": [order.id]}), {"content": "x"})
        thread = self.agent.with_user(salesman).start_thread(name="y")
        result = self.agent.with_user(salesman).run(thread.id, "delete it")
        self.assertEqual(result.state, "completed")
        self.assertIn("do not exist or you may not read them", self.observations(thread)[0])
        self.assertTrue(order.exists())

    def test_wizard_shows_the_request_and_approves_it_once(self):
        self.agent.require_confirmation = "destructive"
        partner = self.env["res.partner"].create({"name": "Wizard Target"})
        thread, _result = self.turn(tool_call("odoo_unlink", {"model": "res.partner", "record_ids": [partner.id]}))
        action = thread.with_user(self.user).action_review_confirmation()
        wizard = self.env[action["res_model"]].with_user(self.user).with_context(action["context"]).create({})
        self.assertEqual((wizard.tool_name, wizard.model_name, wizard.risk_level),
                         ("odoo_unlink", "res.partner", "high"))
        self.assertIn("Wizard Target", wizard.summary)
        self.assertIn('"record_ids"', wizard.parameters)
        second = wizard.copy()
        wizard.action_approve()
        self.assertFalse(partner.exists())
        with self.assertRaises(UserError):
            second.action_approve()  # the same request cannot run twice
        self.assertEqual(len(self.env["agentic.ai.execution.log"].search([
            ("thread_id", "=", thread.id), ("tool_name", "=", "odoo_unlink"), ("action_type", "=", "tool_execution")])),
            1)

    def test_wizard_rejects_with_reason_and_refuses_a_stale_request(self):
        self.agent.require_confirmation = "destructive"
        partner = self.env["res.partner"].create({"name": "Stale Target"})
        thread, _result = self.turn(tool_call("odoo_unlink", {"model": "res.partner", "record_ids": [partner.id]}))
        Wizard = self.env["agentic.ai.confirm.wizard"].with_user(self.user)
        wizard = Wizard.create({"thread_id": thread.id, "rejection_reason": "keep it, it is a supplier"})
        stale = Wizard.create({"thread_id": thread.id})
        wizard.action_reject()
        self.assertIn("keep it, it is a supplier", self.scenario.chat_requests()[-1]["messages"][-1]["content"])
        with self.assertRaises(UserError):
            stale.action_approve()
        self.assertTrue(partner.exists())

    def test_someone_else_cannot_answer_through_the_wizard(self):
        self.agent.require_confirmation = "destructive"
        partner = self.env["res.partner"].create({"name": "Not Yours"})
        thread, _result = self.turn(tool_call("odoo_unlink", {"model": "res.partner", "record_ids": [partner.id]}))
        other = new_test_user(self.env, "confirm_other", groups="base.group_user,agentic_ai.group_agentic_ai_operator")
        with self.assertRaises(AccessError):  # nor see what it would do
            self.env["agentic.ai.confirm.wizard"].with_user(other).create({"thread_id": thread.id})
        with self.assertRaises(AccessError):
            thread.with_user(other).handle_confirmation(True)
        self.assertTrue(partner.exists())

    # ------------------------------------------------------- rejected calls
    def test_a_rejected_call_is_not_asked_again_in_the_turn(self):
        self.agent.require_confirmation = "destructive"
        partner = self.env["res.partner"].create({"name": "Asked Once"})
        unlink = {"model": "res.partner", "record_ids": [partner.id]}
        thread, _result = self.turn(tool_call("odoo_unlink", unlink, "call_first"))
        # The model insists with the same call (another id, keys in another order).
        self.script(tool_call("odoo_unlink", {"record_ids": [partner.id], "model": "res.partner"}, "call_again"),
                    {"content": "Understood."})
        result = thread.with_user(self.user).handle_confirmation(False, "no")
        self.assertEqual(result.state, "completed")
        self.assertTrue(partner.exists())
        self.assertEqual(thread.message_ids.mapped("role").count("confirmation_request"), 1, "asked once")
        self.assertIn("already rejected this exact call", self.observations(thread)[-1])
        # A new request from the user may ask again.
        _thread, again = self.turn(tool_call("odoo_unlink", unlink), message="now delete it", thread=thread)
        self.assertEqual(again.state, "waiting_confirmation")

    def test_rejection_is_remembered_across_a_second_confirmation(self):
        self.agent.require_confirmation = "destructive"
        first, second = (self.env["res.partner"].create({"name": n}) for n in ("First", "Second"))
        thread, _ = self.turn(tool_call("odoo_unlink", {"model": "res.partner", "record_ids": [first.id]}))
        self.script(tool_call("odoo_unlink", {"model": "res.partner", "record_ids": [second.id]}))
        self.assertEqual(thread.with_user(self.user).handle_confirmation(False).state, "waiting_confirmation")
        self.script(tool_call("odoo_unlink", {"model": "res.partner", "record_ids": [first.id]}), {"content": "ok"})
        result = thread.with_user(self.user).handle_confirmation(True)
        self.assertEqual(result.state, "completed")
        self.assertFalse(second.exists())
        self.assertTrue(first.exists(), "the first, rejected call was not run nor asked again")

    def test_answers_travel_as_json_over_rpc(self):
        """``handle_confirmation`` and ``cancel_confirmation`` are called over
        call_kw: their result must be JSON as it is, not a repr."""
        self.agent.require_confirmation = "destructive"
        partner = self.env["res.partner"].create({"name": "Json"})
        thread, waiting = self.turn(tool_call("odoo_unlink", {"model": "res.partner", "record_ids": [partner.id]}))
        self.assertEqual(json.loads(json.dumps(waiting))["confirmation"]["records"],
                         [{"id": partner.id, "name": "Json"}])
        answered = json.loads(json.dumps(thread.with_user(self.user).handle_confirmation(True)))
        self.assertEqual((answered["state"], answered["reply"], answered["tool_calls"]), ("completed", "done", 1))

    def test_cancel_frees_the_conversation(self):
        self.agent.require_confirmation = "destructive"
        partner = self.env["res.partner"].create({"name": "Cancelled"})
        thread, _ = self.turn(tool_call("odoo_unlink", {"model": "res.partner", "record_ids": [partner.id]}))
        result = thread.with_user(self.user).cancel_confirmation()
        self.assertIn("Cancelled", result.reply)
        self.assertEqual(thread.message_ids.filtered(lambda m: m.role == "tool_call").tool_status, "cancelled")
        with self.assertRaises(UserError):
            thread.with_user(self.user).cancel_confirmation()  # nothing waits any more
        _thread, again = self.turn({"content": "hello"}, message="hello again", thread=thread)
        self.assertEqual(again.state, "completed")
        self.assertTrue(partner.exists())

    # --------------------------------------------------- before_snapshot
    def log_of(self, thread, tool):
        return self.env["agentic.ai.execution.log"].search([
            ("thread_id", "=", thread.id), ("tool_name", "=", tool), ("action_type", "=", "tool_execution")])

    def test_every_changed_record_and_field_is_kept_before_the_change(self):
        partner = self.env["res.partner"].create({"name": "Snap", "phone": "111"})
        thread, _ = self.turn(tool_call("odoo_write", {"model": "res.partner", "record_ids": [partner.id],
                                                       "values": {"phone": "222"}}))
        snapshot = self.log_of(thread, "odoo_write").before_snapshot
        self.assertIn(f'{{"model": "res.partner", "id": {partner.id}, "values": {{"phone": "111"}}}}', snapshot)
        order = self.quotation()
        thread, _ = self.turn(tool_call("odoo_method_call", {"model": "sale.order", "record_ids": [order.id],
                                                             "method": "action_confirm"}))
        snapshot = self.log_of(thread, "odoo_method_call").before_snapshot
        self.assertIn(f'{{"model": "sale.order", "id": {order.id}, "values": {{', snapshot)
        self.assertIn('"state": "draft"', snapshot, "the business method's own writes are kept too")
        thread, _ = self.turn(tool_call("odoo_unlink", {"model": "res.partner", "record_ids": [partner.id]}))
        snapshot = self.log_of(thread, "odoo_unlink").before_snapshot
        self.assertIn('"name": "Snap"', snapshot)
        self.assertIn('"phone": "222"', snapshot)

    def test_before_snapshot_is_for_ai_administrators_only(self):
        partner = self.env["res.partner"].create({"name": "Private Before"})
        thread, _ = self.turn(tool_call("odoo_write", {"model": "res.partner", "record_ids": [partner.id],
                                                       "values": {"name": "Private After"}}))
        log = self.log_of(thread, "odoo_write").with_user(self.user)
        self.assertEqual(log.tool_name, "odoo_write", "the user reads their own log")
        with self.assertRaises(AccessError):
            log.read(["before_snapshot"])

    # ------------------------------------------------------------ Run As
    def test_calls_made_as_the_run_as_user_are_marked(self):
        partner = self.env["res.partner"].create({"name": "Run As Target"})
        call = tool_call("odoo_search_read", {"model": "res.partner", "domain": [["id", "=", partner.id]]})
        thread, _ = self.turn(call)
        self.assertFalse(self.log_of(thread, "odoo_search_read").run_as_user_id)
        admin = self.env.ref("base.user_admin")
        self.agent.sudo_user_id = admin
        thread, _ = self.turn(call)
        self.assertEqual(self.log_of(thread, "odoo_search_read").run_as_user_id, admin)
        self.assertEqual(self.log_of(thread, "odoo_search_read").user_id, self.user)
