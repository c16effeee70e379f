"""Executor (spec 000 §4.6): the one path by which a tool runs.

In the order the code runs it: unknown tool → validate_params →
sanitize_params → a masked value refused → the models reached → a call the
user rejected → safety check (refused; or confirm: a dry run up to the
first change, then the question) → savepoint with the operation guard →
execute in the user's env → log, on the run's frozen RunContext. Every failure
becomes an ``ExecutionResult`` with ``success=False`` and a message the
model can act on; whatever the tool wrote before failing is rolled back to
the savepoint. Each call is logged once, with its final tool-call id, in
the run's audit trail (``engine/durable/audit.py``).

Reads get a savepoint too, unlike §4.6's ``read_only ? direct``: the ORM
passes parts of a domain to SQL as they are (a LIKE pattern ending in a
backslash, text compared with an id or an amount), and a query the server
refuses aborts the whole transaction, with the turn's earlier work in it.

What reaches the server log (issue 10, point 7): a call that fails
because Odoo's rules or ours refuse it (UserError, ValidationError,
AccessError, MissingError, a ToolError, a safety rule, PostgreSQL
refusing a value, the ORM refusing an argument the model sent) or
because the model got the call wrong is one WARNING line without a
traceback, ``Tool X refused: <message>``; the model reads the same
message as its observation. Only a bug in a tool's code (any other
exception, or a ValueError/TypeError/KeyError raised in that code rather
than inside Odoo: engine/guard/tool_failures.py) is logged as an ERROR with its
traceback, and its audit row has level ``error``. Either way the run goes
on. Odoo's own ``odoo.sql_db`` logger writes its "bad query" ERROR line
for a query PostgreSQL refuses; that line is not ours."""
from __future__ import annotations

import copy
import hashlib
import logging
import time
from dataclasses import dataclass

import psycopg2

from odoo import Command
from odoo.exceptions import UserError
from odoo.service.model import PG_CONCURRENCY_EXCEPTIONS_TO_RETRY
from odoo.tools.safe_eval import safe_eval

from ..llm import ToolCall
from ..tools.base_tool import ToolError
from ..tools.lookup import tracing
from ..tools.tool_spec import TOOL_OPERATIONS, ToolSpec
from ..tools.untrusted import collecting, note_prose_values
from ..tools.values.json_values import dumps
from ..tools.values.sensitive_fields import CONTEXT_KEY, MASK, carries_mask
from .durable.audit import AuditTrail
from .durable.held_savepoint import held_savepoint
from .durable.step_commit import StepConflict, commit_durably
from .guard.confirmation import call_key
from .guard.confirmation_preview import UNREADABLE, describe_call, record_names
from .guard.operation_guard import (
    ChangesReached,
    ConfirmationNeeded,
    OperationGuard,
    OperationRefused,
    guarding,
    signature,
)
from .guard.record_arguments import candidates
from .guard.record_arguments import changes as name_changes
from .guard.record_arguments import named as named_records
from .guard.tool_failures import is_refusal
from .guard.touched_models import touched_models
from .safety import CONFIRM_REQUIRED, DENY, SafetyGuard
from .turn.run_context import RunContext

_logger = logging.getLogger(__name__)

# Characters of before_snapshot kept in the log row (whose JSON columns hold
# 20,000): whole records, so that what is kept stays valid JSON.
SNAPSHOT_CHARS = 19000
MAX_VERSIONED = 200  # records of a question whose versions are kept (an approval checks them)


# The package of this addon's own tools (tools/): their SQL is the ORM's (or Odoo's own code's), with the
# model's words as parameters, never SQL text the tools write.
_OWN_TOOLS = __name__.rsplit(".engine.", 1)[0] + ".tools."


def _orm_built(spec: ToolSpec) -> bool:
    """Whether every statement of a call of ``spec`` is built by the ORM
    (or written by Odoo's own code, parameters apart), so that its
    savepoint may go with its first statement
    (engine/durable/held_savepoint.py ``first_statement``): a read of this
    addon's own tools. A tool another addon registers, or code an
    administrator wrote, may send SQL that PostgreSQL cannot parse, which
    would take such a savepoint down with it."""
    function = spec.function
    return spec.read_only and function is not None and function.__module__.startswith(_OWN_TOOLS)


def _listed(trace: list[dict]) -> dict | None:
    """The data of a failed call whose lookups listed records for the user
    to choose from: ``{"candidates": [{"model", "ids"}]}`` (the only ids of
    a failure the provenance guard trusts, engine/guard/provenance.py), else None."""
    found = candidates(trace)
    return {"candidates": found} if found else None


def _fitted(snapshots: list[dict], overflow: int) -> list[dict]:
    """The records of ``snapshots`` that fit in SNAPSHOT_CHARS, in order,
    then ``{"records_not_kept": n}`` when some (or ``overflow`` more) did not."""
    kept, size = [], 0
    for entry in snapshots:
        size += len(dumps(entry)) + 2
        if size > SNAPSHOT_CHARS:
            break
        kept.append(entry)
    dropped = len(snapshots) - len(kept) + overflow
    return kept + ([{"records_not_kept": dropped}] if dropped else [])


class _WouldRun(Exception):
    """Ends the dry run of a call that ran through (``Executor._dry_run``)."""


@dataclass(frozen=True)
class ExecutionResult:
    """Outcome of one tool call (spec §4.6). ``data`` is the tool's
    JSON-safe result; ``duration_ms`` wall time in milliseconds;
    ``confirmation_needed`` means nothing ran (or all was rolled back) and
    the user must approve; ``confirmation`` then holds the keyword
    arguments of the ``ConfirmationRequest`` but its id and tool (source,
    arguments, key and what the call does: engine/guard/confirmation_preview.py);
    ``untrusted`` where the free text from records in ``data`` came from
    (tools/untrusted.py)."""
    success: bool
    data: object = None
    error: str | None = None
    duration_ms: int = 0
    confirmation_needed: bool = False
    confirmation_reason: str = ""
    untrusted: tuple[str, ...] = ()
    confirmation: dict | None = None


class Executor:
    """Runs the tool calls of one run of ``thread`` as the run's user."""

    def __init__(self, context: RunContext, thread, audit: AuditTrail | None = None):
        self.context = context
        self.thread = thread
        self.env = thread.env(user=context.run_as_user_id, su=False)
        if context.allow_sensitive_data:  # the agent may read personal identifiers unmasked (sensitive_fields.py)
            self.env = self.env(context={**self.env.context, CONTEXT_KEY: True})
        self.guard = SafetyGuard(context, self.env)
        self.audit = audit or AuditTrail(thread)

    def execute_call(self, call: ToolCall, finish_reason: str = "", untrusted: tuple[str, ...] = (),
                     rejected: frozenset[str] = frozenset(), provenance=None,
                     raise_conflicts: bool = False) -> ExecutionResult:
        """Run a call as the model sent it. A call that cannot be run (a
        name or arguments the model got wrong) gets an error result naming
        the problem, and is logged like any other. ``untrusted``: where the
        free text from records the model has seen so far came from;
        ``rejected``: the ``call_key`` of the calls the user rejected in
        this turn, refused again without asking; ``provenance`` where the
        conversation's values came from (engine/guard/provenance.py);
        ``raise_conflicts``: a serialization failure, deadlock or lock
        refusal inside the tool raises ``step_commit.StepConflict`` (the
        call rolled back to its savepoint, nothing logged) instead of
        becoming the call's error, for a caller that retries the step on a
        fresh snapshot (``AgentRuntime._run_call``)."""
        if call.parse_error and call.parse_error.startswith("invalid tool name"):
            error = f"{call.parse_error}; call only: {', '.join(sorted(self.context.tools))}"
        elif call.parse_error:
            cut = (" The answer was cut off (finish_reason: length) before the arguments were complete; send a "
                   "shorter call." if finish_reason == "length" else "")
            error = f"the arguments of {call.name} are not valid JSON, nothing was run: {call.parse_error}.{cut}"
        else:
            return self.execute(call.name, call.arguments, tool_call_id=call.id, untrusted=untrusted,
                                rejected=rejected, provenance=provenance, raise_conflicts=raise_conflicts)
        return self._record(call.name, call.raw_arguments or call.arguments, (), time.monotonic(),
                            ExecutionResult(False, error=error), call.id)

    def execute(self, tool_name: str, params, *, confirmed: bool = False, tool_call_id: str = "",
                untrusted: tuple[str, ...] = (), rejected: frozenset[str] = frozenset(),
                approved_operations: tuple[dict, ...] = (), provenance=None,
                raise_conflicts: bool = False) -> ExecutionResult:
        """Run tool ``tool_name`` of the run with ``params``. ``confirmed``
        means the user approved this very call, so the confirmation gate is
        skipped and the ORM operations the call declares are approved, as
        are ``approved_operations`` (signatures, engine/guard/operation_guard.py:
        the operations met inside the tool that the user was shown);
        ``tool_call_id`` links the log row to the transcript;
        ``untrusted``, ``rejected``, ``provenance`` and ``raise_conflicts``
        as for ``execute_call``. A call that
        needs confirmation is not run and not logged (the thread logs the
        request)."""
        started = time.monotonic()
        spec = self.context.tools.get(tool_name)
        if spec is None:
            return self._record(tool_name, params, (), started,
                                ExecutionResult(False, error=self._unknown(tool_name)), tool_call_id)
        errors = spec.validate(params)
        if errors:
            touched = touched_models(self.env, spec, params) if isinstance(params, dict) else spec.model_names
            return self._record(tool_name, params, touched, started, ExecutionResult(
                False, error=f"invalid arguments for {tool_name}: " + "; ".join(errors)), tool_call_id)
        # Sanitize first: the guard must judge exactly what will run.
        params = spec.sanitize(params)
        if not spec.read_only and carries_mask(params):  # issue 23 point 4: the model only saw it masked
            return self._record(tool_name, params, spec.model_names, started, ExecutionResult(
                False, error=f"refused: the call carries {MASK}, a value you were only shown masked; it cannot be "
                             "written by an agent. Ask the user for the value or leave it out."), tool_call_id)
        touched = touched_models(self.env, spec, params)
        if rejected and not confirmed and call_key(tool_name, params) in rejected:
            return self._record(tool_name, params, touched, started, ExecutionResult(
                False, error=f"[CONFIRMATION_REJECTED] the user already rejected this exact call of {tool_name} in "
                             "this request; it was not run and will not be asked again. Do something else, or ask "
                             "the user what they want."), tool_call_id)
        decision = self.guard.check(spec, touched, confirmed=confirmed, params=params, untrusted=untrusted,
                                    provenance=provenance)
        if decision.verdict == DENY:
            return self._record(tool_name, params, touched, started, ExecutionResult(
                False, error=f"refused by the safety rules: {decision.reason}"), tool_call_id)
        if decision.verdict == CONFIRM_REQUIRED:
            failure, trace = self._dry_run(spec, params)
            if failure is not None:  # never ask to approve a call that cannot run (issue 23 point 5)
                return self._record(tool_name, params, touched, started, failure, tool_call_id)
            preview = self._preview(spec, params, touched, self._named(spec, params, trace))
            return self._ask(decision.reason, decision.source, params, preview,
                             (*approved_operations, *self._declared_operations(spec, params, touched)))
        # What the user approved: the operations shown (and those the call declares).
        approved = (*approved_operations, *self._declared_operations(spec, params, touched)) if confirmed else ()
        operations = OperationGuard(spec.name, self.context.rules, self.context.blocked_models, approved, self.env)
        snapshot, sources, trace, done = None, [], [], ()
        try:
            # Reads too: a query the server refuses (a domain the ORM passes on as
            # it is) aborts the transaction unless it runs in a savepoint.
            with held_savepoint(self.env.cr, first_statement=_orm_built(spec)), guarding(operations), \
                    collecting() as sources, tracing() as trace:  # flushes on entry/success
                data = self._run(spec, params)
                if spec.function is not None and not sources:  # record names and labels in the addon's own results
                    note_prose_values(data, f"the result of {spec.name}")
                if operations.refusals:  # refused, but the tool caught the exception and went on
                    raise OperationRefused(operations.refusals[0])
                if operations.confirmations:
                    raise ConfirmationNeeded(operations.confirmations[0])
            if spec.function is None and data is not None:  # code the addon does not own may return anything
                sources.append(f"the result of {spec.label}")
            if operations.changes or not (spec.read_only and spec.function is not None):
                # Changes kept (or code the addon does not own, which may write past the ORM): the step's
                # commit waits for the disk (engine/durable/step_commit.py ASYNC_COMMIT), after the savepoint.
                commit_durably(self.env.cr)
            result = ExecutionResult(True, data=data, untrusted=tuple(sources))
            snapshot = _fitted(operations.snapshots, operations.snapshot_overflow)
            done = operations.operations_done()
        except Exception as exc:
            if raise_conflicts and isinstance(exc, PG_CONCURRENCY_EXCEPTIONS_TO_RETRY) and not operations.refusals:
                raise StepConflict(tool_name, exc) from exc  # rolled back to the savepoint; the step is tried again
            if operations.confirmations and not operations.refusals:  # rolled back; ask, then run it again
                return self._ask(operations.confirmations[0], "configuration", params, operations.pending or {},
                                 (*approved, operations.pending_signature))
            # A refusal is reported as such, whatever the tool (or safe_eval) made of it.
            error = OperationRefused(operations.refusals[0]) if operations.refusals else exc
            # An error may quote records (a lookup listing the names that match).
            result = ExecutionResult(False, error=self._describe(error, spec), untrusted=tuple(sources),
                                     data=_listed(trace))
            if not is_refusal(error, spec.function):  # a tool bug must not end the run; logged with its traceback
                _logger.exception("Tool %s failed unexpectedly", tool_name)
                return self._record(tool_name, params, touched, started, result, tool_call_id, snapshot, level="error")
        return self._record(tool_name, params, touched, started, result, tool_call_id, snapshot, done=done)

    def _dry_run(self, spec: ToolSpec, params: dict, lookups_only: bool = False) -> tuple[
            ExecutionResult | None, list[dict]]:
        """``(failure, trace)`` of the call run in a savepoint that is always
        rolled back, before the user is asked to approve it: ``failure`` when
        it could not run anyway (a name matching no record or several, a
        value Odoo refuses, a safety rule), else None; ``trace`` the lookups
        its names went through (``tools.lookup.tracing``), what the
        question shows. Only the addon's own tools run so: a destructive
        one, and any one when ``lookups_only``, only up to its first change
        (``OperationGuard.stop_before_changes``): its lookups and checks, never the
        business method after them (a delivery's validation may buy a
        carrier label over HTTP); a method call and code the addon does not
        own never run before the user approves."""
        if spec.function is None or spec.name == "odoo_method_call":
            return None, []
        operations = OperationGuard(spec.name, self.context.rules, self.context.blocked_models, (), self.env,
                                    stop_before_changes=lookups_only or spec.is_destructive)
        sources: list[str] = []
        trace: list[dict] = []
        try:
            with self.env.cr.savepoint(), guarding(operations), collecting() as sources, tracing() as trace:
                self._run(spec, params)
                raise _WouldRun
        except (_WouldRun, ChangesReached):
            return None, trace
        except Exception as exc:  # noqa: BLE001 - the call's failure, as running it would give it
            if operations.confirmations and not operations.refusals:
                return None, trace
            error = OperationRefused(operations.refusals[0]) if operations.refusals else exc
            if not is_refusal(error, spec.function):
                return None, trace  # a bug in the tool: the user is asked, and the approved run reports it
            return ExecutionResult(False, error=self._describe(error, spec), untrusted=tuple(sources),
                                   data=_listed(trace)), trace

    def _named(self, spec: ToolSpec, params: dict, trace: list[dict]) -> tuple[dict, ...]:
        """The records the call's marked arguments name, as its own lookups
        found them (``record_arguments.named``), each with its name as the
        user reads it."""
        entries = named_records(spec.schema, params, trace)
        names = {}
        for model_name in {entry["model"] for entry in entries}:
            if model_name in self.env:
                records = self.env[model_name].browse([e["id"] for e in entries if e["model"] == model_name])
                names.update({(model_name, n["id"]): n["name"] for n in record_names(records)})
        return tuple({**entry, "name": names.get((entry["model"], entry["id"]), UNREADABLE)} for entry in entries)

    def _ask(self, reason: str, source: str, params: dict, preview: dict, approves: tuple) -> ExecutionResult:
        """The result of a call that waits for the user's confirmation;
        ``approves`` the operation signatures an approval covers; the shown
        records' versions are kept (``changed_since``)."""
        named = params.get("record_ids") if isinstance(params.get("record_ids"), list) else []
        seen = self._versions(preview.get("model") or "",
                              list(dict.fromkeys([*named, *(r.get("id") for r in preview.get("records") or ())])))
        return ExecutionResult(False, confirmation_needed=True, confirmation_reason=reason, confirmation={
            "source": source, "arguments": params, "approved_operations": tuple(approves), **preview,
            "seen_versions": seen})

    def _versions(self, model_name: str, ids) -> tuple[dict, ...]:
        """``({"id", "version"}, …)`` of the records ``ids`` of
        ``model_name`` that exist: a digest of their stored values (files
        and line lists aside), read as superuser; only whether they changed
        is ever told, never their values."""
        ids = [i for i in ids if isinstance(i, int) and not isinstance(i, bool)][:MAX_VERSIONED]
        if not ids or model_name not in self.env:
            return ()
        records = self.env[model_name].sudo().with_context(active_test=False).browse(ids).exists()
        names = [name for name, field in records._fields.items() if field.store and field.column_type
                 and field.type not in ("binary", "one2many")
                 and name not in ("write_date", "write_uid", "__last_update")]
        return tuple({"id": row["id"], "version": hashlib.sha256(dumps(row).encode()).hexdigest()}
                     for row in records.read(names, load=None))

    def changed_since(self, request) -> str:
        """What changed, since ``request`` (a ConfirmationRequest) was shown,
        in the records it named: each one renamed, changed or deleted, by
        name as the user may read it, and each name of a marked argument
        that names another record now; ``""`` when nothing did."""
        spec = self.context.tools.get(request.tool)
        names_now = ""
        if request.named and spec is not None:  # a name the question showed may have come to name another record
            _failure, trace = self._dry_run(spec, request.arguments, lookups_only=True)
            names_now = name_changes(request.named, self._named(spec, request.arguments, trace))
        if not request.seen_versions or request.model not in self.env:
            return names_now
        then = {v.get("id"): v.get("version") for v in request.seen_versions}
        now = {v["id"]: v["version"] for v in self._versions(request.model, list(then))}
        shown = {r.get("id"): r.get("name") for r in request.records}
        changes = []
        for record_id, version in then.items():
            if record_id not in now:
                changes.append(f"{shown.get(record_id) or record_id} (#{record_id}) was deleted")
            elif now[record_id] != version:
                record = self.env[request.model].browse(record_id)
                name = record.display_name if record._filtered_access("read") else UNREADABLE
                renamed = f" (now named {name})" if name != shown.get(record_id) else ""
                changes.append(f"{shown.get(record_id) or record_id} (#{record_id}) was changed{renamed}")
        return "; ".join(filter(None, [*changes, names_now]))

    def _preview(self, spec: ToolSpec, params: dict, touched: tuple[str, ...], named: tuple = ()) -> dict:
        """What the call would do, for the user (engine/guard/confirmation_preview.py);
        arguments it cannot describe still get a request (with the exact
        parameters), never a failed turn."""
        try:
            with self.env.cr.savepoint(flush=False):
                return {**describe_call(self.env, spec, params, touched, named), "named": named}
        except Exception as error:  # the request is still shown, with its exact parameters
            _logger.warning("Could not describe a call of %s for its confirmation: %s", spec.name, error,
                            exc_info=not is_refusal(error))
            return {"model": touched[0] if touched else "", "operation": "call"}

    def _declared_operations(self, spec: ToolSpec, params: dict, touched: tuple[str, ...]) -> tuple[dict, ...]:
        """The signature of the ORM operation a generic write tool declares
        (odoo_create/write/unlink on its model with its fields and records)."""
        operation = TOOL_OPERATIONS.get(spec.name)
        if not operation or not touched or touched[0] not in self.env:
            return ()
        values = params.get("values") if isinstance(params.get("values"), dict) else {}
        ids = [i for i in params.get("record_ids") or () if isinstance(i, int)] if operation != "create" else []
        return (signature(self.env[touched[0]].browse(ids), operation, values),)

    def _run(self, spec: ToolSpec, params: dict):
        """Call the tool in the run's environment; returns JSON-safe data.
        The tool gets a copy of ``params``: business code may change the
        values it is given (a bank account's create adds its sanitized
        number), and the arguments logged, shown and approved never change."""
        params = copy.deepcopy(params)
        if spec.function is not None:
            return spec.function(self.env, **params)
        if spec.tool_type == "server_action":
            action = self.env["ir.actions.server"].browse(spec.server_action_id)
            ctx = {"active_model": params.get("model") or action.model_id.model}
            if params.get("record_ids"):
                ctx.update(active_ids=params["record_ids"], active_id=params["record_ids"][0])
            result = action.with_context(**ctx).run()
            return {"server_action": action.name,
                    "result": result if isinstance(result, (dict, list, str, int, float, bool)) else None}
        if spec.tool_type == "python_code":
            local = {"env": self.env, "params": params, "Command": Command, "UserError": UserError, "result": None}
            safe_eval(spec.python_code, local, mode="exec", filename=f"agentic_ai.tool.{spec.name}")
            return local.get("result")
        raise ToolError(spec.problem or f"{spec.name} cannot be run (tool type {spec.tool_type})")

    def _unknown(self, tool_name: str) -> str:
        if tool_name in self.context.unavailable:
            return self.context.unavailable[tool_name]
        return f"unknown tool {tool_name!r}. Available tools: {', '.join(sorted(self.context.tools))}"

    @staticmethod
    def _describe(exc: Exception, spec: ToolSpec) -> str:
        message = exc.args[0] if isinstance(exc, (UserError, ToolError)) and exc.args else str(exc)
        if isinstance(exc, psycopg2.Error):
            message = (exc.pgerror or str(exc)).strip().split("\n")[0]
        label = ("" if isinstance(exc, ToolError) else "refused by the safety rules: "
                 if isinstance(exc, OperationRefused) else f"{type(exc).__name__}: ")
        may_write = not (spec.read_only and spec.function is not None)  # the addon's own reads never write
        suffix = " Nothing was saved: the changes of this call were rolled back." if may_write else ""
        return f"{label}{message}{suffix}"

    def _record(self, tool_name: str, params, touched: tuple[str, ...], started: float, result: ExecutionResult,
                tool_call_id: str, snapshot: list | None = None, level: str = "", done=()) -> ExecutionResult:
        """``result`` with its duration, after writing its audit row;
        ``snapshot`` the values the call's writes and deletes changed
        (``OperationGuard.snapshots``). The row's ``level``: ``info`` for a
        success, else ``level`` (``error`` for a tool that broke) or
        ``warning`` (refused by Odoo or our rules, or the model's mistake).
        ``done``: the ORM operations of a call whose changes were kept
        (``OperationGuard.operations_done``), each an ``orm_operation`` row
        after the call's, with its tool and call id (spec §3.7); the rows
        of a step are written together (engine/durable/audit.py)."""
        duration_ms = int((time.monotonic() - started) * 1000)
        if not result.success and level != "error":
            # Odoo's refusals (access, validation), ours, the model's mistakes: one line, no traceback.
            _logger.warning("Tool %s refused: %s", tool_name, " ".join((result.error or "").split()))
        data = result.data if isinstance(result.data, dict) else {}
        record_ids = data.get("ids") or ([data["id"]] if isinstance(data.get("id"), int) else None)
        self.audit.record(
            "tool_execution",
            tool_name=tool_name,
            tool_call_id=tool_call_id or False,
            model_name=touched[0] if touched else False,
            record_ids=record_ids,
            input_data=params,
            output_data=result.data,
            before_snapshot=snapshot or False,
            run_as_user_id=(self.context.run_as_user_id
                            if self.context.run_as_user_id != self.context.user_id else False),
            success=result.success,
            error_message=result.error or False,
            duration_ms=duration_ms,
            level="info" if result.success else level or "warning",
        )
        for operation in done:
            self.audit.record("orm_operation", tool_name=tool_name, tool_call_id=tool_call_id or False,
                              success=True, level="info", **operation)
        return ExecutionResult(result.success, result.data, result.error, duration_ms, untrusted=result.untrusted)
