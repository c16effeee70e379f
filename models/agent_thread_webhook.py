"""The conversation seen from its webhook integration (models/agent_webhook.py):
a thread started by a webhook knows it, and only the webhook links them."""
from odoo import api, fields, models
from odoo.exceptions import AccessError


class AgenticAiThread(models.Model):
    """Threads started by a webhook integration know it: its status route
    answers for its own threads only."""
    _inherit = "agentic.ai.thread"

    webhook_id = fields.Many2one("agentic.ai.webhook", string="Webhook Integration", readonly=True,
                                 index="btree_not_null", ondelete="set null")

    @api.model_create_multi
    def create(self, vals_list):
        if not self.env.su:
            for vals in vals_list:
                if vals.get("webhook_id"):
                    raise AccessError(self.env._("Conversations are linked to an integration by the webhook only."))
                vals["webhook_id"] = False  # explicit, so that no default_* context key sets it
        return super().create(vals_list)

    def write(self, vals):
        if "webhook_id" in vals and not self.env.su:
            raise AccessError(self.env._("Conversations are linked to an integration by the webhook only."))
        return super().write(vals)
