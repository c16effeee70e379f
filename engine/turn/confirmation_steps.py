"""The runtime's steps around a confirmation (spec 000 §7.4; issue 9 and
issue 10 point 3): pausing on a call that needs the user's approval, and
the three answers (approve runs exactly the shown call once, reject tells
the model why, cancel or a new message closes it). Mixed into
``AgentRuntime``, whose state (``transcript``, ``executor``, ``thread``)
it uses: an answer is the opening of a turn, whose rows it appends before
the one turn loop goes on (issue 25 point 1)."""
from __future__ import annotations

from dataclasses import replace

from odoo.exceptions import UserError

from ..guard.confirmation import ConfirmationRequest, call_key
from .agent_result import AgentResult, TurnEnd
from .plan_steps import close_open_plans


class ConfirmationSteps:
    """Confirmation entry points and helpers of ``AgentRuntime``."""

    def resume_after_confirmation(self, approved: bool, reason: str = "", tool_call_id: str | None = None,
                                  confirmation_id: int | None = None) -> AgentResult:
        """Continue a paused run: execute exactly the pending call, once,
        when approved (no LLM call decides anything before it runs), else
        give the model ``[CONFIRMATION_REJECTED]`` with ``reason`` and let it
        reason on; the same call is then refused without asking for the rest
        of the turn (engine/executor.py). ``tool_call_id`` and
        ``confirmation_id``, when given, are checked against the question
        waiting once the run lock is held (two answers racing: the second
        never answers the question the first one led to). Raises UserError
        when nothing, or another question, waits."""
        with self._running():
            self._check_waiting()
            self.thread._check_confirmation_answer(tool_call_id, confirmation_id)
            return self._guarded(self._turn, self._open_with_answer, approved, reason)

    def _open_with_answer(self, approved: bool, reason: str) -> None:
        """The opening of a turn that answers the waiting confirmation: the
        answer's row, then the approved call's result (or the rejection's),
        and the plan it paused open again (``_after_answer``)."""
        request = self._pending_request()
        name, call_id = request.tool, request.tool_call_id
        # The user approved what they were shown, not what the records have become since (issue 23 point 5):
        # that approval is refused, and the call is judged again as if it were new.
        changed = self.executor.changed_since(request) if approved and name in self.context.tools else ""
        self.transcript.add_confirmation_response(
            request, approved and not changed,
            f"approval refused: {changed} since the question was shown" if changed else reason)
        asked = next((m["content"] for m in reversed(self.transcript.messages) if m["role"] == "user"), "")
        self._prepare_prompt(asked or "")
        self.thread._set_runtime_state(state="executing", pending_confirmation=False)
        if approved and name in self.context.tools:
            self.tool_call_count += 1
            self._checkpoint()  # the answer is kept; the call's step holds the call alone, so a conflict is retried
            result, changed = self._run_approved(request, changed)
            if result.confirmation_needed:  # a change the user was not shown, or records changed: ask again
                if changed:
                    result = replace(result, confirmation_reason=f"Asked again: {changed} since you were asked. "
                                                                 f"{result.confirmation_reason}")
                paused = self._pause(call_id, name, result)
                raise TurnEnd("waiting_confirmation", paused.summary(), confirmation=paused)
            self.transcript.add_tool_result(call_id, name, self.observer.observe(name, result),
                                            success=result.success, data=result.data, untrusted=result.untrusted)
        elif approved:
            self.transcript.add_tool_result(call_id, name, f"{name} is no longer available to this agent; nothing "
                                            "was run.", success=False)
        else:
            why = f" Reason: {reason.strip().rstrip('.')}." if reason.strip() else ""
            self.transcript.add_tool_result(call_id, name, f"[CONFIRMATION_REJECTED] The user rejected {name}.{why} "
                                            "Do not run it again; propose another way or ask the user.",
                                            success=False, status="rejected")
        self._checkpoint()
        self._after_answer(request, approved)  # the paused plan open again, else ReAct (plan_steps.py)

    def _run_approved(self, request: ConfirmationRequest, changed: str):
        """Run the approved call in a step of its own; ``(ExecutionResult,
        what changed since the question)``.

        The approval covers what the user was shown, once: each try looks
        again, on its own snapshot, at what changed in the records the
        question named (``Executor.changed_since``), and a try that finds a
        change, or that follows a try another transaction made fail (the
        conflict retried by ``_retrying_conflicts``: someone changed what the
        call touches), judges the call as if it were new, so that a call
        still needing a confirmation asks again rather than writing over a
        state nobody approved, or repeating what the first try did outside
        the database."""
        tries = []

        def attempt(raise_conflicts):
            nonlocal changed
            tries.append(raise_conflicts)
            changed = changed or self.executor.changed_since(request) or (
                self.env._("another user changed the same records") if len(tries) > 1 else "")
            if changed:
                return self.executor.execute(request.tool, request.arguments, tool_call_id=request.tool_call_id,
                                             provenance=self.transcript.provenance, raise_conflicts=raise_conflicts)
            return self.executor.execute(request.tool, request.arguments, confirmed=True,
                                         tool_call_id=request.tool_call_id,
                                         approved_operations=request.approved_operations,
                                         raise_conflicts=raise_conflicts)
        result = self._retrying_conflicts(request.tool, attempt)
        return result, changed

    def cancel_confirmation(self) -> AgentResult:
        """End a paused turn at the user's word: the pending call is not
        run, the model is not called, the conversation is free again."""
        with self._running():
            self._check_waiting()
            return self._guarded(self._turn, self._open_with_cancel)

    def _open_with_cancel(self) -> None:
        """The opening, and the end, of a turn that cancels the waiting
        confirmation: its call is not run, the model is not called."""
        request = self._pending_request()
        self._close_pending(self.env._("the user cancelled the request"), request)
        reply = self.env._("Cancelled: %s was not run, and nothing else will be done for this request.",
                           request.tool)
        close_open_plans(self.thread, "cancelled", reply)  # the user's word: cancelled, not failed
        self.transcript.add_assistant(reply)
        raise TurnEnd("completed", reply)

    def _close_pending(self, why: str, request: ConfirmationRequest | None = None) -> None:
        """Close the waiting confirmation as cancelled: its call gets its one
        ``[CANCELLED]`` result and is not run (an unreadable request is
        just dropped)."""
        if request is None:
            try:
                request = ConfirmationRequest.from_json(self.thread.pending_confirmation or "")
            except (ValueError, RecursionError):
                self.thread._set_runtime_state(pending_confirmation=False)
                return
        self.transcript.add_confirmation_response(request, False, "", cancelled=True)
        self.transcript.add_tool_result(request.tool_call_id, request.tool, f"[CANCELLED] Not run: {why} before "
                                        f"{request.tool} ran.", success=False, status="cancelled")
        self.thread._set_runtime_state(pending_confirmation=False)

    def _check_waiting(self) -> None:
        """Raise UserError unless the thread (read under the run lock) still
        waits for a confirmation: a second answer finds it answered."""
        if self.thread.state != "waiting_confirmation" or not self.thread.pending_confirmation:
            raise UserError(self.env._("This conversation is not waiting for a confirmation."))

    def _pending_request(self) -> ConfirmationRequest:
        """The paused call, with the transcript loaded; when it cannot be
        read, the turn ends with an error (TurnEnd) so that the conversation
        is never left waiting for an answer nothing can take."""
        self.transcript = self._load_transcript()
        try:
            return ConfirmationRequest.from_json(self.thread.pending_confirmation or "")
        except (ValueError, RecursionError):
            reply = self.env._("The call waiting for your confirmation could not be read, so nothing was run. "
                               "Please ask again.")
            self.thread._set_runtime_state(pending_confirmation=False)
            self.transcript.add_assistant(reply)
            self.audit.record("error", success=False, error_message="unreadable pending confirmation")
            raise TurnEnd("error", reply, error="unreadable pending confirmation") from None

    def _pause(self, call_id: str, name: str, result) -> ConfirmationRequest:
        """Store the confirmation request of a call that waits (``result``:
        its ExecutionResult) and return it, with its ``confirmation_id``."""
        request = ConfirmationRequest(call_id, name, reason=result.confirmation_reason,
                                      risk_level=self.context.tools[name].risk_level, **result.confirmation)
        self.audit.flush()  # the thread logs the request itself, after what came before it
        row = self.transcript.add_confirmation_request(request)
        return replace(request, confirmation_id=row.id)

    def _rejected_keys(self) -> frozenset[str]:
        """The ``call_key`` of each call the user rejected in this turn."""
        keys = set()
        for name, arguments in self.transcript.rejected_calls:
            spec = self.context.tools.get(name)
            if spec is not None and not spec.validate(arguments):
                keys.add(call_key(name, spec.sanitize(arguments)))
        return frozenset(keys)
