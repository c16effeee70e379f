"""What the safety rules add to a tool call, in one run: the executor
pipeline in a step with the run's rules (the eight presets, plus 40 more
rules of every scope, none of which refuses the call) against the same
pipeline with no rules, for a read (``odoo_search_read``) and a write
(``odoo_write`` on a partner, whose ORM operations are judged as they
happen: engine/operation_guard.py).

Kinds interleave call by call; figures are medians of single calls. Run
with ``bash bench/run.sh guard_overhead`` (uses the ``agentic_test``
database left by ``make test``); everything is rolled back.
"""
import dataclasses
import statistics
import time

from odoo.addons.agentic_ai.engine.audit import AuditTrail
from odoo.addons.agentic_ai.engine.executor import Executor
from odoo.addons.agentic_ai.engine.run_context import build_run_context
from odoo.addons.agentic_ai.engine.safety_rules import RuleSet

env = env  # provided by odoo-bin shell
CALLS = 600

admin = env.ref("base.user_admin")
Rule = env["agentic.ai.safety.rule"]
for n in range(10):  # rules that apply to everyone and refuse nothing of these calls
    Rule.create({"name": f"bench model {n}", "model_name": f"bench.model.{n}, x_bench_*"})
    Rule.create({"name": f"bench tool {n}", "scope": "tool", "tool_name": f"bench_tool_{n}*"})
    Rule.create({"name": f"bench field {n}", "scope": "field", "model_name": "res.partner",
                 "field_names": f"x_bench_{n}, x_other_{n}"})
    Rule.create({"name": f"bench unlink {n}", "model_name": "res.partner", "operation": "unlink",
                 "domain": f"[('id', '=', -{n + 1})]"})
agent = env.ref("agentic_ai.agent_general_assistant").with_user(admin)
agent.sudo().require_confirmation = "never"
thread = env["agentic.ai.thread"].with_user(admin).create({"agent_id": agent.id, "name": "bench"})
with_rules = build_run_context(agent, thread)
without_rules = dataclasses.replace(with_rules, rules=RuleSet())
audit = AuditTrail(thread)
partner = env["res.partner"].create({"name": "Bench Partner"})
READ = ("odoo_search_read", {"model": "res.partner", "domain": [["is_company", "=", True]], "limit": 10})
WRITE = ("odoo_write", {"model": "res.partner", "record_ids": [partner.id], "values": {"phone": "+32 1"}})


def step(executor, call):
    name, params = call
    with audit.step():
        result = executor.execute(name, dict(params))
    assert result.success, result.error


executors = {"with rules": Executor(with_rules, thread, audit), "without rules": Executor(without_rules, thread, audit)}
kinds = {f"{call[0]} {label}": (executor, call) for call in (READ, WRITE) for label, executor in executors.items()}
for executor, call in kinds.values():
    for _ in range(50):
        step(executor, call)
samples = {name: [] for name in kinds}
for _ in range(CALLS):
    for name, (executor, call) in kinds.items():
        started = time.perf_counter()
        step(executor, call)
        samples[name].append((time.perf_counter() - started) * 1000)
median = {name: statistics.median(values) for name, values in samples.items()}
print(f"rules of the run: {len(with_rules.rules.rules)} (the 8 presets and 40 more)")
for call in (READ, WRITE):
    on, off = median[f"{call[0]} with rules"], median[f"{call[0]} without rules"]
    print(f"{call[0]:17s}: {on:.3f} ms with rules, {off:.3f} ms without (baseline): {on / off:.2f}x, "
          f"+{on - off:.3f} ms per call")
env.cr.rollback()
