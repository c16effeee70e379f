"""The frozen description of one run (spec 000 §4.1): built once when a
run starts, from the agent, its tools and providers, and the requesting
user; the runtime, the executor and the safety guard read it and never go
back to the records for settings."""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType

from ...llm import DEFAULT_MAX_TOKENS, LLMError, Prices, get_adapter
from ...tools.tool_spec import ToolSpec
from ..guard.rate_limits import RateLimits
from ..guard.safety_rules import RuleSet

DEFAULT_CONTEXT_WINDOW = 128000  # tokens, for a provider whose context_window is 0 (unknown)
CONTEXT_MARGIN = 0.05            # share of the window kept free: our token counts are estimates


@dataclass(frozen=True)
class ProviderSpec:
    """One LLM provider of the run: its adapter (None when it cannot be
    built: ``problem`` says why) and its ``Prices`` (USD per token).
    ``context_window``: tokens the model reads per call (0 = unknown, taken
    as DEFAULT_CONTEXT_WINDOW); ``max_tokens``: the output it may write,
    reserved out of the window."""
    id: int
    name: str
    model: str
    prices: Prices
    adapter: object = field(default=None, repr=False, compare=False)
    problem: str = ""
    context_window: int = 0
    max_tokens: int = DEFAULT_MAX_TOKENS
    rate_limit_rpm: int = 0  # the provider's own requests a minute, for every user (engine/guard/provider_rate.py)

    @property
    def input_budget(self) -> int:
        """Tokens a request to this provider may hold: the window less the
        output reserve and a margin of CONTEXT_MARGIN."""
        window = self.context_window or DEFAULT_CONTEXT_WINDOW
        return window - self.max_tokens - int(window * CONTEXT_MARGIN)


@dataclass(frozen=True)
class RunContext:
    """Everything a run needs to know, read once (see the module docstring).

    ``tools`` are the agent's tools this user can run, by name; ``unavailable``
    the agent's other tools, by name, with the reason. ``run_as_user_id`` is
    the user tool calls run as (the requesting user, or the agent's *Run As
    User*); ``company_ids`` the companies of the request; ``rules`` the
    safety rules that apply to the requesting user, in sequence;
    ``confirm_after_untrusted`` whether changes ask for confirmation once
    the conversation has shown the model free text from records;
    ``rate_limits`` the limits of Settings (spec §7.5), checked before each
    LLM call. ``execution_mode``, ``planning_prompt``, ``max_replanning``
    and ``max_plan_steps`` drive Plan-and-Execute (spec §4.3, §4.4);
    ``max_llm_calls`` and ``max_run_seconds`` bound one user message's turn
    (issue 12 point 4: engine/turn/llm_calls.py); ``enable_memory`` whether the
    agent recalls and learns memories (engine/memory_manager.py);
    ``knowledge_source_ids`` the agent's knowledge sources (RAG, spec §9);
    ``allow_sensitive_data`` whether its tools read the personal
    identifiers the company marks sensitive unmasked
    (tools/values/sensitive_fields.py)."""
    agent_id: int
    require_confirmation: str
    max_iterations: int
    max_tokens_per_run: int
    max_cost_per_run: float
    allowed_models: frozenset[str]
    blocked_models: frozenset[str]
    system_prompt: str
    tools: Mapping[str, ToolSpec]
    unavailable: Mapping[str, str]
    providers: tuple[ProviderSpec, ...]
    user_id: int
    run_as_user_id: int
    company_ids: tuple[int, ...]
    rules: RuleSet = field(default_factory=RuleSet)
    confirm_after_untrusted: bool = True
    rate_limits: RateLimits = field(default_factory=RateLimits)
    execution_mode: str = "react"
    planning_prompt: str = ""
    max_replanning: int = 2
    max_plan_steps: int = 10
    max_llm_calls: int = 50
    max_run_seconds: int = 600
    enable_memory: bool = False
    knowledge_source_ids: tuple[int, ...] = ()
    allow_sensitive_data: bool = False

    @cached_property
    def llm_schemas(self) -> list[dict]:
        """The function declarations of the available tools, in tool order:
        made once per run (the tools are fixed for its length), not at each
        LLM call; adapters build their own request from them, never change them."""
        return [spec.llm_schema for spec in self.tools.values()]

    @cached_property
    def _budget_provider(self) -> ProviderSpec | None:
        """The usable provider with the smallest input budget (a fallback
        must be able to take the same request)."""
        usable = [p for p in self.providers if p.adapter is not None]
        return min(usable, key=lambda p: p.input_budget) if usable else None

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` by the tokenizer of the provider the budget is
        set by (llm/tokenizer.py); never raises."""
        provider = self._budget_provider
        return provider.adapter.count_tokens(text) if provider else max(1, len(text or "") // 4)

    @cached_property
    def history_budget(self) -> int:
        """Tokens the system prompt and the history may use in one LLM call
        (issue 12 point 4, BR-25): the smallest provider's input budget less
        the size of the tool schemas sent with every call. Counted once per
        run. May be 0 or less: then only the latest user message and what
        follows it are sent."""
        provider = self._budget_provider
        budget = provider.input_budget if provider else DEFAULT_CONTEXT_WINDOW
        schemas = self.llm_schemas
        return budget - (self.count_tokens(json.dumps(schemas, default=str)) if schemas else 0)


def build_run_context(agent, thread) -> RunContext:
    """The RunContext of ``agent`` (an ``agentic.ai.agent`` record in the
    requesting user's environment) running ``thread``: the agent's settings
    as ``agent._run_settings`` keeps them between runs (``agent_settings``),
    and what is read for each run (the system prompt with today's date and
    the user's and company's names, the request's companies, the rate
    limits of Settings)."""
    settings = agent._run_settings(thread.env.uid, agent._run_settings_version())
    return RunContext(
        **{name: value for name, value in settings.items() if name not in ("rule_specs", "system_prompt")},
        rules=RuleSet(settings["rule_specs"]),  # its verdicts are kept per run
        system_prompt=agent._build_system_message(thread.user_id, settings["system_prompt"]),
        user_id=thread.env.uid,
        company_ids=tuple(thread.env.companies.ids),
        rate_limits=RateLimits.from_params(thread.env["ir.config_parameter"].sudo().get_param),
    )


def agent_settings(agent, user) -> Mapping:
    """The fields of a RunContext that come from ``agent`` (in the
    requesting user's environment), its tools and providers, and the safety
    rules that apply to ``user``, read from the records (``rule_specs`` for
    ``rules``). Immutable: ``agentic.ai.agent._run_settings`` shares it
    between the runs of the same user, agent, companies and language."""
    privileged = agent.sudo()
    exec_env = agent._get_execution_env()
    available, unavailable = compile_tools(agent.tool_ids, exec_env)
    return MappingProxyType({
        "agent_id": agent.id,
        "system_prompt": agent.system_prompt or "",  # the template: build_run_context fills it in for each run
        "require_confirmation": agent.require_confirmation,
        "max_iterations": agent.max_iterations,
        "max_tokens_per_run": agent.max_tokens_per_run,
        "max_cost_per_run": agent.max_cost_per_run,
        "allowed_models": frozenset(privileged.allowed_model_ids.mapped("model")),
        "blocked_models": frozenset(privileged.blocked_model_ids.mapped("model")),
        "tools": MappingProxyType(available),
        "unavailable": MappingProxyType(unavailable),
        "providers": provider_specs(agent),
        "run_as_user_id": exec_env.uid,
        "rule_specs": agent.env["agentic.ai.safety.rule"]._rule_specs(user),
        "confirm_after_untrusted": agent.confirm_after_untrusted_content,
        "execution_mode": agent.execution_mode,
        "planning_prompt": agent.planning_prompt or "",
        "max_replanning": agent.max_replanning,
        "max_plan_steps": agent.max_plan_steps,
        "max_llm_calls": agent.max_llm_calls,
        "max_run_seconds": agent.max_run_seconds,
        "enable_memory": agent.enable_memory,
        "knowledge_source_ids": tuple(privileged.knowledge_source_ids.ids),
        "allow_sensitive_data": privileged.allow_sensitive_data,
    })


def provider_specs(agent) -> tuple[ProviderSpec, ...]:
    """The ProviderSpecs of ``agent``: its provider, then its fallback."""
    return tuple(_provider(p) for p in (agent.llm_provider_id, agent.fallback_provider_id) if p)


def compile_tools(tools, env) -> tuple[dict[str, ToolSpec], dict[str, str]]:
    """``(available, unavailable)``: the active ``tools`` compiled, by name,
    split by whether ``env``'s user can run them here (see ``unavailable_reason``)."""
    available, unavailable = {}, {}
    for tool in tools.filtered("active"):  # in the tools' order
        spec = ToolSpec.from_record(tool)
        reason = unavailable_reason(spec, env)
        if reason:
            unavailable[spec.name] = reason
        else:
            available[spec.name] = spec
    return available, unavailable


def unavailable_reason(spec: ToolSpec, env) -> str:
    """Why ``env``'s user cannot run ``spec`` here, or ``""``: none of its
    apps is installed, a model it declares is missing or unreadable, or its
    function is not registered."""
    if spec.problem:
        return f"{spec.name} is not available here: {spec.problem}"
    if spec.required_modules and not any(m in env.registry._init_modules for m in spec.required_modules):
        return f"{spec.name} is not available here: it needs the {' or '.join(spec.required_modules)} app installed"
    for model_name in spec.model_names:
        if model_name not in env:
            return f"{spec.name} is not available here: the model {model_name} is not installed"
        if not env[model_name].has_access("read"):
            return f"{spec.name} is not available here: you have no read access to {model_name}"
    return ""


def _provider(provider) -> ProviderSpec:
    provider = provider.sudo()
    config = provider._get_provider_config()
    adapter, problem = None, ""
    try:
        adapter = get_adapter(config)
    except LLMError as error:
        problem = str(error)
    return ProviderSpec(id=provider.id, name=provider.name, model=provider.default_model,
                        prices=provider._prices(), adapter=adapter, problem=problem,
                        context_window=provider.context_window, max_tokens=provider.max_tokens,
                        rate_limit_rpm=max(0, provider.rate_limit_rpm or 0))
