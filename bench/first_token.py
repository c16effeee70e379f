"""How long the first token of a streamed answer takes to cross Odoo (issue
10 point 2), over real HTTP on a real Odoo server, in one run.

The scripted LLM server in this process streams an answer of ``WORDS``
words, ``CHUNK_DELAY`` seconds apart, in the OpenAI wire format. Measured
per turn, with one ``time.monotonic()`` clock (both ends are in this
process):

* relay delay: from the scripted server writing its first event that
  carries text (event 1: event 0 is the empty role delta, see
  dev/scripted_llm/server.py ``_stream``) to this process's httpx client
  reading the first ``token`` event of ``/agentic_ai/chat/stream``;
* POST to first token: from sending the request to that same moment;
  of it, POST to the provider's first event (the empty role delta, written
  as soon as the request arrived) is the run's start in Odoo (lock, repair
  check, transcript, user message commit, rate limits, the LLM request),
  then ``CHUNK_DELAY`` passes before the provider's first text.

The baseline is the same relay delay for an httpx client reading the
scripted server's stream itself (no Odoo in between); the ratio is
relay delay / baseline at p50. The goal is a relay delay of at most 50 ms
at p50.

Run with ``bash bench/first_token.sh`` after ``make test`` (it uses, and
changes, the test database, ``AGENTIC_AI_TEST_DB`` or ``agentic_test``).
``BENCH_TURNS`` (30), ``BENCH_WORDS`` (50), ``BENCH_CHUNK_DELAY`` (0.02 s).
"""
from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dev.odoo_process import OdooServer, odoo_shell, sse_events  # noqa: E402 - after the path is set
from dev.scripted_llm import Scenario, ScriptedLLMServer  # noqa: E402

TURNS = int(os.environ.get("BENCH_TURNS", "30"))
WORDS = int(os.environ.get("BENCH_WORDS", "50"))
CHUNK_DELAY = float(os.environ.get("BENCH_CHUNK_DELAY", "0.02"))
DB = os.environ.get("AGENTIC_AI_TEST_DB", "agentic_test")
GOAL_MS = 50.0
FIRST_TEXT_EVENT = 1  # index in requests[i]["stream"]["sent_at"]: event 0 is the role delta


def prepare(llm_url: str) -> list[list]:
    """Point the default agent at the scripted server (bench/step_overhead_prep.py)
    and return ``TURNS + 1`` empty threads, ``[thread id, login]``, each of
    its own user (whose password is its login)."""
    threads = json.loads(odoo_shell(DB, (ROOT / "bench" / "step_overhead_prep.py").read_text(), "THREADS", {
        "BENCH_LLM_URL": llm_url, "BENCH_HISTORY": "0", "BENCH_STEPS": "1", "BENCH_REPEATS": str(TURNS)}))
    return threads["0,0"] + threads["0,1"][:1]


def first_text_sent(scenario: Scenario, index: int) -> float:
    """``time.monotonic()`` when the scripted server wrote request ``index``'s first text event."""
    return scenario.requests[index]["stream"]["sent_at"][FIRST_TEXT_EVENT]


def direct_turn(llm: ScriptedLLMServer, client: httpx.Client) -> float:
    """ms from the first text event's write to this client reading it, straight from the scripted server."""
    index = len(llm.requests)
    body = {"model": "bench-model", "stream": True, "messages": [{"role": "user", "content": "talk"}]}
    received = None
    with client.stream("POST", llm.base_url + "/chat/completions", json=body) as response:
        for _name, data in sse_events(response):
            if received is None and data != "[DONE]":
                choices = json.loads(data).get("choices") or [{}]
                if (choices[0].get("delta") or {}).get("content"):
                    received = time.monotonic()
    return (received - first_text_sent(llm.scenario, index)) * 1000


def odoo_turn(llm: ScriptedLLMServer, client: httpx.Client, thread_id: int, words: str) -> tuple[float, ...]:
    """``(relay ms, POST to first token ms, POST to the provider's first event ms)`` of one streamed turn."""
    index = len(llm.requests)
    received, tokens, done = None, [], None
    started = time.monotonic()
    with client.stream("POST", "/agentic_ai/chat/stream", json={"thread_id": thread_id, "message": "talk"},
                       headers={"Content-Type": "application/json"}) as response:
        if response.status_code != 200:
            sys.exit(f"chat/stream answered {response.status_code}: {response.read()[:1000]!r}")
        for name, data in sse_events(response):
            if name == "token":
                received = received or time.monotonic()
                tokens.append(json.loads(data).get("text", ""))
            elif name == "done":
                done = json.loads(data)
    if not done or done.get("state") != "completed" or "".join(tokens) != words:
        sys.exit(f"turn went wrong: done={json.dumps(done)[:1000]} tokens={''.join(tokens)[:200]!r}")
    sent_at = llm.requests[index]["stream"]["sent_at"]
    return (received - sent_at[FIRST_TEXT_EVENT]) * 1000, (received - started) * 1000, (sent_at[0] - started) * 1000


def quantiles(values: list[float]) -> tuple[float, float, float]:
    """(p50, p90, max)."""
    ordered = sorted(values)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))], ordered[-1]


def main() -> None:
    words = " ".join(f"word{i}" for i in range(WORDS))
    scenario = Scenario()
    scenario.add({"content": words, "chunk_delay": CHUNK_DELAY}, uses=None)
    llm = ScriptedLLMServer(scenario).start()
    try:
        threads = prepare(llm.base_url)
        with httpx.Client(timeout=60) as direct:
            direct_turn(llm, direct)  # warm-up
            baseline = [direct_turn(llm, direct) for _ in range(TURNS)]
        with OdooServer(DB) as server:
            turns = []
            for index, (thread_id, login) in enumerate(threads[:TURNS + 1]):
                with server.client(login, login, timeout=60) as client:
                    turn = odoo_turn(llm, client, thread_id, words)
                if index:  # the first is a warm-up
                    turns.append(turn)
    finally:
        llm.stop()
    b50, b90, bmax = quantiles(baseline)
    r50, r90, rmax = quantiles([t[0] for t in turns])
    p50, p90, pmax = quantiles([t[1] for t in turns])
    s50, s90, smax = quantiles([t[2] for t in turns])
    print(f"{TURNS} streamed turns of {WORDS} words, {CHUNK_DELAY * 1000:.0f} ms between provider chunks")
    print(f"{'':<44} {'p50':>8} {'p90':>8} {'max':>8}")
    print(f"{'direct: provider chunk -> client (baseline)':<44} {b50:>8.2f} {b90:>8.2f} {bmax:>8.2f} ms")
    print(f"{'Odoo: provider chunk -> first token event':<44} {r50:>8.2f} {r90:>8.2f} {rmax:>8.2f} ms")
    print(f"{'Odoo: POST -> first token event':<44} {p50:>8.2f} {p90:>8.2f} {pmax:>8.2f} ms")
    print(f"{'  of it POST -> provider answers (role delta)':<44} {s50:>8.2f} {s90:>8.2f} {smax:>8.2f} ms")
    verdict = "met" if r50 <= GOAL_MS else "MISSED"
    print(f"relay delay p50 {r50:.2f} ms: goal <= {GOAL_MS:.0f} ms {verdict}; "
          f"ratio vs direct {r50 / b50:.1f}x (+{r50 - b50:.2f} ms)")


if __name__ == "__main__":
    main()
