import json
import logging
import time

from odoo import api, fields, models
from odoo.exceptions import AccessError, UserError, ValidationError

from ..engine.guard import provider_rate
from ..llm import DEFAULT_MAX_TOKENS, LLMError, ProviderConfig, get_adapter

_logger = logging.getLogger(__name__)

DEFAULT_BASE_URLS = {
    "openai": "https://api.openai.com/v1",
    "gemini": "https://generativelanguage.googleapis.com/v1beta",
    "anthropic": "https://api.anthropic.com/v1",
    "ollama": "http://localhost:11434/v1",
}


class AgenticAiLlmProvider(models.Model):
    """One configured LLM endpoint (spec 000 §3.1)."""
    _name = "agentic.ai.llm.provider"
    _inherit = ["agentic.ai.run.settings.source"]
    _description = "AI Agent LLM Provider"
    _order = "sequence, name"

    # The bounds of the numbers are Python constraints (_check_numbers), not SQL CHECKs: PostgreSQL's refusal of a
    # CHECK logs the whole row ("Failing row contains ..."), and this row holds the API key and the headers.

    name = fields.Char(required=True)
    sequence = fields.Integer(default=10)
    active = fields.Boolean(default=True)
    provider_type = fields.Selection([
        ("openai", "OpenAI / Azure OpenAI"),
        ("gemini", "Google Gemini"),
        ("ollama", "Ollama"),
        ("anthropic", "Anthropic"),
        ("custom", "Custom (OpenAI-compatible)"),
    ], required=True, default="openai")
    api_base_url = fields.Char(
        string="Base URL",
        help="Required for Ollama and custom servers. Leave empty for the provider's public API. "
             "Azure OpenAI: the deployment URL, with the API version set below.")
    api_key = fields.Char(string="API Key", groups="base.group_system", copy=False)
    api_version = fields.Char(help="Azure OpenAI only: the api-version query parameter, e.g. 2024-10-21.")
    default_model = fields.Char(required=True, help='Model identifier, e.g. "gpt-4o".')
    embedding_model = fields.Char(help="Model used for embeddings (RAG); defaults to the chat model.")
    tokenizer_model = fields.Char(
        help="Model whose tokenizer counts tokens when the provider reports none, e.g. gpt-4o for an Azure "
             "deployment named prod-gpt4o-eu. Defaults to the chat model.")
    max_tokens = fields.Integer(
        default=DEFAULT_MAX_TOKENS,
        help="Maximum output tokens per call. It bounds how long one answer may run: a local model writing 20 tokens "
             "a second takes about 50 s for 1,024, and a model that never stops is cut there. Reasoning models "
             "(o-series, GPT-5, Gemini 2.5 thinking, Claude extended thinking) spend part of it thinking: give "
             "them more.")
    context_window = fields.Integer(
        string="Context Window (tokens)", default=0,
        help="Tokens the model reads in one call (prompt and answer); 0 = 128,000. The history sent to the model "
             "is trimmed to fit, older turns folded into a summary.")
    temperature = fields.Float(default=0.1)
    supports_tool_calling = fields.Boolean(
        default=True, help="The model supports native tool (function) calling. Off: tools are described in the "
                           "prompt and the model writes <tool_call> blocks (any OpenAI-compatible provider).")
    tool_choice = fields.Selection(
        [("auto", "Auto"), ("required", "Required"), ("none", "None")], string="Tool Choice",
        help="Sent with the tools when set: some servers (llama.cpp's function-calling chat format) return tool "
             "calls only when it is. Required makes every answer a tool call: the turn then ends only on its limits. "
             "Empty: left to the server.")
    supports_streaming = fields.Boolean(
        default=True, help="Stream answers token by token to the chat's stream route; off for a server that "
                           "answers streamed requests badly (the answer then comes whole).")
    # Prices (cost_per_*_token, and the form's *_price_per_million): models/llm_provider_pricing.py.
    rate_limit_rpm = fields.Integer(
        string="Rate Limit (RPM)",
        help="Requests a minute this provider allows, counted for every user, agent and worker together (the "
             "service's own limit, unlike the per-user limits of Settings); 0 = no limit. When it is reached, the "
             "agent's fallback provider is asked, else the request waits for a free slot (up to 20 seconds), "
             "then says the limit was reached.")
    timeout_seconds = fields.Integer(
        default=120, help="HTTP timeout of one network wait of a call, in seconds. A run never waits past the time "
                          "Odoo gives one request (limit_time_real, limit_time_real_cron for the queue): raise those "
                          "for slow local models.")
    # Headers often carry credentials (Azure api-key, gateway tokens): same visibility as api_key.
    extra_headers = fields.Text(default="{}", groups="base.group_system",
                                help="JSON object of HTTP headers added to every request.")
    extra_params = fields.Text(default="{}", groups="base.group_system",
                               help="JSON object merged into every request body.")
    company_id = fields.Many2one("res.company", default=lambda self: self.env.company)

    def init(self):
        provider_rate.ensure_table(self.env.cr)  # the providers' request counts (engine/guard/provider_rate.py)

    @api.constrains("max_tokens", "context_window", "timeout_seconds", "rate_limit_rpm")
    def _check_numbers(self):
        """Max tokens and the timeout positive, the context window and the
        rate limit not negative (0: unknown, no limit); ValidationError."""
        for provider in self:
            if provider.max_tokens <= 0:
                raise ValidationError(self.env._("Max tokens must be positive."))
            if provider.context_window < 0:
                raise ValidationError(self.env._("The context window cannot be negative."))
            if provider.timeout_seconds <= 0:
                raise ValidationError(self.env._("The timeout must be positive."))
            if provider.rate_limit_rpm < 0:
                raise ValidationError(self.env._("The rate limit cannot be negative (0 means no limit)."))

    @api.constrains("provider_type", "api_base_url")
    def _check_api_base_url(self):
        for provider in self:
            if provider.provider_type in ("ollama", "custom") and not provider.api_base_url:
                raise ValidationError(self.env._(
                    "Provider %(name)s: a base URL is required for %(type)s providers.",
                    name=provider.name, type=provider.provider_type))
            if provider.api_base_url and not provider.api_base_url.startswith(("http://", "https://")):
                raise ValidationError(self.env._("The base URL must start with http:// or https://."))

    @api.constrains("api_key")
    def _check_api_key(self):
        for provider in self.sudo():
            key = (provider.api_key or "").strip()
            if key and (not key.isascii() or any(c.isspace() or not c.isprintable() for c in key)):
                raise ValidationError(self.env._(
                    "The API key of %s contains spaces or characters that cannot be sent in an HTTP header; "
                    "paste it again.", provider.name))

    @api.constrains("extra_headers", "extra_params")
    def _check_extra_json(self):
        for provider in self:
            for field_name in ("extra_headers", "extra_params"):
                raw = provider[field_name]
                if not raw:
                    continue
                try:
                    value = json.loads(raw)
                except ValueError as exc:
                    raise ValidationError(self.env._("%(field)s is not valid JSON: %(error)s",
                                                     field=field_name, error=exc)) from None
                if not isinstance(value, dict):
                    raise ValidationError(self.env._("%(field)s must be a JSON object.", field=field_name))

    def write(self, vals):
        agents = self.env["agentic.ai.agent"].sudo().search(
            ["|", ("llm_provider_id", "in", self.ids), ("fallback_provider_id", "in", self.ids)])
        self.env["agentic.ai.agent"]._check_sudo_agents_editable(agents)
        before = {p.id: p._embedding_model_name() for p in self} if {"embedding_model", "default_model"} & set(vals) \
            else {}
        result = super().write(vals)
        changed = self.filtered(lambda p: p.id in before and before[p.id] != p._embedding_model_name())
        if changed:  # BR-11: changing the model marks the sources for re-indexing
            self.env["agentic.ai.knowledge.source"]._mark_needs_reindex(changed)
        return result

    def _embedding_model_name(self):
        """The model embedding texts: ``embedding_model``, else the chat model."""
        self.ensure_one()
        return self.embedding_model or self.default_model or ""

    def action_test_connection(self):
        """Send a one-line prompt; notify success with the round-trip time in
        ms, or the provider's exact failure. AI administrators only (a call may cost money)."""
        self.ensure_one()
        if not self.env.user.has_group("agentic_ai.group_agentic_ai_admin"):
            raise AccessError(self.env._("Only AI administrators can test a provider."))
        started = time.monotonic()
        try:
            response = self._get_adapter().chat_completion(
                [{"role": "user", "content": "Reply with the single word: pong"}], max_tokens=16)
        except LLMError as exc:
            elapsed = int((time.monotonic() - started) * 1000)
            raise UserError(self.env._("Connection failed after %(ms)s ms: %(error)s", ms=elapsed, error=exc)) from None
        elapsed = int((time.monotonic() - started) * 1000)
        return {
            "type": "ir.actions.client",
            "tag": "display_notification",
            "params": {
                "type": "success",
                "title": self.env._("Connection successful"),
                "message": self.env._("%(model)s answered in %(ms)s ms: %(text)s",
                                      model=response.model, ms=elapsed, text=(response.content or "")[:80]),
            },
        }

    def _get_default_base_url(self):
        """The base URL to call: the configured one, else the provider's public API."""
        self.ensure_one()
        return (self.api_base_url or DEFAULT_BASE_URLS.get(self.provider_type, "")).rstrip("/")

    def _parse_json_setting(self, field_name):
        """A JSON-object setting, or ``{}`` when it is empty or not valid."""
        try:
            value = json.loads(self.sudo()[field_name] or "{}")
        except ValueError:
            _logger.warning("Provider %s: %s is not valid JSON, ignoring it", self.id, field_name)
            return {}
        return value if isinstance(value, dict) else {}

    def _get_provider_config(self):
        """The ``llm.ProviderConfig`` of this record (reads the key as superuser)."""
        self.ensure_one()
        return ProviderConfig(
            provider_type=self.provider_type,
            base_url=self._get_default_base_url(),
            model=self.default_model,
            api_key=(self.sudo().api_key or "").strip(),
            api_version=self.api_version or "",
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            timeout=float(self.timeout_seconds or 120),
            supports_tool_calling=self.supports_tool_calling,
            tool_choice=self.tool_choice or "",
            supports_streaming=self.supports_streaming,
            embedding_model=self.embedding_model or "",
            tokenizer_model=self.tokenizer_model or "",
            extra_headers={str(k): str(v) for k, v in self._parse_json_setting("extra_headers").items()},
            extra_params=self._parse_json_setting("extra_params"),
        )

    def _get_adapter(self):
        """Instantiate the ``llm`` adapter for ``provider_type``.

        Raises UserError when the provider type has no adapter yet."""
        try:
            return get_adapter(self._get_provider_config())
        except LLMError as exc:
            raise UserError(str(exc)) from None
