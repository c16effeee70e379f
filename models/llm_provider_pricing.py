"""Prices of an LLM provider (spec 000 §3.1 ``cost_per_input_token`` and
``cost_per_output_token``; issue 14 point 2): input, cached input read,
cache write and output, stored in USD per token as the spec has them and
entered in the form in USD per million tokens, as price lists give them.

The two cache prices default to the input price: a provider created without
them (or with 0) gets its input price, providers made before they existed
get theirs at upgrade (``init``), and a cache price equal to the input price
follows it when the input price changes (``write``); a cache price set
apart stays as set."""
from odoo import api, fields, models
from odoo.exceptions import ValidationError
from odoo.tools import SQL

from ..llm import Prices

PER_TOKEN = (20, 14)    # USD per token: 0.001 USD per million tokens is 1e-9, kept exactly
PER_MILLION = (16, 6)   # USD per million tokens (0.01875)
INPUT = ("cost_per_input_token", "input_price_per_million")
CACHE = (("cost_per_cache_read_token", "cache_read_price_per_million"),
         ("cost_per_cache_write_token", "cache_write_price_per_million"))
OUTPUT = ("cost_per_output_token", "output_price_per_million")
PRICE_FIELDS = (INPUT, *CACHE, OUTPUT)  # (USD per token field, USD per million tokens field)


class AgenticAiLlmProviderPricing(models.Model):
    _inherit = "agentic.ai.llm.provider"

    # Not negative: a Python constraint (_check_prices), not an SQL CHECK, which logs the whole row (the API key
    # and the headers with it) when it fails: models/llm_provider.py.

    cost_per_input_token = fields.Float(digits=PER_TOKEN, help="USD per input token not read from the cache.")
    cost_per_cache_read_token = fields.Float(
        digits=PER_TOKEN, help="USD per input token read from the provider's prompt cache.")
    cost_per_cache_write_token = fields.Float(
        digits=PER_TOKEN, help="USD per input token written to the provider's prompt cache.")
    cost_per_output_token = fields.Float(digits=PER_TOKEN, help="USD per output token, reasoning included.")
    input_price_per_million = fields.Float(
        string="Input", digits=PER_MILLION, compute="_compute_prices_per_million",
        inverse="_inverse_input_price", help="USD per million input tokens not read from the cache.")
    cache_read_price_per_million = fields.Float(
        string="Cached input (read)", digits=PER_MILLION, compute="_compute_prices_per_million",
        inverse="_inverse_cache_read_price",
        help="USD per million input tokens read from the prompt cache (OpenAI cached_tokens, Anthropic "
             "cache_read_input_tokens, Gemini cachedContentTokenCount). Left at 0 on a new provider: the input "
             "price; while equal to the input price it follows it.")
    cache_write_price_per_million = fields.Float(
        string="Cache write", digits=PER_MILLION, compute="_compute_prices_per_million",
        inverse="_inverse_cache_write_price",
        help="USD per million input tokens written to the prompt cache (Anthropic cache_creation_input_tokens). "
             "Left at 0 on a new provider: the input price; while equal to the input price it follows it.")
    output_price_per_million = fields.Float(
        string="Output", digits=PER_MILLION, compute="_compute_prices_per_million",
        inverse="_inverse_output_price",
        help="USD per million output tokens; reasoning and thinking tokens are billed as output.")

    @api.constrains(*(per_token for per_token, _per_million in PRICE_FIELDS))
    def _check_prices(self):
        """Token prices are never negative; ValidationError."""
        for provider in self:
            if any(provider[per_token] < 0 for per_token, _per_million in PRICE_FIELDS):
                raise ValidationError(self.env._("Token prices cannot be negative."))

    def init(self):
        """Providers made before the cache prices existed get their input
        price for both (a new column is NULL; a price written since never is)."""
        super().init()
        self.env.cr.execute(SQL(
            "UPDATE %(table)s SET cost_per_cache_read_token = COALESCE(cost_per_cache_read_token, "
            "cost_per_input_token), cost_per_cache_write_token = COALESCE(cost_per_cache_write_token, "
            "cost_per_input_token) WHERE cost_per_input_token IS NOT NULL AND (cost_per_cache_read_token IS NULL "
            "OR cost_per_cache_write_token IS NULL)", table=SQL.identifier(self._table)))

    @api.depends(*(per_token for per_token, _per_million in PRICE_FIELDS))
    def _compute_prices_per_million(self):
        for provider in self:
            for per_token, per_million in PRICE_FIELDS:
                provider[per_million] = round(provider[per_token] * 1_000_000, 8)

    # One inverse per price: Odoo calls an inverse method for the fields written with it, and while they are
    # written it protects every field of their compute method (all four prices), so a sibling read there is
    # not computed but 0. With one shared inverse, saving the form after editing one price set the three
    # others to 0 (tests/test_usage_hostile.py test_prices_in_the_provider_form). The price per token is
    # written past this model's ``write``: the cache prices follow the input price there, once per save.
    def _set_price_per_token(self, per_million):
        per_token = {m: t for t, m in PRICE_FIELDS}[per_million]
        for provider in self:
            super(AgenticAiLlmProviderPricing, provider).write({per_token: provider[per_million] / 1_000_000})

    def _inverse_input_price(self):
        self._set_price_per_token("input_price_per_million")

    def _inverse_cache_read_price(self):
        self._set_price_per_token("cache_read_price_per_million")

    def _inverse_cache_write_price(self):
        self._set_price_per_token("cache_write_price_per_million")

    def _inverse_output_price(self):
        self._set_price_per_token("output_price_per_million")

    @api.model_create_multi
    def create(self, vals_list):
        for vals in vals_list:
            for pair in CACHE:
                if not any(vals.get(key) for key in pair):  # not given, or 0: the input price
                    for key in pair:
                        vals.pop(key, None)
                    if INPUT[0] in vals:
                        vals[pair[0]] = vals[INPUT[0]]
                    elif INPUT[1] in vals:
                        vals[pair[1]] = vals[INPUT[1]]
        return super().create(vals_list)

    def write(self, vals):
        """A cache price equal to the input price follows a new input price
        (unless ``vals`` sets that cache price too)."""
        following = [pair[0] for pair in CACHE if not any(key in vals for key in pair)]
        if not following or not any(key in vals for key in INPUT):
            return super().write(vals)
        before = {provider.id: [name for name in following if provider[name] == provider.cost_per_input_token]
                  for provider in self}
        result = super().write(vals)
        for provider in self:
            if before[provider.id]:
                super(AgenticAiLlmProviderPricing, provider).write(
                    dict.fromkeys(before[provider.id], provider.cost_per_input_token))
        return result

    def _prices(self):
        """The ``llm.Prices`` of this provider (USD per token)."""
        self.ensure_one()
        return Prices(input=self.cost_per_input_token, output=self.cost_per_output_token,
                      cache_read=self.cost_per_cache_read_token, cache_write=self.cost_per_cache_write_token)
