"""SafetyGuard (spec 000 §7.2): decides, before anything runs, whether a
tool call is allowed, needs the user's confirmation, or is refused.

This version protects the addon's own models, checks the agent's allowed
and blocked models and its confirmation policy; safety-rule records and
rate limits join the chain with their models (spec §3.9, §7.5)."""
from __future__ import annotations

from dataclasses import dataclass

from .run_context import RunContext
from .tool_spec import ToolSpec

ALLOW = "allow"
CONFIRM_REQUIRED = "confirm_required"
DENY = "deny"

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
    """The check chain of one run, on its RunContext."""

    def __init__(self, context: RunContext):
        self.context = context

    def check(self, spec: ToolSpec, touched: tuple[str, ...], confirmed: bool = False) -> SafetyDecision:
        """Run the chain in order, the first non-ALLOW verdict wins.
        ``touched`` are the models the call reaches (engine.touched_models);
        ``confirmed`` skips the confirmation gate (the user approved this call)."""
        decision = self._check_model_access(touched)
        if decision.allowed and not confirmed:
            decision = self._check_confirmation_needed(spec)
        return decision

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

    def _check_confirmation_needed(self, spec: ToolSpec) -> SafetyDecision:
        """Tool-level ``requires_confirmation`` always asks; the agent's
        ``require_confirmation`` asks for every write (``always``) or for
        destructive tools (``destructive``: high- and variable-risk by default)."""
        policy = self.context.require_confirmation
        if spec.requires_confirmation and policy != "never":
            return SafetyDecision(CONFIRM_REQUIRED, f"{spec.label} always requires confirmation")
        if policy == "always" and not spec.read_only:
            return SafetyDecision(CONFIRM_REQUIRED, f"{spec.label} changes data ({spec.risk_level} risk)")
        if policy == "destructive" and spec.is_destructive:
            return SafetyDecision(CONFIRM_REQUIRED, f"{spec.label} is a {spec.risk_level}-risk operation")
        return SafetyDecision(ALLOW)
