"""HR tools (spec 000 §5.2, HR). Odoo apps: ``hr``, ``hr_holidays``, ``hr_attendance``."""
from __future__ import annotations

from odoo import fields

from .base_tool import ToolError, agent_tool, record_ref
from .lookup import escape_like, find_record
from .parsing import clamp_limit, parse_period, period_domain, period_schema


@agent_tool(
    label="Search employees",
    category="hr",
    risk_level="low",
    apps=("hr",),
    models=("hr.employee", "hr.department"),
    sequence=40,
    description=("Find employees by part of their name, work email or job title, optionally in one department (id "
                 "or name). Returns name, job title, department, manager, work email and phone, and the total "
                 "number of matches."),
    parameters={
        "query": {"type": "string", "description": "Text to look for in name, work email or job title."},
        "department": record_ref("Department id or name.", "hr.department"),
        "limit": {"type": "integer", "minimum": 1, "maximum": 200,
                  "description": "Maximum employees to return (default 20)."},
    },
)
def search_employees(env, query=None, department=None, limit=20):
    """Employees whose name, email or job title contains ``query``,
    optionally in one department (id or name): name, job title, department,
    manager, work email and phone. At most ``limit`` (default 20)."""
    domain = []
    if query:
        text = escape_like(query)  # the query is text, not a LIKE pattern
        domain += ["|", "|", ("name", "ilike", text), ("work_email", "ilike", text), ("job_title", "ilike", text)]
    if department:
        unit = find_record(env, "hr.department", department, label="department")
        domain.append(("department_id", "child_of", unit.id))
    Employee = env["hr.employee"]
    employees = Employee.search(domain, limit=clamp_limit(limit))
    return {"total": Employee.search_count(domain), "employees": [{
        "id": e.id, "name": e.name, "job_title": e.job_title or "", "department": e.department_id.name or "",
        "manager": e.parent_id.name or "", "work_email": e.work_email or "", "work_phone": e.work_phone or ""}
        for e in employees]}


@agent_tool(
    label="Request time off",
    category="hr",
    risk_level="medium",
    apps=("hr_holidays",),
    models=("hr.leave", "hr.employee", "hr.leave.type"),
    sequence=41,
    description=("Create a time off request for an employee (id or name) of a time off type (id or name, e.g. "
                 "\"Paid Time Off\") between two dates (YYYY-MM-DD, inclusive). Odoo checks the employee's "
                 "allocation and overlapping requests and refuses with its own message. Returns the request, its "
                 "state (To Approve...) and duration in days."),
    parameters={
        "employee": record_ref("Employee id or name.", "hr.employee"),
        "leave_type": record_ref("Time off type id or name.", "hr.leave.type"),
        **period_schema(),
        "description": {"type": "string", "description": "Reason shown on the request."},
    },
)
def create_leave_request(env, employee, leave_type, date_from, date_to, description=None):
    """Ask for time off for an employee (id or name) of a time off type (id
    or name, e.g. Paid Time Off) from ``date_from`` to ``date_to``
    (YYYY-MM-DD, inclusive). Odoo checks the allocation and overlaps and
    refuses with its own message. Returns the request with its state and
    duration in days."""
    worker = find_record(env, "hr.employee", employee, label="employee")
    kind = find_record(env, "hr.leave.type", leave_type, label="time off type",
                       domain=[("company_id", "in", [worker.company_id.id, False])],
                       outside=f"is a time off type of another company than {worker.name}'s ({worker.company_id.name})")
    start, end = parse_period(date_from, date_to, required=True)
    leave = env["hr.leave"].create({
        "employee_id": worker.id, "holiday_status_id": kind.id, "request_date_from": start, "request_date_to": end,
        "name": description or False,
    })
    if not leave.number_of_days:
        raise ToolError(f"{start} to {end} has no working time for {worker.name} (0 days); nothing was requested")
    return {"id": leave.id, "display_name": leave.display_name, "employee": worker.name, "type": kind.name,
            "date_from": fields.Date.to_string(start), "date_to": fields.Date.to_string(end),
            "days": leave.number_of_days, "state": leave.state, "created": True}


@agent_tool(
    label="Attendance summary",
    category="hr",
    risk_level="low",
    apps=("hr_attendance",),
    models=("hr.attendance", "hr.employee"),
    sequence=42,
    description=("Worked hours recorded by attendances (check-in/check-out) between two dates (YYYY-MM-DD, "
                 "inclusive), per employee or for one employee (id or name): number of attendances and worked "
                 "hours, with the total."),
    parameters={
        **period_schema(),
        "employee": record_ref("Only this employee (id or name).", "hr.employee"),
    },
)
def get_attendance_summary(env, date_from, date_to, employee=None):
    """Worked hours from ``hr.attendance`` between two dates (YYYY-MM-DD,
    inclusive, by check-in), per employee (or one employee, id or name):
    number of attendances and total worked hours."""
    start, end = parse_period(date_from, date_to, required=True)
    domain = period_domain(env["hr.attendance"], "check_in", start, end)
    if employee:
        domain.append(("employee_id", "=", find_record(env, "hr.employee", employee, label="employee").id))
    groups = env["hr.attendance"]._read_group(domain, ["employee_id"], ["__count", "worked_hours:sum"])
    rows = sorted(({"employee": emp.name, "employee_id": emp.id, "attendances": count, "worked_hours": round(hours, 2)}
                   for emp, count, hours in groups), key=lambda r: r["employee"])
    return {"date_from": fields.Date.to_string(start), "date_to": fields.Date.to_string(end), "employees": rows,
            "total_worked_hours": round(sum(hours for _emp, _count, hours in groups), 2)}
