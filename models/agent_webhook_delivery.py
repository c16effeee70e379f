from datetime import timedelta

from odoo import api, fields, models
from odoo.tools import SQL

KEEP_DAYS = 1  # far longer than the ±300 s a signed timestamp is accepted for


class AgenticAiWebhookDelivery(models.Model):
    """A delivery a webhook integration accepted (issue 10 point 5, case
    BR-17): its delivery id and the digest of what was signed are unique per
    integration, so a delivery is processed once, even when it is sent again
    under another delivery id (the delivery id is not signed).

    Rows are written by the webhook controller only (SQL ``ON CONFLICT DO
    NOTHING``, which decides between two identical requests at once) and
    removed by the daily vacuum after KEEP_DAYS: an older request fails the
    timestamp check anyway."""
    _name = "agentic.ai.webhook.delivery"
    _description = "AI Agent Webhook Delivery"
    _order = "id desc"
    _log_access = False

    _delivery_uniq = models.UniqueIndex("(webhook_id, delivery_id)",
                                        "This delivery was already received by the integration.")
    _digest_uniq = models.UniqueIndex("(webhook_id, content_digest)",
                                      "This signed content was already received by the integration.")

    webhook_id = fields.Many2one("agentic.ai.webhook", required=True, ondelete="cascade", readonly=True)
    delivery_id = fields.Char(required=True, readonly=True, help="The sender's X-Agentic-Delivery header.")
    content_digest = fields.Char(required=True, readonly=True,
                                 help="sha256 of the signed timestamp and body (not the signature).")
    thread_id = fields.Many2one("agentic.ai.thread", readonly=True, ondelete="set null")
    received_at = fields.Datetime(required=True, readonly=True, index=True)

    @api.model
    def _record(self, webhook, delivery_id, digest):
        """Insert the delivery; returns it, or an empty recordset when the
        integration already has this delivery id or digest."""
        self.env.flush_all()
        rows = self.env.execute_query(SQL(
            "INSERT INTO %s (webhook_id, delivery_id, content_digest, received_at) VALUES (%s, %s, %s, %s) "
            "ON CONFLICT DO NOTHING RETURNING id",
            SQL.identifier(self._table), webhook.id, delivery_id, digest, fields.Datetime.now()))
        return self.browse(rows[0][0] if rows else ())

    @api.model
    def _first(self, webhook, delivery_id, digest):
        """The accepted delivery a duplicate repeats (by id or by digest)."""
        return self.search([("webhook_id", "=", webhook.id), "|", ("delivery_id", "=", delivery_id),
                            ("content_digest", "=", digest)], order="id", limit=1)

    @api.autovacuum
    def _gc_old_deliveries(self):
        self.sudo().search([("received_at", "<", fields.Datetime.now() - timedelta(days=KEEP_DAYS))]).unlink()
