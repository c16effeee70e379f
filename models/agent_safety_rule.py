from odoo import api, fields, models
from odoo.exceptions import ValidationError
from odoo.tools.safe_eval import safe_eval

from ..engine.guard.safety_rules import RuleSpec, split_patterns


class AgenticAiSafetyRule(models.Model):
    """A permission layer over Odoo's own (spec 000 §3.9): what agents may
    do, whoever asks, whatever tool carries it.

    A blacklist rule refuses the operations it matches; whitelist rules are
    allow lists: once a whitelist rule of a scope applies to a user, that
    user's agents may only do what a whitelist rule of that scope matches. A
    refusal always wins over an allowance. Rules are checked before a tool
    runs (the models and operation it declares) and on every create, write
    and unlink the tool reaches in the ORM while it runs (engine/guard/safety_rules.py).
    """
    _name = "agentic.ai.safety.rule"
    _inherit = ["agentic.ai.run.settings.source"]
    _description = "AI Agent Safety Rule"
    _order = "sequence, id"

    name = fields.Char(required=True, translate=True)
    description = fields.Text(translate=True,
                              help="Why the rule exists; shown to the user and the model when it refuses.")
    sequence = fields.Integer(default=10)
    active = fields.Boolean(default=True)
    rule_type = fields.Selection(
        [("whitelist", "Whitelist (allow)"), ("blacklist", "Blacklist (deny)")], required=True, default="blacklist",
        help="Blacklist: refuse what the rule matches. Whitelist: an allow list; once one whitelist rule of a "
             "scope applies to a user, that user's agents may only do what a whitelist rule of that scope "
             "matches (one model whitelist refuses every other model). A refusal always wins.")
    scope = fields.Selection([
        ("model", "Model"),
        ("operation", "Operation"),
        ("tool", "Tool"),
        ("field", "Field"),
    ], required=True, default="model",
        help="What the rule is about: a model (with an operation), an operation on any model, a tool, or "
             "fields of a model.")
    model_name = fields.Char(help="Technical model names, comma-separated; * matches any characters "
                                  "(res.users, ir.model.*). Give * on purpose to mean every model.")
    operation = fields.Selection([
        ("read", "Read"),
        ("create", "Create"),
        ("write", "Write"),
        ("unlink", "Delete"),
        ("*", "Any"),
    ], required=True, default="*")
    tool_name = fields.Char(help="Tool names, comma-separated, * as a wildcard (scope Tool).")
    field_names = fields.Char(help="Field names, comma-separated, * as a wildcard (scope Field): the rule "
                                   "matches a create or write that sets one of them.")
    domain = fields.Char(help="Odoo domain the records must match (write and delete): e.g. only posted "
                              "journal entries. Empty: every record.")
    user_ids = fields.Many2many("res.users", string="Users",
                                help="Empty: every user. With groups too, a user must be listed and in a group.")
    group_ids = fields.Many2many("res.groups", string="Groups",
                                 help="Empty: any group. With users too, a user must be listed and in a group.")

    @api.constrains("scope", "model_name", "tool_name", "field_names", "domain")
    def _check_scope(self):
        for rule in self:
            if rule.scope == "tool" and not split_patterns(rule.tool_name):
                raise ValidationError(self.env._("Rule %s: a tool rule needs tool names.", rule.name))
            if rule.scope == "field" and not split_patterns(rule.field_names):
                raise ValidationError(self.env._("Rule %s: a field rule needs field names.", rule.name))
            if rule.scope in ("model", "field") and not split_patterns(rule.model_name):
                raise ValidationError(self.env._("Rule %s: a model rule needs model names.", rule.name))
            if rule.domain:
                try:
                    domain = safe_eval(rule.domain)
                except Exception as error:
                    raise ValidationError(self.env._("Rule %(rule)s: the domain cannot be read: %(error)s",
                                                     rule=rule.name, error=error)) from error
                if not isinstance(domain, list):
                    raise ValidationError(self.env._("Rule %s: the domain must be a list.", rule.name))

    @api.model
    def _rule_specs(self, user):
        """The active rules that apply to ``user`` (by user, by group, or to
        everyone), compiled (engine.guard.safety_rules.RuleSpec), in sequence."""
        specs = []
        for rule in self.sudo().search([]):
            if rule.user_ids and user not in rule.user_ids:
                continue
            if rule.group_ids and not (rule.group_ids & user.all_group_ids):
                continue
            specs.append(RuleSpec(
                id=rule.id, name=rule.name, reason=rule.description or rule.name, rule_type=rule.rule_type,
                scope=rule.scope, models=split_patterns(rule.model_name), operation=rule.operation,
                tools=split_patterns(rule.tool_name), fields=split_patterns(rule.field_names),
                domain=tuple(safe_eval(rule.domain)) if rule.domain else (),
            ))
        return tuple(specs)
