"""Cost of the executor pipeline around a tool, against calling the tool
function directly, in one run.

Pipeline = JSON-Schema validation, safety check, sanitising, savepoint,
execution-log row (spec 000 §4.6). Prints the median per call of each and
their ratio. Run with ``bash bench/run.sh executor_overhead`` (uses the
``agentic_test`` database left by ``make test``); everything is rolled back.
"""
import statistics
import time

from odoo.addons.agentic_ai.engine.executor import Executor
from odoo.addons.agentic_ai.engine.safety import SafetyGuard
from odoo.addons.agentic_ai.tools.orm_tool import odoo_search_read

env = env  # noqa: F821 - provided by odoo-bin shell
ROUNDS, CALLS = 7, 50
PARAMS = {"model": "res.partner", "domain": [["is_company", "=", True]], "limit": 10}

agent = env.ref("agentic_ai.agent_general_assistant")
thread = env["agentic.ai.thread"].create({"agent_id": agent.id, "name": "bench"})
tool = env.ref("agentic_ai.tool_odoo_search_read")
executor = Executor(agent, thread, SafetyGuard(agent))


def per_call(fn):
    samples = []
    for _ in range(ROUNDS):
        env.invalidate_all()
        started = time.perf_counter()
        for _ in range(CALLS):
            fn()
        samples.append((time.perf_counter() - started) / CALLS * 1000)
    return statistics.median(samples)


direct = per_call(lambda: odoo_search_read(env, **PARAMS))
piped = per_call(lambda: executor.execute(tool, dict(PARAMS)))
print(f"direct tool call   : {direct:.3f} ms/call (baseline)")
print(f"through Executor   : {piped:.3f} ms/call")
print(f"ratio              : {piped / direct:.2f}x  (overhead {piped - direct:.3f} ms/call)")
env.cr.rollback()
