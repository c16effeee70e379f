import { Component, onPatched, useEffect, useRef } from "@odoo/owl";
import { useService } from "@web/core/utils/hooks";
import { MessageBubble } from "./message_bubble";
import { placeholderUrl } from "./safe_html";

const MODEL_NAME = /^[a-z][a-z0-9_]*(\.[a-z0-9_]+)*$/;
// Step states of a plan (agentic.ai.plan.step), and the names older events used for them.
const STEP_STATUS = {
    pending: "pending",
    running: "running",
    in_progress: "running",
    completed: "completed",
    done: "completed",
    failed: "failed",
    error: "failed",
    skipped: "skipped",
};
const STEP_ICONS = {
    pending: "fa fa-circle-o text-muted",
    running: "fa fa-spinner fa-spin text-info",
    completed: "fa fa-check-circle text-success",
    failed: "fa fa-times-circle text-danger",
    skipped: "fa fa-minus-circle text-muted",
};

/**
 * The transcript, oldest first, then what is arriving: "Agent is
 * thinking…" dots until the first token, then the streamed text with a
 * blinking cursor. A message sent but not stored yet shows as a pending
 * bubble; a run waiting in the queue (streaming off) says so. Above
 * the transcript, the plan of a Plan-and-Execute turn: its state and
 * progress, why the turn ran as a plan, and each step's state. A click on
 * a record link of a reply opens that record's
 * form; a click on an image placeholder loads that image.
 */
export class MessageList extends Component {
    static template = "agentic_ai.MessageList";
    static components = { MessageBubble };
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

    /**
     * The plan panel's content from the plan payload (`plan_update` events
     * and `/agentic_ai/thread/plan`: {state, progress, mode_reason, steps:
     * [{description, tool, state, result, error}]}); a bare list of steps
     * is accepted too. Null when there is no step to show.
     */
    get planView() {
        const plan = this.props.plan;
        if (!plan) {
            return null;
        }
        const steps = (Array.isArray(plan) ? plan : plan.steps || []).map((step, index) => {
            const text =
                typeof step === "string"
                    ? step
                    : step.description || step.name || JSON.stringify(step);
            const status =
                STEP_STATUS[(step && (step.state || step.status)) || "pending"] || "pending";
            const note =
                status === "failed" ? step.error : status === "completed" ? step.result : "";
            return {
                key: (step && step.id) || `step-${index}`,
                number: (step && step.sequence) || index + 1,
                text,
                status,
                icon: STEP_ICONS[status],
                note: typeof note === "string" ? note.slice(0, 200) : "",
            };
        });
        if (!steps.length) {
            return null;
        }
        const done = steps.filter((step) => ["completed", "skipped"].includes(step.status)).length;
        const progress = Number.isFinite(plan.progress)
            ? plan.progress
            : Math.round((done / steps.length) * 100);
        return {
            state: (!Array.isArray(plan) && plan.state) || "",
            progress,
            modeReason: (!Array.isArray(plan) && plan.mode_reason) || "",
            steps,
        };
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
