"""A second Chrome DevTools client on the page a tour runs in, so a tour can
ask the Python side for a screenshot (or hand it data) at the moment it
chooses, without patching Odoo's ChromeBrowser.

Odoo's ChromeBrowser starts Chromium on a random DevTools port, which
Chromium writes into ``DevToolsActivePort`` of its temporary profile
(``<tmp>/*_chrome_odoo``). ``PageProbe.serving()`` runs a thread that finds
the browser whose page shows this test's server (``base_url``: other test
processes on the machine have their own), attaches to that page target
(Chrome accepts several DevTools clients on one target) and polls it:

* the page calls ``window.__agenticProbe.ask(name, data, shot)`` (see
  static/tests/tours/chat_screenshots_tour.js), which stores the request
  and returns a promise;
* the thread sees the request, captures the page
  (``Page.captureScreenshot``) when ``shot`` is true, records ``data``,
  and resolves the page's promise; the tour then goes on.
"""
from __future__ import annotations

import base64
import json
import tempfile
import threading
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import websocket

PAGE_SCRIPT = "JSON.stringify((window.__agenticProbe && window.__agenticProbe.pending) || null)"


class PageProbe:
    """Serve the page's probe requests: ``shots`` maps a name to PNG bytes,
    ``data`` maps a name to what the page sent; ``errors`` lists failures."""

    def __init__(self, base_url: str):
        self.base_url = base_url
        self.started = time.time()
        self.shots: dict[str, bytes] = {}
        self.data: dict[str, object] = {}
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._ids = iter(range(1, 1 << 30))

    @contextmanager
    def serving(self):
        """Within the block, this probe answers the requests of the page
        that shows ``base_url`` in a browser started by Odoo's tests."""
        thread = threading.Thread(target=self._run, name="agentic_ai page probe", daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            thread.join(10)

    def _page_ws_url(self) -> str | None:
        """The DevTools websocket of a page showing ``base_url`` in a browser
        started since this probe was made."""
        for port_file in Path(tempfile.gettempdir()).glob("*_chrome_odoo/DevToolsActivePort"):
            try:
                if port_file.stat().st_mtime < self.started - 1:
                    continue
                port = int(port_file.read_text().split()[0])
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=1) as response:
                    targets = json.load(response)
            except (OSError, ValueError, IndexError):
                continue
            for target in targets:
                if target.get("type") == "page" and target.get("url", "").startswith(self.base_url):
                    return target["webSocketDebuggerUrl"]
        return None

    def _call(self, ws, method: str, params: dict | None = None) -> dict:
        ident = next(self._ids)
        ws.send(json.dumps({"id": ident, "method": method, "params": params or {}}))
        while True:
            answer = json.loads(ws.recv())
            if answer.get("id") == ident:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer["result"]

    def _evaluate(self, ws, expression: str):
        result = self._call(ws, "Runtime.evaluate", {"expression": expression, "returnByValue": True})
        return result.get("result", {}).get("value")

    def _run(self):
        ws = None
        while not self._stop.is_set():
            try:
                if ws is None:
                    url = self._page_ws_url()
                    if not url:
                        time.sleep(0.1)
                        continue
                    ws = websocket.create_connection(url, suppress_origin=True, timeout=20)
                pending = self._evaluate(ws, PAGE_SCRIPT)
                request = json.loads(pending) if pending else None
                if not request:
                    time.sleep(0.05)
                    continue
                name = request["name"]
                self.data[name] = request.get("data")
                if request.get("shot"):
                    png = self._call(ws, "Page.captureScreenshot", {"format": "png"})["data"]
                    self.shots[name] = base64.b64decode(png)
                self._evaluate(ws, f"window.__agenticProbe.done({json.dumps(request['seq'])})")
            except (OSError, websocket.WebSocketException, RuntimeError, ValueError) as error:
                if self._stop.is_set():
                    break
                self.errors.append(repr(error))
                if ws is not None:
                    ws.close()
                ws = None
                time.sleep(0.1)
        if ws is not None:
            ws.close()
