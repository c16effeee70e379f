from odoo import api, fields, models
from odoo.exceptions import ValidationError

from ..engine.durable.queue import MAX_CONCURRENCY

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
