from odoo import api, fields, models
from odoo.exceptions import UserError

from ..tools.values.json_values import dumps


class AgenticAiConfirmWizard(models.TransientModel):
    """The confirmation card of a paused conversation as a standard Odoo
    dialog (spec 000 §7.3, issue 9 point 5): the call, the records by name,
    each value before → after, the risk and why it is asked; Approve runs
    exactly this call once, Reject tells the agent why, Cancel ends the
    request. The request is frozen when the dialog opens: if the
    conversation moved on meanwhile, nothing is approved. Only the
    conversation's own user may open it (the request may name records and
    values that are theirs alone)."""
    _name = "agentic.ai.confirm.wizard"
    _description = "AI Agent Action Confirmation"

    thread_id = fields.Many2one("agentic.ai.thread", required=True, ondelete="cascade", readonly=True)
    # Computed as the user who opens the dialog (not as superuser, Odoo's
    # default for stored computed fields): the thread's record rules apply.
    tool_call_id = fields.Char(compute="_compute_request", store=True, compute_sudo=False)
    confirmation_id = fields.Integer(compute="_compute_request", store=True, compute_sudo=False,
                                     help="The question this dialog shows (its transcript row).")
    tool_name = fields.Char(string="Tool", compute="_compute_request", store=True, compute_sudo=False)
    model_name = fields.Char(string="Model", compute="_compute_request", store=True, compute_sudo=False)
    risk_level = fields.Char(compute="_compute_request", store=True, compute_sudo=False)
    confirmation_reason = fields.Text(string="Why confirmation is asked", compute="_compute_request", store=True,
                                      compute_sudo=False)
    summary = fields.Text(string="What will happen", compute="_compute_request", store=True, compute_sudo=False)
    parameters = fields.Text(compute="_compute_request", store=True, compute_sudo=False,
                             help="The exact arguments that will run, as JSON.")
    rejection_reason = fields.Text(help="Given to the agent when you reject, so it can propose something else.")

    @api.model_create_multi
    def create(self, vals_list):
        wizards = super().create(vals_list)
        wizards.thread_id._check_owner_access()  # after create: thread_id may come from a default
        return wizards

    @api.depends("thread_id")
    def _compute_request(self):
        for wizard in self:
            request = wizard.thread_id.get_pending_confirmation() if wizard.thread_id else False
            if not request:
                wizard.update({"tool_call_id": False, "confirmation_id": 0, "tool_name": False, "model_name": False,
                               "risk_level": False,
                               "confirmation_reason": False, "summary": False, "parameters": False})
                continue
            wizard.update({
                "tool_call_id": request["tool_call_id"],
                "confirmation_id": request["confirmation_id"],
                "tool_name": request["tool"],
                "model_name": request["model"] or False,
                "risk_level": request["risk_level"],
                "confirmation_reason": request["reason"],
                "summary": request["summary"],
                "parameters": dumps(request["arguments"], indent=2),
            })

    def _check_same_request(self):
        self.ensure_one()
        pending = self.thread_id.get_pending_confirmation()
        if not pending or (pending["tool_call_id"], pending["confirmation_id"]) != (self.tool_call_id,
                                                                                   self.confirmation_id):
            raise UserError(self.env._("This conversation is no longer waiting for this action; nothing was run. "
                                       "Open the conversation again to see where it stands."))

    def action_approve(self):
        """Run the shown call, once."""
        self._check_same_request()
        self.thread_id.handle_confirmation(True, tool_call_id=self.tool_call_id,
                                           confirmation_id=self.confirmation_id)
        return {"type": "ir.actions.act_window_close"}

    def action_reject(self):
        """Do not run it; the agent is told, with the reason."""
        self._check_same_request()
        self.thread_id.handle_confirmation(False, (self.rejection_reason or "").strip(), tool_call_id=self.tool_call_id,
                                           confirmation_id=self.confirmation_id)
        return {"type": "ir.actions.act_window_close"}

    def action_cancel_request(self):
        """Do not run it and end the request; the agent is not called."""
        self._check_same_request()
        self.thread_id.cancel_confirmation()
        return {"type": "ir.actions.act_window_close"}
