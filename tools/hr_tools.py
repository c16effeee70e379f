"""HR tools (spec 000 §5.2, HR). Odoo apps: ``hr``, ``hr_holidays``, ``hr_attendance``."""
from __future__ import annotations

from datetime import datetime, time

from odoo import fields

from .base_tool import ToolError, agent_tool, clamp_limit, escape_like, find_record, parse_date


@agent_tool
def search_employees(env, query=None, department=None, limit=20):
    """Employees whose name, email or job title contains ``query``,
    optionally in one department (id or name): name, job title, department,
    manager, work email and phone. At most ``limit`` (default 20)."""
    domain = []
    if query:
        text = escape_like(query)  # the query is text, not a LIKE pattern
        domain += ["|", "|", ("name", "ilike", text), ("work_email", "ilike", text), ("job_title", "ilike", text)]
    if department:
        domain.append(("department_id", "child_of", find_record(env, "hr.department", department, label="department").id))
    Employee = env["hr.employee"]
    employees = Employee.search(domain, limit=clamp_limit(limit))
    return {"total": Employee.search_count(domain), "employees": [{
        "id": e.id, "name": e.name, "job_title": e.job_title or "", "department": e.department_id.name or "",
        "manager": e.parent_id.name or "", "work_email": e.work_email or "", "work_phone": e.work_phone or ""}
        for e in employees]}


@agent_tool
def create_leave_request(env, employee, leave_type, date_from, date_to, description=None):
    """Ask for time off for an employee (id or name) of a time off type (id
    or name, e.g. Paid Time Off) from ``date_from`` to ``date_to``
    (YYYY-MM-DD, inclusive). Odoo checks the allocation and overlaps and
    refuses with its own message. Returns the request with its state and
    duration in days."""
    worker = find_record(env, "hr.employee", employee, label="employee")
    kind = find_record(env, "hr.leave.type", leave_type, label="time off type",
                       domain=[("company_id", "in", [worker.company_id.id, False])])
    start, end = parse_date(date_from, "date_from"), parse_date(date_to, "date_to")
    if end < start:
        raise ToolError("date_to is before date_from")
    leave = env["hr.leave"].create({
        "employee_id": worker.id, "holiday_status_id": kind.id, "request_date_from": start, "request_date_to": end,
        "name": description or False,
    })
    if not leave.number_of_days:
        raise ToolError(f"{start} to {end} has no working time for {worker.name} (0 days); nothing was requested")
    return {"id": leave.id, "display_name": leave.display_name, "employee": worker.name, "type": kind.name,
            "date_from": fields.Date.to_string(start), "date_to": fields.Date.to_string(end),
            "days": leave.number_of_days, "state": leave.state, "created": True}


@agent_tool
def get_attendance_summary(env, date_from, date_to, employee=None):
    """Worked hours from ``hr.attendance`` between two dates (YYYY-MM-DD,
    inclusive, by check-in), per employee (or one employee, id or name):
    number of attendances and total worked hours."""
    start, end = parse_date(date_from, "date_from"), parse_date(date_to, "date_to")
    if end < start:
        raise ToolError("date_to is before date_from")
    domain = [("check_in", ">=", datetime.combine(start, time.min)), ("check_in", "<=", datetime.combine(end, time.max))]
    if employee:
        domain.append(("employee_id", "=", find_record(env, "hr.employee", employee, label="employee").id))
    groups = env["hr.attendance"]._read_group(domain, ["employee_id"], ["__count", "worked_hours:sum"])
    rows = sorted(({"employee": emp.name, "employee_id": emp.id, "attendances": count, "worked_hours": round(hours, 2)}
                   for emp, count, hours in groups), key=lambda r: r["employee"])
    return {"date_from": fields.Date.to_string(start), "date_to": fields.Date.to_string(end), "employees": rows,
            "total_worked_hours": round(sum(hours for _emp, _count, hours in groups), 2)}
