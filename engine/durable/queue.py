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

import logging
import math
import time
from collections.abc import Callable, Mapping
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import timedelta

import psycopg2.errors
import psycopg2.extensions

from odoo.exceptions import LockError

from odoo.addons.base.models.ir_cron import MIN_TIME_PER_JOB

_logger = logging.getLogger(__name__)

# Settings key (ir.config_parameter) → (QueueSettings field, default, smallest value).
PARAMS = {
    "agentic_ai.queue_max_attempts": ("max_attempts", 3, 1),
    "agentic_ai.queue_stale_minutes": ("stale_minutes", 15.0, 1.0),
    # 0 retries at the next pass (tests); in production keep some seconds, or a lock
    # held for long would have the processor try again and again.
    "agentic_ai.queue_retry_delay": ("retry_delay", 60.0, 0.0),
    "agentic_ai.queue_time_budget": ("time_budget", 0.0, 0.0),
    # Queued runs at once in the process that runs the processor (each on a connection of its own, given back
    # while it waits on the model: engine/durable/step_connection.py).
    "agentic_ai.queue_concurrency": ("concurrency", 4, 1),
}

#: The most queued runs one processor runs at once, whatever the setting says (a thread each).
MAX_CONCURRENCY = 64


@dataclass(frozen=True)
class QueueSettings:
    """``max_attempts``: runs tried before a message is given up (a lock
    conflict is not counted); ``stale_minutes``: a claim older than this whose
    run left no sign of life is taken again; ``retry_delay``: seconds before a
    failed or conflicting message is tried again; ``time_budget``: seconds a
    cron run may start jobs, 0 = Odoo's own (``MIN_TIME_PER_JOB``);
    ``concurrency``: queued runs run at once by one processor (at most
    ``MAX_CONCURRENCY``)."""
    max_attempts: int = 3
    stale_minutes: float = 15.0
    retry_delay: float = 60.0
    time_budget: float = 0.0
    concurrency: int = 4

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
        values["concurrency"] = min(values["concurrency"], MAX_CONCURRENCY)
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


def dispatch(claim: Callable[[], int | None], run: Callable[[int], None], concurrency: int, deadline: float,
             limit: int | None = None, poll: float = 1.0, on_done: Callable[[int], None] | None = None) -> int:
    """Run claimed jobs, ``concurrency`` at once, until none is ready and none
    runs, ``limit`` jobs were started, or ``deadline`` (``time.monotonic()``)
    passed; returns the number of jobs run.

    ``claim()`` takes one ready job and commits the claim (so no other
    processor, in this server or another, takes it), returning its id, or
    None when none is ready; it is called in the caller's thread only.
    ``run(job_id)`` runs one claimed job to its end and never raises for the
    job's own failure; with ``concurrency`` above 1 it is called in a worker
    thread of its own (it must open its own database cursor), else in the
    caller's thread. While jobs run and none is ready, ``claim()`` is asked
    again every ``poll`` seconds, so a message queued meanwhile does not wait
    for the longest run. ``on_done(count)`` is called in the caller's thread
    after each job that ended (the cron's progress). Once the deadline has
    passed no job is started, and the call returns when the running ones
    ended: a run is never left half-done by the processor.
    """
    started = 0
    if concurrency <= 1:
        while time.monotonic() < deadline and (limit is None or started < limit):
            job = claim()
            if job is None:
                break
            started += 1
            run(job)
            if on_done:
                on_done(1)
        return started
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="agentic_ai.queue") as pool:
        running: set = set()
        while True:
            can_start = time.monotonic() < deadline and (limit is None or started < limit)
            job = claim() if can_start and len(running) < concurrency else None
            if job is not None:
                started += 1
                running.add(pool.submit(run, job))
                continue
            if not running:
                break
            done, running = wait(running, timeout=poll if can_start else None, return_when=FIRST_COMPLETED)
            for future in done:
                if future.exception() is not None:  # run() does not raise for a job's failure: this is a bug
                    _logger.error("A queued job failed outside its run", exc_info=future.exception())
            if done and on_done:
                on_done(len(done))
    return started
