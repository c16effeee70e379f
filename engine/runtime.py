"""AgentRuntime (spec 000 §4.1, §4.2, §4.5): the ReAct loop.

Instantiated per request with an agent and a thread; keeps no ORM state of
its own between calls. runtime → executor → tool → observer → thread is one
straight line; every step is written to the thread (the transcript is the
state) and to the execution log."""
from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field

from odoo.exceptions import UserError

from ..llm import LLMError, ToolCall, TokenTracker
from ..tools.base_tool import TOOL_NAME_RE
from .executor import ExecutionResult, Executor
from .observer import Observer
from .safety import SafetyGuard
from .text import clean_text

ATTEMPTS_PER_PROVIDER = 2          # spec 000 §4.5
MAX_MESSAGE_CHARS = 20000          # longest user message accepted
MAX_TOOL_CALLS_PER_TURN = 10       # calls run from one model answer; the rest are refused
TOOL_CALL_ID_RE = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")  # ids kept as sent; others are replaced
MAX_RETRY_AFTER = 10.0             # seconds: longest Retry-After we wait for
LIMIT_REPLY = ("I have reached my processing limit of {n} steps for this request before finishing. "
               "What I did so far is above; tell me how to continue, or split the request into smaller ones.")


class LLMUnavailable(Exception):
    """Every provider failed; ``errors`` lists ``"provider: message"``."""

    def __init__(self, errors: list[str]):
        super().__init__("; ".join(errors))
        self.errors = errors


@dataclass
class AgentResult:
    """What a run produced, for controllers and callers.

    ``state`` is the thread's state afterwards; ``reply`` the last assistant
    text (or the confirmation question); tokens and cost cover this run."""
    thread_id: int
    state: str
    reply: str
    iterations: int = 0
    tool_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    error: str | None = None
    confirmation: dict | None = None
    message_ids: list[int] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


class AgentRuntime:
    """Runs one user request on a thread (``agent``/``thread`` are records
    in the requesting user's environment)."""

    def __init__(self, agent, thread):
        self.env = thread.env
        self.agent = agent
        self.thread = thread
        self.guard = SafetyGuard(agent)
        self.executor = Executor(agent, thread, self.guard)
        self.observer = Observer()
        self.tracker = TokenTracker()
        self.iterations = 0
        self.tool_call_count = 0
        self._first_message_id = 0

    # ------------------------------------------------------------ entry points
    def run(self, user_message: str) -> AgentResult:
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
        if not self.thread.message_ids and self.thread.name == self.env._("New conversation"):
            self.thread.name = " ".join(user_message.split())[:60]
        message = self.thread.add_user_message(user_message.strip())
        self._first_message_id = message.id
        self.thread._set_runtime_state(state="executing", last_error=False)
        return self._react_loop()

    def resume_after_confirmation(self, approved: bool, reason: str = "") -> AgentResult:
        """Continue a paused run: execute the pending call when approved, else
        give the model ``[CONFIRMATION_REJECTED]`` and let it reason on."""
        self._lock_thread()
        try:
            pending = json.loads(self.thread.pending_confirmation)
            call = ToolCall(id=pending["tool_call_id"], name=pending["tool"], arguments=dict(pending["arguments"]))
        except (ValueError, KeyError, TypeError):
            raise UserError(self.env._("The pending confirmation of this conversation is unreadable.")) from None
        tool = self.agent._get_available_tools().filtered(lambda t: t.name == call.name)
        answer = self.thread._add_message(
            "confirmation_response", "approved" if approved else f"rejected: {reason}".strip(),
            tool_call_id=call.id, tool_name=call.name)
        self._first_message_id = answer.id
        self.thread._set_runtime_state(state="executing", pending_confirmation=False)
        self.env["agentic.ai.execution.log"].log(
            "confirmation_response", thread=self.thread, tool_name=call.name,
            input_data={"approved": approved, "reason": reason, "arguments": call.arguments})
        if approved and tool:
            result = self.executor.execute(tool, call.arguments, confirmed=True, tool_call_id=call.id)
            self.thread.add_tool_result(call.id, call.name, self.observer.observe(call.name, result),
                                        success=result.success, data=result.data)
        else:
            why = f" Reason: {reason}" if reason else ""
            text = (f"[CONFIRMATION_REJECTED] The user rejected {call.name}.{why} Do not run it again; "
                    "propose another way or ask the user." if not approved else
                    f"{call.name} is no longer available to this agent; nothing was run.")
            self.thread.add_tool_result(call.id, call.name, text, success=False)
        return self._react_loop()

    # ------------------------------------------------------------------ ReAct
    def _react_loop(self) -> AgentResult:
        tools = self.agent._get_available_tools()
        by_name = {tool.name: tool for tool in tools}
        schemas = [tool.to_llm_schema() for tool in tools]
        system = self.agent._build_system_message(self.thread.user_id)
        empty_answers = 0
        while self.iterations < self.agent.max_iterations:
            within, why = self.tracker.check_budget(self.agent.max_cost_per_run, self.agent.max_tokens_per_run)
            if not within:
                reply = self.env._("I stopped before finishing: this request reached its %s. What I did so far is above.", why)
                self.thread.add_assistant_message(reply)
                self.env["agentic.ai.execution.log"].log("error", thread=self.thread, success=False, error_message=why)
                return self._finish("completed", reply)
            self.iterations += 1
            try:
                response = self._call_llm(self.thread.get_messages_for_llm(system), schemas)
            except LLMUnavailable as exc:
                return self._fail(exc)
            if not response.tool_calls:
                content = clean_text(response.content).strip()
                if not content:
                    empty_answers += 1
                    if empty_answers < 2:
                        continue
                    content = self.env._("The model returned an empty response. Please rephrase or try again.")
                elif response.finish_reason == "length":
                    content += "\n\n" + self.env._("(The answer was cut off by the model's output limit.)")
                self.thread.add_assistant_message(content, input_tokens=response.input_tokens,
                                                  output_tokens=response.output_tokens)
                return self._finish("completed", content)
            self._ensure_unique_ids(response.tool_calls)
            for index, call in enumerate(response.tool_calls):
                self.thread.add_tool_call(call, content=(response.content or "") if index == 0 else "")
            for index, call in enumerate(response.tool_calls):
                if index >= MAX_TOOL_CALLS_PER_TURN:
                    self.thread.add_tool_result(call.id, call.name, f"[NOT RUN] at most {MAX_TOOL_CALLS_PER_TURN} tool "
                                                "calls are run from one answer; call again for the rest.", success=False)
                    continue
                paused = self._run_tool_call(call, by_name, response.finish_reason)
                if paused:
                    for later in response.tool_calls[index + 1:]:
                        self.thread.add_tool_result(
                            later.id, later.name, f"[NOT RUN] {later.name} waits until the user answers the "
                            "confirmation of the previous call; call it again afterwards if still needed.", success=False)
                    return self._finish("waiting_confirmation", paused["reason"], confirmation=paused)
        reply = LIMIT_REPLY.format(n=self.agent.max_iterations)
        self.thread.add_assistant_message(reply)
        return self._finish("completed", reply)

    def _ensure_unique_ids(self, calls: list[ToolCall]) -> None:
        """Give every call an id unique in the thread (some providers send
        none, or reuse one, and results are matched to calls by id) and a
        name that providers accept when the history is replayed."""
        used = set(self.thread.message_ids.filtered(lambda m: m.role == "tool_call").mapped("tool_call_id"))
        counter = len(used)
        for call in calls:
            if not TOOL_CALL_ID_RE.match(call.id or ""):
                call.id = ""
            while not call.id or call.id in used:
                counter += 1
                call.id = f"call_{self.thread.id}_{counter}"
                call.id_generated = True
            used.add(call.id)
            if not TOOL_NAME_RE.match(call.name or ""):
                # Stored (and replayed) under a name providers accept; the
                # observation quotes what the model sent.
                call.parse_error = call.parse_error or f"invalid tool name {call.name!r}"
                call.name = re.sub(r"[^a-zA-Z0-9_-]", "_", call.name or "")[:64] or "unnamed_tool"

    def _run_tool_call(self, call: ToolCall, by_name: dict, finish_reason: str) -> dict | None:
        """Execute one call and store its observation. Returns the
        confirmation payload when the call needs the user's approval."""
        self.tool_call_count += 1
        tool = by_name.get(call.name)
        if tool is None:
            result = ExecutionResult(False, error=f"unknown tool {call.name!r}. Available tools: {', '.join(sorted(by_name))}")
        elif call.parse_error and call.parse_error.startswith("invalid tool name"):
            result = ExecutionResult(False, error=f"{call.parse_error}; call only: {', '.join(sorted(by_name))}")
        elif call.parse_error:
            cut = " The answer was cut off (finish_reason: length) before the arguments were complete; send a shorter call." \
                if finish_reason == "length" else ""
            result = ExecutionResult(False, error=f"the arguments of {call.name} are not valid JSON, nothing was run: {call.parse_error}.{cut}")
        else:
            result = self.executor.execute(tool, call.arguments, tool_call_id=call.id)
            if result.confirmation_needed:
                return self.thread.request_confirmation(call, tool, result.confirmation_reason)
        if tool is None or call.parse_error:
            self.env["agentic.ai.execution.log"].log(
                "tool_execution", thread=self.thread, tool_name=call.name, tool_call_id=call.id, success=False,
                input_data=call.raw_arguments or call.arguments, error_message=result.error)
        self.thread.add_tool_result(call.id, call.name, self.observer.observe(call.name, result),
                                    success=result.success, data=result.data)
        return None

    # -------------------------------------------------------------- LLM calls
    def _providers(self):
        return [p for p in (self.agent.llm_provider_id, self.agent.fallback_provider_id) if p]

    def _retry_delay(self) -> float:
        raw = self.env["ir.config_parameter"].sudo().get_param("agentic_ai.llm_retry_delay", "1.0")
        try:
            return max(0.0, float(raw))
        except ValueError:
            return 1.0

    def _call_llm(self, messages: list[dict], schemas: list[dict]):
        """Primary provider then fallback, ``ATTEMPTS_PER_PROVIDER`` tries
        each; client errors (4xx but 429) go straight to the next provider.
        Raises LLMUnavailable with every provider's last error."""
        errors, delay = [], self._retry_delay()
        log = self.env["agentic.ai.execution.log"]
        for provider in self._providers():
            provider = provider.sudo()
            try:
                adapter = provider._get_adapter()
            except UserError as exc:
                errors.append(f"{provider.name}: {exc.args[0]}")
                continue
            for attempt in range(ATTEMPTS_PER_PROVIDER):
                started = time.monotonic()
                try:
                    # Adapters raise LLMError only (llm.base wraps every adapter method).
                    response = adapter.chat_completion(messages, schemas or None)
                except LLMError as exc:
                    log.log("llm_call", thread=self.thread, provider_id=provider.id, llm_model=provider.default_model,
                            success=False, error_message=str(exc),
                            duration_ms=int((time.monotonic() - started) * 1000))
                    last = f"{provider.name}: {exc}"
                    if not exc.retryable:
                        break
                    if attempt + 1 < ATTEMPTS_PER_PROVIDER:
                        wait = exc.retry_after if exc.retry_after is not None else delay
                        time.sleep(max(0.0, min(wait, MAX_RETRY_AFTER)))
                    continue
                self.tracker.prices[response.model] = (provider.cost_per_input_token, provider.cost_per_output_token)
                cost = self.tracker.track(response.input_tokens, response.output_tokens, response.model)
                log.log("llm_call", thread=self.thread, provider_id=provider.id, llm_model=response.model,
                        input_tokens=response.input_tokens, output_tokens=response.output_tokens, cost=cost,
                        duration_ms=int((time.monotonic() - started) * 1000),
                        output_data={"content": response.content, "finish_reason": response.finish_reason,
                                     "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.raw_arguments}
                                                    for c in response.tool_calls]})
                return response
            errors.append(last)
        if not errors:
            errors.append(self.env._("the agent has no LLM provider"))
        raise LLMUnavailable(errors)

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
        self.thread.add_assistant_message(reply)
        self.env["agentic.ai.execution.log"].log("error", thread=self.thread, success=False, error_message=str(exc))
        return self._finish("error", reply, error=str(exc))

    def _finish(self, state: str, reply: str, error: str | None = None, confirmation: dict | None = None) -> AgentResult:
        self.thread._set_runtime_state(state=state, last_error=error or False)
        summary = self.tracker.get_summary()
        new_ids = self.thread.message_ids.filtered(lambda m: m.id >= self._first_message_id).ids
        return AgentResult(
            thread_id=self.thread.id, state=state, reply=reply, iterations=self.iterations,
            tool_calls=self.tool_call_count, input_tokens=summary["total_input_tokens"],
            output_tokens=summary["total_output_tokens"], cost=summary["total_cost"],
            error=error, confirmation=confirmation, message_ids=new_ids,
        )
