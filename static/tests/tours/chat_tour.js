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

let quotationName = "";

/** Fail unless `selector` matches exactly `count` elements. */
function count(selector, expected) {
    const found = document.querySelectorAll(selector).length;
    if (found !== expected) {
        throw new Error(`${found} elements match ${selector}, expected ${expected}`);
    }
}

/** Fail unless exactly `expected` elements of `selector` hold `text`. */
function countText(selector, text, expected) {
    const found = [...document.querySelectorAll(selector)].filter((el) =>
        el.textContent.includes(text)
    ).length;
    if (found !== expected) {
        throw new Error(`${found} elements ${selector} hold "${text}", expected ${expected}`);
    }
}

function idle() {
    return { trigger: ".o_agentic_ai_chat:not(:has(.o_agentic_ai_stop)) .o_agentic_ai_send" };
}

/** Type `text` in the composer and press Enter at once, without waiting for a render. */
function typeAndEnter(text) {
    const input = document.querySelector(".o_agentic_ai_input");
    input.value = text;
    input.dispatchEvent(new Event("input", { bubbles: true }));
    input.dispatchEvent(
        new KeyboardEvent("keydown", { key: "Enter", bubbles: true, cancelable: true })
    );
}

/**
 * Make the JSON-RPC requests to `route` late (`delay` ms), or lose the first
 * one before it leaves, as a slow or failing network would (Odoo's rpc goes
 * through XMLHttpRequest). The server's code is untouched. Returns what puts
 * XMLHttpRequest back.
 */
function slowNetwork(route, { delay = 0, loseFirst = false } = {}) {
    const proto = XMLHttpRequest.prototype;
    const { open, send } = proto;
    let lost = !loseFirst;
    proto.open = function (method, url, ...rest) {
        this.agenticUrl = String(url);
        return open.call(this, method, url, ...rest);
    };
    proto.send = function (...args) {
        if (!(this.agenticUrl || "").includes(route)) {
            return send.apply(this, args);
        }
        if (!lost) {
            lost = true;
            setTimeout(() => this.dispatchEvent(new ProgressEvent("error")), delay);
            return;
        }
        setTimeout(() => send.apply(this, args), delay);
    };
    return () => {
        proto.open = open;
        proto.send = send;
    };
}

let restoreNetwork = () => {};

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
        { trigger: ".o_agentic_ai_bubble_user[data-message-id]:contains(Azure Interior)" },
        // The tool steps, collapsed, with their arguments on a click.
        {
            trigger:
                ".o_agentic_ai_bubble_tool_call:contains(create_quotation) .o_agentic_ai_tool_toggle",
            run: "click",
        },
        {
            trigger:
                ".o_agentic_ai_bubble_tool_call .o_agentic_ai_tool_detail:contains(Office Chair Black)",
        },
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
        // A foreign image waits for a click, then loads.
        { trigger: ".o_agentic_ai_chat:not(:has(img.o_agentic_ai_image))" },
        {
            trigger:
                ".o_agentic_ai_bubble_assistant button.o_agentic_ai_image_placeholder[data-src*='/web/static/img/logo.png']",
            run: "click",
        },
        {
            trigger:
                ".o_agentic_ai_bubble_assistant img.o_agentic_ai_image[src*='/web/static/img/logo.png']",
        },
        { trigger: ".o_agentic_ai_chat:not(:has(.o_agentic_ai_image_placeholder))" },
        // The quotation's link in the reply opens its form.
        {
            trigger:
                ".o_agentic_ai_bubble_assistant a.o_agentic_ai_record_link[data-res-model='sale.order']",
            run() {
                quotationName = this.anchor.textContent.trim();
                if (!/^S\d{5}$/.test(quotationName)) {
                    throw new Error(`the link names the quotation, not "${quotationName}"`);
                }
                this.anchor.click();
            },
        },
        {
            trigger: ".o_form_view .o_field_widget[name='name']",
            run() {
                const shown = this.anchor.textContent.trim();
                if (shown !== quotationName) {
                    throw new Error(`the form shows ${shown}, the link named ${quotationName}`);
                }
            },
        },
        { trigger: ".o_breadcrumb:contains(S0)" },
        // Back to the chat: the same conversation is shown again.
        { trigger: ".o_breadcrumb .breadcrumb-item a:contains(Chat)", run: "click" },
        { trigger: ".o_agentic_ai_bubble_assistant[data-message-id]:contains(quotation is ready)" },
        { trigger: ".o_agentic_ai_thread.active:contains(Create a quotation for Azure)" },
    ],
});

registry.category("web_tour.tours").add("agentic_ai_chat_confirmation", {
    url: "/odoo/action-agentic_ai.chat_action",
    steps: () => [
        { trigger: "select.o_agentic_ai_agent_select", run: `selectByLabel ${AGENT}` },
        ...send("delete Tour Partner A"),
        { trigger: ".o_agentic_ai_confirmation:contains(Tour Partner A)" },
        // the exact arguments, one click away (issue 23 point 5)
        { trigger: ".o_agentic_ai_confirmation_arguments summary", run: "click" },
        { trigger: ".o_agentic_ai_confirmation_arguments[open] pre:contains(record_ids)" },
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
        // a long value is folded, never cut: shown whole on demand (issue 23 point 5)
        ...send("note on Tour Partner B"),
        {
            trigger:
                ".o_agentic_ai_changes:not(:contains(END-OF-NOTE)) .o_agentic_ai_show_whole:contains(show all)",
            run: "click",
        },
        {
            trigger:
                ".o_agentic_ai_changes:contains(END-OF-NOTE):not(:has(.o_agentic_ai_show_whole))",
        },
        { trigger: ".o_agentic_ai_cancel", run: "click" },
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
        // While it runs, the conversation cannot be renamed or left.
        { trigger: ".o_agentic_ai_thread.active .o_agentic_ai_rename:disabled" },
        { trigger: ".o_agentic_ai_new_thread", run: "click" },
        { trigger: ".o_notification:contains(press Stop)" },
        { trigger: ".o_agentic_ai_streaming .o_agentic_ai_cursor" },
        { trigger: ".o_agentic_ai_stop", run: "click" },
        idle(),
        { trigger: ".o_agentic_ai_chat:not(:has(.o_agentic_ai_cursor))" },
        { trigger: ".o_agentic_ai_bubble_assistant[data-message-id]:contains(Stop pressed)" },
        { trigger: ".o_agentic_ai_thread.active .o_agentic_ai_rename:enabled" },
    ],
});

registry.category("web_tour.tours").add("agentic_ai_chat_leave", {
    url: "/odoo/action-agentic_ai.chat_action",
    steps: () => [
        { trigger: "select.o_agentic_ai_agent_select", run: `selectByLabel ${AGENT}` },
        ...send("tell me a long story"),
        { trigger: ".o_agentic_ai_streaming .o_agentic_ai_cursor" },
        // The chat is opened again (the systray) while the reply streams: the
        // page that followed the run is gone, the store outlives it.
        { trigger: ".o_agentic_ai_systray button", run: "click" },
        // The conversation comes back, its run is followed to its end, and
        // nothing is left spinning.
        { trigger: ".o_agentic_ai_thread.active:contains(tell me a long story)" },
        // The partial answer the stopped run kept is shown: the poll saw the run end.
        { trigger: ".o_agentic_ai_bubble_assistant[data-message-id]:contains(w0)" },
        idle(),
        { trigger: ".o_agentic_ai_chat:not(:has(.o_agentic_ai_cursor))" },
        { trigger: ".o_agentic_ai_chat:not(:has(.o_agentic_ai_thinking))" },
        { trigger: ".o_agentic_ai_thread.active .o_agentic_ai_rename:enabled" },
        {
            trigger: ".o_agentic_ai_bubble_user[data-message-id]:contains(tell me a long story)",
            run() {
                count(".o_agentic_ai_bubble_user", 1);
                count(".o_agentic_ai_error", 0);
            },
        },
    ],
});

// A message typed while the conversation clicked is still loading goes to
// that conversation, and the page shows no other one's rows.
registry.category("web_tour.tours").add("agentic_ai_chat_hurried_switch", {
    url: "/odoo/action-agentic_ai.chat_action",
    steps: () => [
        { trigger: ".o_agentic_ai_thread:contains(Alpha) .o_agentic_ai_thread_name", run: "click" },
        { trigger: ".o_agentic_ai_bubble_assistant:contains(alpha answer)" },
        {
            trigger: ".o_agentic_ai_thread:contains(Beta) .o_agentic_ai_thread_name",
            run() {
                restoreNetwork = slowNetwork("/agentic_ai/thread/messages", { delay: 1000 });
                this.anchor.click();
                typeAndEnter("hurry up");
            },
        },
        { trigger: ".o_agentic_ai_title:contains(Beta)" },
        { trigger: ".o_agentic_ai_bubble_user[data-message-id]:contains(hurry up)" },
        { trigger: ".o_agentic_ai_bubble_assistant[data-message-id]:contains(hurried answer)" },
        idle(),
        {
            trigger: ".o_agentic_ai_thread.active:contains(Beta)",
            run() {
                restoreNetwork();
                countText(".o_agentic_ai_bubble_assistant", "alpha answer", 0);
                countText(".o_agentic_ai_bubble_user", "hurry up", 1);
                countText(".o_agentic_ai_bubble_user", "beta question", 1);
            },
        },
    ],
});

// A second message while the first one's conversation is still being
// created (a slow network) waits in the composer: one conversation, one run.
registry.category("web_tour.tours").add("agentic_ai_chat_double_send", {
    url: "/odoo/action-agentic_ai.chat_action",
    steps: () => [
        {
            trigger: "select.o_agentic_ai_agent_select",
            run(helpers) {
                restoreNetwork = slowNetwork("/agentic_ai/thread/create", { delay: 1500 });
                return helpers.selectByLabel(AGENT);
            },
        },
        ...send("first message"),
        // Stop, not Send, while the conversation is being created.
        { trigger: ".o_agentic_ai_chat:not(:has(.o_agentic_ai_thread)) .o_agentic_ai_stop" },
        { trigger: ".o_agentic_ai_input", run: () => typeAndEnter("second message") },
        { trigger: ".o_agentic_ai_bubble_assistant[data-message-id]:contains(answer one)" },
        idle(),
        {
            trigger: ".o_agentic_ai_input",
            run() {
                restoreNetwork();
                count(".o_agentic_ai_thread", 1);
                count(".o_agentic_ai_bubble_user", 1);
                if (this.anchor.value !== "second message") {
                    throw new Error(
                        `the composer holds "${this.anchor.value}", not the second message`
                    );
                }
            },
        },
    ],
});

// Retry sends the message again only when it never reached the conversation:
// a request lost by the network is retried; a provider error after the
// message was stored offers no Retry (it would ask the same thing twice).
registry.category("web_tour.tours").add("agentic_ai_chat_retry", {
    url: "/odoo/action-agentic_ai.chat_action",
    steps: () => [
        {
            trigger: "select.o_agentic_ai_agent_select",
            run(helpers) {
                restoreNetwork = slowNetwork("/agentic_ai/thread/create", { loseFirst: true });
                return helpers.selectByLabel(AGENT);
            },
        },
        ...send("hello there"),
        { trigger: ".o_agentic_ai_error .o_agentic_ai_retry", run: "click" },
        { trigger: ".o_agentic_ai_bubble_assistant[data-message-id]:contains(first answer)" },
        idle(),
        {
            trigger: ".o_agentic_ai_chat:not(:has(.o_agentic_ai_error))",
            run() {
                restoreNetwork();
                count(".o_agentic_ai_thread", 1);
                count(".o_agentic_ai_bubble_user", 1);
            },
        },
        ...send("and now?"),
        { trigger: ".o_agentic_ai_error" },
        idle(),
        {
            trigger: ".o_agentic_ai_bubble_user[data-message-id]:contains(and now?)",
            run() {
                count(".o_agentic_ai_error .o_agentic_ai_retry", 0);
                count(".o_agentic_ai_bubble_user", 2);
            },
        },
    ],
});

registry.category("web_tour.tours").add("agentic_ai_chat_br32", {
    url: "/odoo/action-agentic_ai.chat_action",
    steps: () => [
        {
            trigger: "select.o_agentic_ai_agent_select",
            run(helpers) {
                window.__pwned = undefined;
                return helpers.selectByLabel(AGENT);
            },
        },
        ...send("show me the report"),
        { trigger: ".o_agentic_ai_bubble_assistant[data-message-id] .o_agentic_ai_html table" },
        idle(),
        {
            trigger: ".o_agentic_ai_bubble_assistant[data-message-id] .o_agentic_ai_html",
            run() {
                const bubble = this.anchor;
                if (window.__pwned !== undefined) {
                    throw new Error(`a payload ran: window.__pwned = ${window.__pwned}`);
                }
                // Normal Markdown renders.
                if (!bubble.querySelector("table td") || !bubble.querySelector("pre code")) {
                    throw new Error("the table or the code block did not render");
                }
                // Nothing live: no script, no handler, no svg, no javascript: link.
                if (bubble.querySelector("script, svg, iframe, object, embed")) {
                    throw new Error("an active element was rendered");
                }
                for (const el of bubble.querySelectorAll("*")) {
                    for (const attr of el.attributes) {
                        if (attr.name.startsWith("on")) {
                            throw new Error(`an event handler survived: ${attr.name}`);
                        }
                    }
                }
                for (const link of bubble.querySelectorAll("a")) {
                    if (/^\s*(javascript|data|vbscript):/i.test(link.getAttribute("href") || "")) {
                        throw new Error(`a live link survived: ${link.outerHTML}`);
                    }
                }
                // Raw HTML is shown as text.
                const text = bubble.textContent;
                for (const raw of [
                    "<img src=x onerror=",
                    "<svg onload=",
                    "<script>window.__pwned=4</script>",
                ]) {
                    if (!text.includes(raw)) {
                        throw new Error(`the raw HTML ${raw} is not shown as text`);
                    }
                }
            },
        },
        // The link text does nothing when clicked.
        {
            trigger:
                ".o_agentic_ai_bubble_assistant .o_agentic_ai_html :contains(javascript:window.__pwned=3):not(:has(*:contains(javascript:window.__pwned=3)))",
            run: "click",
        },
        {
            trigger: ".o_agentic_ai_bubble_assistant .o_agentic_ai_html",
            run() {
                if (window.__pwned !== undefined) {
                    throw new Error(`the link ran: window.__pwned = ${window.__pwned}`);
                }
                // The foreign image is a placeholder: nothing was fetched.
                count("img[src*='attacker.invalid']", 0);
                count(".o_agentic_ai_image_placeholder[data-src*='attacker.invalid']", 1);
                const requests = performance
                    .getEntriesByType("resource")
                    .filter((entry) => entry.name.includes("attacker.invalid"));
                if (requests.length) {
                    throw new Error(`a request left for attacker.invalid: ${requests[0].name}`);
                }
            },
        },
        { trigger: ".o_agentic_ai_chat:not(:has(.o_agentic_ai_error))" },
    ],
});

registry.category("web_tour.tours").add("agentic_ai_chat_polling_send", {
    url: "/odoo/action-agentic_ai.chat_action",
    steps: () => [
        { trigger: "select.o_agentic_ai_agent_select", run: `selectByLabel ${AGENT}` },
        ...send("summarise my week in the background"),
        // Queued: the message waits for the processor, shown once, pending.
        { trigger: ".o_agentic_ai_queued" },
        {
            trigger: ".o_agentic_ai_bubble_user.o_agentic_ai_pending:contains(summarise my week)",
            run() {
                count(".o_agentic_ai_bubble_user", 1);
            },
        },
        { trigger: ".o_agentic_ai_stop" },
    ],
});

registry.category("web_tour.tours").add("agentic_ai_chat_polling_receive", {
    url: "/odoo/action-agentic_ai.chat_action",
    steps: () => [
        {
            trigger: ".o_agentic_ai_thread:contains(summarise my week) .o_agentic_ai_thread_name",
            run: "click",
        },
        {
            trigger:
                ".o_agentic_ai_bubble_assistant[data-message-id]:contains(processed in the background)",
            run() {
                count(".o_agentic_ai_bubble_user", 1);
                count(".o_agentic_ai_bubble_assistant", 1);
            },
        },
        idle(),
        // A second message, polled while the processor runs it: each row once.
        ...send("and the week before?"),
        // The processor runs in the test's own thread, on the cursor the page's polls share: give it time.
        {
            trigger:
                ".o_agentic_ai_bubble_assistant[data-message-id]:contains(the week before was quiet)",
            timeout: 45000,
        },
        idle(),
        {
            trigger:
                ".o_agentic_ai_chat:not(:has(.o_agentic_ai_pending)):not(:has(.o_agentic_ai_thinking))",
            run() {
                count(".o_agentic_ai_bubble_user", 2);
                count(".o_agentic_ai_bubble_user[data-message-id]", 2);
                count(".o_agentic_ai_bubble_assistant", 2);
            },
        },
    ],
});

registry.category("web_tour.tours").add("agentic_ai_chat_phone", {
    url: "/odoo/action-agentic_ai.chat_action",
    steps: () => [
        // At a phone's width the conversations are folded away, one tap from the header.
        {
            trigger:
                ".o_agentic_ai_chat:not(.o_agentic_ai_sidebar_open) .o_agentic_ai_sidebar_toggle",
            run: "click",
        },
        { trigger: ".o_agentic_ai_sidebar .o_agentic_ai_new_thread", run: "click" },
        {
            trigger:
                ".o_agentic_ai_chat:not(.o_agentic_ai_sidebar_open) select.o_agentic_ai_agent_select",
            run: `selectByLabel ${AGENT}`,
        },
        ...send("hello from my phone"),
        { trigger: ".o_agentic_ai_bubble_user[data-message-id]:contains(hello from my phone)" },
        {
            trigger:
                ".o_agentic_ai_bubble_assistant[data-message-id]:contains(Hello from the desk)",
            run() {
                const box = this.anchor.getBoundingClientRect();
                if (box.left < 0 || box.right > window.innerWidth + 1) {
                    throw new Error(
                        `the reply overflows the screen: ${box.left}-${box.right} of ${window.innerWidth}`
                    );
                }
            },
        },
        idle(),
    ],
});

registry.category("web_tour.tours").add("agentic_ai_chat_plan_panel", {
    url: "/odoo/action-agentic_ai.chat_action",
    steps: () => [
        // Opening a conversation shows its latest plan (/agentic_ai/thread/plan): state, progress, why, steps.
        {
            trigger: ".o_agentic_ai_thread:contains(Plan tour) .o_agentic_ai_thread_name",
            run: "click",
        },
        {
            trigger:
                ".o_agentic_ai_plan[data-plan-state=replanning] .o_agentic_ai_plan_state:contains(replanning)",
        },
        { trigger: ".o_agentic_ai_plan .o_agentic_ai_plan_progress:contains(50%)" },
        { trigger: ".o_agentic_ai_plan .o_agentic_ai_plan_reason:contains(complex request)" },
        {
            trigger:
                ".o_agentic_ai_plan_step[data-step-state=completed]:contains(1. Create the purchase order) .fa-check-circle",
        },
        { trigger: ".o_agentic_ai_plan_step[data-step-state=completed]:contains(P00042)" },
        {
            trigger:
                ".o_agentic_ai_plan_step[data-step-state=skipped]:contains(2. Receive the goods) .fa-minus-circle",
        },
        {
            trigger:
                ".o_agentic_ai_plan_step[data-step-state=failed]:contains(3. Create the sale order) .fa-times-circle",
        },
        {
            trigger:
                ".o_agentic_ai_plan_step[data-step-state=failed]:contains(no price for the vendor)",
        },
        {
            trigger:
                ".o_agentic_ai_plan_step[data-step-state=running]:contains(4. Invoice the sale) .fa-spinner",
        },
        // A new conversation has no plan.
        { trigger: ".o_agentic_ai_new_thread", run: "click" },
        { trigger: ".o_agentic_ai_chat:not(:has(.o_agentic_ai_plan)) .o_agentic_ai_empty" },
    ],
});

registry.category("web_tour.tours").add("agentic_ai_chat_citations", {
    url: "/odoo/action-agentic_ai.chat_action",
    steps: () => [
        // An answer's knowledge references are numbered citations; one opens its source.
        {
            trigger: ".o_agentic_ai_thread:contains(Citations tour) .o_agentic_ai_thread_name",
            run: "click",
        },
        {
            trigger:
                ".o_agentic_ai_bubble_assistant .o_agentic_ai_citation:contains([1] Returns Handbook)",
            run: "click",
        },
        { trigger: ".o_form_view .o_field_widget[name=name]" },
        { trigger: ".o_control_panel .o_breadcrumb:contains(Returns Handbook)" },
    ],
});

registry.category("web_tour.tours").add("agentic_ai_chat_polling_answer", {
    url: "/odoo/action-agentic_ai.chat_action",
    steps: () => [
        {
            trigger:
                ".o_agentic_ai_thread:contains(delete Tour Partner Q) .o_agentic_ai_thread_name",
            run: "click",
        },
        { trigger: ".o_agentic_ai_confirmation:contains(Tour Partner Q)" },
        { trigger: ".o_agentic_ai_approve", run: "click" },
        // Queued for the processor (no stream): the bar is gone while the answer waits.
        { trigger: ".o_agentic_ai_chat:not(:has(.o_agentic_ai_confirmation))" },
        // The processor runs in the test's own thread, on the cursor the page's polls share: give it time.
        {
            trigger:
                ".o_agentic_ai_bubble_assistant[data-message-id]:contains(Deleted Tour Partner Q)",
            timeout: 45000,
        },
        idle(),
        {
            trigger: ".o_agentic_ai_chat:not(:has(.o_agentic_ai_thinking))",
            run() {
                countText(".o_agentic_ai_bubble_assistant", "Deleted Tour Partner Q", 1);
                count(".o_agentic_ai_confirmation", 0);
            },
        },
    ],
});
