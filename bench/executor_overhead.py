"""Cost of the executor pipeline around a tool, against calling the tool
function directly, in one run.

Pipeline = JSON-Schema validation, safety check, sanitising, savepoint and
the call's audit row (spec 000 §4.6), on a RunContext built once as a run
builds it. Both sides run as the administrator (not superuser), on the
same arguments. Kinds are interleaved call by call, and each call is timed
alone in a transaction of its own, as a durable run commits after each
call (engine/runtime.py ``_checkpoint``): the bench rolls it back instead,
untimed, so that nothing it writes stays, and every call starts, as in a
run, with the ORM's cache emptied by the end of the previous transaction.
Medians of single calls per round (robust to a shared machine's slow
moments, which fall on all kinds alike).

Two figures for the pipeline, because a run writes the audit rows of a
step in one INSERT (engine/durable/audit.py):

- in a run: the call inside a step that also logs its LLM call, minus the
  same step without the tool call: what a tool call adds to a step;
- alone: ``Executor.execute`` outside a run, its row written by itself.

Run with ``bash bench/run.sh executor_overhead`` (uses the ``agentic_test``
database left by ``make test``); everything is rolled back, and the
thread it made is removed at the end.
"""
import statistics

from odoo.addons.agentic_ai.bench.interleaved import rounds_of
from odoo.addons.agentic_ai.engine.durable.audit import AuditTrail
from odoo.addons.agentic_ai.engine.executor import Executor
from odoo.addons.agentic_ai.engine.turn.run_context import build_run_context
from odoo.addons.agentic_ai.tools.orm_tool import odoo_search_read

env = env  # provided by odoo-bin shell
ROUNDS, CALLS = 21, 50
PARAMS = {"model": "res.partner", "domain": [["is_company", "=", True]], "limit": 10}

admin = env.ref("base.user_admin")
agent = env.ref("agentic_ai.agent_general_assistant").with_user(admin)
thread = env["agentic.ai.thread"].with_user(admin).create({"agent_id": agent.id, "name": "bench"})
env.cr.commit()  # each call's transaction is rolled back: the thread its rows name must stay
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


def report(title, rounds):
    """Print the figures of ``rounds`` = ``[{kind: ms per call}]``: medians,
    and the ratios to the direct call with their quartiles over the rounds."""
    median = {name: statistics.median(r[name] for r in rounds) for name in kinds}

    def ratio(figure) -> str:
        ratios = sorted(figure(r) / r["direct"] for r in rounds)
        n = len(ratios)
        return f"{statistics.median(ratios):.2f}x (quartiles {ratios[n // 4]:.2f}-{ratios[3 * n // 4]:.2f})"

    in_a_run = median["step"] - median["empty step"]
    print(title)
    print(f"  direct tool call                  : {median['direct']:.3f} ms/call (baseline)")
    print(f"  pipeline in a run (step - step)   : {in_a_run:.3f} ms/call  "
          f"{ratio(lambda r: r['step'] - r['empty step'])}  overhead {in_a_run - median['direct']:.3f} ms")
    print(f"  pipeline alone (own audit INSERT) : {median['alone']:.3f} ms/call  "
          f"{ratio(lambda r: r['alone'])}  overhead {median['alone'] - median['direct']:.3f} ms")


kinds = {"direct": direct, "alone": piped_alone, "step": step_with_call, "empty step": step_without_call}


rounds = rounds_of(env.cr, kinds, ROUNDS, CALLS, warmup=50)
report(f"a call per transaction, kinds interleaved ({ROUNDS * CALLS} calls of each kind, medians of {ROUNDS} "
       f"rounds):", rounds)
thread.unlink()
env.cr.commit()
