"""The scripted LLM HTTP server (OpenAI wire format).

Serves on a loopback port:

* ``POST /v1/chat/completions`` (or without ``/v1``): a chat completion, or
  server-sent events when the body has ``"stream": true`` — text split in
  word deltas, tool-call arguments split in small pieces under one ``index``
  per call, usage in the last event, then ``data: [DONE]``
  (https://platform.openai.com/docs/api-reference/chat-streaming).
* ``POST /v1/embeddings``: deterministic unit vectors derived from the text.

Run standalone for the demo: ``python -m dev.scripted_llm --port 8901
--scenario demo`` (from the repository root).
"""
from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import math
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from .scenario import Scenario

ARG_PIECE = 12  # characters of tool-call arguments per streamed delta


def _words(text: str) -> list[str]:
    parts, current = [], ""
    for char in text:
        current += char
        if char == " ":
            parts.append(current)
            current = ""
    return parts + ([current] if current else [])


def embedding_of(text: str, dim: int) -> list[float]:
    """A deterministic unit vector: texts sharing words get close vectors."""
    vector = [0.0] * dim
    for word in text.lower().split():
        digest = hashlib.sha256(word.encode()).digest()
        vector[digest[0] % dim] += 1.0 if digest[1] % 2 else -1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


class _Handler(BaseHTTPRequestHandler):
    server_version = "ScriptedLLM/1.0"
    scenario: Scenario  # set per server class

    def log_message(self, *_args):  # keep test output clean
        pass

    def _send_json(self, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):  # noqa: N802 - http.server API
        started = time.monotonic()
        try:
            return self._handle_post()
        finally:
            # Time spent inside this server, so tests can tell it apart from the client's.
            if self.scenario.requests:
                self.scenario.requests[-1].setdefault("server_ms", (time.monotonic() - started) * 1000)

    def _handle_post(self):
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except json.JSONDecodeError:
            return self._send_json(400, {"error": {"message": "invalid JSON body"}})
        path = self.path.split("?", 1)[0]
        self.scenario.record(self.path, dict(self.headers), body)
        if path.endswith("/embeddings"):
            texts = body.get("input")
            texts = [texts] if isinstance(texts, str) else texts or []
            return self._send_json(200, {
                "object": "list", "model": body.get("model"),
                "data": [{"object": "embedding", "index": i, "embedding": embedding_of(t, self.scenario.embedding_dim)}
                         for i, t in enumerate(texts)],
                "usage": {"prompt_tokens": sum(len(t.split()) for t in texts), "total_tokens": 0},
            })
        if not path.endswith("/chat/completions"):
            return self._send_json(404, {"error": {"message": f"unknown path {path}"}})
        reply = self.scenario.next_reply(body)
        if reply.get("delay"):
            time.sleep(reply["delay"])
        if reply.get("status"):
            headers = reply.get("headers") or {}
            data = json.dumps({"error": {"message": reply.get("error", "scripted error"), "type": "scripted"}}).encode()
            self.send_response(reply["status"])
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return None
        if "raw" in reply:  # a malformed answer, sent verbatim with status 200
            raw = reply["raw"]
            data = (raw if isinstance(raw, str) else json.dumps(raw)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return None
        if body.get("stream"):
            return self._stream(body, reply)
        return self._send_json(200, self._completion(body, reply))

    # ------------------------------------------------------------ wire shapes
    @staticmethod
    def _calls(reply: dict) -> list[dict]:
        calls = []
        for i, call in enumerate(reply.get("tool_calls") or []):
            args = call.get("arguments", {})
            calls.append({
                "id": call.get("id", f"call_{int(time.time() * 1000) % 100000}_{i}"),
                "type": "function",
                "function": {"name": call["name"], "arguments": args if isinstance(args, str) else json.dumps(args)},
            })
        return calls

    @staticmethod
    def _usage(body: dict, reply: dict) -> dict:
        usage = reply.get("usage") or {
            "prompt_tokens": sum(len(json.dumps(m)) for m in body.get("messages") or []) // 4,
            "completion_tokens": max(1, len(json.dumps(reply)) // 4),
        }
        return {**usage, "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"]}

    def _completion(self, body: dict, reply: dict) -> dict:
        calls = self._calls(reply)
        message = {"role": "assistant", "content": reply.get("content")}
        if calls:
            message["tool_calls"] = calls
        return {
            "id": "chatcmpl-scripted", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "scripted"),
            "choices": [{"index": 0, "message": message,
                         "finish_reason": reply.get("finish_reason") or ("tool_calls" if calls else "stop")}],
            "usage": self._usage(body, reply),
        }

    def _stream(self, body: dict, reply: dict) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        base = {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "model": body.get("model", "scripted")}

        def event(delta: dict, finish=None, usage=None):
            payload = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            if usage:
                payload = {**base, "choices": [], "usage": usage}
            self.wfile.write(f"data: {json.dumps(payload)}\n\n".encode())
            self.wfile.flush()

        event({"role": "assistant", "content": ""})
        for word in _words(reply.get("content") or ""):
            event({"content": word})
        calls = self._calls(reply)
        for index, call in enumerate(calls):
            event({"tool_calls": [{"index": index, "id": call["id"], "type": "function",
                                   "function": {"name": call["function"]["name"], "arguments": ""}}]})
            args = call["function"]["arguments"]
            for start in range(0, len(args), ARG_PIECE):
                event({"tool_calls": [{"index": index, "function": {"arguments": args[start:start + ARG_PIECE]}}]})
        event({}, finish=reply.get("finish_reason") or ("tool_calls" if calls else "stop"))
        if (body.get("stream_options") or {}).get("include_usage"):
            event({}, usage=self._usage(body, reply))
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


class ScriptedLLMServer:
    """Run a ``Scenario`` behind a real HTTP server on 127.0.0.1.

    Use as a context manager or call ``start()``/``stop()``. ``base_url`` is
    what a provider's ``api_base_url`` should be set to."""

    def __init__(self, scenario: Scenario | None = None, port: int = 0):
        self.scenario = scenario or Scenario()
        handler = type("Handler", (_Handler,), {"scenario": self.scenario})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="scripted-llm", daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    @property
    def requests(self) -> list[dict]:
        return self.scenario.requests

    def start(self) -> "ScriptedLLMServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *_exc):
        self.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=8901)
    parser.add_argument("--scenario", default="demo", help="module under dev.scripted_llm defining SCENARIO")
    args = parser.parse_args()
    module = importlib.import_module(f"{__package__}.{args.scenario}_scenario")
    server = ScriptedLLMServer(module.build_scenario(), port=args.port)
    print(f"scripted LLM serving scenario {args.scenario!r} at {server.base_url}", flush=True)
    server._httpd.serve_forever()


if __name__ == "__main__":
    main()
