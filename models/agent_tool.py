import json
import math

import jsonschema

from odoo import api, fields, models
from odoo.exceptions import ValidationError
from odoo.tools.safe_eval import safe_eval

from ..tools.base_tool import TOOL_NAME_RE, ToolError, resolve_handler

READ_ONLY_RISKS = ("low",)


class AgenticAiTool(models.Model):
    """A tool the agent can call, with its JSON-Schema (spec 000 §3.3)."""
    _name = "agentic.ai.tool"
    _description = "AI Agent Tool"
    _order = "category, sequence, name"

    _name_uniq = models.UniqueIndex("(name)", "A tool with this name already exists.")

    name = fields.Char(required=True, help="Function name given to the LLM: letters, digits, _ and -, 64 at most.")
    label = fields.Char(translate=True, help="Human-readable name shown in Odoo.")
    description = fields.Text(required=True, help="What the tool does, when to use it and what it returns, for the model.")
    sequence = fields.Integer(default=10)
    active = fields.Boolean(default=True)
    tool_type = fields.Selection([
        ("native", "Native Python"),
        ("orm_crud", "Generic ORM"),
        ("server_action", "Server Action"),
        ("python_code", "Python Code"),
    ], required=True, default="native")
    handler = fields.Char(
        help="Dotted path of a registered tool function, e.g. agentic_ai.tools.sales_tools.create_quotation "
             "(native and generic ORM tools).")
    server_action_id = fields.Many2one("ir.actions.server", ondelete="restrict")
    python_code = fields.Text(
        groups="base.group_system",  # like server actions' code: Settings administrators only
        help="Evaluated with safe_eval. Available: env, params, Command, UserError. Assign the answer to `result`.")
    parameter_schema = fields.Text(default='{"type": "object", "properties": {}}', help="JSON Schema of the parameters.")
    risk_level = fields.Selection([
        ("low", "Low (read only)"),
        ("medium", "Medium"),
        ("high", "High"),
        ("variable", "Variable"),
    ], required=True, default="medium",
        help="Low tools only read. Variable: depends on the call (treated as high by the safety guard).")
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

    def write(self, vals):
        agents = self.env["agentic.ai.agent"].sudo().search([("tool_ids", "in", self.ids)])
        self.env["agentic.ai.agent"]._check_sudo_agents_editable(agents)
        return super().write(vals)

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
            if tool.tool_type in ("native", "orm_crud"):
                try:
                    resolve_handler(tool.handler or "")
                except ToolError as exc:
                    raise ValidationError(self.env._("Tool %(name)s: %(error)s", name=tool.name, error=exc)) from None
            elif tool.tool_type == "server_action" and not tool.server_action_id:
                raise ValidationError(self.env._("Tool %s needs a server action.", tool.name))
            elif tool.tool_type == "python_code" and not (tool.sudo().python_code or "").strip():
                raise ValidationError(self.env._("Tool %s needs Python code.", tool.name))

    # ----------------------------------------------------------------- schema
    def _get_schema(self):
        self.ensure_one()
        try:
            return json.loads(self.parameter_schema or "{}")
        except ValueError:
            return {"type": "object", "properties": {}}

    def to_llm_schema(self):
        """``{"name", "description", "parameters"}``: the neutral function
        declaration every adapter converts to its provider's format."""
        self.ensure_one()
        schema = self._get_schema()
        return {
            "name": self.name,
            "description": self.description or "",
            "parameters": {
                "type": "object",
                "properties": schema.get("properties", {}),
                "required": schema.get("required", []),
            },
        }

    def _validate_params(self, params):
        """Check ``params`` against ``parameter_schema``: required fields,
        types (string, integer, number, boolean, array, object) and enums.
        Returns a list of messages, empty when valid."""
        self.ensure_one()
        if not isinstance(params, dict):
            return ["arguments must be a JSON object"]
        validator = jsonschema.Draft202012Validator(self._get_schema())
        errors = []
        for error in sorted(validator.iter_errors(params), key=lambda e: list(e.absolute_path)):
            where = ".".join(str(p) for p in error.absolute_path)
            if error.validator == "required":
                errors.append(error.message.replace("is a required property", "is a required parameter")
                              + (f" (in {where})" if where else ""))
            else:
                errors.append(f"{where or 'arguments'}: {error.message}")
        errors += [f"{where}: {problem}" for where, problem in _unstorable(params)]
        return errors

    def _sanitize_params(self, params):
        """Keep only the parameters the schema declares (so a model cannot pass
        extra keyword arguments such as ``env``), strip surrounding blanks."""
        self.ensure_one()
        properties = self._get_schema().get("properties", {})
        return {key: value.strip() if isinstance(value, str) else value
                for key, value in params.items() if key in properties}

    # -------------------------------------------------------------- execution
    def _is_available(self, env):
        """True when the tool's app is installed and its models exist and are
        readable by ``env``'s user."""
        self.ensure_one()
        modules = self._get_required_modules()
        if modules and not any(module in env.registry._init_modules for module in modules):
            return False
        for model_name in self._get_model_names():
            if model_name not in env or not env[model_name].has_access("read"):
                return False
        return True

    def _get_required_modules(self):
        """The technical names in ``required_module`` (any one suffices)."""
        self.ensure_one()
        return [name.strip() for name in (self.required_module or "").split(",") if name.strip()]

    def _get_model_names(self, params=None):
        """Models this call touches: the ``model`` parameter of generic tools,
        else the declared ``model_names``."""
        self.ensure_one()
        if params and isinstance(params.get("model"), str):
            return [params["model"]]
        names = [name.strip() for name in (self.model_names or "").split(",") if name.strip()]
        if self.tool_type == "server_action" and self.server_action_id:
            names.append(self.sudo().server_action_id.model_id.model)
        return names

    def _execute(self, env, params):
        """Run the tool in ``env`` with validated ``params``; returns JSON-safe
        data. Raises ToolError, or Odoo's own errors, on failure."""
        self.ensure_one()
        if self.tool_type in ("native", "orm_crud"):
            return resolve_handler(self.handler)(env, **params)
        if self.tool_type == "server_action":
            action = self.server_action_id.with_env(env)
            ctx = {"active_model": params.get("model") or action.model_id.model}
            if params.get("record_ids"):
                ctx.update(active_ids=params["record_ids"], active_id=params["record_ids"][0])
            result = action.with_context(**ctx).run()
            return {"server_action": action.name, "result": result if isinstance(result, (dict, list, str, int, float, bool)) else None}
        if self.tool_type == "python_code":
            from odoo import Command
            from odoo.exceptions import UserError
            local = {"env": env, "params": params, "Command": Command, "UserError": UserError, "result": None}
            safe_eval(self.sudo().python_code, local, mode="exec", filename=f"agentic_ai.tool.{self.name}")
            return local.get("result")
        raise ToolError(f"unknown tool type {self.tool_type}")


def _unstorable(value, where="arguments"):
    """``[(path, problem)]`` for the values no tool can take: NaN and
    infinite numbers (Python's JSON reader accepts ``NaN`` and ``Infinity``
    and JSON Schema's bounds do not refuse NaN) and text with NUL characters
    (PostgreSQL cannot store them)."""
    if isinstance(value, float) and not math.isfinite(value):
        return [(where, f"numbers must be finite, got {value}")]
    if isinstance(value, str) and "\x00" in value:
        return [(where, "text cannot contain NUL characters")]
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    return [found for key, item in items
            for found in _unstorable(item, f"{key}" if where == "arguments" else f"{where}.{key}")]
