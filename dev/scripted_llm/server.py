"""The scripted LLM HTTP server: four wire formats (see ``wire.py``).

Serves on a loopback port:

* ``POST /v1/chat/completions`` (OpenAI, Azure, custom, Ollama): a chat
  completion, or server-sent events when ``"stream": true`` — text in word
  deltas, tool-call arguments in small pieces under one ``index`` per call,
  usage last, then ``data: [DONE]``;
* ``POST /v1beta/models/{model}:generateContent`` and
  ``:streamGenerateContent?alt=sse`` (Gemini);
* ``POST /v1/messages`` (Anthropic; streamed as its event sequence);
* embeddings: ``/v1/embeddings`` (OpenAI), ``:batchEmbedContents`` (Gemini),
  ``/api/embed`` (Ollama) — deterministic unit vectors from the text.

Every request is recorded raw (``requests[i]["body"]``) and, for chat calls,
in a neutral OpenAI-shaped view (``requests[i]["neutral"]``) that scenario
matchers read.

Run standalone for the demo: ``python -m dev.scripted_llm --port 8901
--scenario demo`` (from the repository root).
"""
from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib
import json
import math
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from . import wire as wire_format
from .scenario import Scenario


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
    # Connections kept open between requests, as the providers keep them (HTTP/1.1): the adapters' pooled client
    # reuses them, and no call pays for a new connection that production would not. Every answer says where it
    # ends: a Content-Length, or chunks for a stream.
    protocol_version = "HTTP/1.1"
    # Headers and body are written apart: without TCP_NODELAY (set by the providers' servers, as by nginx and
    # uvicorn) the body of a kept connection would wait for the client's delayed acknowledgement, 40 ms.
    disable_nagle_algorithm = True
    scenario: Scenario  # set per server class

    def log_message(self, *_args):  # keep test output clean
        pass

    def do_POST(self):  # the name http.server calls
        started = time.monotonic()
        try:
            return self._handle_post()
        finally:
            # Time spent inside this server, so tests can tell it apart from the client's.
            if self.scenario.requests:
                self.scenario.requests[-1].setdefault("server_ms", (time.monotonic() - started) * 1000)

    def _read_body(self) -> bytes:
        """The request's body, whole, whether sized or chunked: what is left unread would be taken for the next
        request of the kept connection."""
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            parts = []
            while True:
                size = int(self.rfile.readline().split(b";", 1)[0].strip() or b"0", 16)
                if not size:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):  # the trailer, to its blank line
                        pass
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()  # the chunk's CRLF
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _handle_post(self):
        try:
            body = json.loads(self._read_body() or b"{}")
        except ValueError:  # not JSON, or chunks that do not parse: the connection is out of step, closed after
            self.close_connection = True
            return self._send_json(400, {"error": {"message": "invalid JSON body"}})
        path = self.path.split("?", 1)[0]
        self.scenario.record(self.path, dict(self.headers), body)
        if path.endswith(("/embeddings", "/api/embed", ":batchEmbedContents")):
            return self._embeddings(path, body)
        if path.endswith("/chat/completions"):
            wire = "openai"
        elif path.endswith((":generateContent", ":streamGenerateContent")):
            wire = "gemini"
        elif path.endswith("/messages"):
            wire = "anthropic"
        else:
            return self._send_json(404, {"error": {"message": f"unknown path {path}"}})
        request = wire_format.neutral_request(wire, body)
        self.scenario.requests[-1]["neutral"] = request
        reply = self.scenario.next_reply(request)
        if reply.get("delay"):
            time.sleep(reply["delay"])
        if reply.get("status"):
            return self._send_json(reply["status"], {"error": {"message": reply.get("error", "scripted error"),
                                                              "type": "scripted"}}, reply.get("headers"))
        if "raw" in reply:  # a malformed answer, sent verbatim with status 200
            raw = reply["raw"]
            return self._send_bytes(200, (raw if isinstance(raw, str) else json.dumps(raw)).encode())
        delay = reply.get("chunk_delay", 0.0)
        if "raw_stream" in reply:  # exact events, e.g. a provider's chunk sequence from a bug report
            return self._send_events([(None, item) for item in reply["raw_stream"]], delay)
        model = body.get("model") or path.rsplit("/", 1)[-1].split(":")[0]
        if wire == "gemini":
            if path.endswith(":streamGenerateContent"):
                return self._send_events([(None, e) for e in wire_format.gemini_stream(request, reply, model)], delay)
            return self._send_json(200, wire_format.gemini_response(request, reply, model))
        if wire == "anthropic":
            if body.get("stream"):
                return self._send_events(wire_format.anthropic_stream(request, reply, model), delay)
            return self._send_json(200, wire_format.anthropic_response(request, reply, model))
        if body.get("stream"):
            return self._stream(body, reply)
        return self._send_json(200, self._completion(body, reply))

    # ------------------------------------------------------------ sending
    def _send_bytes(self, status: int, data: bytes, headers: dict | None = None) -> None:
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send_json(self, status: int, payload: dict, headers: dict | None = None) -> None:
        self._send_bytes(status, json.dumps(payload).encode(), headers)

    def _send_events(self, events, chunk_delay: float = 0.0) -> None:
        """Server-sent events: ``(event_name or None, data)`` pairs; data is
        sent verbatim when it is a string. ``chunk_delay``: seconds between
        events. ``requests[-1]["stream"]`` records ``total`` events,
        ``sent`` (count), ``sent_at`` (``time.monotonic()`` of each),
        ``sent_epoch`` (``time.time()`` of each, to compare with another
        process's clock on this machine, e.g. a browser's) and ``dropped``
        (the client closed the connection before the end)."""
        log = {"total": len(events), "sent": 0, "sent_at": [], "sent_epoch": [], "dropped": False}
        self.scenario.requests[-1]["stream"] = log
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")  # as the providers stream: one chunk an event
        self.end_headers()
        for name, data in events:
            if log["sent"] and chunk_delay:
                time.sleep(chunk_delay)
            text = data if isinstance(data, str) else json.dumps(data)
            event = ((f"event: {name}\n" if name else "") + f"data: {text}\n\n").encode()
            try:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                log["dropped"] = True
                self.close_connection = True
                return
            log["sent"] += 1
            log["sent_at"].append(time.monotonic())
            log["sent_epoch"].append(time.time())
        try:
            self.wfile.write(b"0\r\n\r\n")  # the last chunk: the stream ends, the connection stays
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _embeddings(self, path: str, body: dict) -> None:
        failure = self.scenario.embeddings_error
        if failure:
            return self._send_json(failure[0], {"error": {"message": failure[1]}})
        dims = self.scenario.embedding_dims
        dim = dims.pop(0) if dims else self.scenario.embedding_dim
        if path.endswith(":batchEmbedContents"):  # Gemini
            texts = ["".join(p.get("text", "") for p in r["content"]["parts"]) for r in body.get("requests") or []]
            return self._send_json(200, {"embeddings": [{"values": embedding_of(t, dim)} for t in texts]})
        texts = body.get("input")
        texts = [texts] if isinstance(texts, str) else texts or []
        if path.endswith("/api/embed"):  # Ollama
            return self._send_json(200, {"model": body.get("model"),
                                         "embeddings": [embedding_of(t, dim) for t in texts]})
        return self._send_json(200, {
            "object": "list", "model": body.get("model"),
            "data": [{"object": "embedding", "index": i, "embedding": embedding_of(t, dim)}
                     for i, t in enumerate(texts)],
            "usage": {"prompt_tokens": sum(len(t.split()) for t in texts), "total_tokens": 0},
        })

    # --------------------------------------------------------- OpenAI shapes
    def _completion(self, body: dict, reply: dict) -> dict:
        calls = wire_format.openai_calls(reply)
        message = {"role": "assistant", "content": reply.get("content")}
        if reply.get("reasoning"):  # DeepSeek's and vLLM's name for it
            message["reasoning_content"] = reply["reasoning"]
        if calls:
            message["tool_calls"] = calls
        completion = {
            "id": "chatcmpl-scripted", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "scripted"),
            "choices": [{"index": 0, "message": message,
                         "finish_reason": reply.get("finish_reason") or ("tool_calls" if calls else "stop")}],
        }
        usage = wire_format.openai_usage(body, reply)
        if usage is not None:
            completion["usage"] = usage
        return completion

    def _stream(self, body: dict, reply: dict) -> None:
        base = {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "model": body.get("model", "scripted")}
        events = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                        "finish_reason": None}]}]
        for word in wire_format.words(reply.get("reasoning") or ""):
            events.append({**base, "choices": [{"index": 0, "delta": {"reasoning_content": word},
                                                "finish_reason": None}]})
        content = reply.get("content") or ""
        size = reply.get("chunk_chars")  # one token a chunk, as llama.cpp streams: pieces of this many characters
        pieces = [content[i:i + size] for i in range(0, len(content), size)] if size else wire_format.words(content)
        for word in pieces:
            events.append({**base, "choices": [{"index": 0, "delta": {"content": word}, "finish_reason": None}]})
        for index, call in enumerate(wire_format.openai_calls(reply)):
            events.append({**base, "choices": [{"index": 0, "finish_reason": None, "delta": {"tool_calls": [{
                "index": index, "id": call["id"], "type": "function",
                "function": {"name": call["function"]["name"], "arguments": ""}}]}}]})
            args = call["function"]["arguments"]
            for start in range(0, len(args), wire_format.ARG_PIECE):
                events.append({**base, "choices": [{"index": 0, "finish_reason": None, "delta": {"tool_calls": [{
                    "index": index, "function": {"arguments": args[start:start + wire_format.ARG_PIECE]}}]}}]})
        finish = reply.get("finish_reason") or ("tool_calls" if reply.get("tool_calls") else "stop")
        events.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
        usage = wire_format.openai_usage(body, reply)
        if usage is not None and (body.get("stream_options") or {}).get("include_usage"):
            events.append({**base, "choices": [], "usage": usage})
        events.append("[DONE]")
        self._send_events([(None, e) for e in events], reply.get("chunk_delay", 0.0))


class _QuietServer(ThreadingHTTPServer):
    def __init__(self, *args, **kwargs):
        self.open_connections: set[socket.socket] = set()  # kept open between requests: closed by ``stop``
        self.connections_lock = threading.Lock()
        super().__init__(*args, **kwargs)

    def process_request(self, request, client_address):
        with self.connections_lock:
            self.open_connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request):
        with self.connections_lock:
            self.open_connections.discard(request)
        super().shutdown_request(request)

    def close_open_connections(self) -> None:
        """End every connection still open (a stopped provider answers nothing more, as a stopped server)."""
        with self.connections_lock:
            connections, self.open_connections = list(self.open_connections), set()
        for connection in connections:
            with contextlib.suppress(OSError):  # closed meanwhile
                connection.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request, client_address):
        """A client that gave up (timeout tests) is expected, not an error."""
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


class ScriptedLLMServer:
    """Run a ``Scenario`` behind a real HTTP server on 127.0.0.1.

    Use as a context manager or call ``start()``/``stop()``. ``base_url`` is
    what a provider's ``api_base_url`` should be set to."""

    def __init__(self, scenario: Scenario | None = None, port: int = 0):
        self.scenario = scenario or Scenario()
        handler = type("Handler", (_Handler,), {"scenario": self.scenario})
        self._httpd = _QuietServer(("127.0.0.1", port), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="scripted-llm", daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    @property
    def requests(self) -> list[dict]:
        return self.scenario.requests

    def start(self) -> ScriptedLLMServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop accepting, and end the connections kept open: nothing is answered after this."""
        self._httpd.shutdown()
        self._httpd.server_close()
        self._httpd.close_open_connections()

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
