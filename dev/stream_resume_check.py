"""A chat whose stream is cut mid-answer (issue 27 point 3, spec 000 §10.2),
in a real headless Chromium, on a real Odoo server (threaded, the cron off)
behind a proxy this check runs, which cuts the connection that carries the
answer after its first tokens; the scripted LLM server in this process.

Cases, each a new conversation of the chat client action:

- resumed: the chat reconnects with an EventSource on ``GET
  /agentic_ai/chat/stream`` from the last row it saw; the run goes on (its
  client is followed again within the grace) and the page shows the whole
  answer, once; the thread ends ``completed``; the model was asked once.
- polled: the proxy refuses that GET (503, as an HTTP worker or a proxy
  without the rule answers); the chat falls back to polling
  ``/agentic_ai/chat/poll``; with nobody following, the run stops after
  the grace, what it wrote kept; the page shows the end the thread reached
  (``interrupted``, the partial answer), the message sent once.
- resumed by Last-Event-ID: an EventSource-shaped GET read to its first
  row, closed, then opened again with that row's id as ``Last-Event-ID``,
  as the browser does on its own reconnections: every row once, in order.

Prints each case's outcome, then ``N passed, M failed``.

Usage: ``python dev/stream_resume_check.py DB`` with dev/env.sh's
environment (``bash dev/stream_resume_check.sh`` makes the database, a copy
of the test database, and drops it)."""
from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.first_token_browser import Chromium  # noqa: E402 - after the path is set
from dev.chat_page import CHAT_HELPERS  # noqa: E402
from dev.odoo_process import OdooServer, odoo_shell, rpc, sse_events  # noqa: E402
from dev.scripted_llm import Scenario, ScriptedLLMServer  # noqa: E402

WORDS = 120
CHUNK_DELAY = 0.05  # 6 s of answer: the cut comes after its first tokens
AGENT = "General ERP Assistant"
PREP = """
import os
provider = env["agentic.ai.llm.provider"].create({
    "name": "Resume check", "provider_type": "custom", "api_base_url": os.environ["CHECK_LLM_URL"],
    "default_model": "resume-model"})
agent = env.ref("agentic_ai.agent_general_assistant")
agent.write({"llm_provider_id": provider.id, "fallback_provider_id": False, "require_confirmation": "never"})
if agent.state != "active":
    agent.action_activate()
env["ir.config_parameter"].sudo().set_param("agentic_ai.max_requests_per_minute", "1000")
env.cr.commit()
print("READY ok")
"""

SEND_JS = f"""
(async (agent, text) => {{
{CHAT_HELPERS}
    await newConversation(agent);
    typeAndSend(text);
    await until(() => $(".o_agentic_ai_stop"), "the run to start");
    await until(() => !$(".o_agentic_ai_stop") && !$(".o_agentic_ai_cursor")
                      && $(".o_agentic_ai_bubble_assistant[data-message-id]"), "the end of the turn", 90000);
    return [...document.querySelectorAll(".o_agentic_ai_bubble[data-message-id]")].map(
        (b) => ({{ id: Number(b.dataset.messageId), text: b.textContent }}));
}})
"""


class CutProxy:
    """A TCP proxy in front of the Odoo server. The connection whose request
    is ``POST /agentic_ai/chat/stream`` is cut (both sockets closed) once
    ``cut_after_tokens`` token events went through it; with ``refuse_follow``,
    a ``GET /agentic_ai/chat/stream`` is answered 503 without reaching Odoo.
    ``seen`` lists each request line that went through (or was refused)."""

    def __init__(self, upstream_port: int, cut_after_tokens: int = 3):
        self.upstream_port = upstream_port
        self.cut_after_tokens = cut_after_tokens
        self.refuse_follow = False
        self.seen: list[str] = []
        self.cuts = 0
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while True:
            try:
                client, _address = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        # One request a connection (what is cut or refused is told by its request line): keep-alive asked off.
        first = client.recv(65536).replace(b"Connection: keep-alive", b"Connection: close")
        line = first.split(b"\r\n", 1)[0].decode(errors="replace")
        self.seen.append(line)
        if self.refuse_follow and line.startswith("GET /agentic_ai/chat/stream"):
            body = b'{"error": {"message": "refused by the proxy"}}'
            client.sendall(b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                           b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body))
            client.close()
            return
        upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
        upstream.sendall(first)
        cut = line.startswith("POST /agentic_ai/chat/stream")
        threading.Thread(target=self._pipe, args=(client, upstream, False), daemon=True).start()
        self._pipe(upstream, client, cut)

    def _pipe(self, source: socket.socket, target: socket.socket, cut: bool) -> None:
        tokens = 0
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                target.sendall(data)
                if cut:
                    tokens += data.count(b"event: token")
                    if tokens >= self.cut_after_tokens:
                        self.cuts += 1
                        break
        except OSError:
            pass
        for sock in (source, target):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()


class Check:
    def __init__(self, db: str):
        self.db = db
        self.words = " ".join(f"w{i}" for i in range(WORDS))
        self.scenario = Scenario()
        self.scenario.add({"content": self.words, "chunk_delay": CHUNK_DELAY}, uses=None)
        self.llm = ScriptedLLMServer(self.scenario).start()
        odoo_shell(db, PREP, "READY", {"CHECK_LLM_URL": self.llm.base_url})
        self.server = OdooServer(db).start()
        self.proxy = CutProxy(self.server.port)
        self.client = httpx.Client(base_url=self.proxy.url, timeout=60)
        answer = self.client.post("/web/session/authenticate", json={"jsonrpc": "2.0", "method": "call", "params": {
            "db": db, "login": "admin", "password": "admin"}})
        answer.raise_for_status()
        self.browser = Chromium()
        self.browser.call("Network.enable")
        self.browser.call("Network.setCookie", {"name": "session_id", "value": self.client.cookies["session_id"],
                                                "url": self.proxy.url})
        self.browser.call("Page.enable")
        self.browser.call("Page.navigate", {"url": f"{self.proxy.url}/odoo/action-agentic_ai.chat_action"})
        self.browser.evaluate("""new Promise((resolve, reject) => {
            const end = Date.now() + 60000;
            const tick = () => document.querySelector(".o_agentic_ai_chat select.o_agentic_ai_agent_select option")
                ? resolve(true) : Date.now() > end ? reject(new Error("the chat did not open")) : setTimeout(tick, 50);
            tick();
        })""")

    def close(self) -> None:
        self.browser.close()
        self.client.close()
        self.server.stop()
        self.llm.stop()

    def thread_of(self, message: str) -> dict:
        """The admin's latest thread whose first message is ``message``, with its rows."""
        for listed in rpc(self.client, "/agentic_ai/thread/list", {}):
            found = rpc(self.client, "/agentic_ai/thread/messages", {"thread_id": listed["id"]})
            rows = found["messages"]
            if rows and rows[0].get("content") == message:
                return {"thread": found["thread"], "rows": rows}
        raise AssertionError(f"no conversation of {message!r}")

    def chat(self, message: str) -> tuple[list[dict], dict]:
        asked = len(self.scenario.chat_requests())
        shown = self.browser.evaluate(f"{SEND_JS}({json.dumps(AGENT)}, {json.dumps(message)})")
        found = self.thread_of(message)
        assert len(self.scenario.chat_requests()) == asked + 1, "the model was asked more than once"
        users = [row for row in found["rows"] if row["role"] == "user"]
        assert [row["content"] for row in users] == [message], f"the message was stored {len(users)} times"
        return shown, found

    def case_resumed(self) -> str:
        self.proxy.refuse_follow = False
        cuts = self.proxy.cuts
        shown, found = self.chat("resume check: a long answer please")
        assert self.proxy.cuts == cuts + 1, "the stream was not cut"
        assert any(line.startswith("GET /agentic_ai/chat/stream?") for line in self.proxy.seen), "no EventSource"
        assert found["thread"]["state"] == "completed", f"the run ended {found['thread']['state']}"
        answer = found["rows"][-1]
        assert answer["role"] == "assistant" and answer["content"] == self.words, "the answer is not whole"
        bubbles = [bubble for bubble in shown if bubble["id"] == answer["id"]]
        assert len(bubbles) == 1 and bubbles[0]["text"].strip().endswith(f"w{WORDS - 1}"), \
            "the page does not show the whole answer once"
        assert len({bubble["id"] for bubble in shown}) == len(shown), "a row shown twice"
        return f"cut after {self.proxy.cut_after_tokens} tokens, followed again, completed, answer shown once"

    def case_polled(self) -> str:
        self.proxy.refuse_follow = True
        cuts, polls = self.proxy.cuts, sum("/agentic_ai/chat/poll" in line for line in self.proxy.seen)
        shown, found = self.chat("resume check: polled after the cut")
        assert self.proxy.cuts == cuts + 1, "the stream was not cut"
        assert sum("/agentic_ai/chat/poll" in line for line in self.proxy.seen) > polls, "the chat did not poll"
        state = found["thread"]["state"]
        assert state == "interrupted", f"nobody followed the run, yet it ended {state}"
        answer = found["rows"][-1]
        assert answer["role"] == "assistant" and answer["content"].startswith("w0 w1"), "the partial answer lost"
        assert any(bubble["id"] == answer["id"] for bubble in shown), "the page does not show where it ended"
        return "cut, follow refused (503), polled to the end: interrupted after the grace, partial answer shown"

    def case_last_event_id(self) -> str:
        found = self.thread_of("resume check: a long answer please")
        thread_id, ids = found["thread"]["id"], [row["id"] for row in found["rows"]]
        url = f"{self.server.base_url}/agentic_ai/chat/stream"
        cookies = {"session_id": self.client.cookies["session_id"]}
        with httpx.stream("GET", url, params={"thread_id": thread_id}, cookies=cookies, timeout=30,
                          headers={"Accept": "text/event-stream"}) as response:
            first = next(json.loads(data) for name, data in sse_events(response) if name == "message")
        got = [first["id"]]
        with httpx.stream("GET", url, params={"thread_id": thread_id}, cookies=cookies, timeout=30,
                          headers={"Accept": "text/event-stream", "Last-Event-ID": str(first["id"])}) as response:
            for name, data in sse_events(response):
                if name == "done":
                    break
                got.append(json.loads(data)["id"])
        assert got == ids, f"rows {got}, stored {ids}"
        return f"{len(ids)} rows, each once, across a reconnection with Last-Event-ID"


def main() -> int:
    check = Check(sys.argv[1])
    passed = failed = 0
    try:
        for case in (check.case_resumed, check.case_polled, check.case_last_event_id):
            started = time.monotonic()
            try:
                outcome = case()
                passed += 1
                print(f"[stream-resume] {case.__name__}: ok in {time.monotonic() - started:.1f} s: {outcome}")
            except Exception as exc:  # noqa: BLE001 - each case reported
                failed += 1
                print(f"[stream-resume] {case.__name__}: FAILED: {type(exc).__name__}: {exc}")
    finally:
        check.close()
    print(f"{passed} passed, {failed} failed")
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())
