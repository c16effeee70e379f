"""Rules of the asynchronous queue (spec 000 §11.1 send_async/poll, §12
"Async Task Processor"): its settings, which errors are lock conflicts, and
when a cron run stops starting jobs. A claimed message whose thread a live
run holds is tried later: the run's lease (engine/durable/run_lease.py) says
so, without a database session held for the job.

The fields and the processor live in ``models/agent_thread_queue.py``; this
module decides nothing about records.

How a cron run ends (``odoo/addons/base/models/ir_cron.py``, ``_run_job``):
Odoo calls the processor again and again while it reports ``remaining`` work
and made progress, for at least ``MIN_RUNS_PER_JOB`` calls and until
``MIN_TIME_PER_JOB`` seconds after the run started (context key
``cron_end_time``). A call that reports remaining work but did none ends the
run as "partially done", and Odoo then re-runs the cron at once
(``_reschedule_asap``) after the other ready crons. So the processor starts
no job once the run's deadline has passed: a run never holds a cron worker
for ten more LLM conversations after its time is up.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta

import psycopg2.errors
import psycopg2.extensions

from odoo.exceptions import LockError

from odoo.addons.base.models.ir_cron import MIN_TIME_PER_JOB

# Settings key (ir.config_parameter) → (QueueSettings field, default, smallest value).
PARAMS = {
    "agentic_ai.queue_max_attempts": ("max_attempts", 3, 1),
    "agentic_ai.queue_stale_minutes": ("stale_minutes", 15.0, 1.0),
    # 0 retries at the next pass (tests); in production keep some seconds, or a lock
    # held for long would have the processor try again and again.
    "agentic_ai.queue_retry_delay": ("retry_delay", 60.0, 0.0),
    "agentic_ai.queue_time_budget": ("time_budget", 0.0, 0.0),
}


@dataclass(frozen=True)
class QueueSettings:
    """``max_attempts``: runs tried before a message is given up (a lock
    conflict is not counted); ``stale_minutes``: a claim older than this whose
    run left no sign of life is taken again; ``retry_delay``: seconds before a
    failed or conflicting message is tried again; ``time_budget``: seconds a
    cron run may start jobs, 0 = Odoo's own (``MIN_TIME_PER_JOB``)."""
    max_attempts: int = 3
    stale_minutes: float = 15.0
    retry_delay: float = 60.0
    time_budget: float = 0.0

    @classmethod
    def from_params(cls, get_param: Callable[[str], str | None]) -> QueueSettings:
        """The settings from ``get_param(key)`` (the text of an
        ``ir.config_parameter``, falsy when unset). A value that is not a
        finite number is ignored; one below the smallest is raised to it."""
        values = {}
        for key, (name, default, smallest) in PARAMS.items():
            raw = get_param(key)
            try:
                number = float(raw) if raw not in (None, False, "") else default
            except (TypeError, ValueError, OverflowError):
                number = default
            number = max(number, smallest) if math.isfinite(number) else default
            values[name] = type(default)(number)
        return cls(**values)

    @property
    def stale_after(self) -> timedelta:
        return timedelta(minutes=self.stale_minutes)

    @property
    def retry_after(self) -> timedelta:
        return timedelta(seconds=self.retry_delay)


def is_lock_conflict(exc: BaseException) -> bool:
    """Whether ``exc`` says that another transaction holds what the job
    needed: PostgreSQL's lock timeout or ``NOWAIT`` refusal
    (``LockNotAvailable``), a serialization failure or deadlock
    (``TransactionRollbackError``), Odoo's ``LockError``. Such a job is
    tried again later; it did nothing wrong."""
    return isinstance(exc, (LockError, psycopg2.errors.LockNotAvailable,
                            psycopg2.extensions.TransactionRollbackError))


def run_deadline(context: Mapping, time_budget: float = 0.0) -> float:
    """The ``time.monotonic()`` after which a cron run starts no new job:
    Odoo's ``cron_end_time`` (the run's start + ``MIN_TIME_PER_JOB``), or
    ``time_budget`` seconds after the run's start when that is sooner.
    Outside a cron: ``time_budget`` seconds from now, or never."""
    end = context.get("cron_end_time")
    if end is None:
        return time.monotonic() + time_budget if time_budget else math.inf
    if time_budget:
        end = min(end, end - MIN_TIME_PER_JOB + time_budget)
    return end
