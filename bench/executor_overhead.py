"""Cost of the executor pipeline around a tool, against calling the tool
function directly, in one run.

Pipeline = JSON-Schema validation, safety check, sanitising, savepoint and
the call's audit row (spec 000 §4.6), on a RunContext built once as a run
builds it. Both sides run as the administrator (not superuser), on the same
arguments; rounds of each kind alternate, so drift falls on all alike.

Two figures for the pipeline, because a run writes the audit rows of a
step in one INSERT (engine/audit.py):

- in a run: the call inside a step that also logs its LLM call, minus the
  same step without the tool call: what a tool call adds to a step;
- alone: ``Executor.execute`` outside a run, its row written by itself.

Run with ``bash bench/run.sh executor_overhead`` (uses the ``agentic_test``
database left by ``make test``); everything is rolled back.
"""
import statistics
import time

from odoo.addons.agentic_ai.engine.audit import AuditTrail
from odoo.addons.agentic_ai.engine.executor import Executor
from odoo.addons.agentic_ai.engine.run_context import build_run_context
from odoo.addons.agentic_ai.tools.orm_tool import odoo_search_read

env = env  # provided by odoo-bin shell
ROUNDS, CALLS = 21, 50
PARAMS = {"model": "res.partner", "domain": [["is_company", "=", True]], "limit": 10}

admin = env.ref("base.user_admin")
agent = env.ref("agentic_ai.agent_general_assistant").with_user(admin)
thread = env["agentic.ai.thread"].with_user(admin).create({"agent_id": agent.id, "name": "bench"})
context = build_run_context(agent, thread)
audit = AuditTrail(thread)
in_run = Executor(context, thread, audit)
alone = Executor(context, thread)
user_env = agent._get_execution_env()
LLM_ROW = {"provider_id": context.providers[0].id if context.providers else False, "llm_model": "bench",
           "input_tokens": 900, "output_tokens": 40, "cost": 0.001, "duration_ms": 700,
           "output_data": {"content": None, "finish_reason": "tool_calls",
                           "tool_calls": [{"id": "call_1", "name": "odoo_search_read", "arguments": "{}"}]}}


def direct():
    odoo_search_read(user_env, **PARAMS)


def piped_alone():
    alone.execute("odoo_search_read", dict(PARAMS))


def step_with_call():
    with audit.step():
        audit.record("llm_call", **LLM_ROW)
        in_run.execute("odoo_search_read", dict(PARAMS), tool_call_id="call_1")


def step_without_call():
    with audit.step():
        audit.record("llm_call", **LLM_ROW)


def per_call(fn) -> float:
    """ms per call of ``fn`` over one round of CALLS calls."""
    env.invalidate_all()
    started = time.perf_counter()
    for _ in range(CALLS):
        fn()
    return (time.perf_counter() - started) / CALLS * 1000


kinds = {"direct": direct, "alone": piped_alone, "step": step_with_call, "empty step": step_without_call}
for fn in kinds.values():  # warm-up
    for _ in range(50):
        fn()
rounds = [{name: per_call(fn) for name, fn in kinds.items()} for _ in range(ROUNDS)]


def ratio(figure) -> str:
    """Median and quartiles over the rounds of ``figure(round) / direct``."""
    ratios = sorted(figure(r) / r["direct"] for r in rounds)
    return f"{statistics.median(ratios):.2f}x (quartiles {ratios[ROUNDS // 4]:.2f}-{ratios[3 * ROUNDS // 4]:.2f})"


median = {name: statistics.median(r[name] for r in rounds) for name in kinds}
in_a_run = median["step"] - median["empty step"]
print(f"direct tool call                  : {median['direct']:.3f} ms/call (baseline)")
print(f"pipeline in a run (step - step)   : {in_a_run:.3f} ms/call  "
      f"{ratio(lambda r: r['step'] - r['empty step'])}  overhead {in_a_run - median['direct']:.3f} ms")
print(f"pipeline alone (own audit INSERT) : {median['alone']:.3f} ms/call  "
      f"{ratio(lambda r: r['alone'])}  overhead {median['alone'] - median['direct']:.3f} ms")
env.cr.rollback()
