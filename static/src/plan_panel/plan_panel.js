import { Component } from "@odoo/owl";

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
 * The plan of a Plan-and-Execute turn above its transcript (spec 000
 * §10.1): its state and progress, why the turn ran as a plan (Hybrid's
 * reason), and each step's state, with a failed step's error or a done
 * step's result in one line.
 */
export class PlanPanel extends Component {
    static template = "agentic_ai.PlanPanel";
    static props = { plan: { type: [Object, Array] } };

    /**
     * The plan panel's content from the plan payload (`plan_update` events
     * and `/agentic_ai/thread/plan`: {state, progress, mode_reason, steps:
     * [{description, tool, state, result, error}]}); a bare list of steps
     * is accepted too. Null when there is no step to show.
     */
    get view() {
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
}
