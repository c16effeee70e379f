"""19.0.1.4.0: the spec's webhook API key (``agentic_ai.webhook_api_key``,
spec §11.2), generated as at install when the database has none; Settings
shows it once."""
from odoo import SUPERUSER_ID, api


def migrate(cr, version):
    api.Environment(cr, SUPERUSER_ID, {})["agentic.ai.webhook"]._ensure_api_key()
