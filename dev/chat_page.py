"""JavaScript that drives the chat client action in a real browser, shared
by the checks and benchmarks that use one (dev/stream_resume_check.py,
bench/first_token_browser.py).

``CHAT_HELPERS`` defines, inside an ``async`` function body: ``until(test,
what, ms)`` (waits for ``test()`` or throws naming ``what``), ``$``
(``querySelector``), ``newConversation(agent)`` (a new conversation of the
agent named ``agent``, once the chat is idle) and ``typeAndSend(text)``
(the composer's Enter)."""

CHAT_HELPERS = """
    const until = async (test, what, ms = 60000) => {
        const end = Date.now() + ms;
        while (!test()) {
            if (Date.now() > end) { throw new Error("timeout waiting for " + what); }
            await new Promise((r) => setTimeout(r, 10));
        }
    };
    const $ = (selector) => document.querySelector(selector);
    const newConversation = async (agent) => {
        await until(() => $(".o_agentic_ai_new_thread") && !$(".o_agentic_ai_stop"), "an idle chat");
        $(".o_agentic_ai_new_thread").click();
        await until(() => $("select.o_agentic_ai_agent_select:enabled") && !$(".o_agentic_ai_bubble"),
                    "a new conversation");
        const select = $("select.o_agentic_ai_agent_select");
        select.value = [...select.options].find((o) => o.text.trim() === agent).value;
        select.dispatchEvent(new Event("change", { bubbles: true }));
    };
    const typeAndSend = (text) => {
        const input = $(".o_agentic_ai_input");
        input.value = text;
        input.dispatchEvent(new Event("input", { bubbles: true }));
        input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
    };
"""
