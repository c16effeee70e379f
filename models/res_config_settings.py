from odoo import fields, models

RATE_LIMIT_FIELDS = ("agentic_ai_max_requests_per_minute", "agentic_ai_max_requests_per_hour",
                     "agentic_ai_max_cost_per_day_agent", "agentic_ai_max_cost_per_day_company")


class ResConfigSettings(models.TransientModel):
    """The "AI Agents" block of Settings: who may use agents (spec §7.1)
    and the rate limits (spec §7.5, engine/rate_limits.py; 0 = no limit).

    ``group_agentic_ai_all_users`` is Odoo's implied-group setting: on,
    *Internal User* implies *AI User*; off, only users put in an AI group
    themselves can chat (the implication is computed, so internal users
    lose the group at once unless it was given to them explicitly)."""
    _inherit = "res.config.settings"

    group_agentic_ai_all_users = fields.Boolean(
        string="Every internal user can use AI agents", group="base.group_user",
        implied_group="agentic_ai.group_agentic_ai_user")
    agentic_ai_max_requests_per_minute = fields.Integer(
        string="Requests per minute per user", default=20,
        config_parameter="agentic_ai.max_requests_per_minute")
    agentic_ai_max_requests_per_hour = fields.Integer(
        string="Requests per hour per user", default=200,
        config_parameter="agentic_ai.max_requests_per_hour")
    agentic_ai_max_cost_per_day_agent = fields.Float(
        string="Cost per day per agent (USD)", default=50.0,
        config_parameter="agentic_ai.max_cost_per_day_agent")
    agentic_ai_max_cost_per_day_company = fields.Float(
        string="Cost per day per company (USD)", default=50.0,
        config_parameter="agentic_ai.max_cost_per_day_company")

    def set_values(self):
        """Store a limit of 0 as "0": Odoo removes a numeric parameter whose
        value is 0, and a missing parameter means the default limit."""
        super().set_values()
        params = self.env["ir.config_parameter"].sudo()
        for name in RATE_LIMIT_FIELDS:
            if not self[name]:
                params.set_param(self._fields[name].config_parameter, "0")
