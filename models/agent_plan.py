"""Execution plans of the Plan-and-Execute mode (spec 000 §3.5).

A plan is the planner's decomposition of one user request into steps; the
engine (engine/planner.py and the runtime) creates and advances it as
superuser, users only read it. State changes follow fixed transitions,
checked on every write whoever the writer is."""
from odoo import api, fields, models
from odoo.exceptions import UserError

PLAN_TRANSITIONS = {
    "planning": {"executing", "failed", "cancelled"},
    "executing": {"replanning", "completed", "failed", "cancelled"},
    "replanning": {"executing", "failed", "cancelled"},
    "completed": set(),
    "failed": set(),
    "cancelled": set(),
}
PLAN_TERMINAL_STATES = frozenset(state for state, targets in PLAN_TRANSITIONS.items() if not targets)
STEP_TRANSITIONS = {
    "pending": {"running", "skipped"},
    "running": {"completed", "failed", "skipped", "pending"},
    "failed": {"skipped"},
    "completed": set(),
    "skipped": set(),
}
# Length of a step's result or error quoted in the progress summary.
SUMMARY_TEXT_LIMIT = 200


def _check_transitions(records, new_state, transitions, label):
    """Raise UserError when one of ``records`` may not go from its state to
    ``new_state`` (writing the state a record already has is allowed)."""
    for record in records:
        old_state = record.state
        if old_state != new_state and new_state not in transitions.get(old_state, ()):
            raise UserError(records.env._("%(label)s %(id)s cannot go from %(from_state)s to %(to_state)s.",
                                          label=label, id=record.id, from_state=old_state, to_state=new_state))


def _first_line_cut(text, limit=SUMMARY_TEXT_LIMIT):
    """``text`` on one line, cut to ``limit`` characters."""
    return " ".join((text or "").split())[:limit]


class AgenticAiPlan(models.Model):
    """The plan of one Plan-and-Execute turn: the user's goal, its steps and
    where the run stands (spec 000 §3.5, §4.3).

    States: planning → executing ⇄ replanning → completed / failed /
    cancelled; the last three are terminal. ``write`` refuses any other
    change of ``state`` with a UserError naming both states."""
    _name = "agentic.ai.plan"
    _description = "AI Execution Plan"
    _order = "id desc"

    _max_replanning_not_negative = models.Constraint(
        "CHECK(max_replanning >= 0)", "The number of replanning attempts cannot be negative.")

    thread_id = fields.Many2one("agentic.ai.thread", required=True, ondelete="cascade", index=True)
    agent_id = fields.Many2one(related="thread_id.agent_id", store=True, index=True)
    user_id = fields.Many2one(related="thread_id.user_id", store=True, index=True)
    company_id = fields.Many2one(related="thread_id.company_id", store=True)
    goal = fields.Text(help="The user's request the plan carries out.")
    mode_reason = fields.Char(help="Why this request ran as a plan (e.g. the Hybrid mode found it complex).")
    state = fields.Selection([
        ("planning", "Planning"),
        ("executing", "Executing"),
        ("replanning", "Replanning"),
        ("completed", "Completed"),
        ("failed", "Failed"),
        ("cancelled", "Cancelled"),
    ], default="planning", required=True, index=True)
    step_ids = fields.One2many("agentic.ai.plan.step", "plan_id", string="Steps")
    replan_count = fields.Integer(help="Replanning attempts made after failed steps.")
    max_replanning = fields.Integer(default=2, help="Replanning attempts allowed (from the agent, spec 000 §4.3).")
    progress = fields.Float(compute="_compute_progress", help="Completed and skipped steps, in % of all steps.")
    result = fields.Text(help="The final summary, or why the plan failed.")

    @api.depends("step_ids.state")
    def _compute_progress(self):
        for plan in self:
            steps = plan.step_ids
            done = len(steps.filtered(lambda step: step.state in ("completed", "skipped")))
            plan.progress = done / len(steps) * 100 if steps else 0.0

    @api.depends("thread_id", "goal")
    def _compute_display_name(self):
        for plan in self:
            goal = _first_line_cut(plan.goal, 60)
            plan.display_name = self.env._("Plan %(id)s: %(goal)s", id=plan.id, goal=goal) if goal else \
                self.env._("Plan %s", plan.id)

    def write(self, vals):
        if "state" in vals:
            _check_transitions(self, vals["state"], PLAN_TRANSITIONS, self.env._("Plan"))
        return super().write(vals)

    def _set_state(self, state, result=None):
        """Move the plans to ``state`` (as superuser), storing ``result``
        when given. Raises UserError on a transition §3.5 does not allow."""
        values = {"state": state}
        if result is not None:
            values["result"] = result
        self.sudo().write(values)

    # ------------------------------------------------------------------ reading
    def get_current_step(self):
        """The step to run now: the first by sequence that is running or
        pending; an empty ``agentic.ai.plan.step`` recordset when none."""
        self.ensure_one()
        return self.step_ids.sorted(lambda step: (step.sequence, step.id)).filtered(
            lambda step: step.state in ("running", "pending"))[:1]

    def is_complete(self):
        """True when the plan has at least one step and every step is
        completed or skipped."""
        self.ensure_one()
        steps = self.step_ids
        return bool(steps) and all(step.state in ("completed", "skipped") for step in steps)

    def get_progress_summary(self, quote_results=True):
        """Human-readable progress (spec 000 §3.5), one line per step::

            Plan: 2 of 4 steps done (50%)
            - [x] 1. Create the purchase order — P00012 created
            - [ ] 2. Receive the goods (running)
            - [!] 3. Create the sale order — failed: Product not found
            - [-] 4. Invoice it (skipped)

        Results and errors are quoted on one line, cut to 200 characters.
        ``quote_results=False`` leaves them out (the progress sent to the
        model in a system prompt: they quote tool results, i.e. record text
        anyone may have written, which the model reads in the tool messages
        as data)."""
        self.ensure_one()
        steps = self.step_ids.sorted(lambda step: (step.sequence, step.id))
        done = len(steps.filtered(lambda step: step.state in ("completed", "skipped")))
        lines = [f"Plan: {done} of {len(steps)} steps done ({round(self.progress)}%)"]
        for step in steps:
            label = f"{step.sequence}. {_first_line_cut(step.description, 10000)}"
            if step.state == "completed":
                line = f"- [x] {label}"
                if step.result and quote_results:
                    line += f" — {_first_line_cut(step.result)}"
            elif step.state == "failed":
                line = f"- [!] {label} — failed" + (f": {_first_line_cut(step.error)}" if quote_results else "")
            elif step.state == "skipped":
                line = f"- [-] {label} (skipped)"
            elif step.state == "running":
                line = f"- [ ] {label} (running)"
            else:
                line = f"- [ ] {label}"
            lines.append(line)
        return "\n".join(lines)

    def _payload(self):
        """The plan as a JSON-safe dict, for the ``/agentic_ai/thread/plan``
        route and the ``plan_update`` event: ``{id, state, progress (int %),
        goal, mode_reason, replan_count, max_replanning, result, steps:
        [{id, sequence, description, tool, state, result, error}]}`` (texts
        are str or None)."""
        self.ensure_one()
        plan = self.sudo()
        return {
            "id": plan.id,
            "state": plan.state,
            "progress": round(plan.progress),
            "goal": plan.goal or None,
            "mode_reason": plan.mode_reason or None,
            "replan_count": plan.replan_count,
            "max_replanning": plan.max_replanning,
            "result": plan.result or None,
            "steps": [{
                "id": step.id,
                "sequence": step.sequence,
                "description": step.description or "",
                "tool": step.tool or None,
                "state": step.state,
                "result": step.result or None,
                "error": step.error or None,
            } for step in plan.step_ids.sorted(lambda step: (step.sequence, step.id))],
        }

    # ------------------------------------------------------------------ writing
    def _add_steps(self, steps):
        """Create ``steps`` (a list of ``{"description": str, "tool": str}``)
        in order, with sequence 1..n. Returns the created steps."""
        self.ensure_one()
        return self.env["agentic.ai.plan.step"].sudo().create([
            self._step_values(index, step) for index, step in enumerate(steps, start=1)])

    def _replace_remaining_steps(self, steps):
        """Replace what is left of the plan after a replanning: failed steps
        become skipped (their error kept, result "replaced by the new
        plan"), pending steps are deleted, and ``steps`` (same shape as for
        ``_add_steps``) are created after the highest remaining sequence.
        ``replan_count`` is left to the engine. Returns the created steps."""
        self.ensure_one()
        plan = self.sudo()
        plan.step_ids.filtered(lambda step: step.state == "failed").write(
            {"state": "skipped", "result": "replaced by the new plan"})
        plan.step_ids.filtered(lambda step: step.state == "pending").unlink()
        start = max(plan.step_ids.mapped("sequence"), default=0)
        return self.env["agentic.ai.plan.step"].sudo().create([
            plan._step_values(start + index, step) for index, step in enumerate(steps, start=1)])

    def _step_values(self, sequence, step):
        return {"plan_id": self.id, "sequence": sequence,
                "description": step.get("description") or "", "tool": step.get("tool") or False}


class AgenticAiPlanStep(models.Model):
    """One step of a plan (spec 000 §3.5): what to do, the tool hinted or
    run, and its outcome.

    States: pending → running → completed / failed / skipped; a running
    step may go back to pending (its run was interrupted), a failed one
    may be skipped by a replanning; completed and skipped are terminal.
    ``write`` refuses any other change with a UserError."""
    _name = "agentic.ai.plan.step"
    _description = "AI Execution Plan Step"
    _order = "plan_id, sequence, id"

    plan_id = fields.Many2one("agentic.ai.plan", required=True, ondelete="cascade", index=True)
    sequence = fields.Integer()
    description = fields.Text(required=True)
    tool = fields.Char(help="The planner's tool hint, or the tool that ran.")
    tool_arguments = fields.Text(help="The arguments of the call run, as JSON.")
    tool_call_id = fields.Char()
    state = fields.Selection([
        ("pending", "Pending"),
        ("running", "Running"),
        ("completed", "Completed"),
        ("failed", "Failed"),
        ("skipped", "Skipped"),
    ], default="pending", required=True)
    result = fields.Text()
    error = fields.Text()

    def write(self, vals):
        if "state" in vals:
            _check_transitions(self, vals["state"], STEP_TRANSITIONS, self.env._("Plan step"))
        return super().write(vals)
