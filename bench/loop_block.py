"""How long one run's own work blocks the event loop of Odoo's gevent
server (issue 26 point 1), over real HTTP on a real Odoo, in one run.

A server with ``--workers=2`` and its gevent process; the scripted LLM in
this process streams, in the OpenAI wire format, a Markdown answer of
``BENCH_ANSWER_KB`` KB (headings, paragraphs with links and emphasis,
lists, code, tables: what a long report looks like) in pieces of 400
characters 10 ms apart. ``BENCH_TURNS`` such turns are streamed one after
the other through the gevent port. Meanwhile a probe in this process asks
the gevent port for ``/web/health`` (a few lines of Python and, with one
database, a borrowed cursor and Odoo's registry check: a short query)
every 5 ms, each on a new connection (on a kept-alive one, Nagle's
algorithm and delayed ACKs add a constant 40 ms to every answer): while a greenlet of the gevent
process computes without yielding, the probe's answer waits, so its
latency is the loop's lag (and this process's own: the probe shares its
interpreter with the scripted model and the stream's reader).

The baseline is the same probe for ``QUIET_SECONDS`` before the turns, in
the same run. Printed: the probe's p50, p99 and max quiet and during the
turns, their ratio, and what rendering one such answer costs in this
process (``engine/text/markdown_render.py``), the work that would block
the loop for as long if it ran on it (``engine/durable/off_loop.py``).

Run with ``bash bench/loop_block.sh`` after ``make test`` (it uses, and
changes, the test database, ``AGENTIC_AI_TEST_DB`` or ``agentic_test``).
``BENCH_TURNS`` (6), ``BENCH_ANSWER_KB`` (48).
"""
from __future__ import annotations

import json
import os
import statistics
import sys
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dev.odoo_process import OdooServer, odoo_shell, sse_events  # noqa: E402 - after the path is set
from dev.scripted_llm import Scenario, ScriptedLLMServer  # noqa: E402

TURNS = int(os.environ.get("BENCH_TURNS", "6"))
ANSWER_KB = int(os.environ.get("BENCH_ANSWER_KB", "48"))
DB = os.environ.get("AGENTIC_AI_TEST_DB", "agentic_test")
QUIET_SECONDS = 3.0
PROBE_EVERY = 0.005


def long_answer(size: int) -> str:
    """A Markdown report of about ``size`` characters."""
    para = ("The **quarterly** figures show [sales](https://example.com/report) up by 12 % in *Europe*; "
            "`S00042` was confirmed on 2026-11-03 and ![chart](https://elsewhere.example/chart.png) shipped. ")
    table = "| order | customer | total |\n|---|---|---|\n" + "".join(
        f"| S{i:05d} | [Partner {i}](/odoo/res.partner/{i}) | {i * 13.5:.2f} |\n" for i in range(30))
    block = f"## Section\n\n{para * 4}\n\n- one\n- **two**\n  - three\n\n```python\nprint('x')\n```\n\n{table}\n"
    return (block * (size // len(block) + 1))[:size]


class Probe(threading.Thread):
    """``/web/health`` on ``url`` every ``PROBE_EVERY`` seconds; ``mark()``
    starts a new series; ``series`` holds each series' latencies (ms)."""

    def __init__(self, url: str):
        super().__init__(daemon=True)
        self.url, self.series, self.running = url, [[]], True

    def mark(self) -> None:
        self.series.append([])

    def run(self) -> None:
        with httpx.Client(base_url=self.url, timeout=30) as client:
            while self.running:
                started = time.perf_counter()
                client.get("/web/health", headers={"Connection": "close"}).raise_for_status()
                self.series[-1].append((time.perf_counter() - started) * 1000)
                time.sleep(PROBE_EVERY)


def quantiles(values: list[float]) -> tuple[float, float, float]:
    """(p50, p99, max)."""
    ordered = sorted(values)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))], ordered[-1]


RENDER_SCRIPT = """
import json, os, time
from odoo.addons.agentic_ai.engine.text.markdown_render import render_markdown
text = open(os.environ["BENCH_ANSWER_FILE"]).read()
best = float("inf")
for _ in range(3):
    started = time.perf_counter()
    render_markdown(text, lambda host: host, frozenset())
    best = min(best, time.perf_counter() - started)
print("RENDER " + json.dumps(best * 1000))
"""


def render_ms(text: str) -> float:
    """Best of three renderings of ``text`` by the addon in ``odoo-bin shell``, ms."""
    path = Path(os.environ.get("TMPDIR", "/tmp")) / f"agentic_ai_loop_block_{os.getpid()}.md"
    path.write_text(text)
    try:
        return json.loads(odoo_shell(DB, RENDER_SCRIPT, "RENDER", {"BENCH_ANSWER_FILE": str(path)}))
    finally:
        path.unlink()


def turn(url: str, cookies, thread_id: int, answer: str) -> None:
    """One streamed turn through ``url``; exits when it did not complete with the whole answer."""
    tokens, done = [], None
    with httpx.Client(base_url=url, cookies=cookies, timeout=120) as client, client.stream(
            "POST", "/agentic_ai/chat/stream", json={"thread_id": thread_id, "message": "the report"}) as response:
        if response.status_code != 200:
            sys.exit(f"chat/stream answered {response.status_code}: {response.read()[:1000]!r}")
        for name, data in sse_events(response):
            if name == "token":
                tokens.append(json.loads(data).get("text", ""))
            elif name == "done":
                done = json.loads(data)
    if not done or done.get("state") != "completed" or "".join(tokens) != answer:
        sys.exit(f"turn went wrong: done={json.dumps(done)[:500]} text={len(''.join(tokens))} of {len(answer)}")


def main() -> None:
    answer = long_answer(ANSWER_KB * 1000)
    scenario = Scenario()
    scenario.add({"content": answer, "chunk_chars": 400, "chunk_delay": 0.01}, uses=None)
    llm = ScriptedLLMServer(scenario).start()
    try:
        threads = json.loads(odoo_shell(DB, (ROOT / "bench" / "step_overhead_prep.py").read_text(), "THREADS", {
            "BENCH_LLM_URL": llm.base_url, "BENCH_HISTORY": "0", "BENCH_STEPS": "1",
            "BENCH_REPEATS": str(TURNS + 1)}))["0,0"]
        with OdooServer(DB, extra=("--workers=2",)) as server, server.client() as client:
            server.wait_for_gevent()
            turn(server.gevent_url, client.cookies, threads.pop(), answer)  # warm-up
            probe = Probe(server.gevent_url)
            probe.start()
            time.sleep(QUIET_SECONDS)
            probe.mark()
            started = time.monotonic()
            for thread_id in threads[:TURNS]:
                turn(server.gevent_url, client.cookies, thread_id, answer)
            elapsed = time.monotonic() - started
            probe.running = False
            probe.join()
    finally:
        llm.stop()
    quiet, during = probe.series[0], probe.series[1]
    q50, q99, qmax = quantiles(quiet)
    d50, d99, dmax = quantiles(during)
    print(f"{TURNS} streamed turns of a {len(answer) // 1000} KB Markdown answer on the gevent port, "
          f"in {elapsed:.1f} s; /web/health asked every {PROBE_EVERY * 1000:.0f} ms on the same port")
    print(f"{'':<28} {'probes':>7} {'p50':>8} {'p99':>8} {'max':>8}")
    print(f"{'quiet (baseline)':<28} {len(quiet):>7} {q50:>8.2f} {q99:>8.2f} {qmax:>8.2f} ms")
    print(f"{'during the turns':<28} {len(during):>7} {d50:>8.2f} {d99:>8.2f} {dmax:>8.2f} ms")
    print(f"ratio during / quiet: p99 {d99 / q99:.1f}x, max {dmax / qmax:.1f}x; "
          f"the loop's longest lag during the turns: {dmax - q50:.1f} ms above a quiet answer")
    print(f"rendering one such answer here: {render_ms(answer):.1f} ms (what it would hold the loop on it)")


if __name__ == "__main__":
    main()
