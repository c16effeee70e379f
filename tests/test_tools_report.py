"""The summary report tool (spec 000 §5.2): offered with any app it reports
on, its totals equal to Odoo's own read_group on the reporting models, the
current company's figures in its currency, and flagged when record rules
hide part of the records."""
from odoo import fields
from odoo.tests import tagged

from ..tools.report_tool import REPORTS
from .common import ToolCase


@tagged("post_install", "-at_install")
class TestReportTool(ToolCase):

    def test_summary_report_is_offered_with_any_app_it_reports_on(self):
        tool = self.env.ref("agentic_ai.tool_generate_summary_report")
        self.assertEqual(set(tool._get_required_modules()), {spec.module for spec in REPORTS.values()})

    def test_summary_report_equals_read_group(self):
        checks = {
            "sales": ("sale.report", [("state", "=", "sale")], "price_subtotal"),
            "purchases": ("purchase.report", [("state", "in", ("purchase", "done"))], "untaxed_total"),
            "invoicing": ("account.invoice.report",
                          [("state", "=", "posted"), ("move_type", "in", ("out_invoice", "out_refund"))],
                          "price_subtotal"),
            "crm": ("crm.lead", [("type", "=", "opportunity")], "expected_revenue"),
        }
        for report_type, (model, domain, measure) in checks.items():
            data = self.run_as_accountant("generate_summary_report", {"report_type": report_type, "limit": 200})
            [(total,)] = self.env[model].with_user(self.accountant)._read_group(domain, [], [f"{measure}:sum"])
            first_measure = data["measures"][0] if report_type != "crm" else "expected_revenue"
            self.assertAlmostEqual(data["total"][first_measure]["amount"], total, places=2, msg=report_type)
            self.assertAlmostEqual(sum(row[first_measure]["amount"] for row in data["rows"]), total, places=2,
                                   msg=report_type)
        monthly = self.run_as_accountant("generate_summary_report", {"report_type": "sales", "group_by": "month",
                                                                      "date_from": "2000-01-01",
                                                                      "date_to": "2099-12-31"})
        groups = self.env["sale.report"].with_user(self.accountant)._read_group(
            [("state", "=", "sale")], ["date:month"], ["price_subtotal:sum"])
        self.assertEqual([row["untaxed_amount"]["amount"] for row in monthly["rows"]],
                         [self.company.currency_id.round(amount) for _month, amount in groups])
        stock = self.run_as_accountant("generate_summary_report", {"report_type": "inventory", "group_by": "warehouse"})
        [(on_hand,)] = self.env["stock.quant"].with_user(self.accountant)._read_group(
            [("location_id.usage", "=", "internal")], [], ["quantity:sum"])
        self.assertAlmostEqual(stock["total"]["on_hand"], on_hand)
        for params, message in [({"report_type": "weather"}, "is not one of"),
                                ({"report_type": "sales", "group_by": "colour"}, "cannot be grouped by 'colour'"),
                                ({"report_type": "inventory", "date_from": "2026-01-01"}, "takes no dates"),
                                ({"report_type": "sales", "date_from": "soon"}, "YYYY-MM-DD")]:
            self.assertIn(message, self.execute("generate_summary_report", params, self.accountant).error)

    def test_reversed_period_is_refused(self):
        result = self.execute("generate_summary_report", {"report_type": "sales", "date_from": "2030-01-01",
                                                          "date_to": "2020-01-01"}, self.accountant)
        self.assertFalse(result.success, "a reversed period answers an empty report instead of saying so")
        self.assertIn("date_from 2030-01-01 is after date_to 2020-01-01", result.error)

    def test_salesman_report_is_flagged_as_partial(self):
        """A salesman's record rules show only his own orders, and the sales
        report answered 0 as the company's total."""
        full = self.run_as_accountant("generate_summary_report", {"report_type": "sales"})
        self.assertGreater(full["total"]["orders"], 0)
        self.assertNotIn("message", full)
        mine = self.execute("generate_summary_report", {"report_type": "sales"}, self.salesman)
        self.assertTrue(mine.success, mine.error)
        self.assertNotEqual(mine.data["total"], full["total"], "the salesman sees only part of the orders")
        self.assertIn("Your access rights show only part of these records (for example only your own documents): "
                      "these figures are not the company's totals.", mine.data.get("message", ""),
                      f"salesman's total {mine.data['total']} vs company {full['total']}, unflagged")

    def test_crm_figures_do_not_add_up_currencies(self):
        """A user with companies A (USD) and B (EUR): B's 1,000,000 EUR
        opportunity was added as 1,000,000 USD to the CRM report and the
        pipeline summary. Figures are the current company's."""
        self.setup_company_b()
        today = fields.Date.today()
        self.env["res.currency.rate"].create({"currency_id": self.eur.id, "rate": 2.0, "name": today,
                                              "company_id": self.company_a.id})
        opportunities = self.env["crm.lead"].search([("type", "=", "opportunity")])
        base = round(sum(opportunities.mapped("expected_revenue")), 2)
        lead_b = self.env["crm.lead"].create({"name": "EUR deal of B", "type": "opportunity",
                                              "expected_revenue": 1000000, "company_id": self.company_b.id})
        self.assertEqual(lead_b.company_currency, self.eur)
        currency = self.company_a.currency_id.name
        report = self.execute("generate_summary_report", {"report_type": "crm"}, self.user_ab)
        self.assertTrue(report.success, report.error)
        self.assertEqual(report.data["total"]["expected_revenue"], {"amount": base, "currency": currency},
                         "1,000,000 EUR of company B added as USD")
        pipeline = self.execute("get_sales_pipeline_summary", {}, self.user_ab)
        self.assertTrue(pipeline.success, pipeline.error)
        self.assertEqual(pipeline.data["total_expected_revenue"], {"amount": base, "currency": currency},
                         "1,000,000 EUR of company B added as USD")
