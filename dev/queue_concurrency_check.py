"""Fed to `odoo shell` by dev/queue_concurrency_check.sh, on a throwaway copy
of the test database: what Odoo's test runner cannot show about the async
queue (its cursors all wrap one connection and take turns), with real
database sessions and real commits.

1. Two processors in two threads, each on its own connection, run 20 queued
   jobs (each creates one partner through the scripted model, whose first
   answer takes 0.3 s): every job runs exactly once (20 partners, each thread
   claimed once), both processors took jobs, and their runs overlapped in time.
2. Meanwhile a third session holds the row lock of a 21st queued thread:
   ``FOR UPDATE SKIP LOCKED`` passes over it without waiting or failing; once
   the lock is released, the next pass runs it.

Prints what it saw and ``PROBLEM:`` lines; exits 1 when there is one.
"""
import logging
import re
import threading
import time
from collections import Counter

from odoo import SUPERUSER_ID, api
from odoo.tests import new_test_user

from odoo.addons.agentic_ai.dev.scripted_llm import Scenario, ScriptedLLMServer, last_user_contains, tool_result_for

JOBS = 20
PREFIX = "CONC"


def create_partner(request):
    k = re.search(r"job (\d+)", request["messages"][-1]["content"]).group(1)
    return {"tool_calls": [{"name": "odoo_create", "arguments": {
        "model": "res.partner", "values": {"name": f"{PREFIX} job {k}"}}}], "delay": 0.3}


logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per LLM request otherwise
scenario = Scenario()
scenario.add(create_partner, last_user_contains("job "), uses=None)
scenario.add({"content": "done"}, tool_result_for("odoo_create"), uses=None)
server = ScriptedLLMServer(scenario).start()

params = env["ir.config_parameter"]
for key, value in (("agentic_ai.queue_retry_delay", "0"), ("agentic_ai.max_requests_per_minute", "0"),
                   ("agentic_ai.max_requests_per_hour", "0"), ("agentic_ai.llm_retry_delay", "0.01")):
    params.set_param(key, value)
provider = env["agentic.ai.llm.provider"].create({
    "name": "Scripted (queue check)", "provider_type": "custom", "api_base_url": server.base_url,
    "api_key": "test-key-not-secret", "default_model": "scripted-model"})
agent = env.ref("agentic_ai.agent_general_assistant")
agent.write({"llm_provider_id": provider.id, "require_confirmation": "never"})
agent.action_activate()
users = [new_test_user(env, f"queue_check_{i}", groups="base.group_user,base.group_partner_manager")
         for i in (1, 2)]
threads = env["agentic.ai.thread"]
for k in range(1, JOBS + 2):
    thread = agent.with_user(users[k % 2]).start_thread(name=f"job {k}")
    thread._enqueue(f"job {k}")
    threads |= threads.browse(thread.id)
locked = threads[-1]
env.cr.commit()

registry = env.registry
holder = registry.cursor()  # the third session
holder.execute("SELECT id FROM agentic_ai_thread WHERE id = %s FOR UPDATE", [locked.id])

spans, errors = {0: [], 1: []}, []


def processor(index):
    try:
        while True:
            with registry.cursor() as cr:
                started = time.monotonic()
                done = api.Environment(cr, SUPERUSER_ID, {})["agentic.ai.thread"]._process_pending_tasks(limit=1)
            if not done:
                return
            spans[index].append((started, time.monotonic()))
    except Exception as exc:  # noqa: BLE001 - reported below
        errors.append(repr(exc))


started = time.monotonic()
workers = [threading.Thread(target=processor, args=(i,)) for i in (0, 1)]
for worker in workers:
    worker.start()
for worker in workers:
    worker.join(timeout=120)
elapsed = time.monotonic() - started

problems = list(errors)
env.invalidate_all()
env.cr.rollback()  # a fresh snapshot: the processors committed


def effects():
    partners = env["res.partner"].search([("name", "=like", f"{PREFIX} job %")])
    return Counter(partners.mapped("name"))


first = effects()
overlaps = sum(1 for a in spans[0] for b in spans[1] if a[0] < b[1] and b[0] < a[1])
print(f"processors handled {len(spans[0])} and {len(spans[1])} jobs in {elapsed:.1f} s; "
      f"{sum(first.values())} effects; {overlaps} overlapping pairs of jobs")
if first != Counter({f"{PREFIX} job {k}": 1 for k in range(1, JOBS + 1)}):
    problems.append(f"effects of the first pass: {dict(first)}")
if not (spans[0] and spans[1] and overlaps):
    problems.append("the two processors did not run jobs at the same time")
if (locked.state, locked.queue_attempts) != ("queued", 0):
    problems.append(f"the locked thread was not skipped: {locked.state}, attempts {locked.queue_attempts}")

holder.rollback()
holder.close()
with registry.cursor() as cr:
    api.Environment(cr, SUPERUSER_ID, {})["agentic.ai.thread"]._process_pending_tasks()
env.invalidate_all()
env.cr.rollback()
final = effects()
print(f"after the lock was released: {sum(final.values())} effects; the locked thread is {locked.state}")
if final != Counter({f"{PREFIX} job {k}": 1 for k in range(1, JOBS + 2)}):
    problems.append(f"effects after the second pass: {dict(final)}")
if set(threads.mapped("state")) != {"completed"} or set(threads.mapped("queue_attempts")) != {1}:
    problems.append(f"states {Counter(threads.mapped('state'))}, attempts {Counter(threads.mapped('queue_attempts'))}")
server.stop()
for problem in problems:
    print("PROBLEM:", problem)
if problems:
    raise SystemExit(1)
print("queue concurrency check passed")
