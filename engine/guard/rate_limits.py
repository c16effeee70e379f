"""Rate limits (spec 000 §7.5): how many LLM requests a user may make per
minute and per hour, and how much LLM cost an agent and a company may spend
per day, checked by the runtime before each LLM call.

Plain Python: the counts come from ``agentic.ai.execution.log``
(``_rate_limit_usage``, one indexed query), the limits from Settings
(``RateLimits.from_params``); this module only decides and words the answer.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

MINUTE = timedelta(seconds=60)
HOUR = timedelta(seconds=3600)
DAY = timedelta(hours=24)

# Settings key (ir.config_parameter) → (RateLimits field, default, type).
PARAMS = {
    "agentic_ai.max_requests_per_minute": ("requests_per_minute", 20, int),
    "agentic_ai.max_requests_per_hour": ("requests_per_hour", 200, int),
    "agentic_ai.max_cost_per_day_agent": ("cost_per_day_agent", 50.0, float),
    "agentic_ai.max_cost_per_day_company": ("cost_per_day_company", 50.0, float),
}


# The limits by kind, from PARAMS: counts of LLM requests (int) and daily costs in USD (float).
REQUEST_KEYS = tuple(name for name, _default, kind in PARAMS.values() if kind is int)
COST_KEYS = tuple(name for name, _default, kind in PARAMS.values() if kind is float)


@dataclass(frozen=True)
class RateLimits:
    """The four limits; 0 (or less) means no limit. Requests are LLM calls
    (every attempt sent to a provider); costs are in USD."""
    requests_per_minute: int = 20
    requests_per_hour: int = 200
    cost_per_day_agent: float = 50.0
    cost_per_day_company: float = 50.0

    @classmethod
    def from_params(cls, get_param) -> RateLimits:
        """The limits as Settings store them: ``get_param(key)`` returns the
        text of an ``ir.config_parameter`` or a falsy value when unset (the
        default then applies). A value that is not a finite number is ignored."""
        values = {}
        for key, (name, default, kind) in PARAMS.items():
            raw = get_param(key)
            try:
                number = float(raw) if raw not in (None, False, "") else default
                values[name] = kind(number) if math.isfinite(number) else default
            except (TypeError, ValueError, OverflowError):
                values[name] = default
        return cls(**values)

    @property
    def active(self) -> bool:
        """Whether any limit is set."""
        return bool(self.request_caps or self.cost_keys)

    @property
    def request_caps(self) -> dict[str, int]:
        """``{name: limit}`` of the request limits that are set: a window's
        requests need counting only up to its limit (``_rate_limit_usage``)."""
        return {key: value for key in REQUEST_KEYS if (value := getattr(self, key)) > 0}

    @property
    def cost_keys(self) -> tuple[str, ...]:
        """The names of the daily cost limits that are set."""
        return tuple(key for key in COST_KEYS if getattr(self, key) > 0)


@dataclass(frozen=True)
class WindowUsage:
    """What the log holds in one window: ``amount`` (a count of requests, or
    a sum of USD) and the time of its oldest row (naive UTC, None when the
    window is empty)."""
    amount: float = 0
    oldest: datetime | None = None


@dataclass(frozen=True)
class RateLimitHit:
    """A limit reached: which (``key``, one of PARAMS' field names), its
    value, what was used, and when it resets (naive UTC)."""
    key: str
    limit: float
    used: float
    resets_at: datetime

    def seconds_left(self, now: datetime) -> int:
        """Whole seconds from ``now`` (naive UTC) to the reset, at least 1."""
        return max(1, int(-(-(self.resets_at - now).total_seconds() // 1)))

    def message(self, now: datetime, tz: str | None = None) -> str:
        """The sentence the user reads, e.g. "Rate limit reached: 20 requests
        per minute for you; it resets at 19:42:10 (in 35 s)." (the time in
        ``tz``, an IANA zone name, UTC when unknown)."""
        try:
            zone = ZoneInfo(tz) if tz else timezone.utc
        except (ZoneInfoNotFoundError, ValueError):
            zone = timezone.utc
        local = self.resets_at.replace(tzinfo=timezone.utc).astimezone(zone)
        when = local.strftime("%H:%M:%S") if self.resets_at - now < DAY else local.strftime("%Y-%m-%d %H:%M:%S")
        return (f"Rate limit reached: {WORDING[self.key].format(limit=self.limit)}; it resets at {when} "
                f"(in {_duration(self.seconds_left(now))}).")


WORDING = {
    "requests_per_minute": "{limit:g} requests per minute for you",
    "requests_per_hour": "{limit:g} requests per hour for you",
    "cost_per_day_agent": "${limit:,.2f} of LLM cost per day for this agent",
    "cost_per_day_company": "${limit:,.2f} of LLM cost per day for your company",
}
WINDOWS = {"requests_per_minute": MINUTE, "requests_per_hour": HOUR,
           "cost_per_day_agent": DAY, "cost_per_day_company": DAY}


def check(limits: RateLimits, usage: Mapping[str, WindowUsage], now: datetime) -> RateLimitHit | None:
    """The first limit ``usage`` reaches, in the order minute, hour, agent,
    company, or None. ``usage`` maps the limit names of RateLimits to the
    window's WindowUsage (the window ending at ``now``, naive UTC).

    A limit is reached when the count or cost is at least the limit (cost is
    known only after a call, so the call that crosses it is the last one).
    It resets when the window's oldest row leaves it: exact for a count at
    its limit (the usual case: every call is checked first), the earliest
    moment anything frees up otherwise."""
    for key, window in WINDOWS.items():
        limit = getattr(limits, key)
        used = usage.get(key, WindowUsage())
        if limit > 0 and used.amount >= limit:
            oldest = used.oldest or now
            return RateLimitHit(key, limit, used.amount, max(oldest + window, now))
    return None


def _duration(seconds: int) -> str:
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{-(-seconds // 60)} min"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
