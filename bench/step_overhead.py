"""Agent overhead per ReAct step against a bare ``call_kw`` doing the same
read, over real HTTP on a real Odoo server, in one run.

A step is one LLM round trip that asks for ``odoo_search_read`` on
``res.partner`` plus the tool call, its observation and the transcript and
audit rows. It is measured as ``(T(K steps) - T(0 steps)) / K`` of turns sent
through ``/agentic_ai/chat/send`` on threads that already hold ``M`` prior
messages, so the per-turn costs (request, lock, history read, final answer)
cancel out. Each thread is a new user's, under the default rate limits
(bench/step_overhead_prep.py). The baseline is ``/web/dataset/call_kw``
running ``search_read`` with the same domain, fields and limit as the tool
call, as one of these users. The LLM is the
scripted server, in this process (another process than Odoo, as a real LLM
would be); the time spent inside it is shown apart.

Run with ``bash bench/step_overhead.sh`` after ``make test`` (it uses, and
changes, the ``agentic_test`` database). Prints one line per history size
``M``: the ratio per step / call_kw, and the agent's own ratio, without the
step's time inside the scripted LLM server (issue 26 point 6 counts
"everything but the model's time"; the HTTP round trip to it stays in). ``BENCH_CRON_THREADS`` (2): Odoo's
cron threads, on as in every deployment (0: off).
"""
from __future__ import annotations

import contextlib
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dev.odoo_process import OdooServer, odoo_shell, rpc  # noqa: E402 - after the path is set
from dev.scripted_llm import Scenario, ScriptedLLMServer  # noqa: E402

HISTORY_SIZES = [int(n) for n in os.environ.get("BENCH_HISTORY", "0,50,200,500").split(",")]
STEPS = int(os.environ.get("BENCH_STEPS", "10"))
REPEATS = int(os.environ.get("BENCH_REPEATS", "5"))
DB = os.environ.get("AGENTIC_AI_TEST_DB", "agentic_test")
# Odoo's cron threads (2: as every deployment runs; the memory consolidation a turn asks for runs beside the
# next turn). 0: the cron off.
CRON_THREADS = int(os.environ.get("BENCH_CRON_THREADS", "2"))
BARE_PER_PAIR = 20  # call_kw calls after each pair of turns
DOMAIN = [["is_company", "=", True]]
LIMIT = 10
# The fields odoo_search_read returns when the model asks for none (tools/orm_tool.SUMMARY_FIELDS on res.partner).
FIELDS = ["display_name", "name", "email", "phone", "company_id"]


def reply(request: dict) -> dict:
    """``steps=K`` in the user's message: K tool calls, then an answer."""
    messages = request["messages"]
    last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
    wanted = int(messages[last_user]["content"].split("steps=")[1].split()[0])
    done = sum(1 for m in messages[last_user:] if m["role"] == "tool")
    if done < wanted:
        # Each step reads another page: the same call again would be refused as a repetition (turn_limits.py).
        return {"tool_calls": [{"name": "odoo_search_read",
                                "arguments": {"model": "res.partner", "domain": DOMAIN, "limit": LIMIT,
                                              "offset": done}}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 10}}
    return {"content": "done", "usage": {"prompt_tokens": 100, "completion_tokens": 2}}


def prepare(llm_url: str) -> dict:
    """Point the default agent at the scripted server and make the threads:
    ``{"M,K": [[thread id, login of its user]]}``, each with M prior messages."""
    return json.loads(odoo_shell(DB, (ROOT / "bench" / "step_overhead_prep.py").read_text(), "THREADS", {
        "BENCH_LLM_URL": llm_url, "BENCH_HISTORY": ",".join(map(str, HISTORY_SIZES)),
        "BENCH_STEPS": str(STEPS), "BENCH_REPEATS": str(REPEATS)}))


def main() -> None:
    scenario = Scenario()
    scenario.add(reply, uses=None)
    llm = ScriptedLLMServer(scenario).start()
    threads = prepare(llm.base_url)
    try:
        with OdooServer(DB, ("--workers=0", f"--max-cron-threads={CRON_THREADS}")) as server, \
                contextlib.ExitStack() as clients:
            # Each thread's user logged in beforehand (bench/step_overhead_prep.py: one new user per thread);
            # the bare call_kw is the first one's.
            client_of = {login: clients.enter_context(server.client(login, login))
                         for pairs in threads.values() for _thread, login in pairs}
            client = next(iter(client_of.values()))

            def call_kw(session=None):
                started = time.perf_counter()
                rpc(session or client, "/web/dataset/call_kw/res.partner/search_read", {
                    "model": "res.partner", "method": "search_read", "args": [],
                    "kwargs": {"domain": DOMAIN, "fields": FIELDS, "limit": LIMIT}})
                return (time.perf_counter() - started) * 1000

            for _ in range(20):  # warm-up: caches, prepared queries
                call_kw()
            for session in client_of.values():  # each user has read partners before asking (the rules' caches)
                call_kw(session)

            def turn(pair: list, steps: int) -> tuple[float, float]:
                """(ms of the whole request, ms of it spent inside the scripted LLM server) of a turn of
                ``pair`` = [thread id, its user's login]"""
                thread_id, login = pair
                first = len(scenario.requests)
                started = time.perf_counter()
                result = rpc(client_of[login], "/agentic_ai/chat/send",
                             {"thread_id": thread_id, "message": f"steps={steps} go"})
                elapsed = (time.perf_counter() - started) * 1000
                if result["result"]["tool_calls"] != steps or result["result"]["state"] != "completed":
                    sys.exit(f"turn went wrong: {json.dumps(result['result'])[:1000]}")
                inside = sum(r.get("server_ms", 0.0) for r in scenario.requests[first:])
                del scenario.requests[:]
                return elapsed, inside

            warm = threads[f"{HISTORY_SIZES[0]},{STEPS}"].pop()
            turn(warm, STEPS)  # warm-up
            print(f"call_kw: search_read res.partner (limit {LIMIT}), {BARE_PER_PAIR} calls after each pair of "
                  f"turns, median of the row (the baseline, taken beside the turns it is compared with); "
                  f"{CRON_THREADS} cron threads")
            print(f"per step = (turn of {STEPS} tool steps - turn of 0 steps) / {STEPS}; medians of {REPEATS} turns "
                  "of each, the two kinds one after the other")
            print("ratio: per step / call_kw; own: (per step - its time in the LLM) / call_kw, the agent's own cost "
                  "(issue 26 point 6: everything but the model's time)")
            print(f"{'prior messages':>15} {'call_kw ms':>11} {'per step ms':>12} {'of it in LLM':>13} {'ratio':>7} "
                  f"{'own':>7}   {'turn 0 steps':>13} {'turn K steps':>13}")
            for size in HISTORY_SIZES:
                zero, many, bare = [], [], []
                for zero_pair, many_pair in zip(threads[f"{size},0"], threads[f"{size},{STEPS}"], strict=True):
                    zero.append(turn(zero_pair, 0))
                    many.append(turn(many_pair, STEPS))
                    bare += [call_kw() for _ in range(BARE_PER_PAIR)]
                baseline = statistics.median(bare)
                t0, i0 = statistics.median(z[0] for z in zero), statistics.median(z[1] for z in zero)
                tk, ik = statistics.median(m[0] for m in many), statistics.median(m[1] for m in many)
                step, inside = (tk - t0) / STEPS, (ik - i0) / STEPS
                print(f"{size:>15} {baseline:>11.2f} {step:>12.2f} {inside:>13.2f} {step / baseline:>6.2f}x "
                      f"{(step - inside) / baseline:>6.2f}x   "
                      f"{t0:>10.1f} ms {tk:>10.1f} ms")
    finally:
        llm.stop()


if __name__ == "__main__":
    main()
