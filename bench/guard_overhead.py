"""What the safety guard adds to a tool call, in one run: the executor
pipeline in a step with the whole guard and the run's rules (the eight
presets, plus 40 more rules of every scope, none of which refuses the
call), with the guard but no rules, and with the guard off (no safety
chain, no per-operation guard, hence no before_snapshot: the baseline),
for a read (``odoo_search_read``) and a write (``odoo_write`` on a partner,
whose ORM operations are judged as they happen and whose previous values
are kept: engine/guard/operation_guard.py).

Kinds interleave call by call; figures are medians of single calls. Run
with ``bash bench/run.sh guard_overhead`` (uses the ``agentic_test``
database left by ``make test``); everything is rolled back.
"""
import dataclasses
import statistics
import time

from odoo.addons.agentic_ai.engine import executor as executor_module
from odoo.addons.agentic_ai.engine.durable.audit import AuditTrail
from odoo.addons.agentic_ai.engine.executor import Executor
from odoo.addons.agentic_ai.engine.guard.operation_guard import OperationGuard
from odoo.addons.agentic_ai.engine.guard.safety_rules import RuleSet
from odoo.addons.agentic_ai.engine.safety import ALLOW, SafetyDecision
from odoo.addons.agentic_ai.engine.turn.run_context import build_run_context

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


class GuardOff:
    """Stands for both layers of the guard when it is off: allows
    everything, judges no ORM operation, keeps no snapshot."""

    def __init__(self, *args, **kwargs):
        self.refusals, self.confirmations, self.snapshots, self.snapshot_overflow, self.pending = [], [], [], 0, None

    def check(self, *args, **kwargs):
        return SafetyDecision(ALLOW)


def step(executor, call):
    name, params = call
    executor_module.OperationGuard = GuardOff if isinstance(executor.guard, GuardOff) else OperationGuard
    with audit.step():
        result = executor.execute(name, dict(params))
    assert result.success, result.error


guard_off = Executor(without_rules, thread, audit)
guard_off.guard = GuardOff()
executors = {"with rules": Executor(with_rules, thread, audit), "without rules": Executor(without_rules, thread, audit),
             "guard off": guard_off}
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
    off = median[f"{call[0]} guard off"]
    for label in ("with rules", "without rules"):
        on = median[f"{call[0]} {label}"]
        print(f"{call[0]:17s} guard on, {label:13s}: {on:.3f} ms vs {off:.3f} ms guard off (baseline): "
              f"{on / off:.2f}x, +{on - off:.3f} ms per call")
executor_module.OperationGuard = OperationGuard
env.cr.rollback()
