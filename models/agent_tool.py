import json
import logging

import jsonschema

from odoo import api, fields, models
from odoo.exceptions import UserError, ValidationError

from ..tools.base_tool import (
    DESTRUCTIVE_RISKS,
    READ_ONLY_RISKS,
    TOOL_NAME_RE,
    TOOL_REGISTRY,
    TOOL_TYPES,
    ToolError,
    definitions,
    failed_modules,
    resolve_handler,
)
from ..tools.tool_spec import ToolSpec, split_names

_logger = logging.getLogger(__name__)

# Fields of a tool defined in code that only its definition (tools/base_tool.py) and the sync set.
DEFINED_FIELDS = ("name", "description", "tool_type", "handler", "parameter_schema", "risk_level", "is_destructive",
                  "is_idempotent", "category", "required_module", "model_names", "definition_missing")
RISK_RANK = {"low": 0, "medium": 1, "high": 2, "variable": 2}


class AgenticAiTool(models.Model):
    """A tool the agent can call, with its JSON-Schema (spec 000 §3.3).

    The tools of ``tools/`` are defined in code (``@agent_tool``) and
    synchronised into these records on install and upgrade; administrators
    switch them on and off, rename them, order them, attach them to agents
    and ask for confirmation. Administrators create other tools in the UI:
    Python code, a server action, or another record of a registered
    function (e.g. ``odoo_method_call`` with a narrower description)."""
    _name = "agentic.ai.tool"
    _inherit = ["agentic.ai.run.settings.source"]
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
        groups="base.group_system", copy=False,  # like server actions' code: Settings administrators only
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
    definition_missing = fields.Boolean(
        readonly=True, copy=False,
        help="Archived by an upgrade because the code no longer defines it; it comes back if the definition does.")

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

    @api.constrains("tool_type", "handler", "server_action_id", "python_code", "risk_level", "is_destructive",
                    "active", "definition_missing")
    def _check_implementation(self):
        for tool in self:
            if tool.tool_type in TOOL_TYPES:
                if tool.definition_missing and not tool.active:
                    continue  # archived by an upgrade: its function is gone
                try:
                    resolve_handler(tool.handler or "")
                except ToolError as exc:
                    raise ValidationError(self.env._("Tool %(name)s: %(error)s", name=tool.name, error=exc)) from None
                definition = TOOL_REGISTRY[tool.handler]
                # Another record of a registered function is at least as risky as the function's own tool.
                if RISK_RANK[tool.risk_level] < RISK_RANK[definition.risk_level] or (
                        definition.destructive and not tool.is_destructive):
                    raise ValidationError(self.env._(
                        "Tool %(name)s runs %(function)s, which is a %(risk)s-risk%(destructive)s tool: its risk "
                        "level cannot be lower.", name=tool.name, function=definition.name,
                        risk=definition.risk_level, destructive=", destructive" if definition.destructive else ""))
            elif tool.tool_type == "server_action" and not tool.server_action_id:
                raise ValidationError(self.env._("Tool %s needs a server action.", tool.name))
            elif tool.tool_type == "python_code" and not (tool.sudo().python_code or "").strip():
                raise ValidationError(self.env._("Tool %s needs Python code.", tool.name))

    @api.model_create_multi
    def create(self, vals_list):
        if not self.env.su and any("definition_missing" in vals for vals in vals_list):
            raise UserError(self.env._("Only an upgrade marks a tool whose definition is gone."))
        return super().create(vals_list)

    def write(self, vals):
        self.check_access("write")
        if not self.env.su and "definition_missing" in vals:
            raise UserError(self.env._("Only an upgrade marks a tool whose definition is gone."))
        agents = self.env["agentic.ai.agent"].sudo().search([("tool_ids", "in", self.ids)])
        self.env["agentic.ai.agent"]._check_sudo_agents_editable(agents)
        if not self.env.su and set(DEFINED_FIELDS).intersection(vals) and self.filtered("is_code_defined"):
            raise UserError(self.env._(
                "A tool defined in code takes %(fields)s from its definition, and the next upgrade would put them "
                "back; only its label, sequence, activity and confirmation can be changed.",
                fields=", ".join(sorted(set(DEFINED_FIELDS).intersection(vals)))))
        return super().write(vals)

    @api.ondelete(at_uninstall=False)
    def _unlink_except_code_defined(self):
        if not self.env.su and self.filtered("is_code_defined"):
            raise UserError(self.env._("A tool defined in code cannot be deleted (an upgrade would bring it back): "
                                       "archive it instead."))

    def copy_data(self, default=None):
        """A copy gets a free name (``<name>_copy``, ``<name>_copy_2``...) and,
        for Settings administrators, the Python code."""
        vals_list = super().copy_data(default=default)
        if default and "name" in default:
            return vals_list
        for tool, vals in zip(self, vals_list, strict=True):
            if tool.tool_type == "python_code" and self.env.user.has_group("base.group_system"):
                vals.setdefault("python_code", tool.sudo().python_code)
            base, number = f"{tool.name[:58]}_copy", 1
            vals["name"] = base
            while self.with_context(active_test=False).search_count([("name", "=", vals["name"])]):
                number += 1
                vals["name"] = f"{base}_{number}"
        return vals_list

    # ------------------------------------------------------------ definitions
    @api.model
    def _sync_tool_definitions(self, module="agentic_ai"):
        """Create or update the tools that ``module`` defines in code (called
        from its data on install and upgrade). The fields a definition owns
        (``DEFINED_FIELDS``) are written; label, sequence, activity and
        confirmation keep the administrator's values. A tool made by hand
        under a defined tool's name is renamed ``<name>_custom``, so that
        the name means the defined tool. A tool of ``module`` whose
        definition is gone is archived, not deleted (its external id is
        kept, so Odoo does not remove it), unless a tool module of
        ``module`` failed to import: then nothing is archived. A tool that
        an upgrade archived comes back with its definition; a new tool of
        agentic_ai is attached to the default agent. Returns the
        synchronised tools."""
        Tool = self.sudo().with_context(active_test=False)
        data = self.env["ir.model.data"].sudo()
        synced = created = self.browse()
        xml_ids, defined = [], {d.xml_id for d in definitions(module)}
        for definition in definitions(module):
            problems = definition.problems()
            if problems:
                _logger.error("Tool %s of %s is not installed: %s", definition.name, module, "; ".join(problems))
                continue
            record = (Tool.env.ref(definition.xml_id, raise_if_not_found=False) or Tool.browse()).exists()
            clash = Tool.search([("name", "=", definition.name), ("id", "not in", record.ids)], limit=1)
            if clash:
                renamed = f"{definition.name[:50]}_custom"
                while Tool.search_count([("name", "=", renamed)]):
                    renamed += "_"
                _logger.warning("Tool %s (id %s), made by hand, is renamed %s: %s defines a tool of that name.",
                                clash.name, clash.id, renamed[:64], module)
                clash.write({"name": renamed[:64]})
                clash.flush_recordset(["name"])  # before the defined tool takes the name
            if record:
                values = definition.record_values()
                if record.definition_missing:
                    values.update(active=True, definition_missing=False)
                record.write(values)
            else:
                record = Tool.create({**definition.record_values(), **definition.initial_values()})
                created |= record
            synced |= record
            xml_ids.append({"xml_id": definition.xml_id, "record": record, "noupdate": False})
        broken = failed_modules(module)
        for entry in data.search([("module", "=", module), ("model", "=", self._name), ("name", "=like", "tool\\_%")]):
            orphan = Tool.browse(entry.res_id).exists()
            if not orphan or entry.complete_name in defined:
                continue
            if broken:
                _logger.warning("Tool %s kept as it is: %s could not import %s", orphan.name, module,
                                ", ".join(broken))
            elif orphan.active:
                _logger.info("Tool %s archived: %s no longer defines it", orphan.name, module)
                orphan.write({"active": False, "definition_missing": True})
            xml_ids.append({"xml_id": entry.complete_name, "record": orphan, "noupdate": False})
        data._update_xmlids(xml_ids)
        # A tool an upgrade brings is offered by the default agent (on install its data attaches them all).
        agent = self.env.ref("agentic_ai.agent_general_assistant", raise_if_not_found=False)
        if module == "agentic_ai" and agent and created:
            agent.sudo().write({"tool_ids": [(4, tool.id) for tool in created]})
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
        return list(split_names(self.required_module))
