"""Fed to ``odoo shell`` by bench/step_overhead.py: points the default agent
at the scripted LLM (``BENCH_LLM_URL``) and creates, for each history size
M and step count K (0 and ``BENCH_STEPS``), ``BENCH_REPEATS`` threads that
already hold M messages (a user question, a tool call, its result and an
answer, repeated), each of its own new user, as many people each asking
once. The rate limits are the defaults (the request limits' check runs
before each LLM call and counts the user's own calls, as in production; a
bench user making every call would count the calls of the whole bench, and
of the benches run in the hour before). Prints ``THREADS {"M,K": [[thread
id, login]]}`` (each user's password is its login) and commits."""
import json
import os
import time

env = env  # provided by odoo-bin shell
sizes = [int(n) for n in os.environ["BENCH_HISTORY"].split(",")]
steps = int(os.environ["BENCH_STEPS"])
repeats = int(os.environ["BENCH_REPEATS"])

provider = env["agentic.ai.llm.provider"].create({
    "name": "Bench scripted", "provider_type": "custom", "api_base_url": os.environ["BENCH_LLM_URL"],
    "default_model": "bench-model", "cost_per_input_token": 0.000001, "cost_per_output_token": 0.000002})
agent = env.ref("agentic_ai.agent_general_assistant")
agent.write({"llm_provider_id": provider.id, "fallback_provider_id": False, "require_confirmation": "never",
             "max_iterations": steps + 5, "max_tokens_per_run": 0, "max_cost_per_run": 0})
if agent.state != "active":
    agent.action_activate()
for key in ("agentic_ai.max_requests_per_minute", "agentic_ai.max_requests_per_hour"):
    env["ir.config_parameter"].sudo().set_param(key, False)  # the defaults (another bench may have raised them)
# The memory consolidations other benches left pending (bench/load.py marks hundreds; their scripted model is
# gone, each would fail on a refused connection) are not this bench's work: only those of its own turns run beside
# the next turns, as the cron runs them in a deployment.
env.cr.execute("UPDATE agentic_ai_thread SET memory_pending = false WHERE memory_pending")
stamp = int(time.time())
group_ids = [env.ref("base.group_user").id, env.ref("agentic_ai.group_agentic_ai_user").id]


def new_user(index):
    login = f"step_bench_{stamp}_{index}"
    return env["res.users"].create({"name": f"Step Bench {index}", "login": login, "password": login,
                                    "group_ids": [(6, 0, group_ids)]})

observation = "odoo_search_read: 10 record(s) found in res.partner\n" + "\n".join(
    json.dumps({"id": i, "display_name": f"Partner {i}", "email": f"p{i}@example.com"}) for i in range(10))


def history(thread, size):
    rows = []
    for index in range(size):
        kind, turn = index % 4, index // 4
        call_id = f"hist_{thread.id}_{turn}"
        if kind == 0:
            rows.append({"role": "user", "content": f"Question {turn}: which companies do we work with?"})
        elif kind == 1:
            rows.append({"role": "tool_call", "tool_call_id": call_id, "tool_name": "odoo_search_read",
                         "tool_arguments": json.dumps({"model": "res.partner", "limit": 10}), "tool_status": "done"})
        elif kind == 2:
            rows.append({"role": "tool_result", "tool_call_id": call_id, "tool_name": "odoo_search_read",
                         "content": observation, "tool_status": "done"})
        else:
            rows.append({"role": "assistant", "content": f"Answer {turn}: these are the ten companies."})
    env["agentic.ai.thread.message"].sudo().create([{"thread_id": thread.id, **row} for row in rows])


threads = {}
for size in sizes:
    for count in (0, steps):
        key = f"{size},{count}"
        threads[key] = []
        for repeat in range(repeats + (1 if size == sizes[0] and count == steps else 0)):
            user = new_user(sum(map(len, threads.values())))
            thread = agent.with_user(user).start_thread(name=f"bench M={size} K={count} #{repeat}")
            history(thread, size)
            threads[key].append([thread.id, user.login])
env.cr.commit()
print("THREADS " + json.dumps(threads))
