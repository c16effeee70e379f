"""Plan-and-Execute and Hybrid as steps of the turn loop (spec 000 §4.3,
§4.4; issue 12 points 2 and 3; issue 25 point 1). Mixed into
``AgentRuntime``, whose loop (``_turn``) takes ``_make_plan`` when the mode
asks for a plan and ``_plan_step`` while one is open; whose state
(``transcript``, ``llm``, ``audit``, ``thread``, ``plan``) and steps
(``_run_calls``, ``_checkpoint``) they use. A step ends the turn by raising
``TurnEnd``.

A plan is written by one LLM call without tools and shown (``plan_update``)
before anything runs. Each step is then done by one LLM call that sees the
transcript and the plan's progress and calls the step's tool(s), through
the same executor, safety guard and confirmation as ReAct; its result is
committed with the step's state. A failed step asks for a new plan of what
remains, at most ``max_replanning`` times; a finished plan is summed up by
one last LLM call. The plan's records are written by the engine (sudo),
the conversation's owner reads them."""
from __future__ import annotations

import json

from ..guard.confirmation import ConfirmationRequest, call_key
from ..planner import COMPLEX, ParsedPlan, Planner, assess_complexity
from ..text.clean_text import clean_text
from .agent_result import TurnEnd
from .llm_calls import ContextOverflow, LLMUnavailable
from .turn_limits import MAX_TOOL_CALLS_PER_TURN

OPEN_PLAN_STATES = ("planning", "executing", "replanning")
MAX_STEP_TEXT = 500      # characters of a step's result or error kept on the step
MAX_STEP_ROUNDS = 4      # LLM rounds one step may take (a step may need calls in turn)


def close_open_plans(thread, state: str, why: str) -> None:
    """End ``thread``'s plans still open (planning, executing, replanning)
    as ``state`` (failed or cancelled) with ``why``; a step left running
    becomes failed. Used when a turn ends any other way than by its plan."""
    plans = thread.sudo().plan_ids.filtered(lambda p: p.state in OPEN_PLAN_STATES)
    for plan in plans:
        plan.step_ids.filtered(lambda s: s.state == "running").write({"state": "failed", "error": why[:MAX_STEP_TEXT]})
        plan._set_state(state, result=why)


class PlanSteps:
    """Plan-and-Execute entry points and helpers of ``AgentRuntime``."""

    # ------------------------------------------------------------- modes
    def _choose_mode(self, user_message: str) -> tuple[str, str]:
        """``(mode, reason)``: ``react`` or ``plan_and_execute`` for this
        message, and why, as the thread shows it (spec §4.4)."""
        mode = self.context.execution_mode
        if mode == "react":
            return "react", "ReAct: the agent's mode"
        if mode == "plan_and_execute":
            return "plan_and_execute", "Plan and Execute: the agent's mode"
        complexity = assess_complexity(user_message)
        return ("plan_and_execute" if complexity.label == COMPLEX else "react"), f"Hybrid: {complexity.reason}"

    def _make_plan(self) -> None:
        """The loop's planning step: plan the goal (the user's message), show
        the plan and make it the open plan (spec §4.3). The planner giving
        no plan (prose, ``[]``) leaves the turn to ReAct at once; a cut plan,
        or one longer than the agent allows, ends the turn with nothing run."""
        goal, reason = self.plan_wanted
        self.plan_wanted = None
        plan = self.env["agentic.ai.plan"].sudo().create({
            "thread_id": self.thread.id, "goal": goal, "mode_reason": reason,
            "max_replanning": self.context.max_replanning})
        self.plan = plan
        self._checkpoint()
        parsed = None
        for response, parsed in self.planner.generate_plan(self.system_prompt):
            # No plan is an expected answer (the request needed none): a warning; a cut plan is an error.
            self.audit.record("plan_generated", success=bool(parsed.steps), llm_model=response.model,
                              level="info" if parsed.steps else "error" if parsed.cut else "warning",
                              input_data={"goal": plan.goal},
                              output_data={"steps": list(parsed.steps), "finish_reason": response.finish_reason},
                              error_message=parsed.problem or False)
        if parsed.cut:
            raise self._end_plan(plan, "failed", self.env._(
                "The planner's answer was cut off twice by the model's output limit, so nothing was run. Ask for "
                "fewer things at once, or raise the provider's maximum output tokens."))
        if not parsed.steps:  # the empty plan is not kept: the thread says what happened, the log keeps the answer
            plan.unlink()
            self.plan = None
            self.thread._set_runtime_state(mode_used="react", mode_reason=self.env._(
                "%(reason)s; the planner gave no plan, so ReAct", reason=reason))
            self._checkpoint()
            return
        if len(parsed.steps) > self.context.max_plan_steps:
            raise self._end_plan(plan, "failed", self.env._(
                "The plan for this request has %(n)s steps, more than this agent's limit of %(max)s, so nothing was "
                "run. Split the request, or raise Max Plan Steps on the agent.",
                n=len(parsed.steps), max=self.context.max_plan_steps))
        plan._add_steps(list(parsed.steps))
        plan._set_state("executing")
        self._plan_event(plan)
        self._checkpoint()

    # --------------------------------------------------------- execution
    def _plan_step(self) -> None:
        """The loop's step while a plan is open: its current step (one round
        of it, ``_do_step``), a new plan of what remains when that step
        failed, or the answer once no step is left."""
        plan = self.plan
        if self._should_stop():
            raise self._interrupted()
        step = plan.get_current_step()
        if not step:
            raise self._finish_plan(plan)
        self._do_step(plan, step)
        if step.state == "failed":
            self._replan(plan, step)

    def _do_step(self, plan, step) -> None:
        """One round of refine_step (spec §4.8) for ``step``: one LLM call
        that sees the results so far decides the exact tool(s) and
        arguments, and they run. The step is completed when its calls
        succeeded and the planner's tool for it ran (or it had none, or
        ``MAX_STEP_ROUNDS`` rounds passed), or the model answered in text;
        failed when a call failed; else it stays running for another round
        (a step may need two calls in turn: confirm, then receive). Ends
        the turn (TurnEnd) when a call waits for the user's confirmation."""
        steps = plan.step_ids.sorted("sequence")
        if step.state == "pending":
            step.write({"state": "running"})
            self._step_done(plan)
        self._step_rounds[step.id] = self._step_rounds.get(step.id, 0) + 1
        self.iterations += 1
        with self.audit.step():
            response, calls = self.planner.refine_step(
                self.system_prompt, plan.goal, plan.get_progress_summary(False), list(steps).index(step) + 1,
                len(steps), step.description, step.tool or "")
            if not calls:
                text = clean_text(response.content).strip()
                step.write({"state": "completed", "result": text[:MAX_STEP_TEXT]} if text else
                           {"state": "failed", "error": "the model neither called a tool nor answered for this step"})
                self._step_done(plan)
                return
            done = self._done_call_keys(plan)  # once per answer, not once per call
            if all(call_key(call.name, call.arguments) in done for call in calls):
                step.write({"state": "skipped", "result": "already done by an earlier step of this plan"}
                           if not step.tool_call_id else {"state": "completed"})
                self._step_done(plan)
                return
            self.transcript.add_tool_calls(calls, content=response.content or "")
            step.write({"tool_call_id": " ".join(filter(None, [step.tool_call_id, *(c.id for c in calls)])),
                        "tool_arguments": json.dumps(calls[-1].arguments, default=str),
                        "tool": step.tool or calls[-1].name})
            self._keep_answer(calls)
            paused = self._run_calls(calls, response.finish_reason)
        if paused:
            self._plan_event(plan)
            raise TurnEnd("waiting_confirmation", paused.summary(), confirmation=paused)
        # Calls past the per-answer cap were refused "call again for the rest": deferred, not failed.
        self._settle_step(step, [call.id for call in calls[:MAX_TOOL_CALLS_PER_TURN]],
                          deferred=len(calls) > MAX_TOOL_CALLS_PER_TURN)

    def _settle_step(self, step, call_ids: list[str], deferred: bool = False) -> None:
        """After ``call_ids`` of the running ``step`` ran: failed with the
        first failure's text, completed when the step's tool ran (see
        ``_do_step``), else left running; ``deferred``: calls of the same
        answer were left for later, so the step stays running for another
        round (until ``MAX_STEP_ROUNDS``)."""
        results = [self.transcript.result_rows.get(call_id) for call_id in call_ids]
        failed = [row for row in results if row is None or row.tool_status != "done"]
        if failed:
            error = failed[0].content if failed[0] is not None else "the call got no result"
            step.write({"state": "failed", "error": (error or "")[:MAX_STEP_TEXT]})
        else:
            ran = {self.transcript.call_rows[call_id].tool_name for call_id in step.tool_call_id.split()
                   if call_id in self.transcript.call_rows}
            if (step.tool in ran and not deferred) or self._step_rounds.get(step.id, 0) >= MAX_STEP_ROUNDS:
                step.write({"state": "completed", "result": (results[-1].content or "")[:MAX_STEP_TEXT]})
        self._step_done(step.plan_id)

    def _step_done(self, plan) -> None:
        self._plan_event(plan)
        self._checkpoint()

    def _done_call_keys(self, plan) -> set[str]:
        """The calls (``call_key``) the plan's completed steps ran."""
        keys = set()
        for step in plan.step_ids.filtered(lambda s: s.state == "completed" and s.tool_call_id):
            for call_id in step.tool_call_id.split():
                row = self.transcript.call_rows.get(call_id)
                if row is not None:
                    keys.add(call_key(row.tool_name, row._get_arguments()))
        return keys

    # ----------------------------------------------------------- replanning
    def _replan(self, plan, failed) -> None:
        """replan (spec §4.8) after step ``failed``: up to the plan's
        ``max_replanning`` attempts in all, each counted whether the
        replanner answered or not (case BR-23). With a new plan of what
        remains in place, the plan goes on; else it fails and the turn ends
        (TurnEnd)."""
        while plan.replan_count < plan.max_replanning:
            plan.write({"replan_count": plan.replan_count + 1,
                        **({"state": "replanning"} if plan.state != "replanning" else {})})
            self._step_done(plan)
            try:
                parsed = self.planner.replan(plan.goal, plan.get_progress_summary(False), failed.description,
                                             failed.error or "", self.system_prompt)
            except LLMUnavailable as exc:  # counted: a replanner that is down is not asked forever
                parsed = ParsedPlan(problem=str(exc))
            steps = self._new_steps(plan, parsed.steps)
            problem = parsed.problem or ("the new plan repeats only steps already done" if not steps else "") or (
                f"the new plan has {len(steps)} steps, more than {self.context.max_plan_steps}"
                if len(steps) > self.context.max_plan_steps else "")
            self.audit.record("plan_revised", success=not problem, input_data={"failed_step": failed.description,
                                                                               "error": failed.error or ""},
                              output_data={"steps": steps, "attempt": plan.replan_count},
                              error_message=problem or False)
            if not problem:
                plan._replace_remaining_steps(steps)
                plan._set_state("executing")
                self._step_done(plan)
                return
            self._checkpoint()
        raise self._end_plan(plan, "failed", self.env._(
            "Step %(n)s (%(step)s) failed: %(error)s", n=failed.sequence, step=failed.description,
            error=(failed.error or "").strip()[:300]))

    def _new_steps(self, plan, steps) -> list[dict]:
        """The replanner's ``steps`` without those the plan already did (a
        completed step's description, spaces and case aside): a new plan
        that starts over does not buy twice. A done call the refined step
        repeats is caught again when it runs (``_done_call_keys``)."""
        done = {" ".join(s.description.lower().split()) for s in plan.step_ids if s.state == "completed"}
        return [dict(step) for step in steps if " ".join(step["description"].lower().split()) not in done]

    # ------------------------------------------------------------------ ends
    def _finish_plan(self, plan) -> TurnEnd:
        """synthesize_result (spec §4.8): one LLM call writes the answer;
        when no provider answers, the progress summary is the answer.
        Returns the turn's end."""
        plan._set_state("completed")
        self._step_done(plan)
        summary = plan.get_progress_summary()
        try:  # the model is given the progress without the results it quotes (record text): see get_progress_summary
            reply = clean_text(self.planner.synthesize_result(self.system_prompt, plan.goal,
                                                              plan.get_progress_summary(False))) or summary
        except LLMUnavailable as exc:
            reply = self.env._("%(summary)s\n\n(The summary could not be written: %(error)s)", summary=summary,
                               error=str(exc))
        plan.write({"result": reply})
        self._answer(reply)
        return TurnEnd("completed", reply)

    def _end_plan(self, plan, state: str, why: str) -> TurnEnd:
        """End the plan ``state`` (failed, cancelled) with ``why`` and what
        was done and not (spec §4.3 step 6); returns the turn's end."""
        plan._set_state(state, result=why)
        reply = f"{why}\n\n{plan.get_progress_summary()}" if plan.step_ids else why
        self._plan_event(plan)
        self.transcript.add_assistant(reply)
        return TurnEnd("completed", reply)

    def _after_answer(self, request: ConfirmationRequest, approved: bool) -> None:
        """After the user answered the confirmation of ``request`` (its rows
        appended): when it paused a plan's step, that plan is open again;
        approval settles the step (a new plan of what remains if it failed)
        and the loop goes on from there; rejection ends the plan with what
        was and was not done. Otherwise the loop goes on in ReAct."""
        plan = self.thread.sudo().plan_ids.filtered(lambda p: p.state == "executing")[:1]
        step = plan.step_ids.filtered(lambda s: s.state == "running" and request.tool_call_id in
                                      (s.tool_call_id or "").split())[:1]
        if not step:
            return
        self.plan = plan
        if not approved:
            step.write({"state": "failed", "error": self.env._("rejected by the user")})
            why = self.env._("Stopped at step %(n)s (%(step)s): you rejected %(tool)s.", n=step.sequence,
                             step=step.description, tool=request.tool)
            raise self._end_plan(plan, "cancelled", why)
        # The calls of the step's answer after the approved one were not run (deferred until the user
        # answered): not a failure; the step stays running and its next round may call them again.
        call_ids = (step.tool_call_id or "").split()
        settled = call_ids[:call_ids.index(request.tool_call_id) + 1]
        self._settle_step(step, settled, deferred=len(settled) < len(call_ids))
        if step.state == "failed":
            self._replan(plan, step)

    # --------------------------------------------------------------- helpers
    def _new_planner(self) -> Planner:
        """The run's Planner (spec §4.1: created with the runtime), asking through ``_ask``."""
        return Planner(self._ask, {name: spec.description for name, spec in self.context.tools.items()},
                       self.context.max_plan_steps, self.context.planning_prompt)

    def _ask(self, system_prompt: str, tools: bool, relay: bool):
        """One LLM call of the planner (see ``Planner``), after the run's
        budget and rate limits are checked (TurnEnd when reached)."""
        self._limit_before_llm()
        while True:
            try:
                if tools:
                    return self.llm.answer(self._llm_messages(system_prompt), self.context.llm_schemas,
                                           self.transcript.normalize_calls, relay=relay)
                return self.llm.answer(self._llm_messages(system_prompt), [], lambda calls: [], relay=relay)
            except ContextOverflow:
                if not self._trim_history():  # once per turn, as in ReAct (issue 24 point 2)
                    raise

    def _plan_event(self, plan) -> None:
        """Relay the plan's state as a ``plan_update`` event (spec §10.2)."""
        if self.emit:
            self.emit("plan_update", {"plan": plan._payload(), "mode": "plan_and_execute",
                                      "mode_reason": plan.mode_reason or ""})
