"""Fed to `odoo shell` by dev/real_server_check.sh (issue 24 point 6): turns
driven through the product, over real HTTP, against llama-cpp-python's
server with SmolLM2-135M-Instruct (AGENTIC_AI_REAL_SERVER_URL), on a
throwaway copy of the test database. A 135M model answers badly; what is
checked is that every turn ends in the state its case names, never in a dead
tool loop, an HTTP 500 or a crash:

- a native tool loop forced with ``tool_choice`` (a named tool: this server
  refuses "required"), plain and streamed: at least two tool calls run, then
  the turn ends on its call limit; with ``tool_choice`` auto, plain and
  streamed (a streamed tool call comes back as an empty 200): completed;
- prompt-based tools (*Supports Tool Calling* off), streamed: nothing of the
  ``<tool_call>`` protocol reaches what the user sees;
- a context overflow: the turn ends ``error`` saying the conversation is too
  long for the model (after one trimmed retry);
- a model that never stops: the answer is cut at ``max_tokens`` and says so.

One line per case, then ``N passed, M failed``.
"""
import logging
import os
import time

env = env  # provided by odoo-bin shell  # noqa: F821, PLW0127
logging.getLogger("httpx").setLevel(logging.WARNING)
URL = os.environ["AGENTIC_AI_REAL_SERVER_URL"]
TOOLS = ("odoo_search_read", "odoo_get_model_info", "odoo_get_available_models")

env["ir.config_parameter"].sudo().set_param("agentic_ai.max_requests_per_minute", "1000")
# This server's function-calling format takes tool_choice "auto" or a named tool, not "required" (HTTP 500): the
# loop is forced with a named tool, through the provider's Extra Parameters.
# tool_choice goes through Extra Parameters (not the provider's Tool Choice) so that the same script measures a
# checkout from before that field.
FORCED = '{"tool_choice": {"type": "function", "function": {"name": "odoo_search_read"}}}'
AUTO = '{"tool_choice": "auto"}'
provider = env["agentic.ai.llm.provider"].create({
    "name": "llama.cpp SmolLM2", "provider_type": "custom", "api_base_url": URL, "default_model": "smollm2",
    "context_window": 2048, "max_tokens": 96, "timeout_seconds": 60, "extra_params": FORCED})
agent = env.ref("agentic_ai.agent_general_assistant")
agent.write({"llm_provider_id": provider.id, "fallback_provider_id": False, "require_confirmation": "never",
             "execution_mode": "react", "enable_memory": False, "max_llm_calls": 3,
             "tool_ids": [(6, 0, env["agentic.ai.tool"].search([("name", "in", TOOLS)]).ids)]})
if agent.state != "active":
    agent.action_activate()
results = []


def turn(message, stream=False, thread=None):
    thread = thread or agent.start_thread(name="real server check")
    tokens = []
    emit = (lambda event, data: tokens.append(data.get("text", "")) if event == "token" else None) if stream else None
    started = time.monotonic()
    result = thread._send_message(message, emit=emit)  # the product's one door (agentic.ai.thread)
    env.cr.commit()
    return thread, result, "".join(tokens), time.monotonic() - started


def check(name, ok, detail):
    results.append(ok)
    print(f"[real-server] {'ok  ' if ok else 'FAIL'} {name}: {detail}", flush=True)


for stream in (False, True):
    thread, result, shown, seconds = turn("How many contacts are there? Use the tools.", stream=stream)
    calls = thread.message_ids.filtered(lambda m: m.role == "tool_call")
    check(f"native tool loop forced with a named tool_choice, {'streamed' if stream else 'plain'}",
          len(calls) >= 2 and result.state == "completed",
          f"{len(calls)} tool calls, state {result.state}, {seconds:.1f} s: {result.reply[:120]!r}")

provider.write({"extra_params": AUTO})
for stream in (False, True):
    thread, result, shown, seconds = turn("How many contacts are there? Use the tools.", stream=stream)
    calls = thread.message_ids.filtered(lambda m: m.role == "tool_call")
    check(f"native tools, tool_choice auto, {'streamed' if stream else 'plain'}", result.state == "completed",
          f"{len(calls)} tool calls, state {result.state}, {seconds:.1f} s: {result.reply[:120]!r}")

provider.write({"supports_tool_calling": False, "extra_params": False})
thread, result, shown, seconds = turn("List the models you can read, with a tool call.", stream=True)
offered = bool(getattr(provider._get_adapter(), "prompt_tools", False))  # the tools reach the model as the protocol
check("prompt-based tools, streamed", offered and result.state in ("completed", "error")
      and "<tool_call" not in shown and "<tool_call" not in (result.reply or ""),
      f"tools offered in the prompt: {offered}, state {result.state}, {len(shown)} characters shown, "
      f"{seconds:.1f} s")

provider.write({"supports_tool_calling": True, "extra_params": AUTO, "context_window": 0})
thread, result, shown, seconds = turn("Summarise this: " + "the quick brown fox jumps over the lazy dog " * 400)
check("context overflow", result.state == "error" and "too long for the AI model" in result.reply,
      f"state {result.state}, {seconds:.1f} s: {result.reply[:160]!r}")

provider.write({"max_tokens": 8, "extra_params": '{"tool_choice": "none"}'})
thread, result, shown, seconds = turn("Write a long story about a dragon and a knight.", stream=True)
check("a model that never stops", result.state == "completed" and "output limit" in result.reply,
      f"state {result.state}, {seconds:.1f} s: {result.reply[-100:]!r}")

print(f"{sum(results)} passed, {len(results) - sum(results)} failed", flush=True)
