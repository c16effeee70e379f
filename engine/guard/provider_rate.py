"""A provider's own request limit (spec 000 §3.1 ``rate_limit_rpm``, issue
27 point 5): the requests a minute the LLM service allows the company's
account, shared by every user, agent, worker and cron of the database,
unlike the per-user limits of Settings (engine/guard/rate_limits.py).

Each request to a provider with a limit first takes a slot here
(``reserve``). The count is exact: one row per provider of ``TABLE`` keeps
the times (database server's clock, unix seconds) of the requests of the
last 60 seconds, at most ``limit`` of them; a request is let through when
fewer than ``limit`` were made in the 60 seconds before it, so no 60
seconds ever hold more (a per-minute estimate let a burst at a minute's
end and another at the next minute's start through: twice the limit). The
row is read ``FOR UPDATE`` in a transaction of its own, read committed and
committed at once, so two workers asking together are counted one after
the other, and no run holds it while it waits on a model. The work is
linear in the limit (a few thousand times at most).

When no slot is free, ``reserve`` says how many seconds until one is
(engine/turn/llm_calls.py then tries the fallback provider, or waits up to
``MAX_WAIT_SECONDS`` without a database connection and asks again)."""
from __future__ import annotations

import math

from odoo.tools import SQL

from ..durable import step_connection

TABLE = "agentic_ai_llm_provider_requests"  # the provider's requests of the last 60 s
WINDOW_SECONDS = 60.0
MAX_WAIT_SECONDS = 20.0  # longest wait for a slot of the last provider before the turn says the limit was reached
MIN_WAIT_SECONDS = 0.05  # a wait never shorter than this (the clock read and the statement take some)


def ensure_table(cr) -> None:
    """Create ``TABLE`` when missing (agentic.ai.llm.provider ``init``)."""
    cr.execute(SQL("CREATE TABLE IF NOT EXISTS %s (provider_id integer PRIMARY KEY, "
                   "stamps double precision[] NOT NULL DEFAULT '{}')", SQL.identifier(TABLE)))


def drop_table(cr) -> None:
    """Drop ``TABLE`` (the module's uninstall hook)."""
    cr.execute(SQL("DROP TABLE IF EXISTS %s", SQL.identifier(TABLE)))


def decide(limit: int, stamps: list[float], now: float) -> tuple[float, list[float]]:
    """``(wait, stamps)`` for one more request at unix time ``now``
    (seconds) under ``limit`` requests in any 60 seconds, given the times of
    the requests already let through (``stamps``, oldest first). ``wait``
    is 0.0 when the request takes a slot (the stamps returned include it),
    else the seconds until enough of the stamps are older than 60 seconds
    (the stamps returned are those still in the window). ``limit`` must be
    positive."""
    kept = [stamp for stamp in stamps if stamp > now - WINDOW_SECONDS]
    if len(kept) < limit:
        return 0.0, [*kept, now]
    wait = kept[len(kept) - limit] + WINDOW_SECONDS - now  # the stamp whose leaving frees one slot
    return max(MIN_WAIT_SECONDS, math.ceil(wait * 100) / 100), kept


def reserve(cr, provider_id: int, limit: int) -> float:
    """Take a slot of provider ``provider_id`` (``limit`` requests in any
    60 seconds; 0 or less: no limit, nothing is read) on ``cr``, a cursor of
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
    cr.execute(SQL("INSERT INTO %s (provider_id) VALUES (%s) ON CONFLICT (provider_id) DO NOTHING",
                   table, provider_id))
    cr.execute(SQL("SELECT stamps, EXTRACT(EPOCH FROM clock_timestamp()) FROM %s WHERE provider_id = %s "
                   "FOR UPDATE", table, provider_id))
    stamps, now = cr.fetchone()
    wait, stamps = decide(limit, list(stamps or ()), float(now))
    cr.execute(SQL("UPDATE %s SET stamps = %s::double precision[] WHERE provider_id = %s", table, stamps,
                   provider_id))
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
