"""Record rules (spec 000 §7.1, issue 9 point 8): who sees which threads,
messages, execution logs and plans across users and companies, what a run's tools
read for a user of another company, and that a salesperson's agent reads no
HR data the salesperson cannot read."""
import json
import logging

from odoo import Command, fields
from odoo.exceptions import AccessError
from odoo.tests import new_test_user, tagged

from .common import SALESMAN_GROUPS, AgenticCase, ToolCase, observation_records, tool_call

_logger = logging.getLogger(__name__)

MODELS = {"threads": "agentic.ai.thread", "messages": "agentic.ai.thread.message",
          "logs": "agentic.ai.execution.log", "plans": "agentic.ai.plan", "steps": "agentic.ai.plan.step"}


@tagged("post_install", "-at_install")
class TestIsolationMatrix(AgenticCase):
    """Users A and B in company 1, C in company 2; an operator of company 1,
    an operator of both companies and an AI administrator of company 1. A, B
    and C each hold one conversation (its messages and its log rows)."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.company_1 = cls.env.company
        cls.company_2 = cls.env["res.company"].create({"name": "Isolation Co 2"})
        both = Command.set((cls.company_1 | cls.company_2).ids)

        def user(login, company, groups="base.group_user", companies=None):
            return new_test_user(cls.env, login, groups=groups, company_id=company.id,
                                 company_ids=companies or [Command.set(company.ids)])

        operator = "base.group_user,agentic_ai.group_agentic_ai_operator"
        cls.viewers = {
            "A (co 1)": user("iso_a", cls.company_1),
            "B (co 1)": user("iso_b", cls.company_1),
            "C (co 2)": user("iso_c", cls.company_2),
            "operator co 1": user("iso_op1", cls.company_1, operator),
            "operator co 1+2": user("iso_op12", cls.company_1, operator, [both]),
            "AI admin co 1": user("iso_admin", cls.company_1, "base.group_user,agentic_ai.group_agentic_ai_admin"),
        }
        cls.agent.company_id = False  # one agent serves both companies
        cls.partner_1 = cls.env["res.partner"].create({"name": "Iso Partner One", "company_id": cls.company_1.id})
        cls.partner_2 = cls.env["res.partner"].create({"name": "Iso Partner Two", "company_id": cls.company_2.id})

    def conversations(self):
        """A turn each for A, B and C in which the agent searches partners:
        ``{owner: (thread, observed partner names)}``."""
        search = tool_call("odoo_search_read", {"model": "res.partner", "fields": ["name", "company_id"],
                                                "domain": [["name", "like", "Iso Partner"]]})
        held = {}
        for owner in ("A (co 1)", "B (co 1)", "C (co 2)"):
            self.script(search, {"content": "done"})
            thread, result = self.run_agent("partners?", user=self.viewers[owner])
            self.assertEqual(result.state, "completed", result.reply)
            names = [row["name"] for row in observation_records(self.scenario.chat_requests()[-1])]
            held[owner] = (thread, names)
        return held

    def test_isolation_matrix(self):
        held = self.conversations()
        records = {}
        for owner, (thread, _names) in held.items():
            plan = self.env["agentic.ai.plan"].create({"thread_id": thread.id, "goal": "partners?"})
            steps = plan._add_steps([{"description": "Search the partners", "tool": "odoo_search_read"}])
            records[owner] = {"threads": thread, "messages": thread.message_ids, "logs": thread.execution_log_ids,
                              "plans": plan, "steps": steps}
        self.assertTrue(all(r["messages"] and r["logs"] for r in records.values()))
        co_1, everyone = {"A (co 1)", "B (co 1)"}, {"A (co 1)", "B (co 1)", "C (co 2)"}
        expected = {
            "A (co 1)": {"threads": {"A (co 1)"}, "messages": {"A (co 1)"}, "logs": {"A (co 1)"}},
            "B (co 1)": {"threads": {"B (co 1)"}, "messages": {"B (co 1)"}, "logs": {"B (co 1)"}},
            "C (co 2)": {"threads": {"C (co 2)"}, "messages": {"C (co 2)"}, "logs": {"C (co 2)"}},
            "operator co 1": {"threads": co_1, "messages": co_1, "logs": set()},
            "operator co 1+2": {"threads": everyone, "messages": everyone, "logs": set()},
            "AI admin co 1": {"threads": co_1, "messages": co_1, "logs": co_1},
        }
        for cells in expected.values():  # plans and their steps are seen as their conversations are
            cells.update(plans=cells["threads"], steps=cells["threads"])
        table, passed, total = [], 0, 0
        for viewer, user in self.viewers.items():
            cells = []
            for kind, model in MODELS.items():
                every = self.env[model].browse([i for r in records.values() for i in r[kind].ids])
                visible = self.env[model].with_user(user).search([("id", "in", every.ids)])
                seen = {owner for owner, r in records.items() if r[kind] & visible}
                complete = all(r[kind] <= visible for owner, r in records.items() if owner in seen)
                ok = seen == expected[viewer][kind] and complete
                passed, total = passed + ok, total + 1
                cells.append(f"{'/'.join(sorted(o[0] for o in seen)) or '-':<6}{'ok' if ok else 'FAIL'}")
                with self.subTest(viewer=viewer, kind=kind):
                    self.assertEqual(seen, expected[viewer][kind], f"{viewer} sees these {kind}")
                    self.assertTrue(complete, f"{viewer} sees part of a conversation's {kind}")
            table.append(f"{viewer:<16} | " + " | ".join(cells))
        _logger.info("isolation matrix (%s/%s cells pass): viewer | threads | messages | logs | plans | steps\n%s",
                     passed, total, "\n".join(table))
        self.assertEqual(passed, total)

    def test_the_web_clients_company_choice_narrows_what_an_operator_sees(self):
        held = self.conversations()
        operator = self.env["agentic.ai.thread"].with_user(self.viewers["operator co 1+2"])
        ids = [thread.id for thread, _names in held.values()]
        self.assertEqual(len(operator.search([("id", "in", ids)])), 3)
        only_1 = operator.with_context(allowed_company_ids=[self.company_1.id]).search([("id", "in", ids)])
        self.assertEqual(only_1, held["A (co 1)"][0] | held["B (co 1)"][0])
        with self.assertRaises(AccessError):
            held["C (co 2)"][0].with_user(self.viewers["operator co 1"]).read(["name"])

    def test_tools_read_the_companys_records_only(self):
        held = self.conversations()
        self.assertEqual(held["A (co 1)"][1], ["Iso Partner One"])
        self.assertEqual(held["B (co 1)"][1], ["Iso Partner One"])
        self.assertEqual(held["C (co 2)"][1], ["Iso Partner Two"])
        self.assertEqual(held["C (co 2)"][0].company_id, self.company_2)


@tagged("post_install", "-at_install")
class TestAgentReadsNoMoreThanItsUser(ToolCase):
    """A salesperson's agent runs as the salesperson: HR data the
    salesperson cannot read stays out of its reach."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.salesman = new_test_user(cls.env, "iso_salesman", groups=SALESMAN_GROUPS)
        cls.colleague = cls.env["hr.employee"].create({
            "name": "Private Colleague", "company_id": cls.env.company.id,
            "private_email": "colleague@home.example", "private_phone": "+32 555 0199"})
        leave_type = cls.env["hr.leave.type"].create({"name": "Iso Leave", "requires_allocation": False})
        cls.leave = cls.env["hr.leave"].create({
            "name": "Private reason", "employee_id": cls.colleague.id, "holiday_status_id": leave_type.id,
            "request_date_from": fields.Date.to_date("2026-03-10"),
            "request_date_to": fields.Date.to_date("2026-03-10")})

    def test_private_employee_fields_stay_hidden(self):
        params = {"model": "hr.employee", "domain": [["id", "=", self.colleague.id]],
                  "fields": ["name", "private_email", "private_phone"]}
        result = self.execute("odoo_search_read", params, self.salesman)
        text = json.dumps(result.data, default=str) + str(result.error)
        self.assertNotIn("colleague@home.example", text)
        self.assertNotIn("555 0199", text)
        officer = self.run_as_accountant("odoo_search_read", params)
        self.assertNotIn("colleague@home.example", json.dumps(officer, default=str),
                         "marked sensitive: masked for HR officers too unless the agent may see them (issue 23)")
        self.agent.sudo().allow_sensitive_data = True
        officer = self.run_as_accountant("odoo_search_read", params)
        self.assertIn("colleague@home.example", json.dumps(officer, default=str), "HR officers do read them")

    def test_others_time_off_stays_hidden(self):
        params = {"model": "hr.leave", "domain": [["id", "=", self.leave.id]], "fields": ["name", "employee_id"]}
        result = self.execute("odoo_search_read", params, self.salesman)
        self.assertNotIn("Private reason", json.dumps(result.data, default=str) + str(result.error))
        self.assertFalse(result.success and result.data.get("records"), result.data)
        officer = self.run_as_accountant("odoo_search_read", params)
        self.assertEqual(len(officer["records"]), 1, "the time off officer does see it")
