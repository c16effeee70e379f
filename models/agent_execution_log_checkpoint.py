from odoo import api, fields, models
from odoo.exceptions import UserError


class AgenticAiExecutionLogCheckpoint(models.Model):
    """Where a company's execution log chain goes on after a purge
    (``agentic.ai.execution.log._cron_purge_old_logs``): the seq and hash
    of the last row purged, from which ``verify_chain`` starts.

    Immutable like the log: created by the purge only (superuser and the
    ``agentic_ai_log_purge`` context), never written or deleted through
    the ORM; AI administrators may read it."""
    _name = "agentic.ai.execution.log.checkpoint"
    _description = "AI Agent Execution Log Checkpoint"
    _order = "id desc"
    _rec_name = "last_seq"
    _log_access = False

    _company_seq_uniq = models.UniqueIndex("(company_id, last_seq)", "A company's chain has one checkpoint per place.")

    create_date = fields.Datetime(readonly=True, default=fields.Datetime.now, string="Purged On")
    company_id = fields.Many2one("res.company", required=True, readonly=True, index=True, ondelete="restrict")
    last_seq = fields.Integer(required=True, readonly=True, string="Last Purged Chain Number")
    last_hash = fields.Char(required=True, readonly=True, string="Its Hash")
    rows_purged = fields.Integer(readonly=True)
    broken_seq = fields.Integer(readonly=True, string="Broken At",
                                help="Chain number of the first broken row of the purged segment, if it was broken.")
    broken_reason = fields.Char(readonly=True, help="Why the purged segment did not verify (issue 23 point 6): "
                                                    "verification reports it from then on.")

    @api.model_create_multi
    def create(self, vals_list):
        """Only the purge records checkpoints (UserError otherwise)."""
        if not (self.env.su and self.env.context.get("agentic_ai_log_purge")):
            self.check_access("create")
            raise UserError(self.env._("Execution log checkpoints are recorded by the purge job only."))
        return super().create(vals_list)

    def write(self, vals):
        raise UserError(self.env._("Execution log checkpoints are immutable."))

    @api.ondelete(at_uninstall=False)
    def _unlink_never(self):
        raise UserError(self.env._("Execution log checkpoints are immutable."))
