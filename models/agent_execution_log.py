import logging
from datetime import timedelta

from odoo import api, fields, models, tools
from odoo.exceptions import AccessError, UserError
from odoo.modules import module as odoo_module
from odoo.tools import SQL

from ..engine.durable import log_chain
from ..engine.guard import daily_costs, rate_limits
from ..engine.guard.daily_costs import DAILY_COSTS
from ..engine.text.clean_text import clean_text
from ..llm.usage import FIGURES
from ..tools.values.json_values import dumps
from .sql_insert import insert_params, insert_statement

_logger = logging.getLogger(__name__)

# How reports aggregate the token figures of LLM calls (llm/usage.py FIGURES) with their cost.
USAGE_AGGREGATES = [*(f"{name}:sum" for name in FIGURES), "cost:sum", "usage_estimated:bool_or"]

MAX_DATA_CHARS = 20000  # per JSON column: enough to audit, bounded for storage
# A tool's result (output_data) is kept whole up to this size: the model reads at most the observer's
# MAX_CHARS of it (engine/observer.py), so this row is where the full result is (issue 12, BR-19).
MAX_RESULT_CHARS = 5_000_000


def _as_json(value, limit=MAX_DATA_CHARS):
    """``value`` as storable text for a JSON column: a string as it is, else
    the addon's JSON form of it (tools/values/json_values.py: records, dates,
    files, non-text keys and cycles included, so the row is never lost);
    None and "" give an empty column. Cut to ``limit`` characters."""
    if value is None or (isinstance(value, str) and not value):
        return False
    text = clean_text(value if isinstance(value, str) else dumps(value))
    if len(text) <= limit:
        return text
    return text[:limit] + f"… [{len(text) - limit} characters cut]"


class AgenticAiExecutionLog(models.Model):
    """Immutable audit trail of everything an agent does (spec 000 §3.7).

    Rows are written through ``log()`` only: ``create`` and ``write`` are
    refused to every user, superuser included, and ``unlink`` to everyone
    but the purge cron. Each company's rows are hash-chained after their
    transaction commits (``engine/durable/log_chain.py``), so that a change made
    around the ORM (SQL) is found by ``verify_chain``."""
    _name = "agentic.ai.execution.log"
    _description = "AI Agent Execution Log"
    _order = "id desc"
    _rec_name = "action_type"
    # Rows are inserted with SQL and never written: who and when are user_id
    # and create_date; Odoo's write_uid/write_date would say nothing and their
    # foreign keys to res_users cost every insert (as ir.profile and ir.logging do).
    _log_access = False
    # Rate limits (engine/guard/rate_limits.py) count LLM calls per user and sum
    # their cost per agent and per company over recent windows: one index
    # each keeps a check cheap however long the log grows.
    _llm_call_user_idx = models.Index("(user_id, create_date) WHERE action_type = 'llm_call'")
    _llm_call_agent_idx = models.Index("(agent_id, create_date) INCLUDE (cost) WHERE action_type = 'llm_call'")
    _llm_call_company_idx = models.Index("(company_id, create_date) INCLUDE (cost) WHERE action_type = 'llm_call'")

    _chain_seq_uniq = models.UniqueIndex("(chain_company_id, chain_seq) WHERE chain_seq IS NOT NULL",
                                         "Two execution log rows cannot have the same place in a company's chain.")
    _unsealed_idx = models.Index("(chain_company_id, id) WHERE chain_seq IS NULL")

    create_date = fields.Datetime(readonly=True, default=fields.Datetime.now)

    thread_id = fields.Many2one("agentic.ai.thread", index=True, ondelete="set null", readonly=True)
    agent_id = fields.Many2one("agentic.ai.agent", index=True, ondelete="set null", readonly=True)
    user_id = fields.Many2one("res.users", index=True, readonly=True, ondelete="set null",
                              help="The user the agent acted for.")
    run_as_user_id = fields.Many2one(
        "res.users", string="Run As", readonly=True, ondelete="set null", index="btree_not_null",
        help="Set when the tool call ran as the agent's Run As User (set by an administrator) instead of the "
             "requesting user: its rights, not the requester's, applied.")
    company_id = fields.Many2one("res.company", readonly=True, ondelete="set null")
    action_type = fields.Selection([
        ("llm_call", "LLM Call"),
        ("tool_execution", "Tool Execution"),
        # One per kind of create, write or unlink a kept tool call made (business code's included), after the
        # call's row, with its tool_call_id (engine/guard/operation_guard.py ``operations_done``).
        ("orm_operation", "ORM Operation"),
        ("confirmation_request", "Confirmation Request"),
        ("confirmation_response", "Confirmation Response"),
        ("plan_generated", "Plan Generated"),
        ("plan_revised", "Plan Revised"),
        ("error", "Error"),
    ], required=True, index=True, readonly=True)
    tool_name = fields.Char(readonly=True, index=True)
    tool_call_id = fields.Char(readonly=True, help="Id of the call in the conversation transcript.")
    orm_operation_ids = fields.Many2many(
        "agentic.ai.execution.log", compute="_compute_orm_operation_ids", string="ORM Operations",
        help="The creates, writes and deletes this tool call made, its business code's included: one row per "
             "model, operation and fields, with the records' ids.")
    model_name = fields.Char(readonly=True, help="Odoo model the action touched.")
    record_ids = fields.Char(readonly=True, help="Ids of the records touched, as JSON.")
    provider_id = fields.Many2one("agentic.ai.llm.provider", readonly=True, ondelete="set null")
    llm_model = fields.Char(readonly=True)
    input_data = fields.Text(readonly=True, help="Parameters or request, as JSON.")
    output_data = fields.Text(readonly=True, help="Result, as JSON.")
    before_snapshot = fields.Text(
        readonly=True, groups="agentic_ai.group_agentic_ai_admin",
        help="Values of every record and field the call changed or deleted, before it did, as JSON "
             "[{model, id, values}] (for undo; spec 000 §7.4). Business code may have changed records the "
             "requesting user cannot read, so only AI administrators read it.")
    success = fields.Boolean(default=True, readonly=True)
    error_message = fields.Text(readonly=True)
    # Averaged when grouped (pivot, graph): the latency of a call, not a sum of them.
    duration_ms = fields.Integer(readonly=True, string="Duration (ms)", aggregator="avg")
    # Usage of an LLM call (llm/usage.py, issue 14): input in total, of which read from and written to the
    # provider's prompt cache; output in total, of which reasoning; which figures are our estimates.
    input_tokens = fields.Integer(readonly=True, help="Every input token billed, cached ones included.")
    cache_read_tokens = fields.Integer(readonly=True, string="Cached Input Tokens",
                                       help="Input tokens read from the provider's prompt cache.")
    cache_write_tokens = fields.Integer(readonly=True, string="Cache Write Tokens",
                                        help="Input tokens written to the provider's prompt cache.")
    output_tokens = fields.Integer(readonly=True, help="Every output token billed, reasoning included.")
    reasoning_tokens = fields.Integer(readonly=True, help="Output tokens the model spent reasoning (thinking).")
    usage_estimated = fields.Boolean(
        readonly=True, string="Estimated Usage",
        help="The provider did not send some of these token counts: they were estimated with the tokenizer.")
    estimated_figures = fields.Char(readonly=True, help="Which token counts were estimated.")
    cost = fields.Float(digits=(16, 6), readonly=True, string="Cost (USD)")
    level = fields.Selection([("info", "Info"), ("warning", "Warning"), ("error", "Error")], readonly=True,
                             index=True, help="Info: it worked. Warning: refused by Odoo (access, validation) or "
                                              "by the safety rules, or the model's mistake. Error: something broke.")
    # The hash chain (engine/durable/log_chain.py). The many2one fields above are
    # nulled when their record is deleted; the chain covers these copies.
    chain_company_id = fields.Integer(readonly=True, help="Company whose chain holds the row (id as logged).")
    logged_thread_id = fields.Integer(readonly=True, string="Thread (id as logged)")
    logged_agent_id = fields.Integer(readonly=True, string="Agent (id as logged)")
    logged_user_id = fields.Integer(readonly=True, string="User (id as logged)")
    logged_provider_id = fields.Integer(readonly=True, string="Provider (id as logged)")
    logged_run_as_user_id = fields.Integer(readonly=True, string="Run As (id as logged)")
    chain_seq = fields.Integer(readonly=True, copy=False, string="Chain Number",
                               help="Place in the company's chain; empty until the row's transaction has committed "
                                    "and the row is sealed.")
    chain_hash = fields.Char(readonly=True, copy=False,
                             help="sha256 of the previous row's hash, the chain number and the row's content.")
    chain_version = fields.Integer(readonly=True, copy=False,
                                   help="Which columns the row's hash covers (engine/durable/log_chain.py).")

    @api.model_create_multi
    def create(self, vals_list):
        """Refused: rows are inserted by ``log``/``log_many`` only, so nobody
        chooses a row's chain fields (AccessError first for users without
        the create right, as the ORM would, then UserError)."""
        self.check_access("create")
        raise UserError(self.env._("Execution logs are written by the agents only."))

    @api.private
    @api.model
    def log(self, action_type, thread=None, **values):
        """Write one row, whatever the user's rights, and return it (as
        superuser). ``values`` are fields of this model;
        ``input_data``/``output_data``/``before_snapshot``/``record_ids`` may
        be any JSON-able value."""
        return self.log_many([(action_type, thread, values)])

    @api.private
    @api.model
    def log_many(self, rows):
        """Write ``rows`` = ``[(action_type, thread, values)]`` (see ``log``)
        in one INSERT, in order, and return them (as superuser).

        The rows are inserted with SQL: a run writes a row for every LLM call
        and tool call, the ORM's ``create`` costs about three times the
        INSERT, and the rows of one step are written together
        (``engine/durable/audit.py``). Rows are never written afterwards, so nothing
        but the threads' cached ``execution_log_ids`` and usage totals depend
        on them; those are invalidated here.

        Rows go in unsealed (no ``chain_seq``/``chain_hash``); a post-commit
        hook, registered once per transaction, chains the companies' rows
        in a short transaction of its own (``log_chain.seal_committed``)."""
        if not rows:
            return self.sudo()
        now = self.env.cr.now()
        prepared = [self._prepare_row(action_type, thread or self.env["agentic.ai.thread"], dict(values), now)
                    for action_type, thread, values in rows]
        fields, insert_into = self._insert_statement()
        one_row = "(" + ", ".join(["%s"] * len(fields)) + ")"
        params = [param for row in prepared for param in insert_params(self, fields, row)]
        self.env.cr.execute(f"{insert_into} VALUES {', '.join([one_row] * len(prepared))} RETURNING id", params)
        ids = [row_id for (row_id,) in self.env.cr.fetchall()]
        threads = self.env["agentic.ai.thread"].browse({row["thread_id"] for row in prepared if row["thread_id"]})
        threads.invalidate_recordset(["execution_log_ids", "total_input_tokens", "total_cache_read_tokens",
                                      "total_output_tokens", "total_reasoning_tokens", "total_cost",
                                      "usage_estimated"])
        self._seal_after_commit({row["chain_company_id"] for row in prepared})
        return self.sudo().browse(sorted(ids))

    def _seal_after_commit(self, company_ids):
        """Have the rows of ``company_ids`` chained once this transaction
        has committed (one hook per transaction, for every company)."""
        postcommit = self.env.cr.postcommit
        pending = postcommit.data.get("agentic_ai.log_chain")
        if pending is None:
            pending = postcommit.data["agentic_ai.log_chain"] = set()
            registry = self.env.registry
            postcommit.add(lambda: log_chain.seal_committed(registry, pending))
        pending.update(company_ids)

    def _defer_seal(self):
        """Withdraw the companies this transaction's commit would seal
        (``_seal_after_commit``) and return them (a set of ids): a durable
        run commits each step and seals once, at its last commit."""
        pending = self.env.cr.postcommit.data.get("agentic_ai.log_chain")
        companies = set(pending or ())
        if pending:
            pending.clear()
        return companies

    @tools.ormcache()
    def _insert_statement(self):
        """``(fields, "INSERT INTO table (columns)")`` of a row
        (models/sql_insert.py), cached per registry."""
        return insert_statement(self)

    def _prepare_row(self, action_type, thread, values, now):
        """The column values of one row (JSON and text made storable)."""
        for key in ("input_data", "output_data", "before_snapshot", "record_ids"):
            if key in values:
                values[key] = _as_json(values[key], MAX_RESULT_CHARS if key == "output_data" else MAX_DATA_CHARS)
        for key in ("error_message", "tool_name", "tool_call_id", "llm_model", "model_name"):
            if values.get(key):
                values[key] = clean_text(values[key], MAX_DATA_CHARS)
        unknown = set(values) - set(self._fields)
        if unknown:
            raise ValueError(f"unknown execution log fields: {sorted(unknown)}")
        row = {
            "success": True,
            "action_type": action_type,
            "thread_id": thread.id,
            # Given by the caller when it knows them (engine/durable/audit.py): the thread is then not read.
            "agent_id": values.pop("agent_id") if "agent_id" in values else thread.agent_id.id,
            "user_id": values.pop("user_id") if "user_id" in values else (thread.user_id.id or self.env.uid),
            "company_id": (values.pop("company_id") if "company_id" in values else thread.company_id.id)
            or self.env.company.id,
            **values,
            "create_date": now,
            "chain_seq": None,
            "chain_hash": None,
            "chain_version": log_chain.CHAIN_VERSION,
        }
        row["level"] = row.get("level") or ("info" if row["success"] else "error")
        row["chain_company_id"] = row["company_id"]
        for column, (logged, _table) in log_chain.REFERENCES.items():
            if column != "company_id":
                row[logged] = row.get(column) or None
        return row

    def write(self, vals):
        raise UserError(self.env._("Execution logs are immutable."))

    def _compute_orm_operation_ids(self):
        """A tool call's ``orm_operation`` rows: those of its conversation
        and call id written after it, before the next row of that call id
        that is not one (a call run again after a confirmation has its
        own). Read with the reader's rights, as the call's row is."""
        calls = self.filtered(lambda row: row.action_type == "tool_execution" and row.tool_call_id)
        (self - calls).orm_operation_ids = False
        if not calls:
            return
        # By conversation first (thread_id is indexed, tool_call_id is not): a log of millions of rows is not
        # scanned from the call's id onwards.
        threads = [("thread_id", "in", calls.thread_id.ids)]
        if not all(calls.mapped("thread_id")):  # a call whose conversation was deleted since
            threads = ["|", ("thread_id", "=", False), *threads]
        rows = self.search([*threads, ("id", ">", min(calls.ids)),
                            ("tool_call_id", "in", list(set(calls.mapped("tool_call_id"))))], order="id")
        for call in calls:
            operations = []
            for row in rows:
                if row.id <= call.id or row.tool_call_id != call.tool_call_id or row.thread_id != call.thread_id:
                    continue
                if row.action_type != "orm_operation":
                    break
                operations.append(row.id)
            call.orm_operation_ids = self.browse(operations)

    @api.ondelete(at_uninstall=False)
    def _unlink_only_by_purge(self):
        if not (self.env.su and self.env.context.get("agentic_ai_log_purge")):
            raise UserError(self.env._("Execution logs are immutable; old ones are removed by the purge job only."))

    @api.model
    def get_thread_timeline(self, thread_id):
        """Every row of a thread the caller may read, oldest first, as a
        list of dicts: the log's record rules apply (an operator who reads
        another user's thread does not read its log rows)."""
        thread = self.env["agentic.ai.thread"].browse(thread_id)
        thread.check_access("read")
        rows = self.search([("thread_id", "=", thread.id)], order="id")
        return rows.read(["create_date", "action_type", "tool_name", "model_name", "record_ids", "success",
                          "error_message", "duration_ms", *FIGURES, "usage_estimated", "cost", "llm_model"])

    @api.model
    def get_cost_report(self, date_from=None, date_to=None, group_by="agent_id"):
        """Token and cost totals of LLM calls grouped by ``agent_id``,
        ``user_id``, ``llm_model`` or ``thread_id``, over the rows the user
        can read: ``[{key, calls, input_tokens, cache_read_tokens,
        cache_write_tokens, output_tokens, reasoning_tokens, cost (USD),
        estimated_calls}]``; ``estimated_calls`` counts the calls whose
        provider sent no usage figures (estimated with the tokenizer)."""
        if group_by not in ("agent_id", "user_id", "llm_model", "thread_id"):
            raise UserError(self.env._("Cannot group the cost report by %s.", group_by))
        domain = [("action_type", "=", "llm_call")]
        if date_from:
            domain.append(("create_date", ">=", date_from))
        if date_to:
            domain.append(("create_date", "<=", date_to))
        groups = self._read_group(domain, [group_by, "usage_estimated"], ["__count", *USAGE_AGGREGATES[:-1]])
        report = {}  # by group (a record, or the model name): two records may have one display name
        for group, estimated, count, *figures, cost in groups:
            key = group.display_name if isinstance(group, models.BaseModel) else group
            row = report.setdefault(group, {"key": key, "calls": 0, **dict.fromkeys(FIGURES, 0), "cost": 0.0,
                                            "estimated_calls": 0})
            row["calls"] += count
            row["estimated_calls"] += count if estimated else 0
            row["cost"] += cost
            for name, value in zip(FIGURES, figures, strict=True):
                row[name] += value
        return [{**row, "cost": round(row["cost"], 6)} for row in report.values()]

    @api.private
    @api.model
    def _rate_limit_usage(self, user_id, agent_id, company_id, now, keys=None, costs=None, caps=None):
        """The LLM calls behind the rate limits (spec §7.5), in the windows
        ending at ``now`` (naive UTC): ``{limit name: WindowUsage}`` with the
        requests of ``user_id`` in the last minute and hour, and the cost
        (USD) of ``agent_id`` and of ``company_id`` in the last 24 hours;
        only the limits named in ``keys`` when given. One query, each part on
        its partial index (``_llm_call_*_idx``).

        ``caps`` (``{request limit name: n}``, the limits) stops counting a
        window's requests at its oldest ``n``: whether the limit is reached,
        and when it resets (its oldest row), stay exact, and a check never
        scans more rows than the limit, however many calls the window holds.

        The 24-hour costs move a base kept by ``costs`` forward
        (engine/guard/daily_costs.py: the process's ``DAILY_COSTS``, never
        in tests, which pass their own): two short ranges of rows instead of
        the day's."""
        windows = [window for window in (
            ("requests_per_minute", "user_id", user_id, rate_limits.MINUTE, SQL("count(*)")),
            ("requests_per_hour", "user_id", user_id, rate_limits.HOUR, SQL("count(*)")),
            ("cost_per_day_agent", "agent_id", agent_id, rate_limits.DAY, SQL("coalesce(sum(cost), 0)")),
            ("cost_per_day_company", "company_id", company_id, rate_limits.DAY, SQL("coalesce(sum(cost), 0)")),
        ) if keys is None or window[0] in keys]
        if not windows:
            return {}
        if costs is None and not odoo_module.current_test:
            costs = DAILY_COSTS
        table, parts, summing = SQL.identifier(self._table), [], {}
        for key, column, value, window, amount in windows:
            where = SQL("action_type = 'llm_call' AND %s = %s", SQL.identifier(column), value or 0)
            since = now - window
            cache_key = (self.env.cr.dbname, column, value or 0)
            base, until = (None, None) if costs is None or window != rate_limits.DAY else costs.base(cache_key, now)
            if base is not None and now - base.until < window:
                oldest = SQL("(SELECT min(create_date) FROM %s WHERE %s AND create_date > %s)", table, where, since)
                parts.append(SQL(
                    "SELECT %s, %s + coalesce(sum(CASE WHEN create_date > %s THEN cost ELSE -cost END), 0), %s, "
                    "NULL::float8 FROM %s WHERE %s AND (create_date > %s OR (create_date > %s AND create_date <= %s))",
                    key, base.amount, base.until, oldest, table, where, base.until, base.until - window, since))
                continue
            if until is None and (caps or {}).get(key, 0) > 0:  # the oldest ``cap`` rows, on the index's order
                parts.append(SQL("SELECT %s, count(*), min(create_date), NULL::float8 FROM (SELECT create_date "
                                 "FROM %s WHERE %s AND create_date > %s ORDER BY create_date LIMIT %s) AS counted",
                                 key, table, where, since, min(int(caps[key]), 2**31 - 1)))  # a bigint LIMIT
                continue
            if until is None:
                parts.append(SQL("SELECT %s, %s, min(create_date), NULL::float8 FROM %s WHERE %s AND create_date > %s",
                                 key, amount, table, where, since))
                continue
            # The whole window, and the new base (until - 24 h, until] beside it, in one scan.
            summing[key] = (cache_key, until)
            parts.append(SQL(
                "SELECT %s, coalesce(sum(cost) FILTER (WHERE create_date > %s), 0), "
                "min(create_date) FILTER (WHERE create_date > %s), "
                "coalesce(sum(cost) FILTER (WHERE create_date > %s AND create_date <= %s), 0) "
                "FROM %s WHERE %s AND create_date > %s",
                key, since, since, until - window, until, table, where, min(since, until - window)))
        self.flush_model()
        rows = []
        try:
            rows = self.env.execute_query(SQL(" UNION ALL ").join(parts))
        finally:
            kept_bases = {key: base for key, _amount, _oldest, base in rows if key in summing}
            for key, (cache_key, until) in summing.items():
                costs.keep(cache_key, daily_costs.Base(until, float(kept_bases[key]))
                           if key in kept_bases else None)
        return {key: rate_limits.WindowUsage(float(amount), oldest) for key, amount, oldest, _base in rows}

    @api.model
    def action_verify_chain(self):
        """Button of the log list (AI administrators): verify every
        company's chain and show the outcome as a notification."""
        results = self.verify_chain()
        broken = [r for r in results if not r["ok"]]
        lines = [self.env._("Company %(company)s: row %(id)s (chain number %(seq)s): %(reason)s",
                            company=r["company_id"], **r["first_broken"]) for r in broken]
        if not broken:
            rows = sum(r["rows_checked"] for r in results)
            lines = [self.env._("%(rows)s rows checked in %(chains)s chains, none changed or missing.",
                                rows=rows, chains=len(results))]
        return {"type": "ir.actions.client", "tag": "display_notification", "params": {
            "title": self.env._("Execution log altered") if broken else self.env._("Execution log intact"),
            "message": "\n".join(lines), "type": "danger" if broken else "success", "sticky": bool(broken)}}

    @api.model
    def verify_chain(self, company=None, expected_heads=None):
        """Verify the hash chain of ``company`` (a res.company record or id;
        every company that has rows or checkpoints when None). AI
        administrators only (AccessError otherwise). ``expected_heads``:
        ``{company_id: (seq, hash)}``, heads kept outside the database that
        each chain must still hold. Returns a list, one dict per company, as
        ``engine.durable.log_chain.verify`` describes: ``{company_id, ok,
        rows_checked, unsealed, checkpoint_seq, head: {seq, hash},
        first_broken: None | {id, seq, reason}}``."""
        if not (self.env.su or self.env.user.has_group("agentic_ai.group_agentic_ai_admin")):
            raise AccessError(self.env._("Only AI administrators can verify the execution log."))
        self.env.flush_all()
        if company is None:  # every company with rows, a checkpoint, a recorded head or a head kept outside
            self.env.cr.execute(SQL("SELECT chain_company_id FROM %s UNION SELECT company_id FROM %s "
                                    "UNION SELECT company_id FROM %s ORDER BY 1",
                                    SQL.identifier(self._table),
                                    SQL.identifier(self.env["agentic.ai.execution.log.checkpoint"]._table),
                                    SQL.identifier(log_chain.HEAD_TABLE)))
            company_ids = [company_id for (company_id,) in self.env.cr.fetchall() if company_id is not None]
            company_ids = sorted(set(company_ids) | set(expected_heads or ()))
        else:
            company_ids = [company if isinstance(company, int) else company.id]
        expected_heads = expected_heads or {}
        return [log_chain.verify(self.env.cr, company_id, expected_heads.get(company_id))
                for company_id in company_ids]

    def init(self):
        """The table of each company's sealed head (engine/durable/log_chain.py),
        at install and upgrade."""
        log_chain.ensure_head_table(self.env.cr)

    @api.model
    def _cron_purge_old_logs(self, days=90):
        """Cron: delete rows older than ``days`` days; returns how many.

        A company's chain is cut at a place, never holed: the purge first
        seals what it sees, then deletes, per company, the sealed rows up to
        the last one before its first row of the last ``days`` days, and
        records where the chain goes on (``agentic.ai.execution.log.checkpoint``:
        that row's seq and hash), so the rest still verifies. It holds each
        company's chain lock until the cron commits."""
        limit = fields.Datetime.now() - timedelta(days=int(days))
        log_chain.seal(self.env)
        table = SQL.identifier(self._table)
        self.env.cr.execute(SQL("SELECT DISTINCT chain_company_id FROM %s WHERE create_date < %s "
                                "AND chain_seq IS NOT NULL", table, limit))
        count = 0
        for company_id in sorted(company_id for (company_id,) in self.env.cr.fetchall()):
            log_chain.lock_company(self.env.cr, company_id)
            self.env.cr.execute(SQL("""
                SELECT chain_seq, chain_hash FROM %(t)s
                 WHERE chain_company_id = %(c)s AND chain_seq IS NOT NULL AND create_date < %(limit)s
                   AND chain_seq < COALESCE((SELECT min(chain_seq) FROM %(t)s WHERE chain_company_id = %(c)s
                                               AND chain_seq IS NOT NULL AND create_date >= %(limit)s), 2147483647)
                 ORDER BY chain_seq DESC LIMIT 1""", t=table, c=company_id, limit=limit))
            last = self.env.cr.fetchone()
            if not last:
                continue
            # What is deleted is verified first: a broken segment is kept in the checkpoint, never hidden.
            result = log_chain.verify(self.env.cr, company_id)
            broken = result["first_broken"]
            broken = broken if broken and broken["seq"] is not None and broken["seq"] <= last[0] else None
            if broken:
                _logger.warning("Purging a broken segment of company %s's execution log chain (kept in its "
                                "checkpoint): %s", company_id, broken["reason"])
            old = self.sudo().search([("chain_company_id", "=", company_id), ("chain_seq", "<=", last[0])])
            old.with_context(agentic_ai_log_purge=True).unlink()
            self.env["agentic.ai.execution.log.checkpoint"].sudo().with_context(agentic_ai_log_purge=True).create({
                "company_id": company_id, "last_seq": last[0], "last_hash": last[1], "rows_purged": len(old),
                "broken_seq": (broken or {}).get("seq") or False,
                "broken_reason": ((broken or {}).get("reason") or "")[:500] or False})
            count += len(old)
        _logger.info("Purged %s execution log rows older than %s days", count, days)
        return count
