"""Cost of the ``orm_operation`` rows (issue 27 point 4, spec §3.7) in a
run's step, against calling the tool function directly, in one run.

The tool is ``create_quotation`` (Odoo's sales code creates the order, its
line, a follower and a chatter message: four kinds of ORM operation, four
rows). Kinds, interleaved call by call, each call timed alone in a
transaction then rolled back (untimed), as bench/executor_overhead.py
does:

- direct: the tool function, as the run's user;
- step: a run's step (its LLM call's row, then the call through the
  executor, the rows written in one INSERT when the step ends);
- step without the rows: the same, the ``orm_operation`` rows dropped
  before the step's INSERT (what the step cost before them);
- empty step: the LLM call's row alone.

Run with ``bash bench/run.sh orm_operation_log`` (the ``agentic_test``
database left by ``make test``; nothing stays)."""
import statistics

from odoo.addons.agentic_ai.bench.interleaved import rounds_of
from odoo.addons.agentic_ai.engine.durable.audit import AuditTrail
from odoo.addons.agentic_ai.engine.executor import Executor
from odoo.addons.agentic_ai.engine.turn.run_context import build_run_context
from odoo.addons.agentic_ai.tools.sales_tools import create_quotation

env = env  # provided by odoo-bin shell
ROUNDS, CALLS = 15, 20
PARAMS = {"partner": env.ref("base.res_partner_3").id,
          "lines": [{"product": env.ref("product.product_product_6").id, "quantity": 2}]}

admin = env.ref("base.user_admin")
agent = env.ref("agentic_ai.agent_general_assistant").with_user(admin)
agent.sudo().require_confirmation = "never"
thread = env["agentic.ai.thread"].with_user(admin).create({"agent_id": agent.id, "name": "bench"})
env.cr.commit()
context = build_run_context(agent, thread)
audit = AuditTrail(thread)
executor = Executor(context, thread, audit)
user_env = agent._get_execution_env()
LLM_ROW = {"provider_id": context.providers[0].id if context.providers else False, "llm_model": "bench",
           "input_tokens": 900, "output_tokens": 40, "cost": 0.001, "duration_ms": 700,
           "output_data": {"content": None, "finish_reason": "tool_calls",
                           "tool_calls": [{"id": "call_1", "name": "create_quotation", "arguments": "{}"}]}}
rows_seen = []


def direct():
    create_quotation(user_env, **PARAMS)


def step(keep_rows=True):
    with audit.step():
        audit.record("llm_call", **LLM_ROW)
        result = executor.execute("create_quotation", dict(PARAMS), tool_call_id="call_1")
        assert result.success, result.error
        orm = [row for row in audit.pending if row[0] == "orm_operation"]
        rows_seen.append(len(orm))
        if not keep_rows:
            audit.pending = [row for row in audit.pending if row[0] != "orm_operation"]


def empty_step():
    with audit.step():
        audit.record("llm_call", **LLM_ROW)


kinds = {"direct": direct, "step": step, "step without the rows": lambda: step(False), "empty step": empty_step}


rounds = rounds_of(env.cr, kinds, ROUNDS, CALLS, warmup=10)
median = {name: statistics.median(r[name] for r in rounds) for name in kinds}


def ratio(figure) -> str:
    ratios = sorted(figure(r) / r["direct"] for r in rounds)
    n = len(ratios)
    return f"{statistics.median(ratios):.2f}x (quartiles {ratios[n // 4]:.2f}-{ratios[3 * n // 4]:.2f})"


print(f"create_quotation, a call per transaction ({ROUNDS * CALLS} calls of each kind, medians of {ROUNDS} rounds), "
      f"{statistics.median(rows_seen):.0f} orm_operation rows a call:")
print(f"  direct tool call                    : {median['direct']:.3f} ms/call (baseline)")
with_rows = median["step"] - median["empty step"]
without = median["step without the rows"] - median["empty step"]
print(f"  pipeline in a run, with the rows    : {with_rows:.3f} ms/call  "
      f"{ratio(lambda r: r['step'] - r['empty step'])}")
print(f"  pipeline in a run, rows dropped     : {without:.3f} ms/call  "
      f"{ratio(lambda r: r['step without the rows'] - r['empty step'])}")
shares = sorted((r["step"] - r["step without the rows"]) / r["direct"] * 100 for r in rounds)
print(f"  the orm_operation rows' own cost    : {with_rows - without:.3f} ms/call, "
      f"{statistics.median(shares):.1f} % of a direct call (quartiles {shares[len(shares) // 4]:.1f}-"
      f"{shares[3 * len(shares) // 4]:.1f} %)")
thread.unlink()
env.cr.commit()
