"""What survives a run that dies (issue 10 point 1, case BR-25a).

A run commits each finished step (an LLM answer, a tool result with its
business effect, the log rows), so a worker killed by ``limit_time_real``,
a restart or a dropped connection loses at most the step in flight.

A live run holds a lease on its thread (engine/durable/run_lease.py): its
token on the thread's row, kept alive by its process's heartbeat, so no
database session is held for the run and PgBouncer in transaction pooling
works. A thread still ``executing`` that no live run holds was left by a
dead run (its process died, and its lease ran out ``agentic_ai.run_lease_seconds``
later), and ``repair_dead_run`` closes it: each tool call without a result
gets one result saying its outcome is unknown (the call is never run again
blindly) and the thread leaves ``executing``."""
from __future__ import annotations

import logging

from odoo.modules import module as odoo_module

from ..turn.plan_steps import close_open_plans
from . import run_lease, step_commit

_logger = logging.getLogger(__name__)

UNKNOWN_OUTCOME = (
    "[OUTCOME UNKNOWN] The run stopped while {tool} was running (its worker ended), so its result was never "
    "recorded: it may or may not have taken effect. Do not run {tool} again blindly. First read the records it "
    "would have changed to check their current state, tell the user what you find, and only then decide.")


def can_commit(cr) -> bool:
    """Whether committing ``cr`` is allowed: always outside tests; in tests
    only on a test cursor (HttpCase and registry test mode simulate commits
    with savepoints), never on a TransactionCase's own cursor."""
    if not odoo_module.current_test:
        return True
    from odoo.tests.test_cursor import TestCursor  # here: odoo.tests logs an error when imported outside tests
    return isinstance(cr, TestCursor)


def request_stop(cr, thread_id: int) -> None:
    """Ask the run of ``thread_id`` to stop at its next step boundary
    (models/agent_thread_stop.py: a row of its own, never the thread's)."""
    cr.execute("INSERT INTO agentic_ai_thread_stop (thread_id, requested_at) VALUES (%s, now() AT TIME ZONE 'UTC') "
               "ON CONFLICT (thread_id) DO NOTHING", [thread_id])


#: ``stop_requested`` as a column of a statement on ``agentic_ai_thread`` (the step's row lock reads it).
STOP_REQUESTED_COLUMN = ('EXISTS (SELECT 1 FROM agentic_ai_thread_stop s WHERE s.thread_id = "agentic_ai_thread".id)')


def stop_requested(cr, thread_id: int) -> bool:
    """Whether a stop of ``thread_id``'s run was asked (and committed before
    this transaction's snapshot: a run reads it first thing after a commit)."""
    cr.execute("SELECT 1 FROM agentic_ai_thread_stop WHERE thread_id = %s", [thread_id])
    return bool(cr.fetchone())


def clear_stop(cr, thread_id: int) -> None:
    """Forget the stop requests of ``thread_id`` (a turn starts or ends)."""
    cr.execute("DELETE FROM agentic_ai_thread_stop WHERE thread_id = %s", [thread_id])


def run_is_alive(cr, thread_id: int) -> bool:
    """Whether a live run (in this process or another) holds ``thread_id``
    (engine/durable/run_lease.py). Taking or repairing a run locks the
    thread's row first, so neither is ever raced."""
    return run_lease.alive(cr, thread_id)


def repair_dead_run(thread) -> bool:
    """Close ``thread`` (a record; its state is re-read) when a dead run
    left it ``executing``: one ``[OUTCOME UNKNOWN]`` result per call
    without a result, an ``error`` log row, state ``interrupted``. Returns
    whether it repaired anything. The caller commits.

    The thread's row is locked first, as a run's start locks it: a run
    that took the thread after this transaction's snapshot makes that
    lock raise a serialization failure (Odoo retries the request), so a
    live run is never repaired."""
    thread = thread.sudo()
    thread.invalidate_recordset(["state"])
    if thread.state != "executing" or run_is_alive(thread.env.cr, thread.id):
        return False
    step_commit.lock_row(thread.env.cr, thread._table, thread.id, retry=False)
    dangling = _answer_dangling_calls(thread)
    reason = "the run ended without finishing (its worker stopped)"
    if dangling:
        reason += f"; {len(dangling)} tool call(s) with an unknown outcome"
    _log_end(thread, reason, dangling)
    close_open_plans(thread, "failed", reason)
    clear_stop(thread.env.cr, thread.id)
    run_lease.clear(thread.env.cr, thread.id)
    thread._set_runtime_state(state="interrupted", last_error=reason)
    _logger.warning("Conversation %s: repaired a run that died (%s)", thread.id, reason)
    return True


def close_failed_run(thread, error: str) -> str:
    """End the turn of ``thread`` after an unexpected error (its step in
    flight already rolled back): calls without a result get one, an
    ``error`` log row, an assistant message, state ``error``. Returns the
    message's text. The caller commits."""
    thread = thread.sudo()
    dangling = _answer_dangling_calls(thread)
    _log_end(thread, error, dangling)
    reply = thread.env._("Something went wrong on our side and this request stopped: %s. What was done before is "
                         "kept above; you may ask again.", error[:500])
    thread._add_message("assistant", reply)
    close_open_plans(thread, "failed", error)
    clear_stop(thread.env.cr, thread.id)
    thread._set_runtime_state(state="error", last_error=error[:2000], pending_confirmation=False)
    return reply


def _answer_dangling_calls(thread):
    """Give each tool call of ``thread`` without a result its one
    ``[OUTCOME UNKNOWN]`` result; returns those calls."""
    rows = thread.env["agentic.ai.thread.message"].sudo().search(
        [("thread_id", "=", thread.id), ("role", "in", ("tool_call", "tool_result"))], order="id")
    answered = {row.tool_call_id for row in rows if row.role == "tool_result"}
    dangling = rows.filtered(lambda row: row.role == "tool_call" and row.tool_call_id not in answered)
    for call in dangling:
        thread.add_tool_result(call.tool_call_id, call.tool_name, UNKNOWN_OUTCOME.format(tool=call.tool_name),
                               success=False, status="unknown", call=call)
    return dangling


def _log_end(thread, reason: str, dangling) -> None:
    thread.env["agentic.ai.execution.log"].log(
        "error", thread=thread, success=False, error_message=reason,
        input_data={"unknown_outcome_calls": [{"id": c.tool_call_id, "tool": c.tool_name} for c in dangling]})
