"""AgentRuntime (spec 000 §4.1, §4.2, §4.5): one turn loop.

Instantiated per request with an agent and a thread; reads the run's
settings once (``RunContext``) and the transcript once per turn
(``Transcript``); keeps no ORM state of its own between calls. A turn is
one loop (``_turn``, issue 25 point 1): what opened it (a message, an
answer to a confirmation) appends its rows, then each pass decides the
next step from the transcript and the open plan (make the plan, run a plan
step, or a ReAct step: call the model and run the calls it asked for),
until a step ends the turn by raising ``TurnEnd``, the one way out,
stored by ``_finish``. Plan-and-Execute and Hybrid are steps of that loop
(engine/turn/plan_steps.py), as are the confirmation's answers
(engine/turn/confirmation_steps.py). runtime → executor → tool → observer →
thread is one straight line; every step is written to the thread (the
transcript is the state) and to the execution log."""
from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import contextmanager

from odoo.exceptions import LockError
from odoo.http import request as http_request
from odoo.service.model import MAX_TRIES_ON_CONCURRENCY_FAILURE

from ..llm import TokenTracker
from .doors.event_relay import row_event_name
from .durable import durability, run_lease, step_commit, step_connection
from .durable.audit import AuditTrail
from .durable.wait_time import Waits
from .executor import ExecutionResult, Executor
from .guard import provider_rate
from .guard.confirmation import ConfirmationRequest
from .guard.provenance import Provenance, field_info_of
from .guard.rate_limits import COST_KEYS, WindowUsage
from .guard.rate_limits import check as check_rate_limits
from .memory_manager import MemoryManager
from .observer import Observer
from .text.clean_text import clean_text
from .turn.agent_result import AgentResult, TurnEnd
from .turn.confirmation_steps import ConfirmationSteps
from .turn.llm_calls import ContextOverflow, Interrupted, LLMCaller, LLMUnavailable, retry_delay
from .turn.plan_steps import OPEN_PLAN_STATES, PlanSteps, close_open_plans
from .turn.run_context import build_run_context
from .turn.transcript import Transcript
from .turn.turn_limits import MAX_TOOL_CALLS_PER_TURN, RepeatGuard, TurnLimitReached

_logger = logging.getLogger(__name__)

MAX_MESSAGE_CHARS = 20000          # longest user message accepted
SLOW_CONNECTION_WAIT = 1.0         # seconds of waiting for connections in a turn that are logged
LIMIT_REPLY = ("I have reached my processing limit of {n} steps for this request before finishing. "
               "What I did so far is above; tell me how to continue, or split the request into smaller ones.")


class AgentRuntime(ConfirmationSteps, PlanSteps):
    """Runs one user request on a thread (``agent``/``thread`` are records
    in the requesting user's environment).

    ``durable``: commit each finished step (engine/durable/durability.py); None
    means when the run owns its transaction, i.e. it is an HTTP request's
    own. ``emit(event, data)`` receives the run's events as they happen
    (spec §10.2: token, message, tool_call, tool_result,
    confirmation_request); with it, answers are streamed from providers
    that stream. ``should_stop()`` is asked at each step boundary (and
    between streamed chunks): True ends the turn ``interrupted``."""

    def __init__(self, agent, thread, durable: bool | None = None,
                 emit: Callable[[str, dict], None] | None = None, should_stop: Callable[[], bool] | None = None):
        self.env = thread.env
        self.thread = thread
        if durable is None:
            durable = bool(http_request) and http_request.env.cr is self.env.cr
        self.durable = durable and durability.can_commit(self.env.cr)
        self.emit = emit
        self._client_stop = should_stop or (lambda: False)
        self.stop_reason = ""
        self.context = build_run_context(agent, thread)
        self.audit = AuditTrail(thread)
        self.executor = Executor(self.context, thread, self.audit)
        self.observer = Observer()
        self.tracker = TokenTracker()
        self.llm = LLMCaller(self.context, self.audit, self.tracker, retry_delay(self.env), emit=emit,
                             should_stop=self._client_gone, waiting=self._waiting_on_model,
                             reserve=provider_rate.reserver(self.env.cr.dbname))
        self.connection_waits = Waits()  # the waits for a connection, after the model's answers
        self.lock_waits = Waits()  # the locks of the thread's row, each statement whole (retries included)
        # Worded now: it is set while the model streams, when the run has no database connection.
        self._gone_reason = self.env._(
            "the reply stopped being followed (Stop pressed, the page closed or the connection lost)")
        self.transcript: Transcript | None = None
        self.system_prompt = self.context.system_prompt  # what this turn's LLM calls are sent as the system message
        self.references: list[dict] = []  # knowledge excerpts given to this turn (_prepare_prompt)
        self.memory = MemoryManager(thread, self.context.enable_memory)
        self.planner = self._new_planner()  # engine/planner.py, used by Plan-and-Execute (turn/plan_steps.py)
        self.plan_wanted: tuple[str, str] | None = None  # (goal, why) when the next step is to make a plan
        self.plan = None  # the open agentic.ai.plan this turn runs, once made (or resumed)
        self.empty_answers = 0  # empty model answers of this turn: the first is asked again
        self.iterations = 0
        self.history_cap: int | None = None  # tokens of history, once a provider said the request was too long
        self.tool_call_count = 0
        self._step_rounds: dict[int, int] = {}  # plan step id → LLM rounds it took in this turn (plan_steps.py)
        self.repeats = RepeatGuard(self.context.tools)  # identical calls of this turn (issue 12, BR-10)
        self._unsealed: set[int] = set()  # companies whose log rows this run committed unsealed
        self.lease: str | None = None  # this run's token on its thread while it holds it (_running)
        # Read with the step's row lock (_lock_thread_row): whether a stop was asked (None once looked at), and the
        # transaction's id, for its commit (None once committed or rolled back).
        self._stop_seen: bool | None = None
        self._xid: str | None = None
        # The daily costs of the rate limits at this turn's first LLM call, and the run's cost then (_rate_limited).
        self._daily_cost: tuple[dict, float] | None = None

    # ------------------------------------------------------------ entry points
    def run_turn(self, user_message: str) -> AgentResult:
        """Handle a new user message according to ``execution_mode``.

        A confirmation still waiting is closed as cancelled first (its call
        is not run). Raises UserError for an empty or too long message and
        a busy or queued conversation (the queue processor makes its thread
        idle before it runs the message), LockError while another run holds
        it (LockError for a busy one too: the kind, not the words, tells a
        door its status). The agent's ``execution_mode`` (Hybrid: the message's
        complexity) decides between ReAct and Plan-and-Execute; the thread
        keeps which and why (spec §4.3–4.4)."""
        user_message = self.thread._check_message(user_message)
        with self._running():
            if self.thread.state in ("queued", "executing"):
                raise LockError(self.env._("This conversation is busy: %s.", dict(
                    self.thread._fields["state"]._description_selection(self.env))[self.thread.state]))
            return self._guarded(self._turn, self._open_with_message, user_message)

    def _open_with_message(self, user_message: str) -> None:
        """The opening of a turn sent a message: a confirmation still
        waiting is closed, the message is appended, the prompt prepared and
        the mode chosen (Plan-and-Execute: the plan is the loop's next step)."""
        self.transcript = self._load_transcript()
        if self.thread.state == "waiting_confirmation":
            self._close_pending(self.env._("the user sent a new message instead of answering"))
            close_open_plans(self.thread, "cancelled", self.env._("the user sent a new message instead of answering"))
        if not self.transcript.messages and self.thread.name == self.env._("New conversation"):
            self.thread.name = " ".join(user_message.split())[:60]
        self.transcript.add_user(user_message.strip())
        self._prepare_prompt(user_message)
        mode, reason = self._choose_mode(user_message)
        self.thread._set_runtime_state(state="executing", last_error=False, mode_used=mode, mode_reason=reason)
        durability.clear_stop(self.env.cr, self.thread.id)
        self._checkpoint()
        if mode == "plan_and_execute":
            self.plan_wanted = (user_message.strip(), reason)

    # ------------------------------------------------------------ the loop
    def _turn(self, opening: Callable, *args) -> AgentResult:
        """The one turn loop: ``opening(*args)`` appends what opened the turn,
        then each pass runs the next step (``_next_step``) until one ends
        the turn. Every end comes out here, as a ``TurnEnd`` or as what a
        step met (a turn bound, no provider answering, a stop while the
        model answered), and is stored by ``_finish``."""
        try:
            opening(*args)
            while True:
                self._next_step()()
        except (TurnEnd, TurnLimitReached, LLMUnavailable, Interrupted) as exc:
            return self._finish(self._end_of(exc))

    def _next_step(self) -> Callable[[], None]:
        """The next step, from the transcript and the open plan: make the
        plan the mode asked for, run the open plan's next step, or a ReAct
        step (the model, then the calls it asked for)."""
        if self.plan_wanted:
            return self._make_plan
        if self.plan:
            return self._plan_step
        return self._react_step

    def _load_transcript(self) -> Transcript:
        """The thread's transcript, its rows fed to this run's provenance
        (engine/guard/provenance.py): the agent's configuration counts as the
        user's words."""
        provenance = Provenance(tools=self.context.tools, field_info=field_info_of(self.executor.env))
        provenance.see_user_words(self.context.system_prompt, numbers=False)
        return Transcript(self.thread, on_row=self._row_event, provenance=provenance)

    def _prepare_prompt(self, query: str) -> None:
        """This turn's system prompt: the agent's, then what is remembered
        about the user and the knowledge found for ``query`` (spec §4.2
        step 2, §4.9), both as data. Knowledge excerpts are text written by
        people: the conversation counts them as record text (changes wait
        for confirmation), and the answer keeps them as its ``references``."""
        prompt = self.memory.inject_memories(self.context.system_prompt, query)
        self.system_prompt, self.references = self.memory.inject_rag_context(
            prompt, query, self.context.knowledge_source_ids)
        labels = [f"the knowledge source {source}" for source in dict.fromkeys(
            ref["source"] for ref in self.references)]
        provenance = self.transcript.provenance
        for memory in self.memory.recalled:  # issue 23 point 3: memories are data unless the user wrote them
            if memory._counts_as_words_of(self.thread.user_id):
                provenance.see_user_words(memory.content)
            else:
                labels.append(f"the memory {memory.key}")
        for label in labels:
            provenance.see_read(label)
            if label not in self.transcript.untrusted:
                self.transcript.untrusted.append(label)
        if labels:  # consolidation never learns from a turn given read text (engine/memory_manager.py)
            self.thread._mark_turn_given_read_text()

    def _answer(self, text: str, **usage):
        """Add the turn's answer (an assistant row) with the knowledge
        references it was given."""
        return self.transcript.add_assistant(text, references=self.references or False, **usage)

    # ------------------------------------------------------------------ ReAct
    def _react_step(self) -> None:
        """One ReAct step (spec §4.2): one LLM call and the calls it asked
        for. Ends the turn on an answer, a pause for confirmation, a stop,
        the run's budget or rate limits, or ``max_iterations`` spent; an
        empty answer is asked again once; a context overflow once halves
        the history and the same step is taken again."""
        if self.iterations >= self.context.max_iterations:
            reply = LIMIT_REPLY.format(n=self.context.max_iterations)
            self.transcript.add_assistant(reply)
            raise TurnEnd("completed", reply)
        if self._should_stop():
            raise self._interrupted()
        self._limit_before_llm()
        self.iterations += 1
        with self.audit.step():  # the LLM call and the tool calls it asks for
            try:
                response, calls = self.llm.answer(self._llm_messages(), self.context.llm_schemas,
                                                  self.transcript.normalize_calls)
            except ContextOverflow:
                if not self._trim_history():
                    raise
                self.iterations -= 1  # once: the same step with half the history (issue 24 point 2)
                return
            if not calls:
                if self._stop_asked():  # asked while the model answered
                    self.stop_reason = self.stop_reason or self.env._("the user stopped it")
                    raise self._interrupted(response)
                content = clean_text(response.content).strip()
                if not content:
                    self.empty_answers += 1
                    if self.empty_answers < 2:
                        return
                    content = self.env._("The model returned an empty response. Please rephrase or try again.")
                elif response.finish_reason == "length":
                    content += "\n\n" + self.env._("(The answer was cut off by the model's output limit.)")
                self._answer(content, input_tokens=response.input_tokens, output_tokens=response.output_tokens)
                raise TurnEnd("completed", content)
            self.transcript.add_tool_calls(calls, content=response.content or "")
            self._keep_answer(calls)
            paused = self._run_calls(calls, response.finish_reason)
            if paused:
                raise TurnEnd("waiting_confirmation", paused.summary(), confirmation=paused)

    def _llm_messages(self, system_prompt: str | None = None) -> list[dict]:
        """The messages of the next LLM call: the system prompt (the turn's,
        or a planner call's) and the history, trimmed to the run's context
        budget (engine/turn/history.py), or to ``history_cap`` once a provider
        said the request was too long."""
        budget = self.context.history_budget
        if self.history_cap is not None:
            budget = min(budget, self.history_cap)
        return self.transcript.for_llm(self.system_prompt if system_prompt is None else system_prompt,
                                       budget, self.context.count_tokens)

    def _trim_history(self) -> bool:
        """After a context overflow: cap the history at half of what was
        just sent, once per turn; False when it was capped already (or
        nothing is left to cut), then the turn ends."""
        if self.history_cap is not None:
            return False
        count = self.context.count_tokens
        sent = sum(count(message.get("content") or "") for message in self._llm_messages())
        self.history_cap = sent // 2
        return True

    def _reads_only(self, calls) -> bool:
        """Whether running ``calls`` can change nothing: each is the addon's
        own read-only tool (a registered function, ``ToolSpec.read_only``) or
        is not run at all (an unknown tool, arguments that are not JSON).
        Code the addon does not own (a server action, Python code) may write
        whatever its hints say."""
        for call in calls:
            spec = self.context.tools.get(call.name)
            if spec is not None and not call.parse_error and not (spec.read_only and spec.function is not None):
                return False
        return True

    def _keep_answer(self, calls) -> None:
        """Commit the model's answer before its ``calls`` run: a death from
        there leaves calls the repair can close (``[OUTCOME UNKNOWN]``),
        never a change without its call. Not when they are reads only
        (``_reads_only``): such a step changes nothing outside its own rows,
        so the answer is committed with its first call's result (a row
        lock and a commit fewer a step, issue 26 point 6). A death in
        between loses the answer with that read, as a death while the model
        answered would."""
        if not (self.durable and self._reads_only(calls)):
            self._checkpoint()

    def _run_calls(self, calls, finish_reason: str) -> ConfirmationRequest | None:
        """Execute the calls of one answer in order and store each
        observation. Returns the confirmation request of the call that needs
        the user's approval (the calls after it are not run). Every call
        gets exactly one result, also when the run is stopped between
        calls. The 3rd and 4th identical call of the turn are not run; the
        5th raises TurnLimitReached, after every call has its result
        (engine/turn/turn_limits.py, BR-10)."""
        rejected = self._rejected_keys()  # rejections happen between answers, never within one
        # Reads only: the answer is not committed yet (``_keep_answer``) and shares the first call's transaction, so
        # a conflict there (none is expected from a read) is the call's error, never a retry that would roll the
        # answer back with it. Each result is committed, and the next row lock reads whether a stop was asked.
        answer_open = self.durable and self._reads_only(calls)
        for index, call in enumerate(calls):
            if index >= MAX_TOOL_CALLS_PER_TURN:
                self.transcript.add_tool_result(call.id, call.name, f"[NOT RUN] at most {MAX_TOOL_CALLS_PER_TURN} "
                                                "tool calls are run from one answer; call again for the rest.",
                                                success=False)
                continue
            if self._should_stop():
                self.transcript.add_tool_result(call.id, call.name, f"[NOT RUN] the request was stopped "
                                                f"({self.stop_reason}) before {call.name} ran.", success=False,
                                                status="cancelled")
                continue
            refused = self.repeats.see(call)
            if refused:
                self.transcript.add_tool_result(call.id, call.name, refused, success=False)
                self.audit.record("tool_execution", tool_name=call.name, tool_call_id=call.id,
                                  input_data=call.arguments, success=False, error_message=refused, level="warning")
                if self.repeats.stops(call):
                    for later in calls[index + 1:]:
                        self.transcript.add_tool_result(later.id, later.name, f"[NOT RUN] the request was stopped "
                                                        f"before {later.name} ran.", success=False, status="cancelled")
                    raise self.repeats.stop(call)
                continue
            self.tool_call_count += 1
            result = self._run_call(call, finish_reason, rejected, retry_conflicts=not answer_open)
            if result.confirmation_needed:
                request = self._pause(call.id, call.name, result)
                for later in calls[index + 1:]:
                    self.transcript.add_tool_result(
                        later.id, later.name, f"[NOT RUN] {later.name} waits until the user answers the "
                        "confirmation of the previous call; call it again afterwards if still needed.", success=False)
                return request
            self.transcript.add_tool_result(call.id, call.name, self.observer.observe(call.name, result),
                                            success=result.success, data=result.data, untrusted=result.untrusted)
            self._checkpoint()
            answer_open = False
        return None

    def _run_call(self, call, finish_reason: str, rejected, retry_conflicts: bool = True) -> ExecutionResult:
        """Execute one call of the model's answer, a conflict retried
        (``_retrying_conflicts``) when ``retry_conflicts``, else the call's error."""
        def execute(raise_conflicts):
            return self.executor.execute_call(
                call, finish_reason, untrusted=tuple(self.transcript.untrusted), rejected=rejected,
                provenance=self.transcript.provenance, raise_conflicts=raise_conflicts and retry_conflicts)
        return self._retrying_conflicts(call.name, execute)

    def _retrying_conflicts(self, tool_name: str, execute: Callable[[bool], ExecutionResult]) -> ExecutionResult:
        """``execute(raise_conflicts)``: one call through the executor. In a
        durable run, a concurrency failure inside the tool
        (``step_commit.StepConflict``: a serialization failure, a deadlock,
        a lock refused) rolls the step back and runs the call again on a
        fresh snapshot, the thread's row locked again first, with Odoo's
        retry rules (``step_commit.retry_conflicts``); the last try's
        failure becomes the call's result, as any error. The step must hold
        only this call: what came before it (the model's answer, the
        previous call, the user's approval) was committed (issue 26 point
        3)."""
        def attempt(tryno):
            if tryno > 1:
                self._lock_thread_row(retry=True)  # the step's transaction begins again, as every step's
            return execute(self.durable and tryno < MAX_TRIES_ON_CONCURRENCY_FAILURE)

        def undo(_conflict):
            self.env.cr.rollback()
            self.env.invalidate_all(flush=False)  # what the rolled-back try read or wrote is not kept
        return step_commit.retry_conflicts(attempt, f"in {tool_name} (conversation {self.thread.id})", undo,
                                           errors=step_commit.StepConflict)

    # -------------------------------------------------------------- LLM calls
    def _limit_before_llm(self) -> None:
        """End the turn (TurnEnd), before an LLM call, when the run's budget
        (tokens, cost) is spent or a rate limit of Settings is reached."""
        within, why = self.tracker.check_budget(self.context.max_cost_per_run, self.context.max_tokens_per_run)
        if not within:
            reply = self.env._("I stopped before finishing: this request reached its %s. What I did so far is "
                               "above.", why)
            self.transcript.add_assistant(reply)
            self.audit.record("error", success=False, error_message=why)
            raise TurnEnd("completed", reply)
        self._rate_limited()

    def _rate_limited(self) -> None:
        """End the turn (TurnEnd ``error``), before any request is sent, when
        a rate limit of Settings is reached (spec §7.5): the user reads which
        limit and when it resets, and an ``error`` row records it. Windows end
        at the transaction's time, the time the log rows are stamped with.

        The user's requests per minute and hour are counted before every call
        (a short scan: at most the limit's rows). The daily costs of the agent
        and the company are summed once per turn, at its first call, and this
        run's own spending is added to them afterwards: summing a busy day's
        rows before every call would cost more with each call of the day, and
        what runs beside this one spend counts from their next turn."""
        limits = self.context.rate_limits
        if not limits.active:
            return
        now = self.env.cr.now()
        daily = self._daily_cost
        owner = self.audit.owner  # read once (a commit empties Odoo's cache: the thread is not read again)
        # Only the limits that are set; the requests counted up to their limit (a scan of at most that many rows).
        caps = limits.request_caps
        usage = self.env["agentic.ai.execution.log"]._rate_limit_usage(
            owner["user_id"], self.context.agent_id, owner["company_id"], now, caps=caps,
            keys=(*caps, *limits.cost_keys) if daily is None else tuple(caps))
        if daily is None:
            self._daily_cost = daily = ({key: usage.get(key, WindowUsage()) for key in COST_KEYS},
                                        self.tracker.total_cost)
        else:
            spent = self.tracker.total_cost - daily[1]
            usage.update({key: WindowUsage(used.amount + spent, used.oldest) for key, used in daily[0].items()})
        hit = check_rate_limits(limits, usage, now)
        if not hit:
            return
        reply = hit.message(now, self.thread.user_id.tz)
        self.transcript.add_assistant(reply)
        self.audit.record("error", success=False, error_message=reply,
                          input_data={"rate_limit": hit.key, "limit": hit.limit, "used": hit.used,
                                      # requests are counted up to their limit: "used" is then "at least"
                                      "counted_up_to_the_limit": hit.key in caps})
        raise TurnEnd("error", reply, error=reply)

    # ---------------------------------------------------- durability, stops
    @contextmanager
    def _running(self):
        """Hold the thread for one run while the run lasts (one run per
        thread), after repairing what a dead run left: the run's lease
        (engine/durable/run_lease.py) is taken with the thread's row locked
        and committed with the run's first step; the run's last commit
        clears it. No database session is held for it."""
        cr, thread_id = self.env.cr, self.thread.id
        # A live run first, without waiting: its step holds the thread's row, and waiting for the row would make
        # this request run after it instead of being refused at once (issue 23 point 7).
        if durability.run_is_alive(cr, thread_id):
            raise LockError(self.env._("This conversation is already being processed."))
        # Then the row: a run that changed the thread since this transaction began makes this raise a
        # serialization failure, so the request is retried on fresh data (a second approval sees it was answered,
        # a run that started meanwhile is seen alive).
        self._lock_thread_row()
        if durability.repair_dead_run(self.thread):
            self._checkpoint(final=True)
        self.thread.invalidate_recordset()
        self.lease = run_lease.take(cr, thread_id)
        try:
            yield
        finally:
            if self.lease:  # the run ended without its last commit (an error escaped it): let the thread go
                self._let_go()
            step_connection.release_gate(cr)

    def _let_go(self) -> None:
        """Clear this run's lease outside its last commit: in the caller's
        transaction, or (durable) in a transaction of its own after the
        failed one is rolled back."""
        token, self.lease = self.lease, None
        cr = self.env.cr
        if not self.durable:
            run_lease.release(cr, self.thread.id, token)
            return
        try:
            cr.rollback()
            run_lease.release(cr, self.thread.id, token)
            step_commit.commit_step(cr)
            return
        except Exception:
            _logger.warning("Conversation %s: could not clear the lease of a failed run on its cursor; trying a "
                            "cursor of its own", self.thread.id, exc_info=True)
        try:  # its own connection may be the thing that failed (away, lost): the thread must not stay held
            with step_connection.run_cursor(cr.dbname) as own:
                run_lease.release(own, self.thread.id, token)
        except Exception:
            _logger.exception("Conversation %s: could not clear the lease of a run that failed; it is judged dead "
                              "once its process's lease runs out", self.thread.id)

    def _guarded(self, step, *args) -> AgentResult:
        """Run ``step``; in a durable run, an unexpected error (a bug, a
        lost database connection) rolls back only the step in flight, is
        logged with its traceback, and ends the turn ``error`` with every
        call that has no result given one, instead of escaping to a caller
        that would retry the whole request."""
        if not self.durable:
            return step(*args)
        try:
            return step(*args)
        except run_lease.RunTakenOver as exc:  # its lease ran out and the thread was repaired: write nothing more
            _logger.warning("Conversation %s: %s", self.thread.id, exc)
            self.env.cr.rollback()
            self.env.invalidate_all()
            self.lease = None
            return AgentResult(thread_id=self.thread.id, state=self.thread.state, reply=None, error=str(exc),
                               iterations=self.iterations, tool_calls=self.tool_call_count)
        except Exception as exc:
            _logger.exception("Conversation %s: the run failed", self.thread.id)
            self.env.cr.rollback()
            self.env.invalidate_all()
            reply = durability.close_failed_run(self.thread, f"{type(exc).__name__}: {exc}")
            self._checkpoint(final=True)
            return AgentResult(thread_id=self.thread.id, state="error", reply=reply, error=str(exc)[:2000],
                               iterations=self.iterations, tool_calls=self.tool_call_count)

    @contextmanager
    def _waiting_on_model(self):
        """The wait for the model's answer (engine/turn/llm_calls.py): a
        durable run on a connection of its own commits its step and gives
        the connection back to the pool until the answer came, then begins
        its next step holding the thread's row (engine/durable/step_connection.py);
        the log rows of the wait are written once it has one again."""
        cr = self.env.cr
        with self.audit.step():
            if not (self.durable and step_connection.can_give_back(cr)):
                yield
                return
            self._checkpoint(lock_next=False)
            try:
                with step_connection.given_back(cr, self.connection_waits):
                    yield
            finally:  # also when the wait ended in an error or a stop: the turn's end is a step too
                if not step_connection.is_away(cr):
                    self._lock_thread_row(retry=True)

    def _checkpoint(self, final: bool = False, lock_next: bool = True) -> None:
        """Commit what the run did so far, log rows included, when durable.
        The run's log rows are chained (engine/durable/log_chain.py) after its
        ``final`` commit only: one seal per turn, not one per step; rows a
        dead run left unsealed are chained by the company's next seal. The
        next step's transaction then begins holding the thread's row, unless
        ``lock_next`` is False (the run gives its connection back first)."""
        if self.durable:
            self.audit.flush()
            logs = self.env["agentic.ai.execution.log"]
            self._unsealed |= logs._defer_seal()
            if final and self._unsealed:
                logs._seal_after_commit(self._unsealed)
                self._unsealed = set()
            if final and self.lease:
                run_lease.release(self.env.cr, self.thread.id, self.lease)
            if final:  # how the turn ended, as the user reads it: kept as the server keeps any commit
                step_commit.commit_durably(self.env.cr)
            xid, self._xid = self._xid, None
            step_commit.commit_step(self.env.cr, xid)  # a post-commit hook that fails cannot undo the step
            self._stop_seen = None
            if final:
                self.lease = None
            elif lock_next:  # the next step's transaction starts holding the thread's row (see _running)
                self._lock_thread_row(retry=True)
        elif final and self.lease:
            run_lease.release(self.env.cr, self.thread.id, self.lease)
            self.lease = None

    def _lock_thread_row(self, retry: bool = False) -> None:
        """Lock the thread's row until the next commit, so that a concurrent
        edit of the thread (a rename, the memory consolidation) waits for the
        step instead of making the run's next write to the thread fail under
        REPEATABLE READ. At the run's opening (``retry`` False) a refusal is
        raised: the request is retried whole, as Odoo retries a request;
        first thing after a step's commit (``retry`` True) it is retried on a
        fresh snapshot (engine/durable/step_commit.py). Raises RunTakenOver
        when the row no longer carries this run's lease (once taken). The
        step's transaction also has PostgreSQL check its client every few
        seconds (``run_lease.client_check``). The same statement reads
        whether a stop was asked (``_stop_asked``) and the transaction's id
        and time (``step_commit.TRANSACTION_COLUMNS``): a step's bookkeeping
        costs one statement, not four. In a durable run, after the opening,
        it also makes the step's commit asynchronous
        (``step_commit.ASYNC_COMMIT``): a step that keeps a business change
        (the executor), and the run's last commit, wait for the disk again
        (``step_commit.commit_durably``); the opening's transaction, which
        may hold what its caller wrote before the run, commits as the server
        is configured."""
        cr = self.env.cr
        with self.lock_waits.timing():
            _id, token, _check, _async, stop, xid, now = step_commit.lock_row(
                cr, self.thread._table, self.thread.id, retry=retry,
                columns=("id", "run_token", run_lease.client_check(cr),
                         # Never at the opening (``retry`` False): that transaction may hold its caller's own writes.
                         step_commit.ASYNC_COMMIT if retry and self.durable and step_commit.async_steps() else "NULL",
                         durability.STOP_REQUESTED_COLUMN,
                         *step_commit.TRANSACTION_COLUMNS))
        self._stop_seen = bool(stop)
        self._xid = step_commit.transaction_began(cr, xid, now, self._forget_transaction)
        if self.lease and token != self.lease:
            raise run_lease.RunTakenOver(self.env._(
                "This request was stopped: its server stopped answering for longer than the run's lease, and the "
                "conversation was closed by another request."))

    def _forget_transaction(self) -> None:
        """The transaction was rolled back: what its row lock read is gone with it."""
        self._xid = self._stop_seen = None

    def _stop_asked(self) -> bool:
        """Whether the user asked to stop (``durability.request_stop``), as the
        step's row lock read it right after this run's last commit, or, when
        that was looked at already, read now."""
        seen, self._stop_seen = self._stop_seen, None
        return seen if seen is not None else durability.stop_requested(self.env.cr, self.thread.id)

    def _client_gone(self) -> bool:
        """Whether the client that listens to the run went away (asked
        between streamed chunks: no query). Sets ``stop_reason``."""
        if self._client_stop():
            self.stop_reason = self.stop_reason or self._gone_reason
            return True
        return False

    def _should_stop(self) -> bool:
        """Whether to stop at this step boundary: the client went away, or
        the user asked for it (``durability.request_stop`` by another
        request, seen after this run's last commit). Sets ``stop_reason``."""
        if self._client_gone():
            return True
        if self._stop_asked():
            self.stop_reason = self.stop_reason or self.env._("the user stopped it")
            return True
        return False

    def _interrupted(self, partial=None) -> TurnEnd:
        """The end of a turn stopped (``interrupted``): the partial answer
        (an LLMResponse, its usage already logged) is kept with a note."""
        note = self.env._("(Interrupted: %s.)", self.stop_reason or self.env._("stopped"))
        text = clean_text(partial.content).strip() if partial is not None else ""
        reply = f"{text}\n\n{note}" if text else note
        usage = {"input_tokens": partial.input_tokens, "output_tokens": partial.output_tokens} if partial else {}
        self.transcript.add_assistant(reply, **usage)
        return TurnEnd("interrupted", reply)

    def _row_event(self, row) -> None:
        """Relay a transcript row the run added as its §10.2 event."""
        if not self.emit:
            return
        data = row._payloads()[0]  # the one row shape (issue 25 point 3)
        if row.role == "confirmation_request":  # with the question as the thread gives it (get_pending_confirmation)
            data = {**data, "confirmation": self.thread.get_pending_confirmation() or None}
        self.emit(row_event_name(row.role), data)

    # ------------------------------------------------------------------ ends
    def _end_of(self, exc: Exception) -> TurnEnd:
        """The TurnEnd of what ended the loop: a step's own, or what a step
        met, its last row stored here: a turn bound (``completed``, with the
        open plan's progress), no provider answering (``error``), a stop
        while the model answered (``interrupted``)."""
        if isinstance(exc, TurnEnd):
            return exc
        if isinstance(exc, Interrupted):
            return self._interrupted(exc.response)
        if isinstance(exc, LLMUnavailable):
            return self._failed(exc)
        reply = exc.reply  # TurnLimitReached: repeated calls, LLM calls or time of the turn (turn_limits.py)
        if self.plan and self.plan.state in OPEN_PLAN_STATES and self.plan.step_ids:
            reply = f"{reply}\n\n{self.plan.get_progress_summary()}"
        self.transcript.add_assistant(reply)
        self.audit.record("error", success=False, error_message=exc.reason)
        return TurnEnd("completed", reply)

    def _failed(self, exc: LLMUnavailable) -> TurnEnd:
        """The end (``error``) of a turn the model failed, named for what it
        was (issue 24 point 2): a conversation too long for the model, a
        request the provider refused (its own message), or a service that
        did not answer after its retries and the fallback. The reply is the
        agent's, not the model's: it is never sent back to the model."""
        errors = " ".join(f"[{e}]" for e in exc.errors)
        if isinstance(exc, ContextOverflow):
            trimmed = self.env._(" even with the older messages left out,") if self.history_cap is not None else ""
            reply = self.env._(
                "This conversation is too long for the AI model:%(trimmed)s the request (with the tool definitions) "
                "does not fit in the model's context window. Start a new conversation, or use a model with a larger "
                "context window (set it on the LLM provider). %(errors)s", trimmed=trimmed, errors=errors)
        elif exc.rate_limited:
            reply = self.env._(
                "The AI service is at the limit of requests a minute set on its provider (Rate Limit (RPM), shared by "
                "every user), so your request was not completed: try again once a slot frees (below). %(errors)s",
                errors=errors)
        elif exc.refused:
            reply = self.env._("The AI service refused the request, so it was not completed. %(errors)s",
                               errors=errors)
        else:
            reply = self.env._(
                "The AI service did not answer (it was tried again, then the fallback provider if there is one), so "
                "your request was not completed. %(errors)s", errors=errors)
        _logger.warning("Conversation %s: the turn failed on the model: %s", self.thread.id, clean_text(exc, 2000))
        self.transcript.add_assistant(reply, failure=True)
        self.audit.record("error", success=False, error_message=str(exc))
        return TurnEnd("error", reply, error=str(exc))

    def _finish(self, end: TurnEnd) -> AgentResult:
        """Store how the turn ended (``end``) and return the run's result:
        a plan still open ends with its turn (never left planning) unless
        the turn waits for a confirmation; a completed turn leaves its
        memories to be consolidated; the final commit seals the log."""
        if end.state != "waiting_confirmation":
            close_open_plans(self.thread, "cancelled" if end.state == "interrupted" else "failed",
                             end.error or end.reply)
        self.thread._set_runtime_state(state=end.state, last_error=end.error or False)
        if end.state == "completed":
            self.memory.mark_pending()
        durability.clear_stop(self.env.cr, self.thread.id)
        self._checkpoint(final=True)
        waited = self.connection_waits
        if waited.seconds >= SLOW_CONNECTION_WAIT:  # the gate or the pool made the run wait (README "A whole company")
            _logger.info("Conversation %s: the run waited %.1f s in all for database connections after %s answers "
                         "(%.1f s of it with this server's core busy with other work, %.1f s waiting for a core)",
                         self.thread.id, waited.seconds, waited.count, waited.core_busy, waited.core_queued)
        summary = self.tracker.get_summary()
        return AgentResult(
            thread_id=self.thread.id, state=end.state, reply=end.reply, iterations=self.iterations,
            tool_calls=self.tool_call_count, input_tokens=summary["total_input_tokens"],
            output_tokens=summary["total_output_tokens"], cost=summary["total_cost"],
            error=end.error, confirmation=end.confirmation,
            message_ids=list(self.transcript.new_ids) if self.transcript else [],
            wait_seconds=waited.seconds + self.lock_waits.seconds,
            wait_core_busy_seconds=waited.core_busy + self.lock_waits.core_busy,
            wait_core_queued_seconds=waited.core_queued + self.lock_waits.core_queued,
        )
