from odoo import api, fields, models


class AgenticAiThreadStop(models.Model):
    """A user's request to stop a thread's running request (issue 10 point
    3), read by the run at its next step boundary (engine/durable/durability.py).

    A row of its own, not a field of the thread: the run writes the
    thread's row at its step boundaries, and under PostgreSQL's REPEATABLE
    READ one of two transactions writing the same row fails, so asking to
    stop would make the run fail instead of stop. Written and read by the
    engine only, in SQL."""
    _name = "agentic.ai.thread.stop"
    _description = "AI Agent Stop Request"
    _log_access = False

    thread_id = fields.Many2one("agentic.ai.thread", required=True, ondelete="cascade", index=True)
    requested_at = fields.Datetime(required=True, default=fields.Datetime.now)

    _thread_unique = models.Constraint("UNIQUE(thread_id)", "A conversation has one stop request at most.")

    @api.model
    def _stopped_thread_ids(self, thread_ids):
        """The ids among ``thread_ids`` whose running request was asked to stop."""
        self.env.cr.execute("SELECT thread_id FROM agentic_ai_thread_stop WHERE thread_id = ANY(%s)",
                            [list(thread_ids)])
        return {row[0] for row in self.env.cr.fetchall()}
