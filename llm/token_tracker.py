"""Token and cost accounting for one agent run (spec 000 §6.5, issue 14)."""
from __future__ import annotations

from dataclasses import dataclass, field

from .usage import FIGURES, Prices, Usage


@dataclass
class TokenTracker:
    """Accumulates the ``Usage`` of every LLM call of a run and its cost.

    ``prices`` is the default ``Prices`` (USD per token), ``model_prices``
    those of a model name when a run uses several. Totals: the five figures
    of ``Usage`` summed (``total_input_tokens``, ``total_cache_read_tokens``,
    ...), ``total_cost`` in USD, ``call_count`` and ``estimated_calls``
    (calls with a figure we estimated)."""
    prices: Prices = field(default_factory=Prices)
    model_prices: dict[str, Prices] = field(default_factory=dict)
    totals: dict = field(default_factory=lambda: dict.fromkeys(FIGURES, 0))
    total_cost: float = 0.0
    call_count: int = 0
    estimated_calls: int = 0

    @property
    def total_input_tokens(self) -> int:
        return self.totals["input_tokens"]

    @property
    def total_output_tokens(self) -> int:
        return self.totals["output_tokens"]

    def track(self, input_tokens: int, output_tokens: int, model: str = "") -> float:
        """Record one call known only by its two totals (spec 000 §6.5),
        priced as ``model``'s; returns its cost in USD. The engine records
        whole usages with ``track_usage``."""
        return self.track_usage(Usage(input_tokens=input_tokens, output_tokens=output_tokens),
                                self.model_prices.get(model))

    def track_usage(self, usage: Usage, prices: Prices | None = None) -> float:
        """Record one call's ``Usage`` at ``prices`` (default: ``prices``);
        returns its cost in USD."""
        cost = (prices or self.prices).cost(usage)
        for name in FIGURES:
            self.totals[name] += getattr(usage, name)
        self.total_cost += cost
        self.call_count += 1
        self.estimated_calls += usage.is_estimated
        return cost

    def get_summary(self) -> dict:
        """``{total_input_tokens, total_cache_read_tokens,
        total_cache_write_tokens, total_output_tokens, total_reasoning_tokens,
        total_tokens, total_cost (USD), call_count, estimated_calls}``."""
        return {
            **{f"total_{name}": value for name, value in self.totals.items()},
            "total_tokens": self.total_input_tokens + self.total_output_tokens,
            "total_cost": round(self.total_cost, 6),
            "call_count": self.call_count,
            "estimated_calls": self.estimated_calls,
        }

    def check_budget(self, max_cost: float | None = None, max_tokens: int | None = None) -> tuple[bool, str]:
        """``(True, "")`` while within both limits (a falsy limit is no limit),
        else ``(False, reason)``. Tokens are input plus output as billed
        (cache reads and reasoning included); the reason says when some of
        the figures behind it are estimates."""
        note = (f" ({self.estimated_calls} of {self.call_count} calls estimated: the provider sent no usage)"
                if self.estimated_calls else "")
        if max_cost and self.total_cost >= max_cost:
            return False, f"cost budget reached: ${self.total_cost:.4f} of ${max_cost:.4f}{note}"
        tokens = self.total_input_tokens + self.total_output_tokens
        if max_tokens and tokens >= max_tokens:
            return False, f"token budget reached: {tokens} of {max_tokens} tokens{note}"
        return True, ""
