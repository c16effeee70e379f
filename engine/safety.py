"""SafetyGuard (spec 000 §7.2): decides, before anything runs, whether a
tool call is allowed, needs the user's confirmation, or is refused.

The chain, in the spec's order: the safety rules (engine/guard/safety_rules.py)
on the tool and the models and operation it declares → the agent's allowed
and blocked models (the addon's own models always refused) → rate limits →
the confirmation policy. The rate limits (spec §7.5, engine/guard/rate_limits.py)
count LLM requests and cost, not tool calls, so the runtime checks them
before each LLM call (``AgentRuntime._rate_limited``), ahead of the tool
calls that answer asks for; this guard has no step of its own for them.
While the tool runs, engine/guard/operation_guard.py judges each ORM operation it
actually performs against the same rules."""
from __future__ import annotations

from dataclasses import dataclass

from ..tools.tool_spec import TOOL_OPERATIONS, ToolSpec
from .guard.intent import action_words
from .guard.provenance import Provenance, describe
from .guard.safety_rules import PROTECTED_PREFIX, Operation, domain_holds, is_configuration
from .turn.run_context import RunContext

ALLOW = "allow"
CONFIRM_REQUIRED = "confirm_required"
DENY = "deny"


@dataclass(frozen=True)
class SafetyDecision:
    """``verdict`` is ALLOW, CONFIRM_REQUIRED or DENY; ``reason`` says why
    in words the model and the user can act on; ``source`` which check
    decided (engine.guard.confirmation.SOURCES)."""
    verdict: str
    reason: str = ""
    source: str = ""

    @property
    def allowed(self) -> bool:
        return self.verdict == ALLOW


def _archives(spec: ToolSpec, params: dict) -> bool:
    """Whether a generic create or write sets ``active`` to false, on its
    records or on lines reached through its relational commands (archives
    records)."""
    return spec.name in ("odoo_create", "odoo_write") and _sets_inactive(params.get("values"), 0)


def _sets_inactive(values, depth: int) -> bool:
    if depth > 20 or not isinstance(values, dict):
        return False
    if "active" in values and not values["active"]:
        return True
    return any(isinstance(command, (list, tuple)) and len(command) > 2 and command[0] in (0, 1)
               and _sets_inactive(command[2], depth + 1)
               for value in values.values() if isinstance(value, list) for command in value)


class SafetyGuard:
    """The check chain of one run, on its RunContext."""

    def __init__(self, context: RunContext, env=None):
        self.context = context
        self.env = env  # the run's environment: rules with a domain read the records a call names

    def check(self, spec: ToolSpec, touched: tuple[str, ...], confirmed: bool = False,
              params: dict | None = None, untrusted: tuple[str, ...] = (),
              provenance: Provenance | None = None) -> SafetyDecision:
        """Run the chain in order, the first non-ALLOW verdict wins.
        ``touched`` are the models the call reaches (engine.guard.touched_models);
        ``params`` its sanitized arguments; ``confirmed`` skips the
        confirmation gate (the user approved this call); ``provenance``
        where the conversation's values came from (engine/guard/provenance.py);
        without it, ``untrusted`` (where the free text from records the
        model has seen came from) makes every change ask."""
        decision = self._check_safety_rules(spec, touched, params or {})
        if decision.allowed:
            decision = self._check_model_access(touched)
        if decision.allowed and not confirmed:
            decision = self._check_confirmation_needed(spec, touched, untrusted, params or {}, provenance)
        return decision

    def _check_safety_rules(self, spec: ToolSpec, touched: tuple[str, ...], params: dict) -> SafetyDecision:
        """The rules on what the call declares: a read tool reads its models;
        odoo_create/write/unlink do that to their model with the fields of
        ``values``; any other tool is judged here as a tool (its ORM
        operations are judged as it runs)."""
        rules = self.context.rules
        if not rules:
            return SafetyDecision(ALLOW)
        values = params.get("values")
        fields = frozenset(values) if isinstance(values, dict) else frozenset()
        if spec.read_only:
            operations = [Operation(spec.name, model, "read") for model in touched or ("",)]
        elif spec.name in TOOL_OPERATIONS and touched:
            # The models its one2many/many2many values reach are created in or
            # linked to, which may not go through their own write (a link row).
            operations = [Operation(spec.name, touched[0], TOOL_OPERATIONS[spec.name], fields)] + [
                Operation(spec.name, model, operation) for model in touched[1:] for operation in ("create", "write")]
        else:
            rules = rules.tool_rules
            operations = [Operation(spec.name, touched[0] if touched else "", "write", fields)]
        record_ids = params.get("record_ids") if isinstance(params.get("record_ids"), list) else []
        for op in operations:
            refusing = [rule for rule in rules.refusing(op) if self._domain_holds(rule, op, record_ids)]
            if refusing:
                rule = refusing[0]
                return SafetyDecision(DENY, f"{rule.reason} (safety rule {rule.name}: {op.operation} on "
                                            f"{op.model or spec.name})", "rule")
            outside = rules.outside_allow_lists(op)
            if outside:
                return SafetyDecision(DENY, outside, "rule")
        return SafetyDecision(ALLOW)

    def _domain_holds(self, rule, op: Operation, record_ids: list) -> bool:
        """Whether ``rule``'s domain matches one of the records ``op`` names
        (always without a domain; a create or a call without records is
        judged as it runs, engine/guard/operation_guard.py)."""
        if not rule.domain:
            return True
        ids = [record_id for record_id in record_ids if isinstance(record_id, int)]
        if not ids or self.env is None or op.model not in self.env:
            return False
        return domain_holds(rule, self.env[op.model].browse(ids))

    def _check_model_access(self, touched: tuple[str, ...]) -> SafetyDecision:
        """The agent's own models are always refused (an agent must not edit
        its configuration, conversations or audit log); the agent's blocked
        models are refused; when allowed models are set, everything else is
        refused."""
        allowed, blocked = self.context.allowed_models, self.context.blocked_models
        for model_name in touched:
            if model_name.startswith(PROTECTED_PREFIX):
                return SafetyDecision(DENY, f"agents may not read or change {model_name} (the agent's own data)")
            if model_name in blocked:
                return SafetyDecision(DENY, f"the agent may not access {model_name} (blocked model)")
            if allowed and model_name not in allowed:
                return SafetyDecision(DENY, f"the agent may only access: {', '.join(sorted(allowed))}")
        return SafetyDecision(ALLOW)

    def _check_confirmation_needed(self, spec: ToolSpec, touched: tuple[str, ...],
                                   untrusted: tuple[str, ...] = (), params: dict | None = None,
                                   provenance: Provenance | None = None) -> SafetyDecision:
        """A change of Odoo's configuration (users, groups, companies, ir.*
        settings: engine.guard.safety_rules.CONFIGURATION_MODELS) always asks,
        whatever the policy; so does, once the conversation has shown the
        model read text, any change carrying a target or a value that did
        not come from the user's words or from reads they asked for
        (engine/guard/provenance.py; unless the agent turns it off: read text may
        carry instructions aimed at the model); tool-level
        ``requires_confirmation`` asks; the agent's
        ``require_confirmation`` asks for every write (``always``) or for
        destructive tools (``destructive``: high- and variable-risk by
        default, and archiving records with a generic write, which hides them
        as a deletion would)."""
        policy = self.context.require_confirmation
        # Asked up front when the call names the model it changes (the generic
        # write tools, Python code, server actions); the ORM operations of any
        # other tool are asked about as they happen (engine/guard/operation_guard.py).
        declares = spec.name in TOOL_OPERATIONS or spec.function is None
        configuration = [model for model in touched if is_configuration(model)] if declares else []
        if configuration and not spec.read_only:
            return SafetyDecision(CONFIRM_REQUIRED, f"{spec.label} changes Odoo's configuration "
                                                    f"({', '.join(configuration)}): always asked", "configuration")
        if provenance is not None and self.context.confirm_after_untrusted and not spec.read_only:
            values = provenance.untrusted_values(spec.name, params or {})
            if values:
                seen = ", ".join(list(dict.fromkeys((*untrusted, *provenance.read_sources)))[:3])
                return SafetyDecision(CONFIRM_REQUIRED, f"{spec.label} would write what did not come from your "
                                                        f"words or from reads you asked for ({describe(values)}), "
                                                        f"after the conversation showed the model read text "
                                                        f"({seen}), which may carry instructions", "untrusted")
        elif untrusted and self.context.confirm_after_untrusted and not spec.read_only:
            return SafetyDecision(CONFIRM_REQUIRED, f"{spec.label} changes data after the conversation showed the "
                                                    f"model text from records ({', '.join(untrusted[:3])}), which "
                                                    "may carry instructions", "untrusted")
        if spec.requires_confirmation and policy != "never":
            return SafetyDecision(CONFIRM_REQUIRED, f"{spec.label} always requires confirmation", "tool")
        if policy == "always" and not spec.read_only:
            return SafetyDecision(CONFIRM_REQUIRED, f"{spec.label} changes data ({spec.risk_level} risk): the "
                                                    "agent asks before every change", "policy")
        if policy == "destructive" and (spec.is_destructive or _archives(spec, params)) \
                and not self._user_asked(spec, params or {}, provenance):
            return SafetyDecision(CONFIRM_REQUIRED, f"{spec.label} is a {spec.risk_level}-risk operation: the "
                                                    "agent asks before destructive changes", "policy")
        return SafetyDecision(ALLOW)

    @staticmethod
    def _user_asked(spec: ToolSpec, params: dict, provenance: Provenance | None) -> bool:
        """Whether the user's own words ask for this destructive call, so the
        ``destructive`` policy lets it run (issue 23 point 2): its action is
        one of the forward steps of a business flow that the user's words
        name (engine/guard/intent.py: confirm, deliver, post, pay…; never a
        deletion, an archive or a cancellation), and every target and value
        it carries came from the user's words or from reads they asked for,
        even before any read text (engine/guard/provenance.py)."""
        if provenance is None or _archives(spec, params):
            return False
        words = action_words(spec.name, params)
        return bool(words) and provenance.asks_for(words) and not provenance.untrusted_values(
            spec.name, params, strict=True)
