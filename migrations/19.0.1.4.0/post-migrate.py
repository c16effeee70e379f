"""19.0.1.4.0: the spec's webhook API key (``agentic_ai.webhook_api_key``,
spec §11.2), generated as at install when the database has none; Settings
shows it once. The providers' CHECK constraints are dropped: they are
Python constraints now (PostgreSQL logged the whole row, API key included,
when one failed)."""
from odoo import SUPERUSER_ID, api


def migrate(cr, version):
    for name in ("max_tokens_positive", "context_window_not_negative", "timeout_positive", "costs_not_negative"):
        cr.execute(f"ALTER TABLE agentic_ai_llm_provider DROP CONSTRAINT IF EXISTS agentic_ai_llm_provider_{name}")
    api.Environment(cr, SUPERUSER_ID, {})["agentic.ai.webhook"]._ensure_api_key()
