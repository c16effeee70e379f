"""Token and cost accounting for one agent run (spec 000 §6.5)."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class TokenTracker:
    """Accumulates the usage of every LLM call of a run.

    Prices are USD per token, taken from the provider record
    (``cost_per_input_token`` / ``cost_per_output_token``); ``prices`` maps a
    model name to such a pair when a run uses more than one provider.
    """
    cost_per_input_token: float = 0.0
    cost_per_output_token: float = 0.0
    prices: dict[str, tuple[float, float]] = field(default_factory=dict)
    total_input_tokens: int = 0
    total_output_tokens: int = 0
    total_cost: float = 0.0
    call_count: int = 0

    def cost_of(self, input_tokens: int, output_tokens: int, model: str = "") -> float:
        """USD cost of one call with these token counts."""
        price_in, price_out = self.prices.get(model, (self.cost_per_input_token, self.cost_per_output_token))
        return input_tokens * price_in + output_tokens * price_out

    def track(self, input_tokens: int, output_tokens: int, model: str = "") -> float:
        """Record one call; returns its cost in USD."""
        cost = self.cost_of(input_tokens, output_tokens, model)
        self.total_input_tokens += input_tokens or 0
        self.total_output_tokens += output_tokens or 0
        self.total_cost += cost
        self.call_count += 1
        return cost

    def get_summary(self) -> dict:
        """``{total_input_tokens, total_output_tokens, total_tokens, total_cost, call_count}``."""
        return {
            "total_input_tokens": self.total_input_tokens,
            "total_output_tokens": self.total_output_tokens,
            "total_tokens": self.total_input_tokens + self.total_output_tokens,
            "total_cost": round(self.total_cost, 6),
            "call_count": self.call_count,
        }

    def check_budget(self, max_cost: float | None = None, max_tokens: int | None = None) -> tuple[bool, str]:
        """``(True, "")`` while within both limits (a falsy limit is no limit),
        else ``(False, reason)``."""
        if max_cost and self.total_cost >= max_cost:
            return False, f"cost budget reached: ${self.total_cost:.4f} of ${max_cost:.4f}"
        tokens = self.total_input_tokens + self.total_output_tokens
        if max_tokens and tokens >= max_tokens:
            return False, f"token budget reached: {tokens} of {max_tokens} tokens"
        return True, ""
