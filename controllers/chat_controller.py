"""Chat endpoints (spec 000 §11.1), JSON-RPC, for the logged-in user.

Each route takes named parameters only, checks that the user may use the
agent or owns the thread, calls a model method and serialises the answer
in the addon's one JSON form (engine/json_values.py: datetimes in UTC with
their offset, empty values null). No business logic lives here."""
from odoo import http
from odoo.exceptions import AccessError, MissingError, UserError
from odoo.http import request

from ..engine.json_values import json_rows, to_json_value

MESSAGE_FIELDS = ["id", "role", "content", "tool_name", "tool_call_id", "tool_arguments", "tool_status", "create_date"]
MAX_NAME_CHARS = 200
MAX_INT = 2**31 - 1


def _thread_dict(thread):
    fields = thread._fields
    return {
        "id": thread.id,
        "name": to_json_value(thread.name, fields["name"]),
        "agent_id": thread.agent_id.id,
        "agent_name": thread.agent_id.name,
        "state": thread.state,
        "create_date": to_json_value(thread.create_date, fields["create_date"]),
    }


def _messages(thread, after_id=0, limit=200):
    messages = request.env["agentic.ai.thread.message"].search(
        [("thread_id", "=", thread.id), ("id", ">", int(after_id or 0))], order="id", limit=int(limit))
    return json_rows(messages, messages.read(MESSAGE_FIELDS))


class AgenticAiChatController(http.Controller):

    @staticmethod
    def _int_param(name, value):
        """``value`` as a whole number from 0 to 2**31 - 1 (PostgreSQL's
        integer); UserError naming the parameter otherwise."""
        text = str(value).strip() if isinstance(value, (int, str)) and not isinstance(value, bool) else ""
        if not (text.isascii() and text.isdigit()) or int(text) > MAX_INT:
            raise UserError(request.env._("Parameter %(name)s must be a whole number from 0 to %(max)s, got %(value)r.",
                                          name=name, max=MAX_INT, value=value))
        return int(text)

    @staticmethod
    def _message_param(message):
        if not isinstance(message, str) or not message.strip():
            raise UserError(request.env._("Parameter message must be a non-empty text."))
        return message

    def _get_thread(self, thread_id):
        """The thread, readable by the current user (record rules apply).
        Raises UserError/AccessError/MissingError."""
        thread = request.env["agentic.ai.thread"].browse(self._int_param("thread_id", thread_id)).exists()
        if not thread:
            raise MissingError(request.env._("Conversation %s does not exist.", thread_id))
        thread.check_access("read")
        return thread

    @http.route("/agentic_ai/agents", type="jsonrpc", auth="user", methods=["POST"])
    def agents(self):
        """Active agents the user may use: ``[{id, name, code, description, execution_mode}]``."""
        agents = request.env["agentic.ai.agent"].search([("state", "=", "active")])
        usable = []
        for agent in agents:
            try:
                agent._check_user_access(request.env.user)
            except AccessError:
                continue
            usable.append({"id": agent.id, "name": agent.name, "code": agent.code,
                           "description": agent.description or "", "execution_mode": agent.execution_mode})
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
        message = self._message_param(initial_message) if initial_message is not None else None
        thread = agent.start_thread(name=name)
        result = agent.run(thread.id, message).to_dict() if message else None
        out = _thread_dict(thread)
        if result:
            out["result"] = to_json_value(result)
        return out

    @http.route("/agentic_ai/thread/list", type="jsonrpc", auth="user", methods=["POST"])
    def thread_list(self, limit=50, offset=0):
        """The user's threads, newest first."""
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
        """Run ``message`` synchronously. Returns ``{result, thread, messages}``
        where ``messages`` are the rows this run added."""
        thread = self._get_thread(thread_id)
        result = thread.agent_id.run(thread.id, self._message_param(message))
        first = min(result.message_ids) - 1 if result.message_ids else 0
        return {"result": to_json_value(result.to_dict()), "thread": _thread_dict(thread),
                "messages": _messages(thread, first)}
