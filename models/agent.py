from odoo import api, fields, models, tools
from odoo.exceptions import AccessError, UserError
from odoo.tools import SQL

from ..engine.guard.rate_limits import RateLimits
from ..engine.turn.run_context import agent_settings, compile_tools

DEFAULT_SYSTEM_PROMPT = """You are an AI assistant working inside the Odoo ERP of {company_name}.
Today is {current_date}. You are helping {user_name}.
Use the tools to read and change ERP data; never invent records, ids, prices or amounts.
When a tool returns an error, read it, correct the call and try again, or explain the problem.
Answer in the user's language, briefly, and name the records you created or changed."""
# What the safety guard trusts (issue 23): set by AI administrators only (``_check_guard_fields``).
GUARD_FIELDS = frozenset({"system_prompt", "require_confirmation", "confirm_after_untrusted_content"})
_COPYING = object()  # marks the create of a copy; a context sent over RPC cannot hold it
# Appended to every agent's prompt, its own or the default: the chat opens such links as the record's form.
RECORD_LINK_INSTRUCTION = ("When you mention an Odoo record, link it in Markdown as "
                           "[display name](/odoo/<model>/<id>), e.g. [S00025](/odoo/sale.order/25).")


class AgenticAiAgent(models.Model):
    """An AI agent: LLM binding, tools, access and execution policy (spec 000 §3.2)."""
    _name = "agentic.ai.agent"
    _description = "AI Agent"
    _inherit = ["mail.thread", "agentic.ai.run.settings.source"]
    _order = "sequence, name"

    _code_uniq = models.UniqueIndex("(code)", "The agent code must be unique.")
    _max_iterations_positive = models.Constraint("CHECK(max_iterations > 0)", "Max iterations must be positive.")
    _turn_bounds_positive = models.Constraint("CHECK(max_llm_calls > 0 AND max_run_seconds > 0)",
                                              "LLM calls and seconds per user message must be positive.")
    _budgets_not_negative = models.Constraint("CHECK(max_tokens_per_run >= 0 AND max_cost_per_run >= 0)",
                                              "Run budgets cannot be negative.")
    _max_replanning_not_negative = models.Constraint("CHECK(max_replanning >= 0)",
                                                     "Max replanning cannot be negative.")
    _max_plan_steps_positive = models.Constraint("CHECK(max_plan_steps > 0)", "Max plan steps must be positive.")

    name = fields.Char(required=True, translate=True)
    code = fields.Char(required=True, copy=False, help="Unique technical identifier, used by webhooks and the API.")
    sequence = fields.Integer(default=10)
    description = fields.Text(translate=True)
    state = fields.Selection([
        ("draft", "Draft"),
        ("active", "Active"),
        ("archived", "Archived"),
    ], default="draft", required=True, tracking=True)
    llm_provider_id = fields.Many2one("agentic.ai.llm.provider", string="LLM Provider", ondelete="restrict",
                                      tracking=True)
    fallback_provider_id = fields.Many2one(
        "agentic.ai.llm.provider", string="Fallback Provider", ondelete="set null",
        help="Called when the primary provider fails twice.")
    system_prompt = fields.Text(
        default=DEFAULT_SYSTEM_PROMPT, translate=True,
        help="Template variables: {current_date}, {user_name}, {company_name}.")
    planning_prompt = fields.Text(translate=True, help="Extra instructions for the planner (Plan-and-Execute mode).")
    execution_mode = fields.Selection([
        ("react", "ReAct"),
        ("plan_and_execute", "Plan and Execute"),
        ("hybrid", "Hybrid"),
    ], default="hybrid", required=True)
    max_replanning = fields.Integer(
        default=2, help="Replanning attempts after failed steps of a plan, before the plan fails (spec 000 §4.3).")
    max_plan_steps = fields.Integer(default=10, help="The longest plan accepted from the planner, in steps.")
    max_iterations = fields.Integer(default=25, help="Maximum reason-act cycles per user message.")
    max_llm_calls = fields.Integer(
        string="Max LLM Calls", default=50,
        help="LLM calls per user message, in every mode; the turn stops with a notice before the next one.")
    max_run_seconds = fields.Integer(
        string="Max Run Time (s)", default=600,
        help="Wall-clock seconds per user message, in every mode; no LLM call starts after this.")
    max_tokens_per_run = fields.Integer(help="Stop a run once its LLM calls used this many tokens; 0 = no limit.")
    max_cost_per_run = fields.Float(digits=(16, 4), string="Max Cost per Run (USD)",
                                    help="Stop a run once its LLM calls cost this much; 0 = no limit.")
    tool_ids = fields.Many2many("agentic.ai.tool", string="Tools")
    allowed_model_ids = fields.Many2many(
        "ir.model", "agentic_ai_agent_allowed_model_rel", "agent_id", "model_id", string="Allowed Models",
        help="When set, the agent may only touch these models.")
    blocked_model_ids = fields.Many2many(
        "ir.model", "agentic_ai_agent_blocked_model_rel", "agent_id", "model_id", string="Blocked Models",
        help="The agent may never touch these models.")
    require_confirmation = fields.Selection([
        ("never", "Never"),
        ("destructive", "Destructive operations"),
        ("always", "Every write"),
    ], default="destructive", required=True)
    confirm_after_untrusted_content = fields.Boolean(
        string="Confirm After Record Text", default=True,
        help="Once a conversation has shown the model text it read (tool results, documents, memories not written "
             "by the user), a change asks for confirmation, whatever the policy above, when a record it targets or "
             "a value it writes did not come from the user's own words or from reads they asked for: that text may "
             "carry instructions aimed at the model.")
    allow_sensitive_data = fields.Boolean(
        string="Sensitive Data", groups="base.group_system", copy=False,
        help="Let this agent's tools read unmasked the personal identifiers the company marks as sensitive (system "
             "parameter agentic_ai.sensitive_fields: SSN, private e-mail and phone, bank account numbers...). Off, "
             "they reach the LLM provider masked. Credentials (passwords, keys, tokens) are withheld either way.")
    enable_memory = fields.Boolean(
        string="Memory", default=True,
        help="Remind the agent of what each user told it in earlier conversations (their own memories and the "
             "shared ones), and learn from each completed conversation (spec 000 §8).")
    user_ids = fields.Many2many(
        "res.users", "agentic_ai_agent_user_rel", "agent_id", "user_id", string="Allowed Users",
        help="Leave empty, with no groups either, to allow every AI user.")
    group_ids = fields.Many2many(
        "res.groups", "agentic_ai_agent_group_rel", "agent_id", "group_id", string="Allowed Groups")
    sudo_user_id = fields.Many2one(
        "res.users", string="Run As User", groups="base.group_system", copy=False,
        help="Run tool calls as this user instead of the requesting user: everyone allowed to use the agent "
             "gets that user's rights. Settings administrators only; leave empty unless required.")
    knowledge_source_ids = fields.Many2many(
        "agentic.ai.knowledge.source", "agentic_ai_agent_knowledge_source_rel", "agent_id", "source_id",
        string="Knowledge", help="Sources the agent answers from (spec 000 §9); retrieved text is untrusted content.")
    thread_ids = fields.One2many("agentic.ai.thread", "agent_id", string="Threads")
    thread_count = fields.Integer(compute="_compute_thread_count")
    # The form's sixth tab (spec 000 §10.3; issue 27 point 6): what governs the agent's runs and is set elsewhere,
    # read-only here. The safety rules are not an agent's: they apply to every agent, per user and group.
    safety_rule_ids = fields.Many2many(
        "agentic.ai.safety.rule", compute="_compute_safety_rule_ids", string="Safety Rules",
        groups="agentic_ai.group_agentic_ai_operator",
        help="The active safety rules (Configuration > Safety Rules): they apply to every agent, for the users and "
             "groups each names, before a tool runs and on every create, write and unlink of its call.")
    rate_requests_per_minute = fields.Integer(
        compute="_compute_rate_limits", string="Requests per Minute per User",
        help="Settings > AI Agents: LLM requests a user may make in a minute, with any agent; 0 = no limit.")
    rate_requests_per_hour = fields.Integer(
        compute="_compute_rate_limits", string="Requests per Hour per User",
        help="Settings > AI Agents: LLM requests a user may make in an hour, with any agent; 0 = no limit.")
    rate_cost_per_day_agent = fields.Float(
        compute="_compute_rate_limits", string="Cost per Day of an Agent (USD)",
        help="Settings > AI Agents: LLM cost this agent may spend in 24 hours, all users together; 0 = no limit.")
    rate_cost_per_day_company = fields.Float(
        compute="_compute_rate_limits", string="Cost per Day of the Company (USD)",
        help="Settings > AI Agents: LLM cost a company may spend in 24 hours, all agents together; 0 = no limit.")
    company_id = fields.Many2one("res.company", default=lambda self: self.env.company)

    @api.depends("thread_ids")
    def _compute_thread_count(self):
        counts = dict(self.env["agentic.ai.thread"]._read_group(
            [("agent_id", "in", self.ids)], ["agent_id"], ["__count"]))
        for agent in self:
            agent.thread_count = counts.get(agent, 0)

    def _compute_safety_rule_ids(self):
        rules = self.env["agentic.ai.safety.rule"].search([("active", "=", True)])  # in their sequence
        for agent in self:
            agent.safety_rule_ids = rules

    def _compute_rate_limits(self):
        limits = RateLimits.from_params(self.env["ir.config_parameter"].sudo().get_param)
        for agent in self:
            agent.rate_requests_per_minute = limits.requests_per_minute
            agent.rate_requests_per_hour = limits.requests_per_hour
            agent.rate_cost_per_day_agent = limits.cost_per_day_agent
            agent.rate_cost_per_day_company = limits.cost_per_day_company

    @api.model_create_multi
    def create(self, vals_list):
        if self.env.context.get("agentic_ai_copy") is not _COPYING:  # a copy keeps what an administrator set
            for vals in vals_list:
                self._check_guard_fields(vals)
        return super().create(vals_list)

    def copy(self, default=None):
        self._check_guard_fields(default or {})
        return super(AgenticAiAgent, self.with_context(agentic_ai_copy=_COPYING)).copy(default)

    def write(self, vals):
        self._check_sudo_agents_editable(self)
        self._check_guard_fields(vals)
        return super().write(vals)

    @api.model
    def _check_guard_fields(self, vals):
        """The fields that set what the guard trusts (the system prompt counts
        as the user's words; the policy; the provenance check) are set by AI
        administrators only (issue 23): an AI operator manages agents, but
        does not decide what is trusted. Raises AccessError."""
        if set(vals) & GUARD_FIELDS and not (self.env.su or self.env.user.has_group(
                "agentic_ai.group_agentic_ai_admin")):
            raise AccessError(self.env._(
                "Only AI administrators can change an agent's system prompt, confirmation policy or Confirm After "
                "Record Text: they decide what the agent's safety guard trusts."))

    @api.model
    def _check_sudo_agents_editable(self, agents):
        """An agent that runs as another user lends that user's rights to
        its users, and one allowed sensitive data lends its unmasked
        personal identifiers, so it, its providers and its tools may be
        changed by Settings administrators only. Raises AccessError."""
        if self.env.su or self.env.user.has_group("base.group_system"):
            return
        if agents.sudo().filtered(lambda agent: agent.sudo_user_id or agent.allow_sensitive_data):
            raise AccessError(self.env._(
                "Only Settings administrators can change an agent that runs as another user or reads sensitive "
                "data, or its provider and tools."))

    # ------------------------------------------------------------------ actions
    def action_activate(self):
        for agent in self:
            if not agent.llm_provider_id:
                raise UserError(self.env._("Agent %s needs an LLM provider before it can be activated.", agent.name))
        self.write({"state": "active"})

    def action_set_archived(self):
        self.write({"state": "archived"})

    def action_reset_to_draft(self):
        self.write({"state": "draft"})

    def action_start_chat(self):
        """Open a new conversation with this agent in its form view."""
        self.ensure_one()
        thread = self.start_thread()
        return {
            "type": "ir.actions.act_window",
            "res_model": "agentic.ai.thread",
            "res_id": thread.id,
            "views": [[False, "form"]],
            "target": "current",
        }

    # --------------------------------------------------------------- business
    def start_thread(self, initial_message=None, name=None):
        """Create a thread of this agent for the current user; when
        ``initial_message`` is given, run it. Returns the thread.

        Raises AccessError when the user may not use the agent, UserError
        when the agent is not active."""
        self.ensure_one()
        self._check_runnable(self.env.user)
        thread = self.env["agentic.ai.thread"].create({
            "agent_id": self.id,
            "user_id": self.env.uid,
            "name": name or (initial_message or "").strip()[:60] or self.env._("New conversation"),
        })
        if initial_message:
            self.run(thread.id, initial_message)
        return thread

    def run(self, thread_id, user_message, durable=None):
        """Main entry (spec 000 §4.1): run ``user_message`` on the thread,
        which must be this agent's, through ``agentic.ai.thread.send_message``.
        Returns the runtime's ``AgentResult``.

        ``durable``: commit each finished step (see ``engine/durable/durability.py``);
        None decides from the caller (an HTTP request's own transaction)."""
        self.ensure_one()
        thread = self.env["agentic.ai.thread"].browse(thread_id).exists()
        if not thread or thread.agent_id != self:
            raise UserError(self.env._("Thread %s does not belong to agent %s.", thread_id, self.name))
        return thread._send_message(user_message, durable=durable)

    def _check_runnable(self, user):
        """Raise unless ``user`` may use this agent now: access (see
        ``_check_user_access``) and the agent is active."""
        self.ensure_one()
        self._check_user_access(user)
        self.fetch(["state"])  # the one column, not the agent's whole row (asked at every run's opening)
        if self.state != "active":
            raise UserError(self.env._("Agent %s is not active.", self.name))

    def _check_user_access(self, user):
        """Raise AccessError unless ``user`` may use this agent: an active AI
        user (an archived one's queued work is not run either) who is listed
        in ``user_ids`` or is in one of ``group_ids`` (both empty = every AI
        user)."""
        self.ensure_one()
        user.sudo().fetch(["active"])  # the one column, not the user's whole row (asked at every run's opening)
        if not user.sudo().active and not user._is_superuser():  # OdooBot is archived by design
            raise AccessError(self.env._("The user %s is archived and cannot use agents.", user.sudo().name))
        if not user.has_group("agentic_ai.group_agentic_ai_user"):
            raise AccessError(self.env._("You are not an AI Agent user."))
        if not self._lists_allow(user):
            raise AccessError(self.env._("You are not allowed to use the agent %s.", self.name))
        return True

    def _lists_allow(self, user):
        """Whether ``user_ids`` and ``group_ids`` let ``user`` in: both
        empty, ``user`` listed, or one of the user's groups (implied ones
        included) listed. A listed user who is archived still restricts the
        agent to the list.

        One SQL statement on the two relation tables, asked at every run's
        opening: read through the ORM, ``user_ids`` went through res.users'
        record rules and their multi-company ``parent_of`` domain, built
        again after every commit, the largest item of a run's opening in
        the gevent server's profile under load (bench/load.py, issue 26
        point 5)."""
        self.ensure_one()
        self.flush_recordset(["user_ids", "group_ids"])
        self.env.cr.execute(SQL(
            """SELECT EXISTS (SELECT 1 FROM agentic_ai_agent_user_rel WHERE agent_id = %(agent)s),
                      EXISTS (SELECT 1 FROM agentic_ai_agent_group_rel WHERE agent_id = %(agent)s),
                      EXISTS (SELECT 1 FROM agentic_ai_agent_user_rel WHERE agent_id = %(agent)s
                              AND user_id = %(user)s)""", agent=self.id, user=user.id))
        users_listed, groups_listed, listed = self.env.cr.fetchone()
        if not (users_listed or groups_listed) or listed:
            return True
        return groups_listed and bool(user.sudo().all_group_ids & self.sudo().group_ids)

    def _get_available_tools(self):
        """The agent's active tools whose Odoo app is installed and whose
        models the executing user can at least read."""
        self.ensure_one()
        available, _unavailable = compile_tools(self.tool_ids, self._get_execution_env())
        return self.tool_ids.filtered(lambda tool: tool.name in available)

    def _build_system_message(self, user=None, template=None):
        """The system prompt (``template``: the agent's ``system_prompt`` as
        a run's settings keep it, read from the agent when None) with
        ``{current_date}``, ``{user_name}`` and ``{company_name}`` filled in
        (unknown ``{...}`` are left as written), then ``RECORD_LINK_INSTRUCTION``."""
        self.ensure_one()
        user = user or self.env.user
        # What the request's company and today's date are read from, not the user's whole row.
        self.env.user.fetch(["company_id", "tz"])
        # The user's own name and current company's, in one statement at every run's opening: read through the
        # ORM they were three wide rows fetched again after each commit (users, partners, companies).
        self.env["res.partner"].flush_model(["name"])
        self.env["res.company"].flush_model(["name"])
        self.env.cr.execute(SQL(
            "SELECT (SELECT p.name FROM res_users u JOIN res_partner p ON p.id = u.partner_id WHERE u.id = %s), "
            "(SELECT name FROM res_company WHERE id = %s)", user.id, self.env.company.id))
        user_name, company_name = self.env.cr.fetchone()
        values = {
            "current_date": fields.Date.context_today(self).isoformat(),
            "user_name": user_name,
            "company_name": company_name,
        }
        text = (self.system_prompt if template is None else template) or DEFAULT_SYSTEM_PROMPT
        for key, value in values.items():
            text = text.replace("{%s}" % key, value or "")
        return f"{text.rstrip()}\n{RECORD_LINK_INSTRUCTION}"

    @api.private
    @tools.ormcache("self.id", "self.env.uid", "self.env.su", "tuple(self.env.companies.ids)", "self.env.lang",
                    "user_id", "version")
    def _run_settings(self, user_id, version):
        """This agent's settings for a run of the user ``user_id`` in this
        environment (engine/turn/run_context.py ``agent_settings``: its
        limits and policies, the tools the user can run, its providers, the
        safety rules that apply to that user), kept between runs in Odoo's
        default cache and read again once a record they come from changed
        (models/run_settings_source.py). ``version``: ``_run_settings_version``
        as the run's transaction sees it. Immutable, shared by the runs."""
        self.ensure_one()
        return agent_settings(self, self.env["res.users"].browse(user_id))

    @api.model
    def _run_settings_version(self):
        """The sequences of Odoo's cache signaling (``Registry.get_sequences``:
        one statement) of the caches a run's settings depend on, as this
        transaction sees them. A change empties the cache in the process that
        makes it at once, but a run of that process whose transaction began
        before the change was committed would read the old records and keep
        them again; with the sequences in the key, what it keeps is never
        served to a run that sees the change (the sequences move when Odoo
        signals it, right after its commit), and the other processes of the
        deployment read the settings again without waiting for their next
        request or cron job."""
        _registry, caches = self.env.registry.get_sequences(self.env.cr)
        return tuple(caches[name] for name in ("default", "stable", "groups"))

    def _get_execution_env(self, user=None):
        """The environment tool calls run in: the requesting user's, never
        superuser; the ``sudo_user_id`` user's when the agent sets one."""
        self.ensure_one()
        run_as = self.sudo().sudo_user_id or user or self.env.user
        return self.env(user=run_as.id, su=False)
