"""Shared set-up: a real scripted LLM server on loopback and a provider and
agent pointing at it, the users the tests act as, and helpers to run a tool
or an agent turn. Everything else is the real Odoo and PostgreSQL."""
import json
import re
import socket
from contextlib import contextmanager

from odoo import Command, fields
from odoo.tests import TransactionCase, new_test_user

from ..dev.scripted_llm import Scenario, ScriptedLLMServer
from ..engine.durable import run_lease
from ..engine.executor import Executor
from ..engine.turn.run_context import build_run_context
from ..llm import OpenAIAdapter, ProviderConfig

# Users of the business apps the tools are run as.
ACCOUNTANT_GROUPS = ("base.group_user,account.group_account_manager,sales_team.group_sale_salesman_all_leads,"
                     "purchase.group_purchase_user,stock.group_stock_manager,mrp.group_mrp_user,"
                     "hr_holidays.group_hr_holidays_user,hr.group_hr_user")
SALESMAN_GROUPS = "base.group_user,sales_team.group_sale_salesman"  # own documents only
MULTI_COMPANY_GROUPS = ("base.group_user,account.group_account_manager,stock.group_stock_manager,"
                        "sales_team.group_sale_salesman_all_leads,mrp.group_mrp_user,"
                        "hr_holidays.group_hr_holidays_user,hr.group_hr_user")

# An API key shaped like a real one, to check it never leaks.
KEY = "sk-test-0123456789abcdef"

# name: (provider_type, base path under the scripted server's root, extra values)
PROVIDER_MATRIX = {
    "openai": ("openai", "/v1", {}),
    "azure": ("openai", "/v1", {"api_version": "2024-10-21"}),
    "custom": ("custom", "/v1", {}),
    "ollama": ("ollama", "/v1", {}),
    "ollama_prompt": ("ollama", "/v1", {"supports_tool_calling": False}),
    "custom_prompt": ("custom", "/v1", {"supports_tool_calling": False}),
    "gemini": ("gemini", "/v1beta", {}),
    "anthropic": ("anthropic", "/v1", {}),
}
MESSAGES = [{"role": "system", "content": "You are an ERP assistant."}, {"role": "user", "content": "Find partners"}]


def closed_port_url():
    """A loopback URL nothing listens on (connections are refused)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return f"http://127.0.0.1:{port}/v1"


@contextmanager
def live_run_elsewhere(thread):
    """``thread`` held by a live run of another process, as a worker that
    runs it leaves it (engine/durable/run_lease.py): its lease on the
    thread's row, its process's holder renewed; released on leaving."""
    cr = thread.env.cr
    token = run_lease.take(cr, thread.id)
    try:
        yield token
    finally:
        run_lease.release(cr, thread.id, token)


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


def allocated_employee(env, name, leave_type_name, days=3):
    """A new employee of the current company with ``days`` days of a new
    time off type that needs an allocation, approved by HR; returns
    ``(employee, leave_type)``."""
    employee = env["hr.employee"].create({"name": name, "company_id": env.company.id})
    leave_type = env["hr.leave.type"].create({"name": leave_type_name, "requires_allocation": True,
                                              "employee_requests": True, "leave_validation_type": "hr"})
    env["hr.leave.allocation"].create({
        "employee_id": employee.id, "holiday_status_id": leave_type.id, "number_of_days": days,
        "date_from": fields.Date.today().replace(month=1, day=1)}).action_approve()
    return employee, leave_type


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
        # ReAct unless a test says otherwise: Hybrid would plan the longer messages (tests/test_plan_execute.py).
        cls.agent.write({"llm_provider_id": cls.provider.id, "require_confirmation": "never",
                         "execution_mode": "react"})
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

    @classmethod
    def setup_users(cls):
        """Two plain internal users, an AI operator (who may also manage
        contacts) and an AI administrator (not a Settings administrator)."""
        cls.plain = new_test_user(cls.env, "ai_plain", groups="base.group_user")
        cls.other = new_test_user(cls.env, "ai_other", groups="base.group_user")
        cls.operator = new_test_user(
            cls.env, "ai_operator",
            groups="base.group_user,agentic_ai.group_agentic_ai_operator,base.group_partner_manager")
        cls.ai_admin = new_test_user(cls.env, "ai_admin", groups="base.group_user,agentic_ai.group_agentic_ai_admin")

    def run_knowledge_cron(self):
        """Run the Knowledge Indexing cron now (what it does for the queued
        sources, as Odoo's cron runner would: registry test mode), then drop
        the caches so the sources' new state is read."""
        with self.enter_registry_test_mode():
            self.env.ref("agentic_ai.ir_cron_knowledge_index").method_direct_trigger()
        self.env.invalidate_all()

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

    def run_agent(self, message="go", provider=None, user=None):
        """One agent turn on a new thread (as ``user``, with ``provider`` as
        the agent's provider when given); returns ``(thread, result)``."""
        if provider:
            self.agent.llm_provider_id = provider
        thread = self.new_thread(user=user)
        agent = self.agent.with_user(user) if user else self.agent
        return thread, agent.run(thread.id, message)

    @staticmethod
    def observations(thread):
        """The tool results of ``thread``, oldest first."""
        return thread.message_ids.filtered(lambda m: m.role == "tool_result").sorted("id").mapped("content")

    def pending_deletion(self, name, user=None, reply="ok"):
        """A thread, run as ``user``, waiting for the confirmation of
        ``odoo_unlink`` on a new partner ``name``; the model then answers
        ``reply``. Returns ``(thread, partner)``. ``user`` is given the right
        to delete contacts: a deletion that could not run is not asked
        about (issue 23 point 5)."""
        self.agent.require_confirmation = "destructive"
        if user and not user.has_group("base.group_partner_manager"):
            user.sudo().group_ids = [Command.link(self.env.ref("base.group_partner_manager").id)]
        partner = self.env["res.partner"].create({"name": name})
        self.script(tool_call("odoo_unlink", {"model": "res.partner", "record_ids": [partner.id]}, "call_del"),
                    {"content": reply})
        thread, result = self.run_agent(f"delete {name}", user=user)
        self.assertEqual((result.state, thread.state), ("waiting_confirmation", "waiting_confirmation"))
        self.assertTrue(partner.exists(), "nothing is deleted before the user confirms")
        return thread, partner


class ToolCase(AgenticCase):
    """Tools run through the executor as business users on demo data."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.salesperson = cls.env.ref("base.user_demo")  # Sales rights, no Invoicing rights in demo data
        cls.accountant = new_test_user(cls.env, "tool_accountant", groups=ACCOUNTANT_GROUPS)
        cls.salesman = new_test_user(cls.env, "tool_salesman", groups=SALESMAN_GROUPS)
        cls.customer = cls.env.ref("base.res_partner_2")
        cls.stock = cls.env.ref("stock.stock_location_stock")
        cls.company = cls.env.company

    def execute(self, name, params, user=None):
        """As AgenticCase.execute, by default as the demo salesperson."""
        return super().execute(name, params, user or self.salesperson)

    def run_as_accountant(self, name, params):
        """The data of a call, as the accountant, that must succeed."""
        result = self.execute(name, params, self.accountant)
        self.assertTrue(result.success, f"{name}: {result.error}")
        return result.data

    def count(self, model, domain=()):
        """Records of ``model`` in the database, archived ones included."""
        return self.env[model].sudo().with_context(active_test=False).search_count(list(domain))

    def counts(self, *models):
        return {model: self.count(model) for model in models}

    def add_stock(self, product, quantity, location=None):
        self.env["stock.quant"]._update_available_quantity(product, location or self.stock, quantity)

    def shelf(self, name="Agent Shelf"):
        """A new internal location under WH/Stock."""
        return self.env["stock.location"].create({"name": name, "location_id": self.stock.id, "usage": "internal"})

    def posted_invoice(self, amount=100.0, move_type="out_invoice", ref=None):
        """A posted customer invoice (or ``move_type``) of one untaxed line."""
        move = self.env["account.move"].create({
            "move_type": move_type, "partner_id": self.customer.id, "invoice_date": fields.Date.today(), "ref": ref,
            "invoice_line_ids": [Command.create({"name": "x", "quantity": 1, "price_unit": amount, "tax_ids": []})]})
        move.action_post()
        return move

    def setup_company_b(self):
        """A second company B in EUR and ``user_ab``, whose current company is
        A (this one) and who may also switch to B."""
        self.company_a = self.env.company
        self.eur = self.env.ref("base.EUR")
        self.eur.active = True
        self.company_b = self.env["res.company"].create({"name": "Company B", "currency_id": self.eur.id})
        self.warehouse_b = self.env["stock.warehouse"].search([("company_id", "=", self.company_b.id)], limit=1)
        self.user_ab = new_test_user(self.env, "tool_user_ab", company_id=self.company_a.id,
                                     company_ids=[Command.set((self.company_a | self.company_b).ids)],
                                     groups=MULTI_COMPANY_GROUPS)


class AdapterCase(AgenticCase):
    """Adapters over real HTTP against the scripted server: one provider of
    each type and mode (PROVIDER_MATRIX), or a bare adapter."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.root = cls.llm.base_url.removesuffix("/v1")
        cls.providers = {}
        for name, (provider_type, path, extra) in PROVIDER_MATRIX.items():
            cls.providers[name] = cls.env["agentic.ai.llm.provider"].create({
                "name": name, "provider_type": provider_type, "api_base_url": cls.root + path,
                "api_key": "key-" + name, "default_model": "model-" + name, "timeout_seconds": 5, **extra})

    def each(self, names=None):
        """``(name, adapter)`` of each provider of the matrix, in a subTest."""
        for name in names or PROVIDER_MATRIX:
            with self.subTest(provider=name):
                yield name, self.providers[name]._get_adapter()

    def adapter(self, cls=OpenAIAdapter, path="/v1", **values):
        """A bare adapter of class ``cls`` on the scripted server, key KEY."""
        return cls(ProviderConfig(**{"provider_type": "custom", "base_url": self.root + path,
                                     "model": "scripted-model", "api_key": KEY, "timeout": 5.0, **values}))
