import { registry } from "@web/core/registry";

/**
 * Tours that stop the chat in the states the README shows (issue 11 point
 * 6), run by tests/test_chat_screenshots.py. At each state a step asks the
 * Python side (tests/browser_probe.py, a second DevTools client on this
 * page) for a screenshot and waits until it is taken.
 */
const AGENT = "General ERP Assistant";

function probe() {
    if (!window.__agenticProbe) {
        let seq = 0;
        let resolve = null;
        window.__agenticProbe = {
            pending: null,
            ask(name, data = null, shot = true) {
                seq += 1;
                this.pending = { name, data, shot, seq };
                return new Promise((r) => (resolve = r));
            },
            done(doneSeq) {
                if (this.pending && this.pending.seq === doneSeq) {
                    this.pending = null;
                    resolve();
                }
            },
        };
    }
    return window.__agenticProbe;
}

/** A step that waits for `trigger`, then for the screenshot `name`. */
function shot(name, trigger, data = null) {
    return {
        trigger,
        run: async () => {
            // Let animations and the last paint settle.
            await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
            await probe().ask(name, typeof data === "function" ? data() : data);
        },
    };
}

function send(text) {
    return [
        { trigger: ".o_agentic_ai_input:enabled", run: `edit ${text}` },
        { trigger: ".o_agentic_ai_input", run: "press Enter" },
    ];
}

const idle = {
    trigger:
        ".o_agentic_ai_chat:not(:has(.o_agentic_ai_stop)):not(:has(.o_agentic_ai_cursor)) .o_agentic_ai_send",
};

/** WCAG contrast ratio of the text colour of `el` on its background. */
function contrast(el) {
    const rgb = (css) =>
        css
            .match(/[\d.]+/g)
            .slice(0, 3)
            .map(Number);
    const luminance = (css) => {
        const [r, g, b] = rgb(css).map((v) => {
            v /= 255;
            return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
        });
        return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    const style = getComputedStyle(el);
    const [a, b] = [luminance(style.color), luminance(style.backgroundColor)].sort((x, y) => y - x);
    return {
        ratio: (a + 0.05) / (b + 0.05),
        color: style.color,
        background: style.backgroundColor,
    };
}

registry.category("web_tour.tours").add("agentic_ai_chat_screenshots_stream", {
    url: "/odoo/action-agentic_ai.chat_action",
    steps: () => [
        { trigger: "select.o_agentic_ai_agent_select", run: `selectByLabel ${AGENT}` },
        shot("chat-idle", ".o_agentic_ai_chat .o_agentic_ai_empty", () => ({
            chat: getComputedStyle(document.querySelector(".o_agentic_ai_chat")).backgroundColor,
        })),
        ...send("Create a quotation for Azure Interior: 3 Office Chair Black and 1 Large Cabinet"),
        // Tokens arriving: part of the answer and the cursor.
        shot("chat-streaming", ".o_agentic_ai_streaming:contains(prices) .o_agentic_ai_cursor"),
        idle,
        {
            trigger:
                ".o_agentic_ai_bubble_tool_call:contains(create_quotation) .o_agentic_ai_tool_toggle",
            run: "click",
        },
        shot(
            "chat-tool-step",
            ".o_agentic_ai_bubble_tool_call .o_agentic_ai_tool_detail:contains(Office Chair Black)"
        ),
    ],
});

registry.category("web_tour.tours").add("agentic_ai_chat_screenshots_confirmation", {
    url: "/odoo/action-agentic_ai.chat_action",
    steps: () => [
        { trigger: "select.o_agentic_ai_agent_select", run: `selectByLabel ${AGENT}` },
        ...send("Screenshot Partner moved: update their phone and email"),
        shot(
            "chat-confirmation",
            ".o_agentic_ai_confirmation:contains(Screenshot Partner) .o_agentic_ai_approve"
        ),
        { trigger: ".o_agentic_ai_approve", run: "click" },
        { trigger: ".o_agentic_ai_bubble_assistant:contains(are updated)" },
        idle,
    ],
});

registry.category("web_tour.tours").add("agentic_ai_chat_screenshots_dark", {
    url: "/odoo/action-agentic_ai.chat_action",
    steps: () => [
        { trigger: "select.o_agentic_ai_agent_select", run: `selectByLabel ${AGENT}` },
        ...send("Which of our customers ordered most this month?"),
        { trigger: ".o_agentic_ai_bubble_assistant[data-message-id]:contains(Deco Addict)" },
        idle,
        {
            trigger: ".o_agentic_ai_bubble_assistant[data-message-id]",
            run: () => {
                // The dark bundle is the one loaded, and our rules are in it.
                if (!document.querySelector('link[href*="web.assets_web_dark"]')) {
                    throw new Error("the web.assets_web_dark bundle is not loaded");
                }
                const bubble = document.querySelector(
                    ".o_agentic_ai_bubble_assistant[data-message-id]"
                );
                if (getComputedStyle(bubble).borderTopLeftRadius !== "12px") {
                    throw new Error("the chat's SCSS is missing from web.assets_web_dark");
                }
            },
        },
        shot("chat-dark", ".o_agentic_ai_bubble_user", () => ({
            assistant: contrast(
                document.querySelector(".o_agentic_ai_bubble_assistant[data-message-id]")
            ),
            user: contrast(document.querySelector(".o_agentic_ai_bubble_user")),
            tool: contrast(document.querySelector(".o_agentic_ai_tool")),
            chat: getComputedStyle(document.querySelector(".o_agentic_ai_chat")).backgroundColor,
        })),
    ],
});
