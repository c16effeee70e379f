"""Per-call cost of the OpenAI adapter on our side, against a bare httpx
request to the same local scripted server, in one run.

Adapter = message and tool formatting, the pooled HTTP request, response
parsing and tool-call argument parsing. Baseline = ``httpx.Client.post`` of
a prepared body and ``json()`` of the answer. Also shows what a new httpx
client per call would cost (the reason ``llm/http.py`` shares one).
Run: ``.venv/bin/python -m bench.adapter_overhead`` from the repository root.
"""
import statistics
import time

import httpx

from dev.scripted_llm import Scenario, ScriptedLLMServer
from llm import OpenAIAdapter, ProviderConfig

ROUNDS, CALLS = 7, 40
MESSAGES = [{"role": "system", "content": "You are an ERP assistant."},
            {"role": "user", "content": "Find the customer Azure Interior"},
            {"role": "assistant", "content": None,
             "tool_calls": [{"id": "c1", "name": "odoo_search_read", "arguments": {"model": "res.partner"}}]},
            {"role": "tool", "tool_call_id": "c1", "name": "odoo_search_read", "content": "1 record found " * 50}]
TOOLS = [{"name": f"tool_{i}", "description": "does things " * 10,
          "parameters": {"type": "object", "properties": {"model": {"type": "string"}}, "required": ["model"]}}
         for i in range(9)]
REPLY = {"tool_calls": [{"name": "odoo_search_read", "arguments": {"model": "res.partner", "limit": 5}}]}


def per_call(fn):
    samples = []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        for _ in range(CALLS):
            fn()
        samples.append((time.perf_counter() - started) / CALLS * 1000)
    return statistics.median(samples)


def main():
    with ScriptedLLMServer(Scenario().add(REPLY, uses=None)) as server:
        adapter = OpenAIAdapter(ProviderConfig(provider_type="custom", base_url=server.base_url, model="m"))
        url = server.base_url + "/chat/completions"
        body = adapter._body(MESSAGES, TOOLS, False)
        bare = httpx.Client()
        adapter.chat_completion(MESSAGES, TOOLS)
        baseline = per_call(lambda: bare.post(url, json=body).json())
        ours = per_call(lambda: adapter.chat_completion(MESSAGES, TOOLS))
        fresh = per_call(lambda: httpx.post(url, json=body).json())
    print(f"bare pooled httpx request      : {baseline:.3f} ms/call (baseline)")
    print(f"OpenAIAdapter.chat_completion  : {ours:.3f} ms/call, ratio {ours / baseline:.2f}x, "
          f"overhead {ours - baseline:.3f} ms/call")
    print(f"new httpx client per request   : {fresh:.3f} ms/call, ratio {fresh / baseline:.2f}x")


if __name__ == "__main__":
    main()
