"""Queued messages through OCA ``queue_job`` when it is installed (issue 26
point 4; PyPI ``odoo-addon-queue-job``, https://github.com/OCA/queue).

With ``queue_job`` installed (and ``agentic_ai.queue_backend`` not set to
``cron``), each queued message is a job of the ``root.agentic_ai`` channel:
its capacity is queue_job's (``[queue_job] channels = root:4,root.agentic_ai:2``
in the Odoo configuration, or ``ODOO_QUEUE_JOB_CHANNELS``), its jobs are in
queue_job's views, and its runner starts them on every Odoo server of the
deployment as they come. The message's life is the queue's
(``models/agent_thread_queue.py``): the job claims its thread the way the
processor does (``FOR UPDATE SKIP LOCKED``, committed), so a message runs
once however many jobs ask for it; a failed attempt or a lock conflict is
tried again as a new job with queue_job's ``eta`` (the retry delay), up to
``agentic_ai.queue_max_attempts``; a claim its dead worker left is taken
again once stale, by the job queue_job requeues. The *Async Task Processor*
cron then runs no message itself: it repairs what dead runs left and gives a
job to any ready message that has none (one queued before queue_job was
installed, or whose job an administrator cancelled).

A job runs in an Odoo HTTP worker (queue_job's ``/queue_job/runjob``): the
worker is held for the run, its database connection given back while the
model answers (engine/durable/step_connection.py). Size the channel below the
workers the rest of Odoo needs.
"""
import logging

import psycopg2

from odoo import api, fields, models
from odoo.tools import SQL

_logger = logging.getLogger(__name__)

#: The queue_job channel of queued messages.
CHANNEL = "root.agentic_ai"


class AgenticAiThread(models.Model):
    _inherit = "agentic.ai.thread"

    @api.model
    def _queue_backend(self):
        """``queue_job`` when OCA queue_job is installed and
        ``agentic_ai.queue_backend`` is not ``cron``, else ``cron``."""
        if "queue.job" not in self.env:
            return "cron"
        wanted = self.env["ir.config_parameter"].sudo().get_param("agentic_ai.queue_backend") or "queue_job"
        return "cron" if wanted.strip().lower() == "cron" else "queue_job"

    def _queue_trigger(self, at=None):
        """Wake what runs this thread's queued message at ``at`` (now when
        None): a queue_job job, or the processor cron."""
        if not self or self._queue_backend() != "queue_job":
            return super()._queue_trigger(at)
        for thread in self:
            thread._queue_job_delay(at)
        return None

    def _queue_job_delay(self, eta=None):
        """A ``root.agentic_ai`` job for this thread's queued message, to
        start at ``eta`` (naive UTC) or as soon as the channel has room. One
        waiting job per message (queue_job's ``identity_key``)."""
        self.ensure_one()
        thread = self.sudo()
        thread._queue_job_function()
        requested = fields.Datetime.to_string(thread.async_requested_at) if thread.async_requested_at else ""
        thread.with_delay(
            channel=CHANNEL, eta=eta, identity_key=f"agentic_ai.thread:{thread.id}:{requested}",
            description=self.env._("Agentic AI: the queued message of conversation %s", thread.id),
        )._queue_job_run()

    @api.model
    def _queue_job_function(self):
        """queue_job's channel ``root.agentic_ai`` and the job function of
        ``_queue_job_run``, made once: the function allows commits (a run
        commits each of its steps, engine/durable/step_commit.py), which
        queue_job forbids by default. Kept as an administrator edits them
        (retry pattern, channel); made here, not in a data file, because
        agentic_ai does not depend on queue_job."""
        function = self.env["queue.job.function"].sudo()
        name = f"<{self._name}>._queue_job_run"
        if function.search_count([("name", "=", name)], limit=1):
            return
        root = self.env.ref("queue_job.channel_root")
        try:  # two first messages at once: the other transaction makes them, this one goes on without
            with self.env.cr.savepoint():
                channel = self.env["queue.job.channel"].sudo().search([("complete_name", "=", CHANNEL)], limit=1) \
                    or self.env["queue.job.channel"].sudo().create({"name": CHANNEL.split(".", 1)[1],
                                                                     "parent_id": root.id})
                function.create({"model_id": self.env["ir.model"]._get_id(self._name), "method": "_queue_job_run",
                                 "channel_id": channel.id, "allow_commit": True})
        except psycopg2.IntegrityError:
            _logger.info("queue_job's channel %s was made by another transaction meanwhile", CHANNEL)

    def _queue_job_run(self):
        """The job (queue_job): claim this thread's queued message and run it
        (``_queue_run_one``), as the processor would. Returns what happened,
        shown in the job's result. Raises queue_job's ``RetryableJobError``
        (not counted as a retry) while another claim of the message holds it
        and is not stale yet: a requeued job of a dead worker takes it once
        it is."""
        from odoo.addons.queue_job.exception import RetryableJobError  # imported only where queue_job is installed

        thread = self.sudo()
        if not thread.exists() or not thread.pending_message:
            return "No queued message: it ran, or was cancelled, before this job."
        settings = thread._queue_settings()
        claimed = thread._queue_claim(settings, exclude=(), only=thread.id)
        if not claimed:
            thread.invalidate_recordset()
            if not thread.pending_message:
                return "No queued message: it ran before this job."
            if thread.queue_retry_at and thread.queue_retry_at > fields.Datetime.now():
                return "The message waits for its retry, which has a job of its own."
            raise RetryableJobError("Another claim holds this message; looked at again once it is stale.",
                                    seconds=max(1, int(settings.stale_after.total_seconds())), ignore_retry=True)
        claimed._queue_run_one(settings)
        claimed.invalidate_recordset()
        return f"Ran the queued message: the conversation is {claimed.state}."

    @api.model
    def _process_pending_tasks(self, limit=None):
        """With queue_job, the processor runs no message: it repairs the
        threads dead runs left and gives a job to each ready message (one
        already waiting is not doubled). Returns the messages given a job."""
        if self._queue_backend() != "queue_job":
            return super()._process_pending_tasks(limit)
        threads = self.sudo()
        threads._queue_repair()
        settings = threads._queue_settings()
        rows = threads.env.execute_query(SQL("SELECT id FROM agentic_ai_thread WHERE %s ORDER BY async_requested_at, "
                                             "id LIMIT %s", threads._queue_ready_sql(settings), limit))
        ready = threads.browse([row_id for (row_id,) in rows])
        for thread in ready:
            thread._queue_job_delay()
        return len(ready)

