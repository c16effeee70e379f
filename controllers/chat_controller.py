"""Chat endpoints (spec 000 §11.1), JSON-RPC, for the logged-in user.

Each route takes named parameters only, checks that the user may use the
agent or owns the thread, calls a model method and serialises the answer.
No business logic lives here."""
from odoo import http
from odoo.exceptions import AccessError, MissingError, UserError
from odoo.http import request

MESSAGE_FIELDS = ["id", "role", "content", "tool_name", "tool_call_id", "tool_arguments", "tool_status", "create_date"]
MAX_MESSAGE_CHARS = 20000


def _thread_dict(thread):
    return {
        "id": thread.id,
        "name": thread.name,
        "agent_id": thread.agent_id.id,
        "agent_name": thread.agent_id.name,
        "state": thread.state,
        "create_date": thread.create_date and thread.create_date.isoformat(),
    }


def _messages(thread, after_id=0, limit=200):
    messages = request.env["agentic.ai.thread.message"].search(
        [("thread_id", "=", thread.id), ("id", ">", int(after_id or 0))], order="id", limit=int(limit))
    rows = messages.read(MESSAGE_FIELDS)
    for row in rows:
        row["create_date"] = row["create_date"] and row["create_date"].isoformat()
    return rows


class AgenticAiChatController(http.Controller):

    def _get_thread(self, thread_id):
        """The thread, readable by the current user (record rules apply).
        Raises AccessError/MissingError."""
        try:
            thread = request.env["agentic.ai.thread"].browse(int(thread_id)).exists()
        except (TypeError, ValueError):
            raise UserError(request.env._("thread_id must be an integer")) from None
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
    def thread_create(self, agent_id, name=None, initial_message=None):
        """Create a thread (and run ``initial_message`` when given).
        Returns the thread, plus ``result`` when a message was run."""
        agent = request.env["agentic.ai.agent"].browse(int(agent_id)).exists()
        if not agent:
            raise MissingError(request.env._("Agent %s does not exist.", agent_id))
        thread = agent.start_thread(name=name)
        out = _thread_dict(thread)
        if initial_message:
            out["result"] = agent.run(thread.id, str(initial_message)[:MAX_MESSAGE_CHARS]).to_dict()
            out["state"] = thread.state
        return out

    @http.route("/agentic_ai/thread/list", type="jsonrpc", auth="user", methods=["POST"])
    def thread_list(self, limit=50, offset=0):
        """The user's threads, newest first."""
        threads = request.env["agentic.ai.thread"].search(
            [("user_id", "=", request.env.uid)], limit=min(int(limit), 200), offset=int(offset))
        return [_thread_dict(t) for t in threads]

    @http.route("/agentic_ai/thread/messages", type="jsonrpc", auth="user", methods=["POST"])
    def thread_messages(self, thread_id, after_id=0, limit=200):
        """Messages of a thread after ``after_id``, oldest first."""
        thread = self._get_thread(thread_id)
        return {"thread": _thread_dict(thread), "messages": _messages(thread, after_id, min(int(limit), 500))}

    @http.route("/agentic_ai/chat/send", type="jsonrpc", auth="user", methods=["POST"])
    def chat_send(self, thread_id, message):
        """Run ``message`` synchronously. Returns ``{result, thread, messages}``
        where ``messages`` are the rows this run added."""
        thread = self._get_thread(thread_id)
        if not isinstance(message, str) or not message.strip():
            raise UserError(request.env._("The message is empty."))
        result = thread.agent_id.run(thread.id, message[:MAX_MESSAGE_CHARS])
        first = min(result.message_ids) - 1 if result.message_ids else 0
        return {"result": result.to_dict(), "thread": _thread_dict(thread), "messages": _messages(thread, first)}
