"""Per-call cost of each adapter on our side (formatting the request,
parsing the answer, tool-call arguments), against a bare pooled httpx
request of the same prepared body to the same local scripted server, in one
run. Also shows what a new httpx client per call would cost (the reason
``llm/http.py`` shares one).

Run from the repository root: ``.venv/bin/python -m bench.adapter_overhead``.
"""
import statistics
import time

import httpx

from dev.scripted_llm import Scenario, ScriptedLLMServer
from llm import AnthropicAdapter, GeminiAdapter, OllamaAdapter, OpenAIAdapter, ProviderConfig
from llm.prompt_tools import prompt_messages

ROUNDS, CALLS = 7, 40
MESSAGES = [{"role": "system", "content": "You are an ERP assistant."},
            {"role": "user", "content": "Find the customer Azure Interior"},
            {"role": "assistant", "content": None,
             "tool_calls": [{"id": "c1", "name": "odoo_search_read", "arguments": {"model": "res.partner"}}]},
            {"role": "tool", "tool_call_id": "c1", "name": "odoo_search_read", "content": "1 record found " * 50}]
TOOLS = [{"name": f"tool_{i}", "description": "does things " * 10,
          "parameters": {"type": "object", "properties": {"model": {"type": "string"}, "limit": {"type": "integer"}},
                         "required": ["model"]}} for i in range(9)]
REPLY = {"content": "Let me look.",
         "tool_calls": [{"name": "tool_0", "arguments": {"model": "res.partner", "limit": 5}}]}


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
        root = server.base_url.removesuffix("/v1")
        config = {"provider_type": "x", "model": "m", "api_key": "k"}
        cases = {
            "openai": (OpenAIAdapter(ProviderConfig(base_url=root + "/v1", **config)),
                       lambda a: (a._url("/chat/completions"), a._headers(), a._body(MESSAGES, TOOLS, False))),
            "ollama (prompt tools)": (OllamaAdapter(ProviderConfig(base_url=root + "/v1", supports_tool_calling=False,
                                                                   **config)),
                                      lambda a: (a._url("/chat/completions"), a._headers(),
                                                 a._body(prompt_messages(MESSAGES, TOOLS), None, False))),
            "gemini": (GeminiAdapter(ProviderConfig(base_url=root + "/v1beta", **config)),
                       lambda a: (a._url("m", "generateContent"), a._headers(), a._body(MESSAGES, TOOLS))),
            "anthropic": (AnthropicAdapter(ProviderConfig(base_url=root + "/v1", **config)),
                          lambda a: (a._url(), a._headers(), a._body(MESSAGES, TOOLS, False))),
        }
        bare = httpx.Client()
        for name, (adapter, prepare) in cases.items():
            url, headers, body = prepare(adapter)
            adapter.chat_completion(MESSAGES, TOOLS)
            baseline = per_call(
                lambda url=url, headers=headers, body=body: bare.post(url, headers=headers, json=body).json())
            ours = per_call(lambda adapter=adapter: adapter.chat_completion(MESSAGES, TOOLS))
            print(f"{name:22s} bare request {baseline:.3f} ms/call (baseline), adapter {ours:.3f} ms/call, "
                  f"ratio {ours / baseline:.2f}x, overhead {ours - baseline:+.3f} ms/call")
        url, headers, body = cases["openai"][1](cases["openai"][0])
        pooled = per_call(lambda: bare.post(url, headers=headers, json=body).json())
        fresh = per_call(lambda: httpx.post(url, headers=headers, json=body).json())
    print(f"new httpx client per request: {fresh:.3f} ms/call vs pooled {pooled:.3f} ms/call, "
          f"ratio {fresh / pooled:.1f}x")


if __name__ == "__main__":
    main()
