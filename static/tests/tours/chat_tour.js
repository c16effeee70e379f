import { registry } from "@web/core/registry";

/**
 * Browser tours of the chat (issue 11 point 5), run by
 * tests/test_chat_tour.py against the scripted LLM server.
 */
const AGENT = "General ERP Assistant";

function send(text) {
    return [
        { trigger: ".o_agentic_ai_input:enabled", run: `edit ${text}` },
        // Enter sends (Shift+Enter would break the line).
        { trigger: ".o_agentic_ai_input", run: "press Enter" },
    ];
}

function idle() {
    return { trigger: ".o_agentic_ai_chat:not(:has(.o_agentic_ai_stop)) .o_agentic_ai_send" };
}

registry.category("web_tour.tours").add("agentic_ai_chat_quotation", {
    url: "/odoo",
    steps: () => [
        { trigger: ".o_navbar_apps_menu button:enabled", run: "click" },
        { trigger: '.o_app[data-menu-xmlid="agentic_ai.menu_agentic_ai_root"]', run: "click" },
        { trigger: ".o_agentic_ai_chat .o_agentic_ai_empty" },
        { trigger: "select.o_agentic_ai_agent_select", run: `selectByLabel ${AGENT}` },
        // Shift+Enter breaks the line instead of sending.
        { trigger: ".o_agentic_ai_input", run: "edit Create a quotation" },
        { trigger: ".o_agentic_ai_input", run: "press Shift+Enter" },
        { trigger: ".o_agentic_ai_chat:not(:has(.o_agentic_ai_bubble_user)) .o_agentic_ai_input" },
        ...send("Create a quotation for Azure Interior: 3 Office Chair Black and 1 Large Cabinet"),
        { trigger: ".o_agentic_ai_bubble_user:contains(Azure Interior)" },
        // The tool steps, collapsed, with their arguments on a click.
        { trigger: ".o_agentic_ai_bubble_tool_call:contains(create_quotation) .o_agentic_ai_tool_toggle", run: "click" },
        { trigger: ".o_agentic_ai_bubble_tool_call .o_agentic_ai_tool_detail:contains(Office Chair Black)" },
        { trigger: ".o_agentic_ai_bubble_tool_result:contains(create_quotation)" },
        // Tokens arrive before the answer ends: the streaming cursor is there.
        { trigger: ".o_agentic_ai_streaming .o_agentic_ai_cursor" },
        { trigger: ".o_agentic_ai_bubble_assistant[data-message-id]:contains(quotation is ready)" },
        idle(),
        { trigger: ".o_agentic_ai_chat:not(:has(.o_agentic_ai_cursor))" },
        { trigger: ".o_agentic_ai_thread.active:contains(Create a quotation for Azure)" },
        // Tokens and cost of the thread on demand.
        { trigger: ".o_agentic_ai_stats_button", run: "click" },
        { trigger: ".o_agentic_ai_stats:contains(Cost)" },
    ],
});

registry.category("web_tour.tours").add("agentic_ai_chat_confirmation", {
    url: "/odoo/action-agentic_ai.chat_action",
    steps: () => [
        { trigger: "select.o_agentic_ai_agent_select", run: `selectByLabel ${AGENT}` },
        ...send("delete Tour Partner A"),
        { trigger: ".o_agentic_ai_confirmation:contains(Tour Partner A)" },
        { trigger: ".o_agentic_ai_bubble_confirmation_request" },
        { trigger: ".o_agentic_ai_approve", run: "click" },
        { trigger: ".o_agentic_ai_bubble_assistant:contains(Deleted Tour Partner A)" },
        { trigger: ".o_agentic_ai_chat:not(:has(.o_agentic_ai_confirmation))" },
        idle(),
        ...send("delete Tour Partner B"),
        { trigger: ".o_agentic_ai_confirmation:contains(Tour Partner B)" },
        { trigger: ".o_agentic_ai_reject", run: "click" },
        { trigger: ".o_agentic_ai_reject_reason", run: "edit still a customer" },
        { trigger: ".o_agentic_ai_reject", run: "click" },
        { trigger: ".o_agentic_ai_bubble_assistant:contains(kept Tour Partner B)" },
        { trigger: ".o_agentic_ai_chat:not(:has(.o_agentic_ai_confirmation))" },
        idle(),
    ],
});

registry.category("web_tour.tours").add("agentic_ai_chat_stop", {
    url: "/odoo/action-agentic_ai.chat_action",
    steps: () => [
        { trigger: "select.o_agentic_ai_agent_select", run: `selectByLabel ${AGENT}` },
        ...send("tell me a long story"),
        { trigger: ".o_agentic_ai_streaming .o_agentic_ai_cursor" },
        { trigger: ".o_agentic_ai_stop", run: "click" },
        idle(),
        { trigger: ".o_agentic_ai_chat:not(:has(.o_agentic_ai_cursor))" },
    ],
});
