"""HR tools (spec 000 §5.2): employee search, time off requests within and
beyond the allocation, of the employee's company's types and of working
days only, and attendance summaries, on Odoo demo data."""
from datetime import datetime, timedelta

from odoo import fields
from odoo.tests import new_test_user, tagged

from .common import ToolCase, allocated_employee


@tagged("post_install", "-at_install")
class TestHRTools(ToolCase):

    def test_hr_tools_search_leave_within_and_beyond_allocation_attendance(self):
        officer = new_test_user(self.env, "agent_hr", groups="base.group_user,hr.group_hr_user,"
                                "hr_holidays.group_hr_holidays_user,hr_attendance.group_hr_attendance_manager")
        found = self.execute("search_employees", {"query": "Abigail"}, user=officer)
        self.assertTrue(found.success, found.error)
        expected = self.env["hr.employee"].search(["|", "|", ("name", "ilike", "Abigail"),
                                                   ("work_email", "ilike", "Abigail"),
                                                   ("job_title", "ilike", "Abigail")], limit=20)
        self.assertEqual([e["name"] for e in found.data["employees"]], expected.mapped("name"))
        employee, _leave_type = allocated_employee(self.env, "Agent Tester", "Agent Leave", days=3)
        today = fields.Date.today()
        monday = today + timedelta(days=7 - today.weekday() + 7)
        within = self.execute("create_leave_request", {"employee": employee.id, "leave_type": "Agent Leave",
                                                       "date_from": str(monday),
                                                       "date_to": str(monday + timedelta(days=1))}, user=officer)
        self.assertTrue(within.success, within.error)
        self.assertEqual(self.env["hr.leave"].browse(within.data["id"]).number_of_days, 2)
        beyond = self.execute("create_leave_request", {"employee": employee.id, "leave_type": "Agent Leave",
                                                       "date_from": str(monday + timedelta(days=7)),
                                                       "date_to": str(monday + timedelta(days=11))}, user=officer)
        self.assertFalse(beyond.success)
        self.assertIn("ValidationError", beyond.error, "Odoo's own message")
        start = datetime.combine(monday - timedelta(days=14), datetime.min.time()) + timedelta(hours=8)
        self.env["hr.attendance"].create([{"employee_id": employee.id, "check_in": start + timedelta(days=d),
                                           "check_out": start + timedelta(days=d, hours=7.5)} for d in range(3)])
        summary = self.execute("get_attendance_summary", {"employee": employee.id, "date_from": str(start.date()),
                                                          "date_to": str(start.date() + timedelta(days=6))},
                               user=officer)
        self.assertTrue(summary.success, summary.error)
        attendances = self.env["hr.attendance"].search([("employee_id", "=", employee.id)])
        self.assertAlmostEqual(summary.data["total_worked_hours"], round(sum(attendances.mapped("worked_hours")), 2))
        bad_month = self.execute("get_attendance_summary", {"date_from": "2026-13-01", "date_to": "2026-01-02"},
                                 user=officer)
        self.assertFalse(bad_month.success)
        self.assertIn("date_from 2026-13-01 is not a day of the calendar", bad_month.error)

    def test_time_off_of_zero_working_days_is_refused(self):
        employee = self.env["hr.employee"].create({"name": "Weekend Worker", "company_id": self.company.id})
        before = self.count("hr.leave")
        result = self.execute("create_leave_request", {  # Saturday to Sunday
            "employee": employee.id, "leave_type": self.env.ref("hr_holidays.leave_type_unpaid").id,
            "date_from": "2026-03-14", "date_to": "2026-03-15"}, self.accountant)
        self.assertFalse(result.success,
                         f"a time off request of {result.data and result.data['days']} days was created")
        self.assertIn("2026-03-14 to 2026-03-15 has no working time for Weekend Worker (0 days); nothing was requested",
                      result.error)
        self.assertEqual(self.count("hr.leave"), before)

    def test_time_off_type_of_another_company_is_refused(self):
        self.setup_company_b()
        employee_b = self.env["hr.employee"].create({"name": "Employee Of B", "company_id": self.company_b.id})
        type_a = self.env["hr.leave.type"].create({"name": "A only", "company_id": self.company_a.id,
                                                   "requires_allocation": False})
        before = self.count("hr.leave")
        result = self.execute("create_leave_request", {"employee": employee_b.id, "leave_type": type_a.id,
                                                       "date_from": "2026-03-10", "date_to": "2026-03-10"},
                              self.user_ab)
        self.assertFalse(result.success, "company A's time off type was used for company B's employee")
        # Only the time off types of the employee's company are taken, and the refusal says why.
        self.assertIn(f"A only (id {type_a.id}) is a time off type of another company than Employee Of B's "
                      f"({self.company_b.name})", result.error)
        self.assertEqual(self.count("hr.leave"), before)
