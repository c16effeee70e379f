"""Memory consolidation of conversations (spec 000 §8.2; issue 12 point 5):
a completed turn marks its thread ``memory_pending`` (engine/memory_manager.py
``mark_pending``); the cron "Agentic AI: Memory Consolidation" learns from
each marked thread, outside the user's request."""
import logging
from datetime import timedelta

from odoo import api, fields, models
from odoo.tools import SQL

from ..engine.durable import durability, step_commit
from ..engine.memory_manager import CONSOLIDATION_DELAY, CRON_XMLID, MemoryManager, summary_key

_logger = logging.getLogger(__name__)

BATCH = 20                         # threads consolidated per cron run; the cron is triggered again for the rest
TRIGGER_MARGIN = 5                 # seconds: a trigger due sooner may run before the turn's mark is committed


class AgenticAiThread(models.Model):
    """Adds the consolidation mark and its cron to conversations."""
    _inherit = "agentic.ai.thread"

    memory_pending = fields.Boolean(
        readonly=True, copy=False, index="btree_not_null",
        help="A completed turn waits for the Memory Consolidation cron to learn from this conversation.")

    def unlink(self):
        """Deleting a conversation forgets what was learnt about it as a
        conversation: its thread-scope memories (``ondelete`` cascade) and
        its episodic summary. Facts learnt from it stay in the user's
        memories until the user deletes them."""
        summaries = self.env["agentic.ai.memory"].sudo().search([
            ("memory_type", "=", "episodic"), ("scope", "=", "user"),
            ("key", "in", [summary_key(thread) for thread in self])])
        summaries = summaries.filtered(lambda m: any(m.key == summary_key(t) and m.user_id == t.user_id for t in self))
        result = super().unlink()
        summaries.exists().unlink()
        return result

    @api.private
    def _ask_consolidation(self):
        """Have the Memory Consolidation cron run ``CONSOLIDATION_DELAY``
        seconds from now (the clock's time, not the transaction's: a long
        transaction's would put it in the past), unless one of its triggers
        is due from a little before that (never sooner than
        ``TRIGGER_MARGIN`` seconds from now) to ``CONSOLIDATION_DELAY``
        seconds after it: that run learns from every
        marked conversation, this one included, at most that much later than
        asked. One statement instead of a trigger (and a read of
        the cron) per completed turn: when a company's chats end together,
        one trigger serves them all (issue 26 point 5)."""
        cron_id = self.env["ir.model.data"]._xmlid_to_res_id(CRON_XMLID, raise_if_not_found=False)
        if not cron_id:
            return
        now = fields.Datetime.now()
        at = now + timedelta(seconds=CONSOLIDATION_DELAY)
        # Only a trigger still to come serves (one due already may belong to a run of the cron that searched for
        # marked conversations before this mark is committed), and one a little sooner than ``at`` too.
        soonest = max(at - timedelta(seconds=CONSOLIDATION_DELAY / 3), now + timedelta(seconds=TRIGGER_MARGIN))
        self.env.cr.execute(SQL(
            "SELECT 1 FROM ir_cron_trigger WHERE cron_id = %s AND call_at BETWEEN %s AND %s LIMIT 1",
            cron_id, soonest, at + timedelta(seconds=CONSOLIDATION_DELAY)))
        if not self.env.cr.rowcount:
            self.env["ir.cron"].sudo().browse(cron_id)._trigger(at)

    @api.model
    def _cron_consolidate_memories(self, limit=BATCH):
        """Cron "Agentic AI: Memory Consolidation": consolidate up to
        ``limit`` marked threads, oldest mark first, each unmarked first (an
        error is never retried for ever) and committed on its own outside
        tests. Errors are logged and swallowed: a failed consolidation
        changes nothing, and never the user's conversation. Returns the
        number of threads handled."""
        threads = self.sudo().search([("memory_pending", "=", True)], order="id", limit=limit + 1)
        cr = self.env.cr
        for thread in threads[:limit]:
            if durability.can_commit(cr):
                # A fresh transaction whose first statement locks the row, retried on a fresh snapshot when a run's
                # step changed it meanwhile (Odoo's retry rules): the mark is never refused by a concurrent run.
                cr.commit()
                if step_commit.lock_row(cr, thread._table, thread.id) is None:
                    continue  # deleted meanwhile
            # SQL: the conversation's write date (its place in the sidebar) stays as it is.
            cr.execute(SQL("UPDATE agentic_ai_thread SET memory_pending = false WHERE id = %s", thread.id))
            thread.invalidate_recordset(["memory_pending"])
            if durability.can_commit(cr):
                cr.commit()  # the row is not held while the model answers
            try:
                with cr.savepoint():
                    MemoryManager(thread).consolidate()
            except Exception:
                _logger.exception("Memory consolidation of conversation %s failed", thread.id)
            if durability.can_commit(cr):
                cr.commit()
        if len(threads) > limit:
            self.env.ref(CRON_XMLID).sudo()._trigger()
        return len(threads[:limit])
