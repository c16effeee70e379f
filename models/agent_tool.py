import json
import logging

import jsonschema

from odoo import api, fields, models
from odoo.exceptions import UserError, ValidationError

from ..engine.tool_spec import ToolSpec
from ..tools.registry import (
    DESTRUCTIVE_RISKS,
    READ_ONLY_RISKS,
    TOOL_NAME_RE,
    TOOL_TYPES,
    ToolError,
    definitions,
    resolve_handler,
)

_logger = logging.getLogger(__name__)

# Fields of a tool defined in code that only its definition sets (tools/registry.py).
DEFINED_FIELDS = ("name", "description", "tool_type", "handler", "parameter_schema", "risk_level", "is_destructive",
                  "is_idempotent", "category", "required_module", "model_names")


class AgenticAiTool(models.Model):
    """A tool the agent can call, with its JSON-Schema (spec 000 §3.3).

    The tools of ``tools/`` are defined in code (``@agent_tool``) and
    synchronised into these records on install and upgrade; administrators
    switch them on and off, rename them, order them, attach them to agents
    and ask for confirmation. Administrators create other tools in the UI:
    Python code, a server action, or another record of a registered
    function (e.g. ``odoo_method_call`` with a narrower description)."""
    _name = "agentic.ai.tool"
    _description = "AI Agent Tool"
    _order = "category, sequence, name"

    _name_uniq = models.UniqueIndex("(name)", "A tool with this name already exists.")

    name = fields.Char(required=True, help="Function name given to the LLM: letters, digits, _ and -, 64 at most.")
    label = fields.Char(translate=True, help="Human-readable name shown in Odoo.")
    description = fields.Text(required=True,
                              help="What the tool does, when to use it and what it returns, for the model.")
    sequence = fields.Integer(default=10)
    active = fields.Boolean(default=True)
    tool_type = fields.Selection([
        ("native", "Native Python"),
        ("orm_crud", "Generic ORM"),
        ("server_action", "Server Action"),
        ("python_code", "Python Code"),
    ], required=True, default="native")
    is_code_defined = fields.Boolean(
        compute="_compute_is_code_defined",
        help="Defined in the code of an addon: only its label, order, activity and confirmation can be changed here.")
    handler = fields.Char(
        help="Dotted path of a registered tool function, e.g. agentic_ai.tools.sales_tools.create_quotation "
             "(native and generic ORM tools).")
    server_action_id = fields.Many2one("ir.actions.server", ondelete="restrict")
    python_code = fields.Text(
        groups="base.group_system",  # like server actions' code: Settings administrators only
        help="Evaluated with safe_eval. Available: env, params, Command, UserError. Assign the answer to `result`.")
    parameter_schema = fields.Text(default='{"type": "object", "properties": {}}',
                                   help="JSON Schema of the parameters.")
    risk_level = fields.Selection([
        ("low", "Low (read only)"),
        ("medium", "Medium"),
        ("high", "High"),
        ("variable", "Variable"),
    ], required=True, default="medium",
        help="Low tools only read. Variable: depends on the call (treated as high by the safety guard).")
    is_destructive = fields.Boolean(
        string="Destructive", compute="_compute_hints", store=True, readonly=False, precompute=True,
        help="May delete, cancel or irreversibly change data: asked about under the 'Destructive operations' "
             "confirmation policy. By default set for high- and variable-risk tools.")
    is_idempotent = fields.Boolean(
        string="Idempotent", compute="_compute_hints", store=True, readonly=False, precompute=True,
        help="Calling it twice with the same arguments has the effect of calling it once.")
    category = fields.Selection([
        ("generic", "Generic ORM"),
        ("sales", "Sales"),
        ("purchase", "Purchase"),
        ("inventory", "Inventory"),
        ("accounting", "Accounting"),
        ("hr", "HR"),
        ("manufacturing", "Manufacturing"),
        ("report", "Report"),
        ("other", "Other"),
    ], default="other", required=True)
    required_module = fields.Char(help="Technical name of the Odoo app the tool needs, or several separated by commas "
                                       "when any one of them will do; the tool is hidden while none is installed.")
    model_names = fields.Char(
        help="Comma-separated models the tool reads or writes, checked against agents' allowed/blocked models. "
             "Generic ORM tools take the model from their `model` parameter.")
    requires_confirmation = fields.Boolean(help="Always ask the user before running this tool.")
    is_read_only = fields.Boolean(compute="_compute_is_read_only")

    def _compute_is_code_defined(self):
        defined = {definition.xml_id for definition in definitions()}
        external_ids = self._get_external_ids()
        for tool in self:
            tool.is_code_defined = bool(defined.intersection(external_ids.get(tool.id, ())))

    @api.depends("risk_level")
    def _compute_hints(self):
        for tool in self:
            tool.is_destructive = tool.risk_level in DESTRUCTIVE_RISKS
            tool.is_idempotent = tool.risk_level in READ_ONLY_RISKS

    @api.depends("risk_level")
    def _compute_is_read_only(self):
        for tool in self:
            tool.is_read_only = tool.risk_level in READ_ONLY_RISKS

    @api.constrains("name")
    def _check_name(self):
        for tool in self:
            if not TOOL_NAME_RE.match(tool.name or ""):
                raise ValidationError(self.env._(
                    "Tool name %s is invalid: use 1 to 64 letters, digits, '_' or '-'.", tool.name))

    @api.constrains("parameter_schema")
    def _check_parameter_schema(self):
        for tool in self:
            try:
                schema = json.loads(tool.parameter_schema or "{}")
                jsonschema.Draft202012Validator.check_schema(schema)
            except (ValueError, jsonschema.SchemaError) as exc:
                raise ValidationError(self.env._("Tool %(name)s: invalid parameter schema: %(error)s",
                                                 name=tool.name, error=str(exc).split("\n")[0])) from None
            if schema.get("type") != "object":
                raise ValidationError(self.env._("Tool %s: the parameter schema must describe an object.", tool.name))

    @api.constrains("tool_type", "handler", "server_action_id", "python_code")
    def _check_implementation(self):
        for tool in self:
            if tool.tool_type in TOOL_TYPES:
                try:
                    resolve_handler(tool.handler or "")
                except ToolError as exc:
                    raise ValidationError(self.env._("Tool %(name)s: %(error)s", name=tool.name, error=exc)) from None
            elif tool.tool_type == "server_action" and not tool.server_action_id:
                raise ValidationError(self.env._("Tool %s needs a server action.", tool.name))
            elif tool.tool_type == "python_code" and not (tool.sudo().python_code or "").strip():
                raise ValidationError(self.env._("Tool %s needs Python code.", tool.name))

    def write(self, vals):
        agents = self.env["agentic.ai.agent"].sudo().search([("tool_ids", "in", self.ids)])
        self.env["agentic.ai.agent"]._check_sudo_agents_editable(agents)
        if not self.env.su and set(DEFINED_FIELDS).intersection(vals) and self.filtered("is_code_defined"):
            raise UserError(self.env._(
                "%(fields)s of a tool defined in code come from its definition and would be replaced at the next "
                "upgrade; only its label, sequence, activity and confirmation can be changed.",
                fields=", ".join(sorted(set(DEFINED_FIELDS).intersection(vals)))))
        return super().write(vals)

    # ------------------------------------------------------------ definitions
    @api.model
    def _sync_tool_definitions(self, module="agentic_ai"):
        """Create or update the tools that ``module`` defines in code (called
        from its data on install and upgrade). The fields a definition owns
        (``DEFINED_FIELDS``) are written; label, sequence, activity and
        confirmation keep the administrator's values. A tool of ``module``
        whose definition is gone is archived, not deleted (its external id
        is kept, so Odoo does not remove it). Returns the synchronised tools."""
        Tool = self.sudo().with_context(active_test=False)
        data = self.env["ir.model.data"].sudo()
        synced, xml_ids = self.browse(), []
        for definition in definitions(module):
            problems = definition.problems()
            if problems:
                _logger.error("Tool %s of %s is not installed: %s", definition.name, module, "; ".join(problems))
                continue
            record = Tool.env.ref(definition.xml_id, raise_if_not_found=False)
            if record:
                record.write(definition.record_values())
            elif clash := Tool.search([("name", "=", definition.name)], limit=1):
                _logger.warning("Tool %s of %s is not installed: a tool of that name (id %s) was created by hand; "
                                "rename it, then upgrade the module.", definition.name, module, clash.id)
                continue
            else:
                record = Tool.create({**definition.record_values(), **definition.initial_values()})
            synced |= record
            xml_ids.append({"xml_id": definition.xml_id, "record": record, "noupdate": False})
        current = {entry["xml_id"] for entry in xml_ids}
        for entry in data.search([("module", "=", module), ("model", "=", self._name), ("name", "=like", "tool\\_%")]):
            if entry.complete_name not in current:
                orphan = Tool.browse(entry.res_id).exists()
                if orphan:
                    if orphan.active:
                        _logger.info("Tool %s archived: %s no longer defines it", orphan.name, module)
                    orphan.active = False
                    xml_ids.append({"xml_id": entry.complete_name, "record": orphan, "noupdate": False})
        data._update_xmlids(xml_ids)
        return synced

    # ----------------------------------------------------------------- schema
    def _get_schema(self):
        """The parameter schema as a dict (an empty object schema when unreadable)."""
        self.ensure_one()
        return ToolSpec.from_record(self).schema

    def to_llm_schema(self):
        """``{"name", "description", "parameters"}``: the neutral function
        declaration every adapter converts to its provider's format (spec §3.3)."""
        self.ensure_one()
        return ToolSpec.from_record(self).llm_schema

    def _validate_params(self, params):
        """Check ``params`` against ``parameter_schema`` (spec §3.3: required
        fields, types, enums); returns a list of messages, empty when valid."""
        self.ensure_one()
        return ToolSpec.from_record(self).validate(params)

    def _get_required_modules(self):
        """The technical names in ``required_module`` (any one suffices)."""
        self.ensure_one()
        return [name.strip() for name in (self.required_module or "").split(",") if name.strip()]
