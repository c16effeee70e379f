"""Shared set-up: a real scripted LLM server on loopback and a provider and
agent pointing at it. Everything else is the real Odoo and PostgreSQL."""
import json
import re
import socket

from odoo.tests import TransactionCase

from odoo.addons.agentic_ai.dev.scripted_llm import Scenario, ScriptedLLMServer
from odoo.addons.agentic_ai.engine.executor import Executor
from odoo.addons.agentic_ai.engine.run_context import build_run_context


def closed_port_url():
    """A loopback URL nothing listens on (connections are refused)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return f"http://127.0.0.1:{port}/v1"


def tool_call(name, arguments, call_id=None):
    call = {"name": name, "arguments": arguments}
    if call_id:
        call["id"] = call_id
    return {"tool_calls": [call]}


def observation_records(request):
    """The JSON rows of the last tool observation in a chat request."""
    content = request["messages"][-1]["content"]
    return [json.loads(line) for line in content.splitlines() if line.startswith("{")]


def observation_field(request, key):
    """The first ``"key": value`` of the last tool observation."""
    content = request["messages"][-1]["content"]
    match = re.search(r'"%s": ("[^"]*"|\d+)' % re.escape(key), content)
    return json.loads(match.group(1)) if match else None


class AgenticSetupMixin:
    """Class set-up shared by TransactionCase and HttpCase tests."""

    @classmethod
    def setup_agentic(cls):
        cls.scenario = Scenario()
        cls.llm = ScriptedLLMServer(cls.scenario).start()
        cls.addClassCleanup(cls.llm.stop)
        cls.env["ir.config_parameter"].sudo().set_param("agentic_ai.llm_retry_delay", "0.01")
        cls.provider = cls.env["agentic.ai.llm.provider"].create({
            "name": "Scripted",
            "provider_type": "custom",
            "api_base_url": cls.llm.base_url,
            "api_key": "test-key-not-secret",
            "default_model": "scripted-model",
            "cost_per_input_token": 0.000001,
            "cost_per_output_token": 0.000002,
        })
        cls.agent = cls.env.ref("agentic_ai.agent_general_assistant")
        cls.agent.write({"llm_provider_id": cls.provider.id, "require_confirmation": "never"})
        cls.agent.action_activate()

    def script(self, *turns):
        """Replace the scenario with ``turns`` (``(reply, match)`` pairs or
        replies) and clear the request log."""
        self.scenario.turns.clear()
        self.scenario.requests.clear()
        for turn in turns:
            reply, match = turn if isinstance(turn, tuple) else (turn, None)
            self.scenario.add(reply, match) if match else self.scenario.add(reply)


class AgenticCase(AgenticSetupMixin, TransactionCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.setup_agentic()

    def execute(self, name, params, user):
        """Run the default tool ``name`` with ``params`` through the executor
        pipeline as ``user``; returns the ExecutionResult."""
        thread = self.new_thread(user=user)
        context = build_run_context(self.agent.with_user(user), thread)
        return Executor(context, thread).execute(name, params)

    def new_thread(self, agent=None, user=None):
        agent = agent or self.agent
        if user:
            agent = agent.with_user(user)
        return agent.start_thread(name="test")
