"""Executor (spec 000 §4.6): the one path by which a tool runs.

validate_params → safety check → sanitize_params → execution env →
savepoint → execute → log. Every failure becomes an ``ExecutionResult``
with ``success=False`` and a message the model can act on; whatever the
tool wrote before failing is rolled back to the savepoint."""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import psycopg2

from odoo.exceptions import AccessError, MissingError, UserError, ValidationError

from ..tools.base_tool import ToolError
from .safety import CONFIRM_REQUIRED, DENY

_logger = logging.getLogger(__name__)

# Errors a tool may raise that are the model's or the data's fault, not ours.
EXPECTED_ERRORS = (ToolError, UserError, ValidationError, AccessError, MissingError, ValueError, TypeError,
                   KeyError, psycopg2.Error)


@dataclass
class ExecutionResult:
    """Outcome of one tool call. ``data`` is the tool's JSON-safe result;
    ``duration_ms`` is wall time in milliseconds."""
    success: bool
    data: object = None
    error: str | None = None
    duration_ms: int = 0
    confirmation_needed: bool = False
    confirmation_reason: str = ""


class Executor:
    """Runs tool calls for one thread; ``agent``/``thread`` are records."""

    def __init__(self, agent, thread, guard):
        self.agent = agent
        self.thread = thread
        self.guard = guard

    def execute(self, tool, params: dict, *, confirmed: bool = False, tool_call_id: str = "") -> ExecutionResult:
        """Run ``tool`` with ``params``. ``confirmed`` means the user approved
        this very call, so the confirmation gate is skipped; ``tool_call_id``
        links the audit row to the transcript."""
        started = time.monotonic()
        env = self.agent._get_execution_env()
        if not tool._is_available(env):
            apps = " or ".join(tool._get_required_modules()) or "its"
            return self._finish(tool, params, started, ExecutionResult(False, error=(
                f"{tool.name} is not available here: it needs the {apps} app installed and "
                f"read access to {tool.model_names or 'its models'}")), tool_call_id)
        errors = tool._validate_params(params)
        if errors:
            return self._finish(tool, params, started, ExecutionResult(
                False, error=f"invalid arguments for {tool.name}: " + "; ".join(errors)), tool_call_id)
        # Sanitize first: the guard must judge exactly what will run.
        params = tool._sanitize_params(params)
        decision = self.guard.check(tool, params, confirmed=confirmed)
        if decision.verdict == DENY:
            return self._finish(tool, params, started, ExecutionResult(False, error=f"refused by the safety rules: {decision.reason}"),
                                tool_call_id)
        if decision.verdict == CONFIRM_REQUIRED:
            return ExecutionResult(False, confirmation_needed=True, confirmation_reason=decision.reason)
        env.flush_all()
        try:
            # Reads get a savepoint too (without flush): a failed query must not
            # abort the request's transaction.
            with env.cr.savepoint(flush=not tool.is_read_only):
                data = tool.with_env(env)._execute(env, params)
                env.flush_all()
            result = ExecutionResult(True, data=data)
        except EXPECTED_ERRORS as exc:
            result = ExecutionResult(False, error=self._describe(exc, tool))
        except Exception as exc:  # noqa: BLE001 - a tool bug must not end the run; it is logged with its traceback
            _logger.exception("Tool %s failed unexpectedly", tool.name)
            result = ExecutionResult(False, error=self._describe(exc, tool))
        return self._finish(tool, params, started, result, tool_call_id)

    @staticmethod
    def _describe(exc: Exception, tool) -> str:
        message = exc.args[0] if isinstance(exc, (UserError, ToolError)) and exc.args else str(exc)
        if isinstance(exc, psycopg2.Error):
            message = (exc.pgerror or str(exc)).strip().split("\n")[0]
        label = "" if isinstance(exc, ToolError) else f"{type(exc).__name__}: "
        suffix = "" if tool.is_read_only else " Nothing was saved: the changes of this call were rolled back."
        return f"{label}{message}{suffix}"

    def _finish(self, tool, params, started, result: ExecutionResult, tool_call_id: str = "") -> ExecutionResult:
        result.duration_ms = int((time.monotonic() - started) * 1000)
        data = result.data if isinstance(result.data, dict) else {}
        record_ids = data.get("ids") or ([data["id"]] if isinstance(data.get("id"), int) else None)
        model_names = tool._get_model_names(params)
        self.thread.env["agentic.ai.execution.log"].log(
            "tool_execution",
            thread=self.thread,
            tool_name=tool.name,
            tool_call_id=tool_call_id or False,
            model_name=model_names[0] if model_names else False,
            record_ids=record_ids,
            input_data=params,
            output_data=result.data,
            before_snapshot=data.get("before"),
            success=result.success,
            error_message=result.error or False,
            duration_ms=result.duration_ms,
        )
        return result
