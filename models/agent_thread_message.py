import json
from urllib.parse import urlsplit

from odoo import api, fields, models, tools
from odoo.http import request
from odoo.tools import SQL

from ..engine.durable.off_loop import off_loop
from ..engine.text.markdown_render import render_markdown
from ..tools.values.json_values import json_rows
from .sql_insert import insert_params, insert_statement


def _refuse_constant(name):
    raise ValueError(f"{name} is not JSON")


# The fields of a row as every door gives it (see _payloads).
PAYLOAD_FIELDS = ["id", "role", "content", "tool_name", "tool_call_id", "tool_arguments", "tool_status", "create_date",
                  "references", "llm_failure"]


class AgenticAiThreadMessage(models.Model):
    """One row of a thread's transcript (spec 000 §3.4)."""
    _name = "agentic.ai.thread.message"
    _description = "AI Agent Thread Message"
    _order = "id"

    thread_id = fields.Many2one("agentic.ai.thread", required=True, ondelete="cascade", index=True)
    role = fields.Selection([
        ("user", "User"),
        ("assistant", "Assistant"),
        ("system", "System"),
        ("tool_call", "Tool Call"),
        ("tool_result", "Tool Result"),
        ("confirmation_request", "Confirmation Request"),
        ("confirmation_response", "Confirmation Response"),
    ], required=True)
    content = fields.Text()
    # sanitize=False: render_markdown already ran Odoo's sanitizer and then
    # changed the tree (image placeholders, record links' data-res-*), which
    # a second pass of the field's own sanitizer would strip again.
    content_html = fields.Html(
        compute="_compute_content_html", sanitize=False,
        help="An assistant message's Markdown as sanitized HTML (engine/text/markdown_render.py); empty for other "
             "roles.")
    tool_call_id = fields.Char(index=True, help="Id the LLM gave the call; links a call to its result.")
    tool_call_id_generated = fields.Boolean(help="The provider sent no usable id; this one is ours.")
    tool_provider_data = fields.Json(
        help="Opaque data the provider needs back with this call (Gemini thoughtSignature).")
    tool_name = fields.Char()
    tool_arguments = fields.Text(help="Arguments as JSON text, as the model sent them when they were not valid JSON.")
    tool_status = fields.Selection([
        ("requested", "Requested"),
        ("done", "Done"),
        ("error", "Error"),
        ("rejected", "Rejected"),
        ("cancelled", "Cancelled"),
        ("unknown", "Outcome Unknown"),
    ], help="unknown: the run died while the call ran (engine/durable/durability.py); its effect must be checked.")
    tool_result_data = fields.Text(help="Structured result of the tool, as JSON.")
    untrusted_content = fields.Boolean(
        help="The result holds free text from records (notes, descriptions, e-mails): data that may carry "
             "instructions aimed at the model.")
    llm_failure = fields.Boolean(
        readonly=True, help="The agent's own words on a failure of the model (the service did not answer, refused "
                            "the request, or the conversation is too long for it), or on an answer to a question "
                            "that was withdrawn or could not be run: shown to the user, never sent back to the model "
                            "as its earlier answer (issue 24 point 2).")
    input_tokens = fields.Integer()
    output_tokens = fields.Integer()
    references = fields.Json(
        readonly=True, help="The knowledge excerpts an answer was given (issue 13 point 6): [{content, source, "
                            "source_id, score}], shown in the chat as its citations.")
    # The thread's, set in the row's INSERT (precomputed), never changed: a thread's user and company are fixed
    # when it is created (agent_thread.FROZEN_FIELDS). Given by the engine, which read them once for the turn
    # (a commit empties Odoo's cache: the thread's row would be read again for each row, issue 26 point 6);
    # else read from the thread (``_append``), or computed by ``create``. Not writable by anyone but the engine
    # (read-only access rights).
    user_id = fields.Many2one("res.users", string="User", compute="_compute_owner", store=True, index=True,
                              precompute=True, readonly=False)
    company_id = fields.Many2one("res.company", string="Company", compute="_compute_owner", store=True,
                                 precompute=True, readonly=False)

    @api.depends("thread_id")
    def _compute_owner(self):
        for message in self:
            message.user_id = message.thread_id.user_id
            message.company_id = message.thread_id.company_id

    @api.depends("role", "content")
    def _compute_content_html(self):
        template = self.env._("Load image from %s")  # translated here: the rendering may run in another thread

        def label(host):
            try:
                return template % host
            except (TypeError, ValueError):  # a translation without its one %s
                return f"{template} {host}"

        hosts = self._local_hosts()
        for message in self:
            # Long answers take 3-5 ms per KB: off the gevent server's loop (engine/durable/off_loop.py).
            rendered = off_loop(render_markdown, message.content, label, hosts) if message.role == "assistant" else ""
            message.content_html = rendered or False

    @api.model
    def _local_hosts(self):
        """The host names this Odoo answers on (``web.base.url``, the
        request's), lower-case: links there are judged as its own routes
        (engine/text/markdown_render.py)."""
        hosts = set()
        base_url = self.env["ir.config_parameter"].sudo().get_param("web.base.url") or ""
        for url in (base_url, request.httprequest.host_url if request else ""):
            try:
                host = urlsplit(url).hostname
            except ValueError:
                host = None
            if host:
                hosts.add(host.lower())
        return frozenset(hosts)

    @api.private
    @api.model
    def _append(self, values, mark_call=None):
        """Insert one transcript row and return it, in this environment, with
        its fields in Odoo's cache. ``values``: its stored fields as
        ``create`` takes them (``thread_id`` and ``role`` required; the
        thread's ``user_id`` and ``company_id``, read from the thread when
        absent). ``mark_call``: ``(call rows, status)``, the ``tool_status``
        the same statement gives the rows of the call a result answers.

        SQL, as the execution log's rows (``log_many``), rather than
        ``create``: the engine writes two rows a ReAct step, rows nobody
        edits (read-only access rights) and nothing stored depends on, and
        the ORM's ``create`` cost about 0.4 ms of Python a row (defaults,
        access checks, the field-by-field bookkeeping), the largest part of
        a step's own cost over a ``call_kw`` (issue 26 point 6). What
        ``create`` does that matters here is done: the magic columns, the
        precomputed owner, the selections checked, every stored field put in
        the cache (the row is read at once: the transcript, the provenance,
        the stream's event), the row added to the thread's cached
        ``message_ids`` and its ``message_count`` invalidated.

        When another module gave the model a stored field this cannot fill
        (a default, a stored compute, a required field), the rows go through
        ``create`` and ``write`` as before (``_insert_statement``). Overrides
        of ``create`` do not see the rows otherwise. Raises ValueError on an
        unknown or not stored field, a value a selection does not hold, no
        thread or role, or call rows of another model."""
        fields_, insert_into, plain, names = self._insert_statement()
        unknown = values.keys() - names
        if unknown or not values.get("thread_id") or not values.get("role"):
            raise ValueError(f"Cannot append a transcript row with {sorted(values)}: thread_id and role are "
                             f"required, and only stored fields are written (not {sorted(unknown)}).")
        call, status = mark_call if mark_call is not None and mark_call[0] else (None, None)
        if call is not None:
            if call._name != self._name:
                raise ValueError(f"The call a result answers is a transcript row, not {call._name}.")
            call = call.sudo()
            status = self._fields["tool_status"].convert_to_cache(status, self)
        if not plain:
            if call is not None:
                call.write({"tool_status": status})
            return self.create(values)
        row = dict(values)
        if "user_id" not in row or "company_id" not in row:
            thread = self.env["agentic.ai.thread"].sudo().browse(row["thread_id"])
            row.setdefault("user_id", thread.user_id.id)
            row.setdefault("company_id", thread.company_id.id)
        now, uid = self.env.cr.now(), self.env.uid
        row.update(create_uid=uid, write_uid=uid, create_date=now, write_date=now)
        cached = {field: field.convert_to_cache(row.get(field.name), self) for field in fields_}  # checks values
        params = insert_params(self, fields_, row)
        statement = f"{insert_into} VALUES ({', '.join(['%s'] * len(fields_))}) RETURNING id"
        if call is not None:
            call.flush_recordset()  # a write still pending on the call's row would land after this one
            statement = (f"WITH marked AS (UPDATE {SQL.identifier(self._table).code} SET tool_status = %s, "
                         f"write_uid = %s, write_date = %s WHERE id IN %s) {statement}")
            params = [status, uid, now, tuple(call.ids), *params]
        self.env.cr.execute(statement, params)
        message = self.browse(self.env.cr.fetchone()[0])
        for field, value in cached.items():
            field._update_cache(message, value)
        if call is not None:
            for name, value in (("tool_status", status), ("write_uid", uid), ("write_date", now)):
                self._fields[name]._update_cache(call, value)
        # As ``_create`` does: the row joins its thread's cached message_ids (when they are in the cache).
        self._fields["thread_id"]._update_inverses(message, cached[self._fields["thread_id"]])
        self.env["agentic.ai.thread"].browse(row["thread_id"]).invalidate_recordset(["message_count"], flush=False)
        return message

    @tools.ormcache()
    def _insert_statement(self):
        """``(fields, "INSERT INTO table (columns)", plain, names)``: the
        statement of a row (models/sql_insert.py), whether ``_append`` can
        write every one of its fields (none has a default, none is computed
        but the owner, ``user_id`` and ``company_id``, none is required but
        ``thread_id`` and ``role``), and the fields' names. Cached per
        registry."""
        fields_, insert_into = insert_statement(self)
        plain = all(field.default is None and (not field.compute or field.name in ("user_id", "company_id"))
                    and (not field.required or field.name in ("thread_id", "role")) for field in fields_)
        return fields_, insert_into, plain, frozenset(field.name for field in fields_)

    def _get_arguments(self):
        """The stored arguments as a dict (``{}`` when they were not valid JSON)."""
        self.ensure_one()
        try:
            value = json.loads(self.tool_arguments or "{}")
        except (ValueError, RecursionError):
            return {}
        return value if isinstance(value, dict) else {}

    def _payloads(self):
        """These rows in the one JSON shape of a transcript row (issue 25
        point 3), the same in the routes' ``messages``, the stream's events
        and the poll: ``{id, role, content, content_html, tool_name,
        tool_call_id, tool_arguments, tool_status, create_date, references,
        llm_failure}``. ``content_html`` is the sanitized markup of an
        assistant row (engine/text/markdown_render.py), else null;
        ``tool_arguments`` the call's arguments as JSON data, or the text the
        model sent when it was not valid JSON, or null; other values as
        tools/values/json_values.py writes them (datetimes in UTC with their
        offset, empty values null). Returns a list, in the records' order."""
        rows = json_rows(self, self.read(PAYLOAD_FIELDS))
        for row, message in zip(rows, self, strict=True):
            row["content_html"] = str(message.content_html) if message.content_html else None
            row["tool_arguments"] = message._arguments_value()
        return rows

    def _arguments_value(self):
        """``tool_arguments`` as JSON data when it is a JSON object or array
        of strict JSON (no NaN or Infinity, which no JSON parser reads), else
        the text as the model sent it; None when empty."""
        self.ensure_one()
        if not self.tool_arguments:
            return None
        try:
            value = json.loads(self.tool_arguments, parse_constant=_refuse_constant)
        except (ValueError, RecursionError):
            return self.tool_arguments
        return value if isinstance(value, (dict, list)) else self.tool_arguments
