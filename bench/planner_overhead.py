"""Planner overhead per plan step against a ReAct step doing the same tool
call, in one run (issue 12 point 7).

Both sides run whole turns through ``AgentRuntime`` as the administrator,
against the scripted LLM server (in this process, answering over real
HTTP). A ReAct step is one LLM round trip asking for ``odoo_search_read``
plus the call, its observation and its rows; a plan step adds what
Plan-and-Execute does around the same call: the step's state writes, its
prompt with the plan's progress, the check against steps already done, the
settling of the step. Per-step cost is the marginal one,
``(T(K steps) - T(1 step)) / (K - 1)``, so the per-turn costs (planning
call, synthesis, final answer, thread reads) cancel out; the time spent
inside the scripted server (its answers, not our code) is taken out of
both: what remains is everything but LLM time. Each call reads another
page (``offset``), so neither side meets the repeat guards.

Run with ``bash bench/run.sh planner_overhead`` (uses the ``agentic_test``
database left by ``make test``); everything is rolled back.
"""
import json
import logging
import os
import statistics
import time

from odoo.addons.agentic_ai.dev.scripted_llm import Scenario, ScriptedLLMServer
from odoo.addons.agentic_ai.engine.runtime import AgentRuntime

env = env  # provided by odoo-bin shell
logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per LLM request otherwise
STEPS = int(os.environ.get("BENCH_STEPS", "8"))
REPEATS = int(os.environ.get("BENCH_REPEATS", "7"))


def call(offset):
    return {"tool_calls": [{"name": "odoo_search_read", "arguments": {
        "model": "res.partner", "domain": [["is_company", "=", True]], "limit": 10, "offset": offset}}]}


def reply(request):
    """Answers both kinds of turn; ``steps=K`` in the user's message."""
    messages = request["messages"]
    system = messages[0]["content"] if messages[0]["role"] == "system" else ""
    user = next(m["content"] for m in reversed(messages) if m["role"] == "user")
    wanted = int(user.split("steps=")[1].split()[0])
    if system.startswith("You are the planner"):
        return {"content": json.dumps([{"description": f"Read page {i} of the companies", "tool": "odoo_search_read"}
                                       for i in range(1, wanted + 1)])}
    if "Do step " in system:
        return call(int(system.split("Do step ")[1].split()[0]))
    if "is finished" in system:
        return {"content": "done"}
    last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
    done = sum(1 for m in messages[last_user:] if m["role"] == "tool")
    return call(done + 1) if done < wanted else {"content": "done"}


scenario = Scenario()
scenario.add(reply, uses=None)
llm = ScriptedLLMServer(scenario).start()
admin = env.ref("base.user_admin")
env["ir.config_parameter"].sudo().set_param("agentic_ai.max_requests_per_minute", "100000")
env["ir.config_parameter"].sudo().set_param("agentic_ai.max_requests_per_hour", "100000")
provider = env["agentic.ai.llm.provider"].create({
    "name": "bench", "provider_type": "custom", "api_base_url": llm.base_url, "api_key": "bench",
    "default_model": "bench", "supports_streaming": False})
agent = env.ref("agentic_ai.agent_general_assistant")
agent.write({"llm_provider_id": provider.id, "require_confirmation": "never", "max_iterations": 100,
             "state": "active", "max_plan_steps": 50})


def turn(mode, steps):
    """Milliseconds of one turn outside the scripted server."""
    agent.execution_mode = mode
    thread = agent.with_user(admin).start_thread(name="bench")
    before = len(scenario.requests)
    started = time.perf_counter()
    result = AgentRuntime(agent.with_user(admin), thread, durable=False).run_turn(f"go steps={steps}")
    elapsed = (time.perf_counter() - started) * 1000
    assert result.state == "completed", result.reply
    return elapsed - sum(r.get("server_ms", 0) for r in scenario.requests[before:])


def per_step(mode):
    """Median marginal milliseconds per step of ``mode``."""
    samples = []
    for _ in range(REPEATS):
        one, many = turn(mode, 1), turn(mode, STEPS)
        samples.append((many - one) / (STEPS - 1))
    return statistics.median(samples)


try:
    for mode in ("react", "plan_and_execute"):  # warm-up
        turn(mode, 2)
    react, plan = [], []
    for _ in range(3):  # alternate, so a slow moment of the machine hits both
        react.append(per_step("react"))
        plan.append(per_step("plan_and_execute"))
    react_ms, plan_ms = statistics.median(react), statistics.median(plan)
    print(f"ReAct step (baseline): {react_ms:.1f} ms per step outside the LLM, median of {len(react)}x{REPEATS}")
    print(f"Plan step:             {plan_ms:.1f} ms per step outside the LLM")
    print(f"planner overhead per step: {plan_ms - react_ms:+.1f} ms, ratio plan/ReAct {plan_ms / react_ms:.2f}x")
finally:
    llm.stop()
    env.cr.rollback()
