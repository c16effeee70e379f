"""AgentRuntime (spec 000 §4.1, §4.2, §4.5): the ReAct loop.

Instantiated per request with an agent and a thread; reads the run's
settings once (``RunContext``) and the transcript once per turn
(``Transcript``); keeps no ORM state of its own between calls. runtime →
executor → tool → observer → thread is one straight line; every step is
written to the thread (the transcript is the state) and to the execution
log."""
from __future__ import annotations

import time

from odoo.exceptions import UserError

from ..llm import LLMError, TokenTracker
from .audit import AuditTrail
from .confirmation import ConfirmationRequest, call_key
from .executor import Executor
from .observer import Observer
from .rate_limits import check as check_rate_limits
from .run_context import ProviderSpec, build_run_context
from .text import clean_text
from .transcript import Transcript

ATTEMPTS_PER_PROVIDER = 2          # spec 000 §4.5
MAX_MESSAGE_CHARS = 20000          # longest user message accepted
MAX_TOOL_CALLS_PER_TURN = 10       # calls run from one model answer; the rest are refused
MAX_RETRY_AFTER = 10.0             # seconds: longest Retry-After we wait for
LIMIT_REPLY = ("I have reached my processing limit of {n} steps for this request before finishing. "
               "What I did so far is above; tell me how to continue, or split the request into smaller ones.")


class LLMUnavailable(Exception):
    """Every provider failed; ``errors`` lists ``"provider: message"``."""

    def __init__(self, errors: list[str]):
        super().__init__("; ".join(errors))
        self.errors = errors


class AgentResult(dict):
    """What a run produced, for controllers and callers: a dict, so that it
    travels as JSON as it is (``agent.run`` and the confirmation answers
    are called over JSON-RPC), whose keys also read as attributes.

    ``state`` is the thread's state afterwards; ``reply`` the last assistant
    text (or the confirmation question); tokens and cost cover this run;
    ``confirmation`` is the call waiting for the user's answer: as an
    attribute the ``ConfirmationRequest``, as a key its dict."""

    def __init__(self, thread_id: int, state: str, reply: str, iterations: int = 0, tool_calls: int = 0,
                 input_tokens: int = 0, output_tokens: int = 0, cost: float = 0.0, error: str | None = None,
                 confirmation: ConfirmationRequest | None = None, message_ids: list[int] | None = None):
        super().__init__(thread_id=thread_id, state=state, reply=reply, iterations=iterations, tool_calls=tool_calls,
                         input_tokens=input_tokens, output_tokens=output_tokens, cost=cost, error=error,
                         confirmation=confirmation.to_dict() if confirmation else None,
                         message_ids=list(message_ids or ()))
        self.__dict__["confirmation"] = confirmation

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def to_dict(self) -> dict:
        """A plain dict: ``confirmation`` as ``{tool_call_id, tool, arguments, reason, risk_level, ...}``."""
        return dict(self)


class AgentRuntime:
    """Runs one user request on a thread (``agent``/``thread`` are records
    in the requesting user's environment)."""

    def __init__(self, agent, thread, durable=None):
        self.env = thread.env
        self.durable = durable
        self.thread = thread
        self.context = build_run_context(agent, thread)
        self.audit = AuditTrail(thread)
        self.executor = Executor(self.context, thread, self.audit)
        self.observer = Observer()
        self.tracker = TokenTracker()
        self.transcript: Transcript | None = None
        self.iterations = 0
        self.tool_call_count = 0

    # ------------------------------------------------------------ entry points
    def run_turn(self, user_message: str) -> AgentResult:
        """Handle a new user message according to ``execution_mode``.

        Plan-and-Execute and Hybrid run the ReAct loop until the planner
        lands (spec §4.3–4.4 come with the plan models)."""
        if not isinstance(user_message, str) or not user_message.strip():
            raise UserError(self.env._("The message is empty."))
        user_message = clean_text(user_message)
        if len(user_message) > MAX_MESSAGE_CHARS:
            raise UserError(self.env._("The message is too long: %(n)s characters, at most %(max)s.",
                                       n=len(user_message), max=MAX_MESSAGE_CHARS))
        self._lock_thread()
        if self.thread.state in ("executing", "waiting_confirmation"):
            raise UserError(self.env._("This conversation is busy: %s.", dict(
                self.thread._fields["state"]._description_selection(self.env))[self.thread.state]))
        self.transcript = Transcript(self.thread)
        if not self.transcript.messages and self.thread.name == self.env._("New conversation"):
            self.thread.name = " ".join(user_message.split())[:60]
        self.transcript.add_user(user_message.strip())
        self.thread._set_runtime_state(state="executing", last_error=False)
        return self._react_loop()

    def resume_after_confirmation(self, approved: bool, reason: str = "") -> AgentResult:
        """Continue a paused run: execute exactly the pending call, once,
        when approved (no LLM call decides anything before it runs), else
        give the model ``[CONFIRMATION_REJECTED]`` with ``reason`` and let it
        reason on; the same call is then refused without asking for the rest
        of the turn (engine/executor.py)."""
        request = self._pending_request()
        if isinstance(request, AgentResult):
            return request
        self.transcript.add_confirmation_response(request, approved, reason)
        self.thread._set_runtime_state(state="executing", pending_confirmation=False)
        name, call_id = request.tool, request.tool_call_id
        if approved and name in self.context.tools:
            self.tool_call_count += 1
            result = self.executor.execute(name, request.arguments, confirmed=True, tool_call_id=call_id,
                                           approved_operations=request.approved_operations)
            if result.confirmation_needed:  # it reached a change the user was not shown: ask about that one
                paused = self._pause(call_id, name, result)
                return self._end_turn("waiting_confirmation", paused.summary(), confirmation=paused)
            self.transcript.add_tool_result(call_id, name, self.observer.observe(name, result),
                                            success=result.success, data=result.data, untrusted=result.untrusted)
        elif approved:
            self.transcript.add_tool_result(call_id, name, f"{name} is no longer available to this agent; nothing "
                                            "was run.", success=False)
        else:
            why = f" Reason: {reason}" if reason else ""
            self.transcript.add_tool_result(call_id, name, f"[CONFIRMATION_REJECTED] The user rejected {name}.{why} "
                                            "Do not run it again; propose another way or ask the user.",
                                            success=False, status="rejected")
        return self._react_loop()

    def cancel_confirmation(self) -> AgentResult:
        """End a paused turn at the user's word: the pending call is not
        run, the model is not called, the conversation is free again."""
        request = self._pending_request()
        if isinstance(request, AgentResult):
            return request
        self.transcript.add_confirmation_response(request, False, "", cancelled=True)
        self.transcript.add_tool_result(request.tool_call_id, request.tool, f"[CANCELLED] The user cancelled this "
                                        f"request before {request.tool} ran; nothing was run.", success=False,
                                        status="cancelled")
        reply = self.env._("Cancelled: %s was not run, and nothing else will be done for this request.",
                           request.tool)
        self.thread._set_runtime_state(pending_confirmation=False)
        self.transcript.add_assistant(reply)
        return self._end_turn("completed", reply)

    def _pending_request(self) -> ConfirmationRequest | AgentResult:
        """The paused call, with the transcript loaded; when it cannot be
        read, the turn ended with an error (an ``AgentResult``) so that the
        conversation is never left waiting for an answer nothing can take."""
        self._lock_thread()
        self.transcript = Transcript(self.thread)
        try:
            return ConfirmationRequest.from_json(self.thread.pending_confirmation or "")
        except (ValueError, RecursionError):
            reply = self.env._("The call waiting for your confirmation could not be read, so nothing was run. "
                               "Please ask again.")
            self.thread._set_runtime_state(pending_confirmation=False)
            self.transcript.add_assistant(reply)
            self.audit.record("error", success=False, error_message="unreadable pending confirmation")
            return self._end_turn("error", reply, error="unreadable pending confirmation")

    # ------------------------------------------------------------------ ReAct
    def _react_loop(self) -> AgentResult:
        schemas = self.context.llm_schemas
        empty_answers = 0
        while self.iterations < self.context.max_iterations:
            within, why = self.tracker.check_budget(self.context.max_cost_per_run, self.context.max_tokens_per_run)
            if not within:
                reply = self.env._("I stopped before finishing: this request reached its %s. What I did so far is "
                                   "above.", why)
                self.transcript.add_assistant(reply)
                self.audit.record("error", success=False, error_message=why)
                return self._end_turn("completed", reply)
            limited = self._rate_limited()
            if limited:
                return limited
            self.iterations += 1
            with self.audit.step():  # the LLM call and the tool calls it asks for
                try:
                    response, calls = self._call_llm(self.transcript.for_llm(self.context.system_prompt), schemas)
                except LLMUnavailable as exc:
                    return self._fail(exc)
                if not calls:
                    content = clean_text(response.content).strip()
                    if not content:
                        empty_answers += 1
                        if empty_answers < 2:
                            continue
                        content = self.env._("The model returned an empty response. Please rephrase or try again.")
                    elif response.finish_reason == "length":
                        content += "\n\n" + self.env._("(The answer was cut off by the model's output limit.)")
                    self.transcript.add_assistant(content, input_tokens=response.input_tokens,
                                                  output_tokens=response.output_tokens)
                    return self._end_turn("completed", content)
                self.transcript.add_tool_calls(calls, content=response.content or "")
                paused = self._run_calls(calls, response.finish_reason)
                if paused:
                    return self._end_turn("waiting_confirmation", paused.summary(), confirmation=paused)
        reply = LIMIT_REPLY.format(n=self.context.max_iterations)
        self.transcript.add_assistant(reply)
        return self._end_turn("completed", reply)

    def _run_calls(self, calls, finish_reason: str) -> ConfirmationRequest | None:
        """Execute the calls of one answer in order and store each
        observation. Returns the confirmation request of the call that needs
        the user's approval (the calls after it are not run)."""
        rejected = self._rejected_keys()  # rejections happen between answers, never within one
        for index, call in enumerate(calls):
            if index >= MAX_TOOL_CALLS_PER_TURN:
                self.transcript.add_tool_result(call.id, call.name, f"[NOT RUN] at most {MAX_TOOL_CALLS_PER_TURN} "
                                                "tool calls are run from one answer; call again for the rest.",
                                                success=False)
                continue
            self.tool_call_count += 1
            result = self.executor.execute_call(call, finish_reason, untrusted=tuple(self.transcript.untrusted),
                                                rejected=rejected)
            if result.confirmation_needed:
                request = self._pause(call.id, call.name, result)
                for later in calls[index + 1:]:
                    self.transcript.add_tool_result(
                        later.id, later.name, f"[NOT RUN] {later.name} waits until the user answers the "
                        "confirmation of the previous call; call it again afterwards if still needed.", success=False)
                return request
            self.transcript.add_tool_result(call.id, call.name, self.observer.observe(call.name, result),
                                            success=result.success, data=result.data, untrusted=result.untrusted)
        return None

    def _pause(self, call_id: str, name: str, result) -> ConfirmationRequest:
        """Store the confirmation request of a call that waits (``result``:
        its ExecutionResult) and return it."""
        request = ConfirmationRequest(call_id, name, reason=result.confirmation_reason,
                                      risk_level=self.context.tools[name].risk_level, **result.confirmation)
        self.audit.flush()  # the thread logs the request itself, after what came before it
        self.transcript.add_confirmation_request(request)
        return request

    def _rejected_keys(self) -> frozenset[str]:
        """The ``call_key`` of each call the user rejected in this turn."""
        keys = set()
        for name, arguments in self.transcript.rejected_calls:
            spec = self.context.tools.get(name)
            if spec is not None and not spec.validate(arguments):
                keys.add(call_key(name, spec.sanitize(arguments)))
        return frozenset(keys)

    # -------------------------------------------------------------- LLM calls
    def _rate_limited(self) -> AgentResult | None:
        """End the turn, before any request is sent, when a rate limit of
        Settings is reached (spec §7.5): the user reads which limit and when
        it resets, and an ``error`` row records it. Windows end at the
        transaction's time, the time the log rows are stamped with."""
        limits = self.context.rate_limits
        if not limits.active:
            return None
        now = self.env.cr.now()
        usage = self.env["agentic.ai.execution.log"]._rate_limit_usage(
            self.thread.user_id.id, self.context.agent_id, self.thread.company_id.id, now)
        hit = check_rate_limits(limits, usage, now)
        if not hit:
            return None
        reply = hit.message(now, self.thread.user_id.tz)
        self.transcript.add_assistant(reply)
        self.audit.record("error", success=False, error_message=reply,
                          input_data={"rate_limit": hit.key, "limit": hit.limit, "used": hit.used})
        return self._end_turn("error", reply, error=reply)

    def _retry_delay(self) -> float:
        raw = self.env["ir.config_parameter"].sudo().get_param("agentic_ai.llm_retry_delay", "1.0")
        try:
            return max(0.0, float(raw))
        except ValueError:
            return 1.0

    def _call_llm(self, messages: list[dict], schemas: list[dict]):
        """``(response, calls)``: the answer of the primary provider, else of
        the fallback, ``ATTEMPTS_PER_PROVIDER`` tries each (client errors, 4xx
        but 429, go straight to the next provider), and its tool calls with
        their final ids. Every attempt is logged. Raises LLMUnavailable with
        every provider's last error."""
        errors, delay = [], self._retry_delay()
        for provider in self.context.providers:
            if provider.adapter is None:
                errors.append(f"{provider.name}: {provider.problem}")
                continue
            last = ""
            for attempt in range(ATTEMPTS_PER_PROVIDER):
                started = time.monotonic()
                try:
                    # Adapters raise LLMError only (llm.base wraps every adapter method).
                    response = provider.adapter.chat_completion(messages, schemas or None)
                except LLMError as exc:
                    self.audit.record("llm_call", provider_id=provider.id, llm_model=provider.model, success=False,
                                      error_message=str(exc), duration_ms=int((time.monotonic() - started) * 1000))
                    last = f"{provider.name}: {exc}"
                    if not exc.retryable:
                        break
                    if attempt + 1 < ATTEMPTS_PER_PROVIDER:
                        wait = exc.retry_after if exc.retry_after is not None else delay
                        time.sleep(max(0.0, min(wait, MAX_RETRY_AFTER)))
                    continue
                calls = self.transcript.normalize_calls(response.tool_calls)
                self._log_answer(provider, response, calls, started)
                return response, calls
            errors.append(last)
        if not errors:
            errors.append(self.env._("the agent has no LLM provider"))
        raise LLMUnavailable(errors)

    def _log_answer(self, provider: ProviderSpec, response, calls, started: float) -> None:
        self.tracker.prices[response.model] = (provider.cost_per_input_token, provider.cost_per_output_token)
        cost = self.tracker.track(response.input_tokens, response.output_tokens, response.model)
        self.audit.record("llm_call", provider_id=provider.id, llm_model=response.model,
                          input_tokens=response.input_tokens, output_tokens=response.output_tokens, cost=cost,
                          duration_ms=int((time.monotonic() - started) * 1000),
                          output_data={"content": response.content, "finish_reason": response.finish_reason,
                                       "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.raw_arguments}
                                                      for c in calls]})

    # ------------------------------------------------------------------ ends
    def _lock_thread(self):
        """One run per thread at a time (transaction-scoped advisory lock)."""
        self.env.cr.execute("SELECT pg_try_advisory_xact_lock(%s, %s)", [0x41474E54, self.thread.id])
        if not self.env.cr.fetchone()[0]:
            raise UserError(self.env._("This conversation is already being processed."))

    def _fail(self, exc: LLMUnavailable) -> AgentResult:
        reply = self.env._(
            "I could not reach the AI service, so your request was not completed. %(errors)s",
            errors=" ".join(f"[{e}]" for e in exc.errors))
        self.transcript.add_assistant(reply)
        self.audit.record("error", success=False, error_message=str(exc))
        return self._end_turn("error", reply, error=str(exc))

    def _end_turn(self, state: str, reply: str, error: str | None = None,
                  confirmation: ConfirmationRequest | None = None) -> AgentResult:
        self.thread._set_runtime_state(state=state, last_error=error or False)
        summary = self.tracker.get_summary()
        return AgentResult(
            thread_id=self.thread.id, state=state, reply=reply, iterations=self.iterations,
            tool_calls=self.tool_call_count, input_tokens=summary["total_input_tokens"],
            output_tokens=summary["total_output_tokens"], cost=summary["total_cost"],
            error=error, confirmation=confirmation, message_ids=list(self.transcript.new_ids),
        )
