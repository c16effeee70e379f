"""The asynchronous queue of conversations (spec 000 §11.1 send_async/poll,
§12 "Async Task Processor"; the rules in ``engine/durable/queue.py``).

Life of a queued message:

- ``_enqueue``: the thread turns ``queued`` with the message in
  ``pending_message``, ``async_requested_at`` = now, ``queue_attempts`` = 0,
  and the processor cron is triggered. ``_enqueue_answer`` queues the
  user's answer to the confirmation waiting (``pending_answer``, and its
  words in ``pending_message``): the chat's way when its stream reaches a
  multi-process HTTP worker, which must not be held while the approved
  call and the rest of the turn run (issue 26 point 1).
- Claim: ``SELECT ... FOR UPDATE SKIP LOCKED`` takes the oldest ready thread;
  ``queue_claimed_at`` = now and ``queue_attempts`` + 1 are committed at once,
  so no other processor takes it. The state stays ``queued`` (busy to every
  other caller) until the run starts.
- Run: unless a live run holds the thread (its lease, engine/durable/run_lease.py:
  a run of this message in another worker), as the thread's user in
  the thread's company, ``agent.run(thread, message, durable=True)`` from an
  idle thread (set in the run's transaction, never committed alone: the
  runtime writes ``executing`` first). Done: the queue fields are cleared.
- A lock conflict (engine/durable/queue.py ``is_lock_conflict``, or a live run
  holding the thread) puts the message back, the attempt not counted,
  to be tried after ``agentic_ai.queue_retry_delay`` seconds.
- Any other error rolls back that job alone; it is tried again after the
  delay until ``agentic_ai.queue_max_attempts``, then the thread ends
  ``error``: the message and the error are added to the transcript.
- A claim older than ``agentic_ai.queue_stale_minutes`` whose thread no live
  run holds (its worker died) is claimed again, as one more attempt. A message whose run had started (the
  thread is no longer ``queued``) is never run twice: an ``executing``
  thread without a live run is marked ``interrupted``.
"""
import logging
import threading

from odoo import api, fields, models
from odoo.exceptions import AccessError, LockError, MissingError, UserError, ValidationError
from odoo.tools import SQL

from ..engine.durable import durability, log_chain, step_connection
from ..engine.durable.queue import QueueSettings, dispatch, is_lock_conflict, run_deadline
from ..engine.text.clean_text import clean_text

_logger = logging.getLogger(__name__)

BUSY_STATES = ("queued", "executing", "waiting_confirmation")
# Refusals of Odoo and of the addon: the job's data is at fault, not our code.
EXPECTED_ERRORS = (UserError, ValidationError, AccessError, MissingError)


class AgenticAiThread(models.Model):
    _inherit = "agentic.ai.thread"

    _queue_ready_idx = models.Index("(async_requested_at, id) WHERE pending_message IS NOT NULL")

    pending_message = fields.Text(readonly=True, help="User message queued for the asynchronous processor (cron).")
    pending_answer = fields.Json(
        readonly=True, copy=False,
        help="The user's answer to the waiting confirmation, queued for the processor: {approved, reason, "
             "tool_call_id, confirmation_id}; pending_message then holds its words.")
    async_requested_at = fields.Datetime(readonly=True, string="Queued At")
    queue_attempts = fields.Integer(
        readonly=True, help="Runs of the queued message tried so far (lock conflicts are not counted).")
    queue_claimed_at = fields.Datetime(
        readonly=True, help="When a processor took the queued message; an old claim (its worker died) is taken again.")
    queue_retry_at = fields.Datetime(readonly=True, help="The queued message is not tried again before this time.")

    @api.ondelete(at_uninstall=False)
    def _unlink_except_claimed(self):
        """A queued message a processor has taken may be starting: its
        conversation cannot be deleted under it."""
        for thread in self:
            if thread.state == "queued" and thread.queue_claimed_at:
                raise UserError(self.env._("The queued message of %s has already started; wait for it to finish "
                                           "before deleting the conversation.", thread.name))

    # ------------------------------------------------------------- actions
    def action_process_queue_now(self):
        """Button for AI operators: wake the processor now (``ir.cron._trigger``).
        Commits nothing; the cron runs in its own transaction."""
        if not self.env.user.has_group("agentic_ai.group_agentic_ai_operator"):
            raise AccessError(self.env._("Only AI operators can start the queue processor."))
        self._queue_trigger()
        return {"type": "ir.actions.client", "tag": "display_notification", "params": {
            "type": "info", "message": self.env._("The queue processor will run in a moment.")}}

    # ------------------------------------------------------------- business
    def _enqueue(self, message):
        """Queue ``message`` on this thread (its owner only) and wake the
        processor. Returns the thread. Raises AccessError (not the owner, or
        not allowed to use the agent) or UserError (empty or too long message,
        or the thread is busy)."""
        self.ensure_one()
        self._check_owner_access()
        self.agent_id._check_runnable(self.env.user)
        text = self._check_message(message).strip()
        self._queue_lock_row()
        if self.state == "waiting_confirmation":
            raise UserError(self.env._("This conversation waits for your answer to a confirmation: approve, reject "
                                       "or cancel it first."))
        if self.state in BUSY_STATES or self.queue_claimed_at:
            state = dict(self._fields["state"]._description_selection(self.env))[self.state]
            raise LockError(self.env._("This conversation is busy (%s); wait for the current request to finish.",
                                       state))
        return self._queue_put(text)

    def _queue_put(self, words, answer=False):
        """Make this thread ``queued`` with ``words`` (the message, or an
        answer's words) and ``answer`` (``pending_answer``), its attempts and
        claim reset, and wake the processor. Returns the thread."""
        self._set_runtime_state(state="queued", pending_message=words, pending_answer=answer,
                                async_requested_at=fields.Datetime.now(), queue_attempts=0, queue_claimed_at=False,
                                queue_retry_at=False, last_error=False)
        self._queue_trigger()
        return self

    def _enqueue_answer(self, approved, reason=None, tool_call_id=None, confirmation_id=None):
        """Queue the owner's answer to the question waiting (approve, or
        reject with ``reason``) and wake the processor, which runs it as
        ``handle_confirmation`` would, as the thread's user. The answer is
        checked now as ``_check_can_answer`` checks it (UserError, LockError,
        AccessError) and kept for the question waiting now: its
        ``confirmation_id`` is pinned, so a question asked again later is
        never answered by it. Returns the thread."""
        self.ensure_one()
        self._queue_lock_row()  # first: a concurrent answer or send waits, then finds the thread busy
        self._check_can_answer(approved, reason, tool_call_id, confirmation_id)
        if self.queue_claimed_at:
            raise LockError(self.env._("This conversation is busy; wait for the current request to finish."))
        pending = self.get_pending_confirmation()
        reason = clean_text(reason or "", 2000)
        words = self.env._("Approved") if approved else (
            self.env._("Rejected: %s", reason) if reason else self.env._("Rejected"))
        return self._queue_put(words, {"approved": approved, "reason": reason,
                                       "tool_call_id": pending.get("tool_call_id"),
                                       "confirmation_id": pending.get("confirmation_id")})

    def _cancel_queued(self):
        """Drop the queued message before it runs (its owner only): the
        thread is ``active`` again and an assistant note says so. Returns the
        note (a transcript row). Raises AccessError or UserError (nothing
        queued, or the processor has started it)."""
        self.ensure_one()
        self._check_owner_access()
        self._queue_lock_row()
        if self.state != "queued":
            raise UserError(self.env._("This conversation has no queued message to cancel."))
        if self.queue_claimed_at:
            raise UserError(self.env._("The queued message has already started; stop the run instead."))
        answer = self.pending_answer
        self._set_runtime_state(state="waiting_confirmation" if answer else "active", pending_message=False,
                                pending_answer=False, async_requested_at=False, queue_claimed_at=False,
                                queue_retry_at=False, last_error=False)
        if answer:  # the question waits again, unanswered; the note is the agent's, never the model's (llm_failure)
            return self._add_message("assistant", self.env._("Your answer was withdrawn before it ran; nothing was "
                                                             "done. The question still waits for your answer."),
                                     llm_failure=True)
        return self._add_message("assistant", self.env._("Your queued message was cancelled before it ran; "
                                                         "nothing was done."))

    @api.model
    def _process_pending_tasks(self, limit=None):
        """Cron "Async Task Processor": run queued messages, oldest first,
        each claimed, run and committed on its own (see the module
        docstring), until none is ready, ``limit`` jobs were handled, or the
        run's time is up (engine/durable/queue.py ``run_deadline``), after repairing
        the threads dead runs left ``executing``; Odoo then runs
        it again at once for the rest (``_commit_progress``). Never raises
        for a job. Returns the number of jobs handled."""
        threads = self.sudo()
        threads._queue_repair()
        threads._queue_seal_left()
        settings = threads._queue_settings()
        deadline = run_deadline(threads.env.context, settings.time_budget)
        cron = threads.env["ir.cron"]
        cron._commit_progress(remaining=threads._queue_ready_count(settings))
        tried = set()
        # Runs at once, each on a cursor of its own (engine/durable/queue.py dispatch), unless this cursor is not
        # one of Odoo's own connections (the test runner's cursors all wrap one connection): then one at a time.
        concurrency = settings.concurrency if step_connection.can_give_back(threads.env.cr) else 1

        def claim():
            thread = threads._queue_claim(settings, tried)
            if not thread:  # nothing ready, or the rest is being run by other workers
                return None
            tried.add(thread.id)
            return thread.id

        def run(thread_id):
            if concurrency == 1:
                threads.browse(thread_id)._queue_run_one(settings)
            else:
                threads._queue_run_on_own_cursor(thread_id, settings)

        def progress(count):
            cron._commit_progress(count, remaining=threads._queue_ready_count(settings))

        handled = dispatch(claim, run, concurrency, deadline, limit, on_done=progress)
        cron._commit_progress(remaining=threads._queue_ready_count(settings))
        return handled

    def _queue_run_one(self, settings):
        """Run this claimed thread's message (``_queue_run_claimed``) and commit
        what it wrote; a bug of the queue itself is logged and rolled back:
        the claim stays, to be taken again once stale."""
        try:
            self._queue_run_claimed(settings)
        except Exception:
            _logger.exception("The queue could not handle the message of conversation %s", self.id)
            self.env.cr.rollback()
        self.env.cr.commit()

    @api.model
    def _queue_run_on_own_cursor(self, thread_id, settings):
        """``_queue_run_one`` of ``thread_id`` in this worker thread, on a
        cursor of its own (its connection given back while the model answers),
        as the processor's user, without the cron's progress context."""
        threading.current_thread().dbname = self.env.cr.dbname  # Odoo's log records name the database
        context = {key: value for key, value in self.env.context.items()
                   if key not in ("cron_id", "ir_cron_progress_id", "cron_end_time")}
        try:
            with self.env.registry.cursor() as cr:
                env = api.Environment(cr, self.env.uid, context, su=self.env.su)
                env[self._name].browse(thread_id)._queue_run_one(settings)
        except Exception:  # a lost connection: the claim stays, to be taken again once stale
            _logger.exception("The queue could not handle the message of conversation %s", thread_id)

    # -------------------------------------------------------------- helpers
    @api.model
    def _queue_repair(self):
        """Repair the threads dead runs left ``executing``
        (engine/durable/durability.py), queued or not; never fails the cron
        for it: the routes repair a thread when it is loaded too."""
        try:
            with self.env.cr.savepoint():
                self._repair_dead_runs()
        except Exception:
            _logger.exception("The queue could not repair the conversations dead runs left")

    @api.model
    def _queue_seal_left(self):
        """Chain the execution log rows left unsealed for more than a minute
        (engine/durable/log_chain.py ``seal_left``); never fails the cron
        for it."""
        try:
            with self.env.cr.savepoint():
                log_chain.seal_left(self.env)
        except Exception:
            _logger.exception("The queue could not seal the execution log rows left unsealed")

    def _queue_settings(self):
        return QueueSettings.from_params(self.env["ir.config_parameter"].sudo().get_param)

    def _queue_trigger(self, at=None):
        cron = self.env.ref("agentic_ai.ir_cron_process_pending_tasks", raise_if_not_found=False)
        if cron:
            cron.sudo()._trigger(at)

    def _queue_lock_row(self):
        """Lock this thread's row, so that a concurrent send, cancel or claim
        waits its turn; LockError (HTTP 409: its kind, never its words) when
        another transaction holds it."""
        try:
            self.sudo().lock_for_update()
        except LockError:
            raise LockError(self.env._("This conversation is being changed by another request; try again.")) from None

    def _queue_ready_sql(self, settings):
        """Threads whose queued message may be claimed now."""
        now = fields.Datetime.now()
        return SQL("""pending_message IS NOT NULL AND (
                (queue_claimed_at IS NULL AND state = 'queued' AND (queue_retry_at IS NULL OR queue_retry_at <= %s))
                OR (queue_claimed_at < %s AND NOT EXISTS (
                    SELECT 1 FROM agentic_ai_run_holder h WHERE h.id = agentic_ai_thread.run_holder
                    AND agentic_ai_thread.run_token IS NOT NULL AND h.alive_until > (now() AT TIME ZONE 'UTC'))))""",
                   now, now - settings.stale_after)

    def _queue_ready_count(self, settings):
        self.env.cr.execute(SQL("SELECT count(*) FROM agentic_ai_thread WHERE %s", self._queue_ready_sql(settings)))
        return self.env.cr.fetchone()[0]

    def _queue_claim(self, settings, exclude, only=None):
        """The oldest ready thread not in ``exclude`` (ids), or thread ``only``
        if it is ready, claimed and committed; an empty recordset when none
        can be claimed."""
        for _try in range(3):
            try:
                self.env.cr.execute(SQL(
                    "SELECT id FROM agentic_ai_thread WHERE %s AND id NOT IN %s %s "
                    "ORDER BY async_requested_at, id LIMIT 1 FOR UPDATE SKIP LOCKED",
                    self._queue_ready_sql(settings), tuple(exclude) or (0,),
                    SQL("AND id = %s", only) if only else SQL()))
                row = self.env.cr.fetchone()
                if not row:
                    return self.browse()
                thread = self.browse(row[0])
                thread._set_runtime_state(queue_claimed_at=fields.Datetime.now(),
                                          queue_attempts=thread.queue_attempts + 1)
                self.env["ir.cron"]._commit_progress()
                return thread
            except Exception as exc:  # another worker changed the row after this transaction began
                self.env.cr.rollback()
                if not is_lock_conflict(exc):
                    raise
        return self.browse()

    def _queue_run_claimed(self, settings):
        """Run this thread's claimed message, or settle it (a live run holds
        the thread: tried later). What it writes is committed by the
        processor."""
        self.ensure_one()
        if durability.run_is_alive(self.env.cr, self.id):
            _logger.info("Queued message of conversation %s: a live run holds the thread; tried later", self.id)
            self._queue_defer(settings)
        elif self.state != "queued":
            self._queue_settle_started(self.env._("its worker stopped"))
        elif self.queue_attempts > settings.max_attempts:  # its last attempt died with its worker
            self._queue_retire(self.last_error or self.env._("its worker stopped"), settings)
        else:
            try:
                self._queue_run_as_user()
            except Exception as exc:  # noqa: BLE001 - every failure is recorded on the thread, bugs logged as errors
                self.env.cr.rollback()  # back to the claim, or to the run's last committed step
                self._queue_failed(exc, settings)
            else:
                self._queue_clear()

    def _queue_run_as_user(self):
        """``agent.run`` of the pending message as the thread's user, in the
        thread's company and the user's language and time zone."""
        self._validate_fields(["user_id", "company_id"])  # the user may have lost the company since it was queued
        user = self.user_id
        context = self.env["res.users"].with_user(user).context_get()
        as_user = self.with_user(user).with_context(
            lang=context.get("lang"), tz=context.get("tz"), allowed_company_ids=[self.company_id.id])
        answer = self.pending_answer
        if answer:  # the question waits again for this answer's run alone, never committed so (see below)
            self._set_runtime_state(state="waiting_confirmation")
            as_user._handle_confirmation(
                bool(answer.get("approved")), answer.get("reason") or "", tool_call_id=answer.get("tool_call_id"),
                confirmation_id=answer.get("confirmation_id"), durable=True)
            return
        # A queued thread is busy to every other caller; the run starts from an idle one. Never committed
        # alone: the run writes executing before its first commit, and a failure rolls back to queued.
        self._set_runtime_state(state="active")
        as_user.agent_id.run(self.id, self.pending_message, durable=True)

    def _queue_failed(self, exc, settings):
        """Record a failed run (rolled back): a lock conflict is tried again
        uncounted; an error is tried again until the last attempt."""
        if not self.exists():  # its user deleted the conversation meanwhile
            return
        conflict = is_lock_conflict(exc)
        expected = isinstance(exc, EXPECTED_ERRORS)
        error = exc.args[0] if expected and exc.args else f"{type(exc).__name__} (details in the server log)"
        if expected or conflict:
            _logger.warning("Queued message of conversation %s, attempt %s of %s: %s: %s", self.id,
                            self.queue_attempts, settings.max_attempts, type(exc).__name__, exc)
        else:
            _logger.error("Queued message of conversation %s failed", self.id, exc_info=exc)
        if self.state != "queued":
            self._queue_settle_started(error)
        elif conflict:
            self._queue_defer(settings)
        elif self.queue_attempts >= settings.max_attempts:
            self._queue_retire(error, settings)
        else:
            self._queue_defer(settings, error)

    def _queue_defer(self, settings, error=None):
        """Try the message again after the retry delay; without ``error`` (a
        lock conflict) its attempt is given back."""
        values = {}
        if self.state == "queued":
            retry_at = fields.Datetime.now() + settings.retry_after
            values.update(queue_claimed_at=False, queue_retry_at=retry_at)
            self._queue_trigger(retry_at)
        else:  # its run started elsewhere and may be alive: look again once this claim is stale
            values["queue_claimed_at"] = fields.Datetime.now()
        if error is None:
            values["queue_attempts"] = max(self.queue_attempts - 1, 0)
        else:
            values["last_error"] = self.env._("Attempt %(n)s of %(max)s failed: %(error)s", n=self.queue_attempts,
                                              max=settings.max_attempts, error=error)
        self._set_runtime_state(**values)

    def _queue_retire(self, error, settings):
        """Give the message up: it and the error go to the transcript and the
        thread ends ``error``; an answer given up leaves its question waiting
        again, the error said."""
        if self.pending_answer:
            # Between the call and its result: the agent's words, never sent to the model as its own (llm_failure).
            self._add_message("assistant", self.env._(
                "Your answer (%(answer)s) could not be processed after %(n)s attempts, so nothing was done: "
                "%(error)s. The question still waits for your answer.", answer=self.pending_message,
                n=settings.max_attempts, error=error), llm_failure=True)
        else:
            self._add_message("user", self.pending_message)
            self._add_message("assistant", self.env._(
                "Your message could not be processed after %(n)s attempts, so nothing more will be done with it: "
                "%(error)s", n=settings.max_attempts, error=error))
        self.env["agentic.ai.execution.log"].log("error", thread=self, success=False, error_message=error,
                                                 input_data={"queue_attempts": self.queue_attempts})
        self._set_runtime_state(state="waiting_confirmation" if self.pending_answer else "error", last_error=error)
        self._queue_clear()

    def _queue_settle_started(self, error):
        """The message's run started (the transcript holds it) and is over:
        never run it twice. A thread its dead run left ``executing`` is
        repaired (engine/durable/durability.py: each call without a result gets one
        saying its outcome is unknown); one left ``active`` is marked
        ``interrupted``."""
        if self.state == "executing" and not self._repair_dead_run():  # calls without a result get theirs
            self._queue_clear()  # a run still holds the thread (another worker): it ends the turn itself
            return
        if self.state == "active":
            self._add_message("assistant", self.env._(
                "The run of your queued message stopped before it finished (%s); what it did is above. "
                "Send a message to continue.", error))
            self._set_runtime_state(state="interrupted", last_error=error)
        self._queue_clear()

    def _queue_clear(self):
        self._set_runtime_state(pending_message=False, pending_answer=False, async_requested_at=False,
                                queue_claimed_at=False, queue_retry_at=False)
