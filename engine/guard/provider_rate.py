"""A provider's own request limit (spec 000 §3.1 ``rate_limit_rpm``, issue
27 point 5): the requests a minute the LLM service allows the company's
account, shared by every user, agent, worker and cron of the database,
unlike the per-user limits of Settings (engine/guard/rate_limits.py).

Each request to a provider with a limit first takes a slot here
(``reserve``). The count is a sliding-window counter per provider, one row
of ``TABLE``: the requests of the current calendar minute (``current``)
and of the minute before (``previous``), the estimate of the last 60
seconds being ``previous × (share of the previous minute still in the
window) + current`` (the approximation rate limiters such as Cloudflare's
use: constant work and one row per provider, however high the limit). The
row is read ``FOR UPDATE`` in a transaction of its own, committed at once,
so two workers asking together are counted one after the other, and no
run holds it while it waits on a model.

When no slot is free, ``reserve`` says how many seconds until one is
(engine/turn/llm_calls.py then tries the fallback provider, or waits up to
``MAX_WAIT_SECONDS`` without a database connection and asks again)."""
from __future__ import annotations

import math

from odoo.tools import SQL

from ..durable import step_connection

TABLE = "agentic_ai_llm_provider_rate"
WINDOW_SECONDS = 60.0
MAX_WAIT_SECONDS = 20.0  # longest wait for a slot of the last provider before the turn says the limit was reached
MIN_WAIT_SECONDS = 0.05  # a wait never shorter than this (the clock read and the statement take some)


def ensure_table(cr) -> None:
    """Create ``TABLE`` when missing (agentic.ai.llm.provider ``init``)."""
    cr.execute(SQL(
        "CREATE TABLE IF NOT EXISTS %s (provider_id integer PRIMARY KEY, minute bigint NOT NULL, "
        "current integer NOT NULL, previous integer NOT NULL)", SQL.identifier(TABLE)))


def drop_table(cr) -> None:
    """Drop ``TABLE`` (the module's uninstall hook)."""
    cr.execute(SQL("DROP TABLE IF EXISTS %s", SQL.identifier(TABLE)))


def decide(limit: int, minute: int, current: int, previous: int, now: float) -> tuple[float, int, int, int]:
    """``(wait, minute, current, previous)`` for one more request at unix
    time ``now`` (seconds) under ``limit`` requests per minute, given the
    row's ``minute`` (unix minute of ``current``), ``current`` and
    ``previous`` counts. ``wait`` is 0.0 when the request takes a slot
    (the counts returned include it), else the seconds until the estimate
    leaves room for it (the counts returned are the row's, moved to this
    minute, unchanged otherwise). ``limit`` must be positive."""
    this_minute = int(now // WINDOW_SECONDS)
    if minute != this_minute:
        previous, current = (current, 0) if minute == this_minute - 1 else (0, 0)
    elapsed = now - this_minute * WINDOW_SECONDS
    estimate = previous * (1 - elapsed / WINDOW_SECONDS) + current
    if estimate + 1 <= limit:
        return 0.0, this_minute, current + 1, previous
    if current + 1 <= limit:  # the previous minute's share must shrink: previous * (1 - t/60) + current + 1 <= limit
        needed = WINDOW_SECONDS * (1 - (limit - 1 - current) / previous)
        wait = needed - elapsed
    else:  # this minute is full: next minute, ``current`` becomes the previous one's
        rest = WINDOW_SECONDS - elapsed
        needed = WINDOW_SECONDS * (1 - (limit - 1) / current) if current > limit - 1 else 0.0
        wait = rest + needed
    return max(MIN_WAIT_SECONDS, math.ceil(wait * 100) / 100), this_minute, current, previous


def reserve(cr, provider_id: int, limit: int) -> float:
    """Take a slot of provider ``provider_id`` (``limit`` requests per
    minute; 0 or less: no limit, nothing is read) on ``cr``, a cursor of
    its own with no statement run yet (its transaction is made read
    committed): 0.0 when taken, else the seconds until one may be. Commits.
    The clock is the database server's (``clock_timestamp()``), the same
    for every worker."""
    if limit <= 0:
        return 0.0
    table = SQL.identifier(TABLE)
    if step_connection.can_give_back(cr):  # a connection of its own (a test's cursor shares the test's transaction)
        # Read committed: the row read FOR UPDATE is the latest one, where Odoo's repeatable read would fail
        # with a serialization error for each worker that waited for the lock.
        cr.execute("SET TRANSACTION ISOLATION LEVEL READ COMMITTED")
    cr.execute(SQL("INSERT INTO %s (provider_id, minute, current, previous) VALUES (%s, 0, 0, 0) "
                   "ON CONFLICT (provider_id) DO NOTHING", table, provider_id))
    cr.execute(SQL("SELECT minute, current, previous, EXTRACT(EPOCH FROM clock_timestamp()) FROM %s "
                   "WHERE provider_id = %s FOR UPDATE", table, provider_id))
    minute, current, previous, now = cr.fetchone()
    wait, minute, current, previous = decide(limit, minute, current, previous, float(now))
    if not wait:
        cr.execute(SQL("UPDATE %s SET minute = %s, current = %s, previous = %s WHERE provider_id = %s",
                       table, minute, current, previous, provider_id))
    cr.commit()
    return wait


def reserver(dbname: str):
    """The ``reserve`` function of engine/turn/llm_calls.py ``LLMCaller`` for
    the runs of database ``dbname``: ``reserve(provider) -> seconds`` takes a
    slot of ``provider.rate_limit_rpm`` (a ProviderSpec) on a short
    connection of its own from Odoo's pool (never the run's, which is given
    back while the run waits on its model); nothing is read for a provider
    without a limit."""
    def take(provider) -> float:
        if provider.rate_limit_rpm <= 0:
            return 0.0
        with step_connection.pool_cursor(dbname) as cr:
            return reserve(cr, provider.id, provider.rate_limit_rpm)
    return take
