"""Chat endpoints (spec 000 §11.1), JSON-RPC, for the logged-in user.

Each route takes named parameters only, checks that the user may use the
agent or owns the thread, calls a model method and serialises the answer
in the addon's one JSON form (tools/values/json_values.py: datetimes in UTC with
their offset, empty values null). No business logic lives here."""
from odoo import http
from odoo.exceptions import AccessError, MissingError, UserError
from odoo.http import request
from odoo.tools import str2bool

from ..engine.runtime import MAX_MESSAGE_CHARS
from ..engine.text.clean_text import clean_text, is_blank
from ..tools.values.json_values import to_json_value

MAX_NAME_CHARS = 200
MAX_INT = 2**31 - 1
MAX_REASON_CHARS = 2000


def _thread_dict(thread):
    """``{id, name, agent_id, agent_name, state, last_error, stop_requested,
    confirmation, create_date}``; ``confirmation`` is the call waiting for
    the user (see ``agentic.ai.thread.get_pending_confirmation``) or null."""
    fields = thread._fields
    return {
        "id": thread.id,
        "name": to_json_value(thread.name, fields["name"]),
        "agent_id": thread.agent_id.id,
        "agent_name": thread.agent_id.name,
        "state": thread.state,
        "last_error": thread.last_error or None,
        "stop_requested": thread.stop_requested,
        "confirmation": to_json_value(thread.get_pending_confirmation() or None),
        "create_date": to_json_value(thread.create_date, fields["create_date"]),
    }


def _messages(thread, after_id=0, limit=200):
    """The thread's rows after ``after_id``, oldest first, in the one row
    shape (``agentic.ai.thread.message._payloads``), read in the thread's
    environment."""
    return thread.env["agentic.ai.thread.message"].search(
        [("thread_id", "=", thread.id), ("id", ">", int(after_id or 0))], order="id", limit=int(limit))._payloads()


def _answer(thread, result):
    """``{result, thread, messages}``: a run's result, the thread, and the
    rows the run added (``messages``, oldest first)."""
    ids = (result or {}).get("message_ids") or []
    return {"result": to_json_value(dict(result)) if result is not None else None, "thread": _thread_dict(thread),
            "messages": _messages(thread, min(ids) - 1) if ids else []}


class AgenticAiChatController(http.Controller):

    @staticmethod
    def _int_param(name, value):
        """``value`` as a whole number from 0 to 2**31 - 1 (PostgreSQL's
        integer); UserError naming the parameter otherwise."""
        text = str(value).strip() if isinstance(value, (int, str)) and not isinstance(value, bool) else ""
        # Its length first: Python refuses to read a text of more than 4,300 digits as a number (ValueError).
        if not (text.isascii() and text.isdigit()) or len(text) > len(str(MAX_INT)) or int(text) > MAX_INT:
            raise UserError(request.env._("Parameter %(name)s must be a whole number from 0 to %(max)s, got %(value)r.",
                                          name=name, max=MAX_INT, value=str(value)[:40]))
        return int(text)

    @staticmethod
    def _message_param(message, name="message"):
        """``message`` as a non-empty text of at most MAX_MESSAGE_CHARS
        characters once cleaned (as the runtime counts them); UserError
        naming the parameter ``name`` otherwise, before anything is stored
        or streamed."""
        if is_blank(message):
            raise UserError(request.env._("Parameter %s must be a non-empty text.", name))
        length = len(clean_text(message))
        if length > MAX_MESSAGE_CHARS:
            raise UserError(request.env._("Parameter %(name)s is too long: %(n)s characters, at most %(max)s.",
                                          name=name, n=length, max=MAX_MESSAGE_CHARS))
        return message

    @staticmethod
    def _get_thread(thread_id):
        """The thread, readable by the current user (record rules apply),
        repaired first when a dead run left it executing
        (engine/durable/durability.py). Raises UserError/AccessError/MissingError."""
        thread_id = AgenticAiChatController._int_param("thread_id", thread_id)
        thread = request.env["agentic.ai.thread"].browse(thread_id).exists()
        if not thread:
            raise MissingError(request.env._("Conversation %s does not exist.", thread_id))
        thread.check_access("read")
        thread._repair_dead_run()
        return thread

    @staticmethod
    def _text_param(name, value, required=True, max_chars=MAX_REASON_CHARS):
        """``value`` as a text of at most ``max_chars`` characters (None or
        "" when not ``required``); UserError naming the parameter otherwise."""
        if value is None and not required:
            return ""
        if not isinstance(value, str) or (required and not value.strip()) or len(value) > max_chars:
            raise UserError(request.env._("Parameter %(name)s must be a%(req)s text of at most %(max)s characters.",
                                          name=name, req=" non-empty" if required else "", max=max_chars))
        return value

    @http.route("/agentic_ai/agents", type="jsonrpc", auth="user", methods=["POST"])
    def agents(self):
        """Active agents the user may use: ``[{id, name, code, description,
        execution_mode, streaming}]``. ``streaming`` (added later; a client
        that ignores it keeps working) is false when an administrator set the
        system parameter ``agentic_ai.chat_polling`` (Settings, "Follow runs
        by polling"), e.g. behind a proxy that buffers responses: the chat
        client then queues messages with ``chat/send_async`` and polls
        ``chat/poll`` instead of reading ``chat/stream``."""
        agents = request.env["agentic.ai.agent"].search([("state", "=", "active")])
        streaming = not str2bool(
            request.env["ir.config_parameter"].sudo().get_param("agentic_ai.chat_polling") or "0", default=False)
        usable = []
        for agent in agents:
            try:
                agent._check_user_access(request.env.user)
            except AccessError:
                continue
            usable.append({"id": agent.id, "name": agent.name, "code": agent.code,
                           "description": agent.description or "", "execution_mode": agent.execution_mode,
                           "streaming": streaming})
        return usable

    @http.route("/agentic_ai/thread/create", type="jsonrpc", auth="user", methods=["POST"])
    def thread_create(self, agent_id=None, name=None, initial_message=None):
        """Create a thread (and run ``initial_message`` when given).
        Returns the thread, plus ``result`` when a message was run."""
        agent = request.env["agentic.ai.agent"].browse(self._int_param("agent_id", agent_id)).exists()
        if not agent:
            raise MissingError(request.env._("Agent %s does not exist.", agent_id))
        if name is not None and not isinstance(name, str):
            raise UserError(request.env._("Parameter name must be a text."))
        name = " ".join((name or "").split())[:MAX_NAME_CHARS] or None
        message = self._message_param(initial_message, "initial_message") if initial_message is not None else None
        thread = agent.start_thread(name=name)
        result = agent.run(thread.id, message).to_dict() if message else None
        out = _thread_dict(thread)
        if result:
            out["result"] = to_json_value(result)
        return out

    @http.route("/agentic_ai/thread/list", type="jsonrpc", auth="user", methods=["POST"])
    def thread_list(self, limit=50, offset=0):
        """The user's active (not archived) threads, newest first."""
        threads = request.env["agentic.ai.thread"].search(
            [("user_id", "=", request.env.uid)], limit=min(max(self._int_param("limit", limit), 1), 200),
            offset=self._int_param("offset", offset or 0))
        return [_thread_dict(t) for t in threads]

    @http.route("/agentic_ai/thread/messages", type="jsonrpc", auth="user", methods=["POST"])
    def thread_messages(self, thread_id=None, after_id=0, limit=200):
        """Messages of a thread after ``after_id``, oldest first."""
        thread = self._get_thread(thread_id)
        after_id = self._int_param("after_id", after_id or 0)
        limit = min(max(self._int_param("limit", limit), 1), 500)  # 0 would mean no limit to Odoo
        return {"thread": _thread_dict(thread), "messages": _messages(thread, after_id, limit)}

    @http.route("/agentic_ai/chat/send", type="jsonrpc", auth="user", methods=["POST"])
    def chat_send(self, thread_id=None, message=None):
        """Run ``message`` synchronously, committing each finished step.
        Returns ``{result, thread, messages}`` where ``messages`` are the
        rows this run added."""
        thread = self._get_thread(thread_id)
        return _answer(thread, thread.agent_id.run(thread.id, self._message_param(message), durable=True))

    @http.route("/agentic_ai/confirm/approve", type="jsonrpc", auth="user", methods=["POST"])
    def confirm_approve(self, thread_id=None, tool_call_id=None, confirmation_id=None):
        """Run the call waiting for confirmation: exactly the one shown,
        once. The question is named by ``confirmation_id`` (the
        confirmation's own id; needed when the agent asked again about the
        same call) or ``tool_call_id``, or both. Refused when it is not the
        one waiting (answered already, another thread's, asked again, or
        closed by a new message). Returns ``{result, thread, messages}``."""
        thread = self._get_thread(thread_id)
        call_id, question = self._question_params(tool_call_id, confirmation_id)
        return _answer(thread, thread.handle_confirmation(True, tool_call_id=call_id, confirmation_id=question))

    @http.route("/agentic_ai/confirm/reject", type="jsonrpc", auth="user", methods=["POST"])
    def confirm_reject(self, thread_id=None, tool_call_id=None, confirmation_id=None, reason=None):
        """Refuse the call waiting for confirmation (named as for approve);
        the model is told, with ``reason``, and answers. Returns ``{result,
        thread, messages}``."""
        thread = self._get_thread(thread_id)
        call_id, question = self._question_params(tool_call_id, confirmation_id)
        reason = self._text_param("reason", reason, required=False)
        return _answer(thread, thread.handle_confirmation(False, reason, tool_call_id=call_id,
                                                          confirmation_id=question))

    @classmethod
    def _question_params(cls, tool_call_id, confirmation_id):
        """``(tool_call_id or None, confirmation_id or None)`` of an answer,
        at least one given; UserError naming the parameter otherwise."""
        if tool_call_id is None and confirmation_id is None:
            raise UserError(request.env._("Name the question you answer: parameter confirmation_id (or "
                                          "tool_call_id) is required."))
        call_id = cls._text_param("tool_call_id", tool_call_id, max_chars=64) if tool_call_id is not None else None
        question = cls._int_param("confirmation_id", confirmation_id) if confirmation_id is not None else None
        return call_id, question

    @http.route("/agentic_ai/chat/cancel", type="jsonrpc", auth="user", methods=["POST"])
    def chat_cancel(self, thread_id=None):
        """Cancel what the thread is doing: a waiting confirmation (its call
        is not run), a queued message (not run), or a running request
        (it stops at its next step boundary). Returns ``{result, thread,
        messages}``; ``result`` is null when a running request was asked to
        stop (poll the thread for its end)."""
        thread = self._get_thread(thread_id)
        return _answer(thread, thread.cancel_current())

    @http.route("/agentic_ai/thread/stats", type="jsonrpc", auth="user", methods=["POST"])
    def thread_stats(self, thread_id=None):
        """Usage of a thread from its execution log, as
        ``agentic.ai.thread.get_stats`` gives it: tokens (input, of which
        cached; output, of which reasoning), cost (USD), calls, and how many
        LLM calls' usage was estimated."""
        return self._get_thread(thread_id).get_stats()

    @http.route("/agentic_ai/thread/plan", type="jsonrpc", auth="user", methods=["POST"])
    def thread_plan(self, thread_id=None, plan_id=None):
        """The execution plan of a thread (spec 000 §3.5, §11.1): ``{thread_id,
        mode, mode_reason, plan}``; ``mode`` is how the last turn ran (react
        or plan_and_execute, null before any), ``plan`` the plan ``plan_id``
        (which must be this thread's) or else the thread's latest plan, as
        ``agentic.ai.plan._payload()`` gives it, or null when there is none."""
        thread = self._get_thread(thread_id)
        if plan_id is not None:
            plan_id = self._int_param("plan_id", plan_id)
            plan = request.env["agentic.ai.plan"].browse(plan_id).exists()
            if not plan or plan.sudo().thread_id != thread:
                raise MissingError(request.env._("Plan %(plan)s does not exist in conversation %(thread)s.",
                                                 plan=plan_id, thread=thread.id))
        else:
            plan = thread._current_plan()
        return {"thread_id": thread.id, "mode": thread.mode_used or None, "mode_reason": thread.mode_reason or None,
                "plan": plan._payload() if plan else None}

    @http.route("/agentic_ai/chat/send_async", type="jsonrpc", auth="user", methods=["POST"])
    def chat_send_async(self, thread_id=None, message=None):
        """Queue ``message`` for the processor cron and return at once:
        ``{thread, state: "queued", after_id}``; poll with ``after_id`` for
        the messages the run adds."""
        thread = self._get_thread(thread_id)
        return self._queued(thread, lambda: thread._enqueue(self._message_param(message)))

    @http.route("/agentic_ai/confirm/approve_async", type="jsonrpc", auth="user", methods=["POST"])
    def confirm_approve_async(self, thread_id=None, tool_call_id=None, confirmation_id=None):
        """Queue the approval of the call waiting for confirmation (named as
        for approve, and checked the same way now) for the processor, and
        return at once: ``{thread, state: "queued", after_id}``; poll with
        ``after_id`` for what the run adds. The chat's way when its stream
        reaches a multi-process HTTP worker, which must not wait for the
        approved call and the model (issue 26 point 1)."""
        return self._answer_async(True, thread_id, tool_call_id, confirmation_id)

    @http.route("/agentic_ai/confirm/reject_async", type="jsonrpc", auth="user", methods=["POST"])
    def confirm_reject_async(self, thread_id=None, tool_call_id=None, confirmation_id=None, reason=None):
        """Queue the refusal of the call waiting for confirmation, with
        ``reason``, as ``confirm/approve_async`` queues an approval."""
        return self._answer_async(False, thread_id, tool_call_id, confirmation_id,
                                  self._text_param("reason", reason, required=False))

    def _answer_async(self, approved, thread_id, tool_call_id, confirmation_id, reason=None):
        thread = self._get_thread(thread_id)
        call_id, question = self._question_params(tool_call_id, confirmation_id)
        return self._queued(thread, lambda: thread._enqueue_answer(approved, reason, tool_call_id=call_id,
                                                                   confirmation_id=question))

    @staticmethod
    def _queued(thread, enqueue):
        """``enqueue()`` on ``thread``, then what the queuing routes answer:
        ``{thread, state, after_id}``, ``after_id`` the thread's last row
        before it (poll after it)."""
        last = request.env["agentic.ai.thread.message"].search([("thread_id", "=", thread.id)], order="id desc",
                                                               limit=1)
        enqueue()
        return {"thread": _thread_dict(thread), "state": thread.state, "after_id": last.id or 0}

    @http.route("/agentic_ai/chat/poll", type="jsonrpc", auth="user", methods=["POST"])
    def chat_poll(self, thread_id=None, after_id=0):
        """Messages after ``after_id`` and the thread's state:
        ``{thread, state, done, error, messages}``; ``done`` once the thread
        is neither queued nor executing."""
        thread = self._get_thread(thread_id)
        messages = _messages(thread, self._int_param("after_id", after_id or 0))
        return {"thread": _thread_dict(thread), "state": thread.state,
                "done": thread.state not in ("queued", "executing"), "error": thread.last_error or None,
                "messages": messages}
