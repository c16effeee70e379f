from odoo import fields, models


class AgenticAiWebhookSecretShow(models.AbstractModel):
    """Shows a new webhook secret once (``agentic.ai.webhook.action_generate_secret``),
    or the webhook API key (``api_key``; Settings, ``res.config.settings``).

    Abstract, as Odoo's API key dialog (``res.users.apikeys.show``): the
    dialog is opened with the secret as a default value and never saved, so
    the secret is stored nowhere but in the integration's secret column."""
    _name = "agentic.ai.webhook.secret.show"
    _description = "Show Webhook Secret"

    id = fields.Id()  # needed by the form's onchange that returns the default values
    key_id = fields.Char(string="Webhook ID", readonly=True)
    secret = fields.Char(readonly=True)
    api_key = fields.Boolean(readonly=True, help="The secret shown is the webhook API key of Settings.")
