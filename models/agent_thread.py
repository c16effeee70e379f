import logging
from dataclasses import replace

from odoo import api, fields, models
from odoo.exceptions import AccessError, LockError, UserError, ValidationError

from ..engine.durable import durability
from ..engine.guard.confirmation import ConfirmationRequest
from ..engine.runtime import MAX_MESSAGE_CHARS, AgentRuntime
from ..engine.text.clean_text import clean_text, is_blank
from ..engine.turn.agent_result import AgentResult
from ..engine.turn.transcript import Transcript
from ..llm.usage import FIGURES as USAGE_FIGURES
from ..tools.values.json_values import dumps
from .agent_execution_log import USAGE_AGGREGATES

_logger = logging.getLogger(__name__)


# Written by the engine only (as superuser), never by a client's create() or write().
# A tool result kept on its transcript row only up to this size (JSON characters); see add_tool_result.
TOOL_RESULT_DATA_CHARS = 20000

RUNTIME_FIELDS = {"state", "pending_confirmation", "pending_message", "pending_answer", "async_requested_at",
                  "last_error",
                  "queue_attempts", "queue_claimed_at", "queue_retry_at", "mode_used", "mode_reason",
                  "memory_pending"}
# Fixed when the conversation is created.
FROZEN_FIELDS = {"agent_id", "user_id", "company_id"}


class AgenticAiThread(models.Model):
    """A conversation between a user and an agent (spec 000 §3.4).

    The transcript is the state: ``message_ids`` in order is exactly what is
    replayed to the LLM, so a thread resumes cleanly after a confirmation, a
    crash or a restart."""
    _name = "agentic.ai.thread"
    _description = "AI Agent Thread"
    _order = "write_date desc, id desc"

    name = fields.Char(required=True, default=lambda self: self.env._("New conversation"))
    active = fields.Boolean(default=True, help="Archived conversations are hidden from the chat's sidebar and "
                                               "the Conversations list; they keep their transcript.")
    agent_id = fields.Many2one("agentic.ai.agent", required=True, ondelete="cascade", index=True)
    user_id = fields.Many2one("res.users", required=True, default=lambda self: self.env.user, index=True,
                              ondelete="cascade")
    company_id = fields.Many2one("res.company", required=True, default=lambda self: self.env.company)
    state = fields.Selection([
        ("active", "Active"),
        ("queued", "Queued"),
        ("executing", "Executing"),
        ("waiting_confirmation", "Waiting Confirmation"),
        ("completed", "Completed"),
        ("interrupted", "Interrupted"),
        ("error", "Error"),
    ], default="active", required=True, index=True,
        help="queued: a message waits for the asynchronous processor; interrupted: the run stopped before it "
             "finished (the client left, the user stopped it, or its worker ended) and what it did is kept.")
    message_ids = fields.One2many("agentic.ai.thread.message", "thread_id", string="Messages")
    message_count = fields.Integer(compute="_compute_message_count")
    execution_log_ids = fields.One2many("agentic.ai.execution.log", "thread_id", string="Execution Logs")
    plan_ids = fields.One2many("agentic.ai.plan", "thread_id", string="Plans")
    plan_count = fields.Integer(compute="_compute_plan_count")
    mode_used = fields.Selection([
        ("react", "ReAct"),
        ("plan_and_execute", "Plan and Execute"),
    ], string="Last Turn Mode", readonly=True, help="How the last turn ran (the Hybrid mode chooses per request).")
    mode_reason = fields.Char(readonly=True, help="Why the last turn ran in that mode.")
    pending_confirmation = fields.Text(
        help="JSON of the tool call waiting for the user's approval: {tool_call_id, tool, arguments, reason}.")
    last_error = fields.Text(readonly=True)
    stop_requested = fields.Boolean(compute="_compute_stop_requested",
                                    help="The user asked to stop the running request; the run stops at its next "
                                         "step boundary (models/agent_thread_stop.py).")
    pending_summary = fields.Text(string="Waiting for your confirmation", compute="_compute_pending_summary",
                                  help="What the paused call would do: records by name, values before → after, "
                                       "risk and why it is asked.")
    draft_message = fields.Text(string="Message", help="Typed in the conversation form; sent by the Send button.")
    total_input_tokens = fields.Integer(compute="_compute_usage")
    total_cache_read_tokens = fields.Integer(compute="_compute_usage", string="Total Cached Input Tokens")
    total_output_tokens = fields.Integer(compute="_compute_usage")
    total_reasoning_tokens = fields.Integer(compute="_compute_usage")
    total_cost = fields.Float(compute="_compute_usage", digits=(16, 6), string="Total Cost (USD)")
    usage_estimated = fields.Boolean(
        compute="_compute_usage", string="Usage Partly Estimated",
        help="Some LLM calls of this conversation came without the provider's token counts: they were estimated.")

    @api.depends("message_ids")
    def _compute_message_count(self):
        counts = dict(self.env["agentic.ai.thread.message"]._read_group(
            [("thread_id", "in", self.ids)], ["thread_id"], ["__count"]))
        for thread in self:
            thread.message_count = counts.get(thread, 0)

    @api.depends("plan_ids")
    def _compute_plan_count(self):
        counts = dict(self.env["agentic.ai.plan"]._read_group(
            [("thread_id", "in", self.ids)], ["thread_id"], ["__count"]))
        for thread in self:
            thread.plan_count = counts.get(thread, 0)

    def _compute_stop_requested(self):
        stopped = self.env["agentic.ai.thread.stop"]._stopped_thread_ids(self.ids)
        for thread in self:
            thread.stop_requested = thread.id in stopped

    @api.depends("pending_confirmation", "state")
    def _compute_pending_summary(self):
        for thread in self:
            pending = thread.get_pending_confirmation() if thread.id else False
            thread.pending_summary = pending["summary"] if pending else False

    @api.depends("execution_log_ids")
    def _compute_usage(self):
        rows = self.env["agentic.ai.execution.log"].sudo()._read_group(
            [("thread_id", "in", self.ids)], ["thread_id"], USAGE_AGGREGATES)
        names = [*USAGE_FIGURES, "cost", "usage_estimated"]  # USAGE_AGGREGATES' order
        usage = {thread.id: dict(zip(names, values, strict=True)) for thread, *values in rows}
        for thread in self:
            totals = usage.get(thread.id, {})
            thread.update({f"total_{name}": totals.get(name, 0) for name in (
                "input_tokens", "cache_read_tokens", "output_tokens", "reasoning_tokens", "cost")})
            thread.usage_estimated = bool(totals.get("usage_estimated"))

    @api.constrains("company_id", "user_id")
    def _check_company_of_user(self):
        for thread in self:
            if thread.company_id not in thread.user_id.company_ids:
                raise ValidationError(self.env._("A conversation must belong to one of its user's companies."))

    @api.model_create_multi
    def create(self, vals_list):
        if not self.env.su:
            for vals in vals_list:
                if RUNTIME_FIELDS.intersection(vals):
                    raise AccessError(self.env._("The state of a conversation is managed by the agent."))
                # Explicit values, so that no ``default_*`` context key can set them.
                vals.update(dict.fromkeys(RUNTIME_FIELDS, False), state="active")
        for vals in vals_list:
            if "name" in vals:
                vals["name"] = clean_text(vals["name"], 200) or self.env._("New conversation")
        return super().create(vals_list)

    def write(self, vals):
        if not self.env.su:
            if RUNTIME_FIELDS.intersection(vals):
                raise AccessError(self.env._("The state of a conversation is managed by the agent."))
            for field_name in FROZEN_FIELDS.intersection(vals):
                if any(thread[field_name].id != vals[field_name] for thread in self):
                    raise AccessError(self.env._("The agent, user and company of a conversation cannot be changed."))
        if "name" in vals:
            vals = {**vals, "name": clean_text(vals["name"], 200) or self.env._("New conversation")}
        return super().write(vals)

    @api.ondelete(at_uninstall=False)
    def _unlink_except_running(self):
        """A conversation whose run is alive (in this worker or another)
        cannot be deleted: the run would fail on its next row. Checking
        also keeps a new run from starting on it until the deletion is
        committed (engine/durable/durability.py)."""
        for thread in self:
            if durability.run_is_alive(self.env.cr, thread.id):
                raise UserError(self.env._("The conversation %s is running; stop it or wait for it to finish "
                                           "before deleting it.", thread.name))

    def _set_runtime_state(self, **values):
        """Write the fields only the engine may change (see RUNTIME_FIELDS).
        Texts (an error a provider or a tool worded, a queued message) are
        made storable first (engine/text/clean_text.py)."""
        self.sudo().write({key: clean_text(value) if isinstance(value, str) else value
                           for key, value in values.items()})

    # ------------------------------------------------------------- transcript
    def _add_message(self, role, content="", owner=None, mark_call=None, **values):
        """Append a transcript row (``agentic.ai.thread.message._append``:
        one INSERT, ``mark_call`` as it takes it). Rows are written by the
        engine only: users read them, they never create or edit them.
        ``owner``: this thread's ``{"user_id", "company_id"}`` (ids) when the
        caller read them already (``_owner``), so that the row's INSERT does
        not read the thread again."""
        self.ensure_one()
        for key in ("tool_name", "tool_arguments", "tool_result_data"):
            if values.get(key):
                values[key] = clean_text(values[key])
        message = self.env["agentic.ai.thread.message"].sudo()._append(
            {"thread_id": self.id, "role": role, "content": clean_text(content), **(owner or {}), **values},
            mark_call=mark_call)
        return message.sudo(False)

    def _owner(self):
        """``{"user_id", "company_id"}`` of this thread (ids), fixed once it is
        created (FROZEN_FIELDS): what each transcript row carries."""
        self.ensure_one()
        return {"user_id": self.user_id.id, "company_id": self.company_id.id}

    @api.private
    def _mark_turn_given_read_text(self):
        """Mark the latest user message: its turn was given read text
        (memories not written by the user's hand, knowledge excerpts), so
        memory consolidation leaves that turn out (issue 23 point 3)."""
        self.ensure_one()
        row = self.env["agentic.ai.thread.message"].sudo().search(
            [("thread_id", "=", self.id), ("role", "=", "user")], order="id desc", limit=1)
        if row and not row.untrusted_content:
            row.untrusted_content = True

    @api.private
    def add_user_message(self, content, owner=None):
        """Append the user's message; returns the message record. ``owner``
        as for ``_add_message`` (so for every ``add_*`` here)."""
        return self._add_message("user", content, owner)

    @api.private
    def add_assistant_message(self, content, **values):
        """Append an answer of the agent; returns the message record."""
        return self._add_message("assistant", content, **values)

    @api.private
    def add_tool_call(self, tool_call, content="", owner=None):
        """Append one call the model requested (``llm.ToolCall``); ``content``
        is the text the model sent along with its calls."""
        return self._add_message(
            "tool_call", content, owner,
            tool_call_id=tool_call.id,
            tool_call_id_generated=tool_call.id_generated,
            tool_provider_data=tool_call.provider_data or False,
            tool_name=tool_call.name,
            # What the model sent when it was not valid (for the audit), cut to a readable size.
            tool_arguments=(dumps(tool_call.arguments) if not tool_call.parse_error
                            else (tool_call.raw_arguments or "")[:10000]),
            tool_status="requested",
        )

    @api.private
    def add_tool_result(self, tool_call_id, tool_name, content, success=True, data=None, status=None, call=None,
                        untrusted=False, owner=None):
        """Append a tool's observation and mark its call with ``status``:
        done, error (by default from ``success``) or rejected. ``call`` is the
        call's row when the caller has it (else it is looked up);
        ``untrusted`` that the observation holds free text from records.
        ``data`` (the tool's result) is kept as ``tool_result_data`` when its
        JSON fits in TOOL_RESULT_DATA_CHARS: whole, never cut into invalid
        JSON; a larger result is in the call's execution log row only, and
        the model reads the observer's capped ``content`` either way."""
        self.ensure_one()
        status = status or ("done" if success else "error")
        data_json = dumps(data) if data is not None else ""
        if len(data_json) > TOOL_RESULT_DATA_CHARS:  # kept whole in the call's execution log row only (BR-19)
            data_json = ""
        if call is None:
            call = self.env["agentic.ai.thread.message"].sudo().search(
                [("thread_id", "=", self.id), ("tool_call_id", "=", tool_call_id), ("role", "=", "tool_call")])
        return self._add_message(
            "tool_result", content, owner, mark_call=(call, status) if call else None,
            tool_call_id=tool_call_id, tool_name=tool_name, tool_status=status,
            tool_result_data=data_json or False,
            untrusted_content=bool(untrusted),
        )

    @api.private
    def get_messages_for_llm(self, system_message=None):
        """The transcript as neutral LLM messages (see ``llm/base.py`` and
        ``engine/turn/transcript.py``), the system prompt first when given."""
        self.ensure_one()
        return Transcript(self).for_llm(system_message)

    def _current_plan(self):
        """The thread's most recent plan (``agentic.ai.plan``, empty when it
        has none), spec 000 §3.5; found whatever the record rules of the
        caller's environment, returned in that environment."""
        self.ensure_one()
        plan = self.env["agentic.ai.plan"].sudo().search([("thread_id", "=", self.id)], order="id desc", limit=1)
        return plan.with_env(self.env)

    # ------------------------------------------------------------- form actions
    def action_send_message(self):
        """Send button of the conversation form: run ``draft_message``."""
        self.ensure_one()
        message = (self.draft_message or "").strip()
        if not message:
            raise UserError(self.env._("Type a message first."))
        self.draft_message = False
        self.agent_id.run(self.id, message)

    def action_approve_confirmation(self):
        self.ensure_one()
        self.handle_confirmation(True)

    def action_reject_confirmation(self):
        self.ensure_one()
        reason, self.draft_message = (self.draft_message or "").strip(), False
        self.handle_confirmation(False, reason)

    def action_cancel_confirmation(self):
        self.ensure_one()
        self.cancel_confirmation()

    def action_review_confirmation(self):
        """Open the confirmation wizard on the pending call."""
        self.ensure_one()
        self._check_waiting()
        return {
            "type": "ir.actions.act_window",
            "name": self.env._("Confirm the agent's action"),
            "res_model": "agentic.ai.confirm.wizard",
            "view_mode": "form",
            "target": "new",
            "context": {"default_thread_id": self.id},
        }

    def action_open_chat(self):
        """Open this conversation in the chat (the ``agentic_ai.chat_action``
        client action, spec 000 §10.1): a client action dict whose
        ``params`` carry ``thread_id`` (int). Raises UserError when several
        conversations are selected, AccessError when the user may not read it."""
        if len(self) != 1:
            raise UserError(self.env._("Select one conversation to open in the chat."))
        self.check_access("read")
        return {
            "type": "ir.actions.client",
            "tag": "agentic_ai.chat_action",
            "name": self.name,
            "params": {"thread_id": self.id},
        }

    # ----------------------------------------------------------- confirmation
    @api.private
    def request_confirmation(self, request: ConfirmationRequest):
        """Pause the thread on ``request`` until the user approves or rejects
        it; the stored request's ``confirmation_id`` is the id of the
        transcript row, which is returned."""
        self.ensure_one()
        message = self._add_message("confirmation_request", request.summary(), tool_call_id=request.tool_call_id,
                                    tool_name=request.tool, tool_arguments=dumps(request.arguments))
        request = replace(request, confirmation_id=message.id)  # this question's own id (an answer names it)
        self._set_runtime_state(state="waiting_confirmation", pending_confirmation=request.to_json())
        self.env["agentic.ai.execution.log"].log(
            "confirmation_request", thread=self, tool_name=request.tool, tool_call_id=request.tool_call_id,
            model_name=request.model or False, record_ids=[r.get("id") for r in request.records] or None,
            input_data=request.to_dict())
        return message

    @api.private
    def add_confirmation_response(self, request: ConfirmationRequest, approved, reason="", cancelled=False):
        """Record the user's answer to ``request`` (``cancelled``: the user
        ended the turn instead). Returns the transcript row."""
        self.ensure_one()
        answer = "cancelled" if cancelled else "approved" if approved else f"rejected: {reason}".strip()
        message = self._add_message("confirmation_response", answer, tool_call_id=request.tool_call_id,
                                    tool_name=request.tool)
        self.env["agentic.ai.execution.log"].log(
            "confirmation_response", thread=self, tool_name=request.tool, tool_call_id=request.tool_call_id,
            model_name=request.model or False, record_ids=[r.get("id") for r in request.records] or None,
            input_data={"approved": approved, "cancelled": cancelled, "reason": reason,
                        "arguments": request.arguments})
        return message

    def get_pending_confirmation(self):
        """The call waiting for the user's answer as a dict (see
        ``ConfirmationRequest``: tool, arguments, model, records by name,
        changes before → after, risk_level, reason, source) plus its
        ``summary`` text, or False when none waits."""
        self.ensure_one()
        if self.state != "waiting_confirmation" or not self.pending_confirmation:
            return False
        try:
            request = ConfirmationRequest.from_json(self.pending_confirmation)
        except ValueError:
            return False
        return {**request.to_dict(), "summary": request.summary()}

    def handle_confirmation(self, approved, reason=None, tool_call_id=None, confirmation_id=None):
        """Resume the paused run: execute the pending call when ``approved``,
        else tell the model ``[CONFIRMATION_REJECTED]`` with ``reason`` and let
        it choose another way. ``confirmation_id`` and ``tool_call_id``, when
        given, must name the question waiting now (the answer is for what
        the user saw; checked again by the runtime under the run lock, see
        ``_check_confirmation_answer``). Returns the runtime's
        ``AgentResult``; raises as ``_check_can_answer``."""
        return self._handle_confirmation(approved, reason, tool_call_id, confirmation_id)

    def _handle_confirmation(self, approved, reason=None, tool_call_id=None, confirmation_id=None, durable=None,
                             emit=None, should_stop=None):
        """``handle_confirmation`` with the run's hooks (``durable``, ``emit``,
        ``should_stop``: see ``_send_message``), which no RPC client can pass."""
        self._check_can_answer(approved, reason, tool_call_id, confirmation_id)
        return self._runtime(durable, emit, should_stop).resume_after_confirmation(
            approved, clean_text(reason or "", 2000), tool_call_id=tool_call_id, confirmation_id=confirmation_id)

    # ---------------------------------------------------------------- the door
    def send_message(self, message):
        """Run ``message`` as the next turn of this thread (spec 000 §4.1).
        Returns the runtime's ``AgentResult``; raises as ``_check_can_send``.
        Every door comes this way, through ``_send_message``: the JSON
        route, the stream, the queue (a webhook through it) and
        ``agentic.ai.agent.run``."""
        return self._send_message(message)

    def _send_message(self, message, durable=None, emit=None, should_stop=None, checked=False):
        """``send_message`` with the run's hooks, which no RPC client can
        pass: ``durable``, commit each finished step
        (engine/durable/durability.py; None: when the run owns an HTTP
        request's transaction); ``emit(event, data)``, the run's events
        (spec §10.2); ``should_stop()``, asked at each step boundary;
        ``checked``, the caller asked ``_check_can_send`` in this request
        (the stream route, before it answered): what cannot have changed
        since (the thread's owner) is not read again, what the runtime
        checks itself under the thread's row lock (the message, a run or a
        queued message that took the thread) neither; whether the user may
        still use the agent is (the run may start many seconds later, after
        its wait at the gate)."""
        if checked:
            self.agent_id._check_runnable(self.env.user)
        else:
            self._check_can_send(message)
        return self._runtime(durable, emit, should_stop).run_turn(message)

    def _check_can_send(self, message):
        """Raise unless the current user may send ``message`` here now:
        AccessError (another user's thread, an agent they may not use),
        UserError (an inactive agent, an empty or too long message),
        LockError (a run holds the thread, or it is queued or executing).
        The stream route asks it before it answers (issue 25 point 3)."""
        self._check_can_run()
        self._check_message(message)
        if self.state in ("queued", "executing"):
            raise LockError(self.env._("This conversation is busy; wait for the current request to finish."))

    @api.model
    def _check_message(self, message):
        """``message`` as storable text (``clean_text``), or UserError when it
        is blank (``is_blank``) or longer than MAX_MESSAGE_CHARS once
        cleaned: the one check of a message, at every door (the model's,
        the queue's, the runtime's)."""
        if is_blank(message):
            raise UserError(self.env._("The message is empty."))
        text = clean_text(message)
        if len(text) > MAX_MESSAGE_CHARS:
            raise UserError(self.env._("The message is too long: %(n)s characters, at most %(max)s.",
                                       n=len(text), max=MAX_MESSAGE_CHARS))
        return text

    def _check_can_answer(self, approved, reason=None, tool_call_id=None, confirmation_id=None):
        """Raise unless the current user may answer the question waiting
        here with these values: as ``_check_can_run``, then UserError when
        nothing waits, ``approved`` is not a boolean, ``reason`` not a text,
        or the answer names another question than the one waiting."""
        self._check_can_run()
        self._check_waiting()
        if not isinstance(approved, bool):
            raise UserError(self.env._("approved must be true or false."))
        if reason is not None and not isinstance(reason, str):
            raise UserError(self.env._("The reason must be a text."))
        self._check_confirmation_answer(tool_call_id, confirmation_id)

    def _check_can_run(self):
        """Raise unless the current user may run this thread now: its own
        (AccessError), with an agent they may use that is active, and no
        run holding it (LockError: it holds the run lock before its state
        says so)."""
        self.ensure_one()
        self._check_owner_access()
        self.agent_id._check_runnable(self.env.user)
        if durability.run_is_alive(self.env.cr, self.id):
            raise LockError(self.env._("This conversation is already being processed."))

    def _runtime(self, durable=None, emit=None, should_stop=None):
        """The AgentRuntime of a run on this thread, built here and nowhere
        else in the product (issue 25 point 1): every way in comes through
        ``_send_message``, ``_handle_confirmation`` or ``cancel_confirmation``."""
        self.ensure_one()
        return AgentRuntime(self.agent_id, self, durable=durable, emit=emit, should_stop=should_stop)

    @api.private
    def _check_confirmation_answer(self, tool_call_id=None, confirmation_id=None):
        """Raise UserError unless the answer names the question waiting
        now: ``confirmation_id`` (int) its own id, ``tool_call_id`` (str)
        its call. A call asked about again (its approval reached a change
        the user had not been shown) must be answered by ``confirmation_id``:
        a repeated approval of the first question, by call id alone, must
        not approve the second one unseen."""
        pending = self.get_pending_confirmation() or {}
        if confirmation_id is not None and (
                not isinstance(confirmation_id, int) or isinstance(confirmation_id, bool)
                or confirmation_id != pending.get("confirmation_id")):
            raise UserError(self.env._("This conversation is waiting for another question than the one you "
                                       "answered; nothing was run."))
        if tool_call_id is None:
            return
        if tool_call_id != pending.get("tool_call_id"):
            raise UserError(self.env._("This conversation is waiting for another action than the one you answered; "
                                       "nothing was run."))
        if confirmation_id is None and self.env["agentic.ai.thread.message"].search_count([
                ("thread_id", "=", self.id), ("role", "=", "confirmation_response"),
                ("tool_call_id", "=", tool_call_id)], limit=1):
            raise UserError(self.env._(
                "The agent asks again about this action (it reached a change you had not been shown); nothing "
                "was run. Read the new question and answer it with its confirmation_id %s.",
                pending.get("confirmation_id")))

    def cancel_confirmation(self):
        """End the paused turn without running the pending call and without
        calling the model. Returns the runtime's ``AgentResult``."""
        self._check_waiting()
        return self._runtime().cancel_confirmation()

    def cancel_current(self):
        """Cancel what this thread is doing, at its user's word: a waiting
        confirmation (its call is not run), a queued message (not run), or
        a running request (``stop_requested``: it stops at its next step
        boundary, keeping what it did). Returns the runtime's
        ``AgentResult``, or None when a running request was asked to stop.
        Raises UserError when there is nothing to cancel."""
        self.ensure_one()
        self._check_owner_access()
        if self.state == "waiting_confirmation":
            return self.cancel_confirmation()
        if self.state == "queued":
            note = self._cancel_queued()
            return AgentResult(thread_id=self.id, state=self.state, reply=note.content, message_ids=note.ids)
        if self.state == "executing" and not self._repair_dead_run():
            durability.request_stop(self.env.cr, self.id)
            self.invalidate_recordset(["stop_requested"])
            return None
        raise UserError(self.env._("This conversation has nothing running to cancel."))

    def get_stats(self):
        """Usage of this thread from its execution log: ``{thread_id,
        input_tokens, cache_read_tokens, cache_write_tokens, output_tokens,
        reasoning_tokens, total_tokens, cost (USD), llm_calls,
        failed_llm_calls, estimated_llm_calls, usage_estimated, tool_calls,
        failed_tool_calls, messages, duration_ms}`` (duration: LLM and tool
        time, milliseconds). ``estimated_llm_calls`` counts the calls whose
        provider sent no usage figures (estimated with the tokenizer);
        ``usage_estimated`` is True when there is one."""
        self.ensure_one()
        self.check_access("read")
        rows = self.env["agentic.ai.execution.log"].sudo()._read_group(
            [("thread_id", "=", self.id)], ["action_type", "success", "usage_estimated"],
            ["__count", *USAGE_AGGREGATES[:-1], "duration_ms:sum"])
        stats = dict.fromkeys(("llm_calls", "failed_llm_calls", "estimated_llm_calls", "tool_calls",
                               "failed_tool_calls", "duration_ms", *USAGE_FIGURES), 0)
        cost = 0.0
        for action_type, success, estimated, count, *figures, row_cost, duration in rows:
            for name, value in zip(USAGE_FIGURES, figures, strict=True):
                stats[name] += value
            cost += row_cost
            if action_type in ("llm_call", "tool_execution"):
                kind = "llm_calls" if action_type == "llm_call" else "tool_calls"
                stats[kind] += count
                stats["duration_ms"] += duration
                if not success:
                    stats["failed_" + kind] += count
                if estimated and kind == "llm_calls":
                    stats["estimated_llm_calls"] += count
        return {"thread_id": self.id, **stats, "total_tokens": stats["input_tokens"] + stats["output_tokens"],
                "cost": round(cost, 6), "usage_estimated": bool(stats["estimated_llm_calls"]),
                "messages": self.message_count}

    def _check_waiting(self):
        """Raise unless this is the user's own thread waiting for an answer."""
        self.ensure_one()
        self._check_owner_access()
        self.agent_id._check_runnable(self.env.user)
        if self.state != "waiting_confirmation" or not self.pending_confirmation:
            raise UserError(self.env._("This conversation is not waiting for a confirmation."))

    # -------------------------------------------------------------- durability
    def _repair_dead_run(self):
        """Close each of these threads that a dead run left ``executing``
        (engine/durable/durability.py, case BR-25a). Returns the repaired threads."""
        return self.filtered(durability.repair_dead_run)

    @api.model
    def _repair_dead_runs(self, limit=100):
        """Repair the threads dead runs left ``executing`` (the queue cron
        calls this). Returns the repaired threads."""
        threads = self.sudo().with_context(active_test=False)  # an archived conversation's dead run too
        return threads.search([("state", "=", "executing")], order="write_date", limit=limit)._repair_dead_run()

    # ------------------------------------------------------------------ access
    def _check_owner_access(self):
        """Only the thread's own user may run it or answer its confirmations:
        tools run with that user's rights and are logged in their name.
        (AI operators may read every thread, not act in it.)"""
        for thread in self:
            if thread.user_id != self.env.user:
                raise AccessError(self.env._("This conversation belongs to another user."))
