"""How long the first token of a streamed answer takes from the provider to
the user's screen (issue 11, closing note): the chat client action in a
real headless Chromium, on a real Odoo server, in one run.

The scripted LLM server in this process streams an answer of ``WORDS``
words, ``CHUNK_DELAY`` seconds apart (OpenAI wire format) and records the
wall-clock time (``time.time()``) it writes each event
(``requests[i]["stream"]["sent_epoch"]``). Chromium shows
``/odoo/action-agentic_ai.chat_action`` logged in as the administrator;
each turn starts a new conversation, sends a message with Enter, and a
MutationObserver on the chat notes the first text in the streaming bubble
(DOM updated: OWL renders a state change in the next animation frame);
then ``requestAnimationFrame`` and a task after it mark the frame that
shows it as painted, read as epoch ms (``performance.timeOrigin +
performance.now()``, the same machine clock).

Measured per turn: from the scripted server writing its first event that
carries text (event 1, see bench/first_token.py) to that paint. The
baseline, in the same run, is that event reaching a plain HTTP SSE client
straight from the scripted server (bench/first_token.py's direct client);
the ratio is browser paint / baseline at p50. For where the time goes,
the run also measures the same event reaching an httpx client through
Odoo's ``/agentic_ai/chat/stream`` (bench/first_token.py's relay delay):
the browser's own share is paint minus that relay. No goal is asserted.

Run with ``bash bench/first_token_browser.sh`` after ``make test`` (it uses,
and changes, the test database, ``AGENTIC_AI_TEST_DB`` or
``agentic_test``). ``BENCH_TURNS`` (20), ``BENCH_WORDS`` (30),
``BENCH_CHUNK_DELAY`` (0.02 s).
"""
from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import websocket

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.first_token import FIRST_TEXT_EVENT, direct_turn, odoo_turn, quantiles  # noqa: E402 - after the path is set
from dev.chat_page import CHAT_HELPERS  # noqa: E402
from dev.odoo_process import OdooServer, odoo_shell  # noqa: E402
from dev.scripted_llm import Scenario, ScriptedLLMServer  # noqa: E402

TURNS = int(os.environ.get("BENCH_TURNS", "20"))
WORDS = int(os.environ.get("BENCH_WORDS", "30"))
CHUNK_DELAY = float(os.environ.get("BENCH_CHUNK_DELAY", "0.02"))
DB = os.environ.get("AGENTIC_AI_TEST_DB", "agentic_test")
AGENT = "General ERP Assistant"

# One turn in the page: a new conversation, the message sent with Enter, the
# epoch ms of the DOM update showing the first streamed text and of the
# frame painting it, then the end of the turn (no Stop button, no cursor,
# the answer saved).
TURN_JS = f"""
(async (agent, text) => {{
{CHAT_HELPERS}
    await newConversation(agent);
    const chat = $(".o_agentic_ai_chat");
    const painted = new Promise((resolve) => {{
        const observer = new MutationObserver(() => {{
            const bubble = chat.querySelector(".o_agentic_ai_streaming .o_agentic_ai_text");
            if (bubble && bubble.textContent.trim()) {{
                observer.disconnect();
                const now = () => performance.timeOrigin + performance.now();
                const dom = now();
                // The callback runs before the frame that shows the text; the
                // task queued from it runs once that frame is painted.
                requestAnimationFrame(() => setTimeout(() => resolve({{ dom, paint: now() }})));
            }}
        }});
        observer.observe(chat, {{ childList: true, subtree: true, characterData: true }});
    }});
    typeAndSend(text);
    const at = await painted;
    await until(() => !$(".o_agentic_ai_stop") && !$(".o_agentic_ai_cursor")
                      && $(".o_agentic_ai_bubble_assistant[data-message-id]"), "the end of the turn");
    return at;
}})
"""


class Chromium:
    """A headless Chromium driven over the DevTools protocol (one page)."""

    def __init__(self, width: int = 1280, height: int = 800):
        binary = shutil.which("chromium") or shutil.which("chromium-browser")
        if not binary:
            sys.exit("Chromium is missing: run dev/setup.sh (apt-get install chromium)")
        self.profile = tempfile.mkdtemp(suffix="_agentic_bench")
        self.process = subprocess.Popen(
            [binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--no-first-run", "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
             f"--user-data-dir={self.profile}", f"--window-size={width},{height}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = Path(self.profile, "DevToolsActivePort")
        for _ in range(200):
            if port_file.is_file() and port_file.stat().st_size > 5:
                break
            time.sleep(0.05)
        port = int(port_file.read_text().split()[0])
        targets = httpx.get(f"http://127.0.0.1:{port}/json/list").json()
        url = next(t["webSocketDebuggerUrl"] for t in targets if t["type"] == "page")
        self.ws = websocket.create_connection(url, suppress_origin=True, timeout=120)
        self.ids = itertools.count(1)

    def call(self, method: str, params: dict | None = None) -> dict:
        """Send one DevTools command and return its result (events are skipped)."""
        ident = next(self.ids)
        self.ws.send(json.dumps({"id": ident, "method": method, "params": params or {}}))
        while True:
            answer = json.loads(self.ws.recv())
            if answer.get("id") == ident:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer["result"]

    def evaluate(self, expression: str):
        """The value of ``expression`` (a promise is awaited); a page exception exits."""
        result = self.call("Runtime.evaluate", {"expression": expression, "awaitPromise": True,
                                                "returnByValue": True})
        if "exceptionDetails" in result:
            sys.exit(f"the page failed: {json.dumps(result['exceptionDetails'])[:1000]}")
        return result["result"].get("value")

    def close(self) -> None:
        """Stop the browser and remove its profile."""
        self.ws.close()
        self.process.terminate()
        self.process.wait(10)
        shutil.rmtree(self.profile, ignore_errors=True)


def browser_turns(llm: ScriptedLLMServer, server: OdooServer) -> list[tuple[float, float]]:
    """``TURNS`` ``(ms to the DOM update, ms to the paint)`` from the first text
    event's write (after one warm-up turn)."""
    with server.client() as client:
        session = client.cookies["session_id"]
    browser = Chromium()
    try:
        browser.call("Network.enable")
        browser.call("Network.setCookie", {"name": "session_id", "value": session, "url": server.base_url})
        browser.call("Page.enable")
        browser.call("Page.navigate", {"url": f"{server.base_url}/odoo/action-agentic_ai.chat_action"})
        browser.evaluate("""new Promise((resolve, reject) => {
            const end = Date.now() + 60000;
            const tick = () => document.querySelector(".o_agentic_ai_chat select.o_agentic_ai_agent_select option")
                ? resolve(true) : Date.now() > end ? reject(new Error("the chat did not open")) : setTimeout(tick, 50);
            tick();
        })""")
        delays = []
        for turn in range(TURNS + 1):
            index = len(llm.requests)
            seen = browser.evaluate(f"{TURN_JS}({json.dumps(AGENT)}, {json.dumps(f'bench turn {turn}')})")
            sent = llm.requests[index]["stream"]["sent_epoch"][FIRST_TEXT_EVENT] * 1000
            if turn:  # the first is a warm-up
                delays.append((seen["dom"] - sent, seen["paint"] - sent))
        return delays
    finally:
        browser.close()


def main() -> None:
    words = " ".join(f"word{i}" for i in range(WORDS))
    scenario = Scenario()
    scenario.add({"content": words, "chunk_delay": CHUNK_DELAY}, uses=None)
    llm = ScriptedLLMServer(scenario).start()
    try:
        # Point the default agent at the scripted server and make TURNS + 1
        # empty threads for the relay turns (bench/step_overhead_prep.py).
        threads = json.loads(odoo_shell(DB, (ROOT / "bench" / "step_overhead_prep.py").read_text(), "THREADS", {
            "BENCH_LLM_URL": llm.base_url, "BENCH_HISTORY": "0", "BENCH_STEPS": "1",
            "BENCH_REPEATS": str(TURNS + 1)}))["0,1"]
        with httpx.Client(timeout=60) as direct:
            direct_turn(llm, direct)  # warm-up
            baseline = [direct_turn(llm, direct) for _ in range(TURNS)]
        with OdooServer(DB) as server:
            relay = []
            for index, (thread_id, login) in enumerate(threads[:TURNS + 1]):  # each thread is its own user's
                with server.client(login, login, timeout=60) as client:
                    delay = odoo_turn(llm, client, thread_id, words)[0]
                if index:  # the first is a warm-up
                    relay.append(delay)
            painted = browser_turns(llm, server)
    finally:
        llm.stop()
    b50, b90, bmax = quantiles(baseline)
    r50, r90, rmax = quantiles(relay)
    d50, d90, dmax = quantiles([t[0] for t in painted])
    p50, p90, pmax = quantiles([t[1] for t in painted])
    print(f"{TURNS} streamed turns of {WORDS} words, {CHUNK_DELAY * 1000:.0f} ms between provider chunks")
    print(f"{'':<46} {'p50':>8} {'p90':>8} {'max':>8}")
    print(f"{'direct: provider chunk -> SSE client (baseline)':<46} {b50:>8.2f} {b90:>8.2f} {bmax:>8.2f} ms")
    print(f"{'Odoo: provider chunk -> httpx token event':<46} {r50:>8.2f} {r90:>8.2f} {rmax:>8.2f} ms")
    print(f"{'browser: provider chunk -> DOM updated':<46} {d50:>8.2f} {d90:>8.2f} {dmax:>8.2f} ms")
    print(f"{'browser: provider chunk -> first token painted':<46} {p50:>8.2f} {p90:>8.2f} {pmax:>8.2f} ms")
    print(f"painted p50 {p50:.2f} ms: ratio vs direct {p50 / b50:.1f}x (+{p50 - b50:.2f} ms), "
          f"vs Odoo to httpx {p50 / r50:.1f}x (+{p50 - r50:.2f} ms in the browser)")


if __name__ == "__main__":
    main()
