"""Cost of chaining the execution log (engine/durable/log_chain.py): a step's audit
rows (one LLM call and one tool call, as a run writes them) inserted by
``log_many``, without and with their seal.

The seal runs after the commit in a transaction of its own; here it runs in
the benchmark's transaction (so that everything is rolled back and it sees
the rows), plus, timed apart and added, what its own transaction costs: a
cursor from the pool, ``SET TRANSACTION``, the lock and the commit of an
otherwise empty transaction. Medians of single steps, kinds interleaved.

Run with ``bash bench/run.sh log_chain_overhead`` (uses the ``agentic_test``
database left by ``make test``); everything is rolled back.
"""
import statistics
import time

from odoo.addons.agentic_ai.engine import log_chain

env = env  # provided by odoo-bin shell
ROUNDS = 400
Log = env["agentic.ai.execution.log"]
STEP = [("llm_call", None, {"llm_model": "bench", "input_tokens": 900, "output_tokens": 40, "cost": 0.001,
                            "duration_ms": 700, "output_data": {"content": None, "finish_reason": "tool_calls",
                                                                "tool_calls": [{"id": "call_1", "arguments": "{}"}]}}),
        ("tool_execution", None, {"tool_name": "odoo_search_read", "tool_call_id": "call_1", "model_name":
                                  "res.partner", "input_data": {"model": "res.partner", "limit": 10},
                                  "output_data": {"records": [{"id": i, "name": f"Partner {i}"} for i in range(10)]},
                                  "duration_ms": 3})]
company = env.company.id


def ms(fn):
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


def insert():
    Log.log_many(STEP)
    env.cr.postcommit.clear()  # the real hook is timed by seal_transaction


def insert_and_seal():
    insert()
    log_chain.seal(env, [company])


def seal_transaction():
    with env.registry.cursor() as cr:
        cr.execute("SET TRANSACTION ISOLATION LEVEL READ COMMITTED")
        # another key: this benchmark's transaction holds the company's lock until its end
        log_chain.lock_company(cr, -company)


log_chain.seal(env)
samples = {"insert": [], "insert_and_seal": [], "seal_transaction": []}
for _ in range(ROUNDS):
    samples["insert"].append(ms(insert))
    log_chain.seal(env, [company])  # untimed: each timed seal chains its own step only
    samples["insert_and_seal"].append(ms(insert_and_seal))
    samples["seal_transaction"].append(ms(seal_transaction))
median = {kind: statistics.median(values) for kind, values in samples.items()}
with_chain = median["insert_and_seal"] + median["seal_transaction"]
print(f"log_many of a step (2 rows): {median['insert']:.3f} ms")
print(f"  + seal in the same transaction: {median['insert_and_seal']:.3f} ms")
print(f"  + the seal's own transaction: {median['seal_transaction']:.3f} ms")
ratio, extra = with_chain / median["insert"], with_chain - median["insert"]
print(f"with the chain / without: {ratio:.2f}x (+{extra:.3f} ms a step)")
env.cr.rollback()
