import { Component, onPatched, useEffect, useRef } from "@odoo/owl";
import { useService } from "@web/core/utils/hooks";
import { placeholderUrl } from "../core/safe_html";
import { MessageBubble } from "../message_bubble/message_bubble";
import { PlanPanel } from "../plan_panel/plan_panel";

const MODEL_NAME = /^[a-z][a-z0-9_]*(\.[a-z0-9_]+)*$/;
/**
 * The transcript, oldest first, then what is arriving: "Agent is
 * thinking…" dots until the first token, then the streamed text with a
 * blinking cursor. A message sent but not stored yet shows as a pending
 * bubble; a run waiting in the queue (streaming off) says so. Above
 * the transcript, the plan of a Plan-and-Execute turn (plan_panel/). A click on
 * a record link of a reply opens that record's
 * form; a click on an image placeholder loads that image.
 */
export class MessageList extends Component {
    static template = "agentic_ai.MessageList";
    static components = { MessageBubble, PlanPanel };
    static props = {
        messages: Array,
        streamingText: String,
        thinking: Boolean,
        streaming: Boolean,
        plan: { type: [Object, Array, { value: null }], optional: true },
        pendingText: { type: String, optional: true },
        queued: { type: Boolean, optional: true },
    };

    setup() {
        this.action = useService("action");
        this.root = useRef("root");
        let lastCount = 0;
        const scroll = () => {
            const el = this.root.el;
            if (el && (this.props.messages.length !== lastCount || this.props.streaming)) {
                el.scrollTop = el.scrollHeight;
            }
            lastCount = this.props.messages.length;
        };
        useEffect(scroll, () => []);
        onPatched(scroll);
    }

    onClick(ev) {
        const link = ev.target.closest("a.o_agentic_ai_record_link");
        if (link) {
            const resModel = link.dataset.resModel || "";
            const resId = parseInt(link.dataset.resId, 10);
            if (MODEL_NAME.test(resModel) && resId > 0) {
                ev.preventDefault();
                this.action.doAction({
                    type: "ir.actions.act_window",
                    res_model: resModel,
                    res_id: resId,
                    views: [[false, "form"]],
                });
            }
            return;
        }
        const placeholder = ev.target.closest("button.o_agentic_ai_image_placeholder");
        if (placeholder) {
            ev.preventDefault();
            const src = placeholderUrl(placeholder);
            if (src) {
                const img = document.createElement("img");
                img.setAttribute("referrerpolicy", "no-referrer");
                img.alt = placeholder.dataset.alt || "";
                img.src = src;
                img.className = "o_agentic_ai_image img-fluid";
                placeholder.replaceWith(img);
            }
        }
    }
}
