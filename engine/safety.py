"""SafetyGuard (spec 000 §7.2): decides, before anything runs, whether a
tool call is allowed, needs the user's confirmation, or is refused.

This first version protects the addon's own models, checks the agent's
allowed/blocked model lists and its confirmation policy; safety-rule records and rate limits join the chain
with their models (spec §3.9, §7.5)."""
from __future__ import annotations

from dataclasses import dataclass

from ..tools.orm_tool import touched_models

ALLOW = "allow"
CONFIRM_REQUIRED = "confirm_required"
DENY = "deny"

DESTRUCTIVE_RISKS = ("high", "variable")
PROTECTED_PREFIX = "agentic.ai."


@dataclass(frozen=True)
class SafetyDecision:
    """``verdict`` is ALLOW, CONFIRM_REQUIRED or DENY; ``reason`` says why
    in words the model and the user can act on."""
    verdict: str
    reason: str = ""

    @property
    def allowed(self) -> bool:
        return self.verdict == ALLOW


class SafetyGuard:
    """The check chain for one agent run. ``agent`` is an
    ``agentic.ai.agent`` record."""

    def __init__(self, agent):
        self.agent = agent

    def check(self, tool, params: dict, confirmed: bool = False) -> SafetyDecision:
        """Run the chain in order, the first non-ALLOW verdict wins.
        ``confirmed`` skips the confirmation gate (the user already approved)."""
        for decision in (self._check_model_access(tool, params),
                         SafetyDecision(ALLOW) if confirmed else self._check_confirmation_needed(tool)):
            if not decision.allowed:
                return decision
        return SafetyDecision(ALLOW)

    def _check_model_access(self, tool, params: dict) -> SafetyDecision:
        """The agent's own models are always refused (an agent must not edit
        its configuration, conversations or audit log); the agent's blocked
        models are refused; when allowed models are set, everything else is
        refused. Models written through one2many/many2many values count."""
        agent = self.agent.sudo()
        blocked = set(agent.blocked_model_ids.mapped("model"))
        allowed = set(agent.allowed_model_ids.mapped("model"))
        for model_name in self._touched_models(tool, params):
            if model_name.startswith(PROTECTED_PREFIX):
                return SafetyDecision(DENY, f"agents may not read or change {model_name} (the agent's own data)")
            if model_name in blocked:
                return SafetyDecision(DENY, f"the agent may not access {model_name} (blocked model)")
            if allowed and model_name not in allowed:
                return SafetyDecision(DENY, f"the agent may only access: {', '.join(sorted(allowed))}")
        return SafetyDecision(ALLOW)

    def _touched_models(self, tool, params: dict) -> list[str]:
        """The tool's models plus the comodels of relational fields in a
        generic tool's ``values``, at every depth (a write can change lines
        through them)."""
        names = list(tool._get_model_names(params))
        model_name = params.get("model")
        if isinstance(model_name, str) and model_name in self.agent.env:
            names += sorted(touched_models(self.agent.env[model_name], params.get("values")))
        return names

    def _check_confirmation_needed(self, tool) -> SafetyDecision:
        """Tool-level ``requires_confirmation`` always asks; the agent's
        ``require_confirmation`` asks for every write (``always``) or for
        high-risk tools (``destructive``)."""
        policy = self.agent.require_confirmation
        if tool.requires_confirmation and policy != "never":
            return SafetyDecision(CONFIRM_REQUIRED, f"{tool.label or tool.name} always requires confirmation")
        if policy == "always" and not tool.is_read_only:
            return SafetyDecision(CONFIRM_REQUIRED, f"{tool.label or tool.name} changes data ({tool.risk_level} risk)")
        if policy == "destructive" and tool.risk_level in DESTRUCTIVE_RISKS:
            return SafetyDecision(CONFIRM_REQUIRED, f"{tool.label or tool.name} is a {tool.risk_level}-risk operation")
        return SafetyDecision(ALLOW)
