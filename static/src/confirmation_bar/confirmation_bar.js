import { Component, useState } from "@odoo/owl";

/** Characters of a value shown before it is folded; the rest is one click away, never left out. */
const FOLD_AT = 300;

/**
 * The call waiting for the user's word (README "Confirmations"): the
 * records by name, each change before → after (a long value folded and
 * shown whole on demand), the reason and the risk, the exact arguments one
 * click away, with Approve, Reject (with a reason)
 * and Cancel. The answer names the
 * question by its confirmation_id.
 */
export class ConfirmationBar extends Component {
    static template = "agentic_ai.ConfirmationBar";
    static props = {
        confirmation: Object,
        disabled: { type: Boolean, optional: true },
        onApprove: Function,
        onReject: Function,
        onCancel: Function,
    };

    setup() {
        this.state = useState({ rejecting: false, reason: "", whole: {} });
        this.foldAt = FOLD_AT;
    }

    /** Show the value ``key`` (a change's before or after) whole. */
    showWhole(key) {
        this.state.whole[key] = true;
    }

    get riskClass() {
        return (
            { high: "text-bg-danger", medium: "text-bg-warning", low: "text-bg-secondary" }[
                this.props.confirmation.risk_level
            ] || "text-bg-secondary"
        );
    }

    /** The call's arguments as they will run, exactly as the tool receives them. */
    get exactArguments() {
        return JSON.stringify(this.props.confirmation.arguments || {}, null, 2);
    }

    show(value) {
        if (value === null || value === undefined || value === false) {
            return "—";
        }
        return typeof value === "object" ? JSON.stringify(value) : String(value);
    }

    reject() {
        if (!this.state.rejecting) {
            this.state.rejecting = true;
            return;
        }
        this.props.onReject(this.state.reason.trim());
        this.state.rejecting = false;
        this.state.reason = "";
    }
}
