"""What one LLM call used and what it costs, the same shape for every
provider, streamed or not (issue 14).

Each adapter reads its provider's documented usage fields into a ``Usage``
(the field names and the API docs are cited in the adapters); a total the
provider never sent is estimated with the tokenizer and named in
``Usage.estimated``, never recorded as 0. ``Prices`` turns a ``Usage`` into
USD the way the providers bill: uncached input, cache reads, cache writes
and output (reasoning included) each at its own price.
"""
from __future__ import annotations

from dataclasses import dataclass, field

MAX_TOKEN_COUNT = 2**31 - 1  # what a token count column holds (PostgreSQL integer)

# The figures of a Usage, in the order the log and the reports show them.
FIGURES = ("input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens", "reasoning_tokens")


def token_count(value) -> int | None:
    """A token count as a provider sent it: a whole number ≥ 0 (bounded to
    MAX_TOKEN_COUNT), or None when the field is absent or not a count (a
    bool, a float with a fraction, text), so that the caller estimates it."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or value < 0:
        return None
    return min(value, MAX_TOKEN_COUNT)


def merge_reported(figures: dict, update) -> None:
    """Fold a streamed usage object ``update`` into ``figures``, the usage
    read so far: a later figure replaces an earlier one (Anthropic's
    ``message_delta`` and Gemini's ``usageMetadata`` are cumulative), but a
    ``null`` never erases one already read: Anthropic's MessageDeltaUsage
    sends its input and cache figures as optional (null when unknown), and
    proxies re-serialize Gemini's omitted counts as null. Anything but an
    object is ignored."""
    for key, value in (update.items() if isinstance(update, dict) else ()):
        if value is not None or key not in figures:
            figures[key] = value


@dataclass(frozen=True)
class Usage:
    """Tokens of one LLM call.

    ``input_tokens``: every prompt token the call billed, of which
    ``cache_read_tokens`` were read from the provider's prompt cache and
    ``cache_write_tokens`` written to it (the rest, ``uncached_input_tokens``,
    at the plain input price). ``output_tokens``: every generated token, of
    which ``reasoning_tokens`` were reasoning/thinking (billed as output).
    ``estimated``: the names of the figures (of FIGURES) that the provider
    did not send and that were estimated with the tokenizer.

    Invariants, enforced here whatever a provider sends: every figure in
    0..MAX_TOKEN_COUNT (anything else is 0); a part never exceeds its
    total: cache_read + cache_write ≤ input and reasoning ≤ output (a larger
    part is cut to what its total leaves, so a provider's nonsense can never
    raise a cost above what its totals say)."""
    input_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    estimated: frozenset = field(default_factory=frozenset)

    def __post_init__(self):
        for name in FIGURES:
            value = token_count(getattr(self, name))
            object.__setattr__(self, name, value or 0)
        cache_read = min(self.cache_read_tokens, self.input_tokens)
        object.__setattr__(self, "cache_read_tokens", cache_read)
        object.__setattr__(self, "cache_write_tokens", min(self.cache_write_tokens, self.input_tokens - cache_read))
        object.__setattr__(self, "reasoning_tokens", min(self.reasoning_tokens, self.output_tokens))
        object.__setattr__(self, "estimated", frozenset(self.estimated) & frozenset(FIGURES))

    @property
    def uncached_input_tokens(self) -> int:
        """Input tokens billed at the plain input price."""
        return self.input_tokens - self.cache_read_tokens - self.cache_write_tokens

    @property
    def is_estimated(self) -> bool:
        """True when any figure is our estimate rather than the provider's."""
        return bool(self.estimated)

    def log_values(self) -> dict:
        """The execution log's columns for this usage: the five figures,
        ``usage_estimated`` and ``estimated_figures`` (comma-separated
        names, empty when the provider reported everything)."""
        return {**{name: getattr(self, name) for name in FIGURES}, "usage_estimated": self.is_estimated,
                "estimated_figures": ", ".join(name for name in FIGURES if name in self.estimated) or False}


def measured_usage(estimate_input, estimate_output, *, input_tokens=None, cache_read_tokens=None,
                   cache_write_tokens=None, output_tokens=None, reasoning_tokens=None,
                   estimate_reasoning=None) -> Usage:
    """A Usage from the figures a provider sent (None: not sent), the
    totals it did not send estimated.

    ``estimate_input()`` / ``estimate_output()`` return the tokenizer's
    count of the request and of the visible answer (text and tool calls,
    reasoning text included when the provider returned it);
    ``estimate_reasoning()`` that of the reasoning text the provider
    returned, or None when it returned none. They are called only for a
    missing figure, and an estimated total is at least the reported parts
    of it. A total of 0 counts as missing when it cannot be true (servers
    that do not count send zeros): an input of 0 always (every call sends a
    prompt), an output of 0 when the answer has text or calls. A missing
    cache figure is 0: a provider that reports no cache use bills none. A
    missing reasoning figure is estimated from the reasoning text when
    there is some, else 0 (nothing was reasoned in view; a hidden count
    stays inside the reported output)."""
    estimated = set()
    # An estimated total is never below the parts the provider did report (a proxy that drops
    # prompt_tokens but keeps cached_tokens, Anthropic cache figures without input_tokens, hidden
    # reasoning reported without completion_tokens): else Usage would cut the reported parts to the
    # tokenizer's count of the visible text (tests/test_usage_hostile.py).
    if not token_count(input_tokens):
        input_tokens = max(estimate_input(),
                           (token_count(cache_read_tokens) or 0) + (token_count(cache_write_tokens) or 0))
        estimated.add("input_tokens")
    reported_output = token_count(output_tokens)
    if not reported_output:
        counted = estimate_output()
        if reported_output is None or counted:
            output_tokens = max(counted, token_count(reasoning_tokens) or 0)
            estimated.add("output_tokens")
    if token_count(reasoning_tokens) is None:
        reasoning_tokens = estimate_reasoning() if estimate_reasoning else None
        if reasoning_tokens:
            estimated.add("reasoning_tokens")  # at most the output total (Usage's invariant)
    return Usage(input_tokens=input_tokens, cache_read_tokens=token_count(cache_read_tokens) or 0,
                 cache_write_tokens=token_count(cache_write_tokens) or 0, output_tokens=output_tokens,
                 reasoning_tokens=reasoning_tokens or 0, estimated=frozenset(estimated))


@dataclass(frozen=True)
class Prices:
    """USD per token of one provider (``agentic.ai.llm.provider``'s
    ``cost_per_*_token`` fields, entered per million tokens in its form).
    ``cache_read`` and ``cache_write`` default to the input price."""
    input: float = 0.0
    output: float = 0.0
    cache_read: float | None = None
    cache_write: float | None = None

    def cost(self, usage: Usage) -> float:
        """USD of ``usage``: uncached input, cache reads, cache writes and
        output (reasoning included) each at its price."""
        cache_read = self.input if self.cache_read is None else self.cache_read
        cache_write = self.input if self.cache_write is None else self.cache_write
        return (usage.uncached_input_tokens * self.input + usage.cache_read_tokens * cache_read
                + usage.cache_write_tokens * cache_write + usage.output_tokens * self.output)
