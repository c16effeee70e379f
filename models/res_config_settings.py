from odoo import api, fields, models
from odoo.exceptions import UserError, ValidationError
from odoo.tools import SQL

from ..engine.durable.queue import MAX_CONCURRENCY
from .agent_webhook import API_KEY_PARAM, API_KEY_SHOWN_PARAM

RATE_LIMIT_FIELDS = ("agentic_ai_max_requests_per_minute", "agentic_ai_max_requests_per_hour",
                     "agentic_ai_max_cost_per_day_agent", "agentic_ai_max_cost_per_day_company")
# Numeric settings whose 0 means something (no limit, retry at once), so it is stored as "0".
ZERO_KEPT_FIELDS = (*RATE_LIMIT_FIELDS, "agentic_ai_queue_retry_delay")


class ResConfigSettings(models.TransientModel):
    """The "AI Agents" block of Settings: who may use agents (spec §7.1),
    the rate limits (spec §7.5, engine/guard/rate_limits.py; 0 = no limit) and
    the queue's retry delay (engine/durable/queue.py).

    ``group_agentic_ai_all_users`` is Odoo's implied-group setting
    (``group``/``implied_group``, applied by ``res.config.settings.execute``
    through ``res.groups._apply_group``/``_remove_group``): on, the group
    *Internal User* (``base.group_user``) has *AI User* in its
    ``implied_ids``, so every internal user, present and future, is an AI
    user; off, that implication is removed. Odoo 19 computes implied
    membership (``res.users.all_group_ids``), so switching it off takes the
    group at once from internal users who had it only through the
    implication, while users given an AI group themselves (User, Operator,
    Administrator) keep it; switching it on again gives it back to all.
    Nothing else changes: their conversations and logs stay, unreachable
    for the users who lost the group until they get it back."""
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

    agentic_ai_queue_retry_delay = fields.Integer(
        string="Queue retry delay (seconds)", default=60, config_parameter="agentic_ai.queue_retry_delay",
        help="How long a queued message that failed, or met another run's lock, waits before it is tried again; "
             "0 tries it at the processor's next pass.")

    agentic_ai_queue_concurrency = fields.Integer(
        string="Queued runs at once", default=4, config_parameter="agentic_ai.queue_concurrency",
        help="How many queued messages (send_async, webhooks, automations) the processor runs at once, each on a "
             "database connection of its own that it gives back while the model answers (1 to 64).")

    agentic_ai_chat_polling = fields.Boolean(
        string="Follow runs by polling", config_parameter="agentic_ai.chat_polling",
        help="The chat queues each message and polls for the answer instead of streaming it token by token; "
             "turn on behind a proxy that buffers responses.")

    agentic_ai_webhook_api_key_state = fields.Selection(
        [("none", "No key"), ("new", "Not shown yet"), ("shown", "Shown once (a new key is shown when generated)")],
        string="Webhook API key",
        compute="_compute_agentic_ai_webhook_api_key",
        help="The spec's one webhook key (agentic_ai.webhook_api_key): generated at install, shown once.")
    agentic_ai_webhook_api_key_integrations = fields.Integer(
        string="Integrations accepting the webhook API key", compute="_compute_agentic_ai_webhook_api_key")

    def _compute_agentic_ai_webhook_api_key(self):
        params = self.env["ir.config_parameter"].sudo()
        state = ("none" if not params.get_param(API_KEY_PARAM) else
                 "shown" if params.get_param(API_KEY_SHOWN_PARAM) else "new")
        count = self.env["agentic.ai.webhook"].sudo().search_count([("accept_api_key", "=", True)])
        for settings in self:
            settings.agentic_ai_webhook_api_key_state = state
            settings.agentic_ai_webhook_api_key_integrations = count

    def action_agentic_ai_show_webhook_api_key(self):
        """Show the webhook API key generated at install, once (spec §11.2,
        issue 27 point 1): the first Settings administrator who asks sees it;
        later, only a new key can be shown (``..._rotate_...``). The key's row
        is locked while deciding, so two administrators asking at once do
        not both see it."""
        self.env["ir.config_parameter"].check_access("write")  # Settings administrators
        params = self.env["ir.config_parameter"].sudo()
        self.env.cr.execute(SQL("SELECT 1 FROM ir_config_parameter WHERE key = %s FOR UPDATE", API_KEY_PARAM))
        key = params.get_param(API_KEY_PARAM)
        if not key or params.get_param(API_KEY_SHOWN_PARAM):
            raise UserError(self.env._(
                "The webhook API key was already shown, or there is none: generate a new one to see it."))
        params.set_param(API_KEY_SHOWN_PARAM, "1")
        return self._agentic_ai_show_key(key)

    def action_agentic_ai_rotate_webhook_api_key(self):
        """Generate a new webhook API key (the previous one stops working at
        once) and show it, once."""
        self.env["ir.config_parameter"].check_access("write")
        key = self.env["agentic.ai.webhook"]._generate_api_key()
        self.env["ir.config_parameter"].sudo().set_param(API_KEY_SHOWN_PARAM, "1")
        return self._agentic_ai_show_key(key)

    def _agentic_ai_show_key(self, key):
        return {
            "type": "ir.actions.act_window",
            "res_model": "agentic.ai.webhook.secret.show",
            "name": self.env._("Webhook API key"),
            "views": [(False, "form")],
            "target": "new",
            "context": {"default_secret": key, "default_api_key": True},
        }

    def action_agentic_ai_webhook_api_key_integrations(self):
        """The integrations that accept the webhook API key."""
        return {
            "type": "ir.actions.act_window",
            "name": self.env._("Integrations accepting the webhook API key"),
            "res_model": "agentic.ai.webhook",
            "view_mode": "list,form",
            "domain": [("accept_api_key", "=", True)],
        }

    @api.constrains("agentic_ai_queue_retry_delay")
    def _check_queue_retry_delay(self):
        for settings in self:
            if settings.agentic_ai_queue_retry_delay < 0:
                raise ValidationError(self.env._("The queue retry delay cannot be negative."))

    @api.constrains("agentic_ai_queue_concurrency")
    def _check_queue_concurrency(self):
        for settings in self:
            if not 1 <= settings.agentic_ai_queue_concurrency <= MAX_CONCURRENCY:
                raise ValidationError(self.env._("Queued runs at once must be between 1 and %s.", MAX_CONCURRENCY))

    def set_values(self):
        """Store a limit or delay of 0 as "0": Odoo removes a numeric
        parameter whose value is 0, and a missing parameter means the default."""
        super().set_values()
        params = self.env["ir.config_parameter"].sudo()
        for name in ZERO_KEPT_FIELDS:
            if not self[name]:
                params.set_param(self._fields[name].config_parameter, "0")
