"""Safety rules (spec 000 §3.9, §7.2) judged on one operation, without the
ORM: the ``agentic.ai.safety.rule`` records that apply to the run's user are
compiled once per run into ``RuleSpec`` values, and ``judge`` tells whether
an ``Operation`` is refused and why.

Semantics (the record's docstring says the same to administrators):

- a blacklist rule that matches refuses the operation, whatever else
  matches (a refusal wins);
- whitelist rules are allow lists per scope: when at least one whitelist
  rule of a scope applies to the user, an operation that this scope is
  about must match one of them (a tool whitelist limits the tools, a model
  whitelist the models, an operation whitelist the operations, a field
  whitelist the fields written on its models). Allow lists judge what a
  tool call declares (its tool, its model, its values), not the records
  Odoo's business code writes on the side (chatter messages, stock moves of
  a confirmed order): blacklists judge both.

Patterns are comma-separated names with ``*`` matching any characters
(``fnmatch`` without its other specials: ``?`` and ``[`` are plain text in
a model or field name)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

OPERATIONS = ("read", "create", "write", "unlink")
PROTECTED_PREFIX = "agentic.ai."  # the addon's own models: no agent reads or changes them
# Odoo's configuration: who may log in and do what, what runs when, and code
# that runs later. A change to one of these always needs the user's
# confirmation, whatever the agent's policy, where no rule forbids it
# (issue 9, point 3). Business records Odoo keeps in ir.* models on the side
# (attachments, sequences, cron triggers) and a user's own UI settings
# (res.users.settings, written when Discuss is used) are not configuration.
CONFIGURATION_MODELS = (
    "res.users", "res.users.apikeys*", "res.users.identitycheck", "res.users.deletion", "res.groups",
    "res.groups.*", "res.company", "res.config.settings", "*.config.settings", "ir.config_parameter", "ir.model",
    "ir.model.*", "ir.rule", "ir.cron", "ir.module.*", "ir.ui.view", "ir.ui.menu", "ir.actions.*",
    "ir.mail_server", "ir.default", "mail.template", "base.automation", "base.automation.*", "fetchmail.server",
    "auth_*", "auth.*", "iap.account",
)


@dataclass(frozen=True)
class RuleSpec:
    """One rule, compiled. ``models``/``tools``/``fields`` are patterns;
    ``operation`` is one of OPERATIONS or ``*``; ``domain`` an Odoo domain
    the records of a write or delete must match (empty: all)."""
    id: int
    name: str
    reason: str
    rule_type: str
    scope: str
    models: tuple[str, ...] = ("*",)
    operation: str = "*"
    tools: tuple[str, ...] = ()
    fields: tuple[str, ...] = ()
    domain: tuple = field(default=(), compare=False)


@dataclass(frozen=True)
class Operation:
    """What is about to happen: ``operation`` (one of OPERATIONS) on
    ``model`` by tool ``tool``, setting ``fields`` (create and write)."""
    tool: str
    model: str
    operation: str
    fields: frozenset[str] = frozenset()


def is_configuration(model: str) -> bool:
    """Whether changing ``model`` changes Odoo's configuration (CONFIGURATION_MODELS)."""
    return matches(CONFIGURATION_MODELS, model)


def split_patterns(text) -> tuple[str, ...]:
    """The patterns of a comma-separated rule field, blanks dropped."""
    return tuple(part.strip() for part in (text or "").split(",") if part.strip())


@lru_cache(maxsize=1024)
def _regex(pattern: str) -> re.Pattern:
    return re.compile("".join(".*" if part == "*" else re.escape(part) for part in re.split(r"(\*)", pattern)))


def matches(patterns: tuple[str, ...], name: str) -> bool:
    """Whether ``name`` matches one of ``patterns`` (``*`` = any characters)."""
    return any(_regex(pattern).fullmatch(name) for pattern in patterns)


def applies(rule: RuleSpec, op: Operation) -> bool:
    """Whether ``rule`` is about ``op`` (its domain aside, which needs the records)."""
    if rule.operation != "*" and rule.operation != op.operation:
        return False
    if rule.scope == "tool":
        return matches(rule.tools, op.tool)
    if rule.scope == "operation":
        return matches(rule.models or ("*",), op.model)
    if rule.scope == "field":
        return (op.operation in ("create", "write") and matches(rule.models, op.model)
                and any(matches(rule.fields, name) for name in op.fields))
    return matches(rule.models, op.model)  # scope model


def blacklisted(rules: tuple[RuleSpec, ...], op: Operation) -> tuple[RuleSpec, ...]:
    """The blacklist rules about ``op``, in sequence (their domains still to check)."""
    return tuple(rule for rule in rules if rule.rule_type == "blacklist" and applies(rule, op))


def domain_holds(rule: RuleSpec, records) -> bool:
    """Whether one of ``records`` (any environment; read as superuser)
    matches ``rule``'s domain; true without a domain. A domain that cannot
    be applied to these records (a field they lack) counts as a match: a
    rule that cannot be checked refuses rather than lets through."""
    if not rule.domain:
        return True
    try:
        return bool(records.sudo().exists().filtered_domain(list(rule.domain)))
    except Exception:  # noqa: BLE001 - any failure of a rule's domain must refuse, never allow
        return True


def not_whitelisted(rules: tuple[RuleSpec, ...], op: Operation) -> str:
    """Why ``op`` falls outside the user's allow lists, or ``""``."""
    for scope in ("tool", "model", "operation", "field"):
        allow = [rule for rule in rules if rule.rule_type == "whitelist" and rule.scope == scope]
        if not allow or not _concerns(scope, allow, op):
            continue
        if not any(applies(rule, op) for rule in allow):
            what = {"tool": f"the tool {op.tool}", "model": f"{op.model}",
                    "operation": f"{op.operation} on {op.model}",
                    "field": f"the fields {', '.join(sorted(op.fields))} of {op.model}"}[scope]
            names = ", ".join(rule.name for rule in allow)
            return f"{what} is not on the allow list of the safety rules ({names})"
    return ""


@dataclass(frozen=True)
class RuleSet:
    """The rules of one run (in sequence), with their verdicts on each
    distinct operation kept: a run asks about the same few operations again
    and again, and a rule's verdict (its domain aside) depends on nothing else."""
    rules: tuple[RuleSpec, ...] = ()
    _memo: dict = field(default_factory=dict, repr=False, compare=False)

    def __bool__(self) -> bool:
        return bool(self.rules)

    def refusing(self, op: Operation) -> tuple[RuleSpec, ...]:
        """``blacklisted(self.rules, op)``, kept."""
        key = ("refusing", op)
        if key not in self._memo:
            self._memo[key] = blacklisted(self.rules, op)
        return self._memo[key]

    def outside_allow_lists(self, op: Operation) -> str:
        """``not_whitelisted(self.rules, op)``, kept."""
        key = ("outside", op)
        if key not in self._memo:
            self._memo[key] = not_whitelisted(self.rules, op)
        return self._memo[key]

    @property
    def tool_rules(self) -> RuleSet:
        """The rules of scope tool alone (judging a call by its tool only)."""
        if "tools" not in self._memo:
            self._memo["tools"] = RuleSet(tuple(rule for rule in self.rules if rule.scope == "tool"))
        return self._memo["tools"]


def _concerns(scope: str, allow: list[RuleSpec], op: Operation) -> bool:
    """Whether an allow list of ``scope`` says anything about ``op``: a
    field allow list only about writes to the models it names."""
    if scope == "field":
        return op.operation in ("create", "write") and any(matches(rule.models, op.model) for rule in allow)
    return True
