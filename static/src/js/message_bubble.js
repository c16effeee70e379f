import { Component, useState } from "@odoo/owl";
import { safeMarkup } from "./safe_html";

/**
 * One transcript row as a bubble coloured by its role (spec 000 §10.1):
 * the user's in blue, the agent's in white, tool calls and results grey
 * and collapsed (a click shows the arguments or the result), confirmations
 * yellow. Model text is shown as text, or as `content_html` once
 * sanitized again (safe_html.js).
 */
export class MessageBubble extends Component {
    static template = "agentic_ai.MessageBubble";
    static props = { message: Object };

    setup() {
        this.state = useState({ open: false });
    }

    /** The sanitized markup, kept while the source is the same: owl
     * compares markup by identity, and a new one would redraw the reply
     * (dropping an image the user chose to load). */
    get html() {
        const source = this.props.message.content_html;
        if (!source) {
            return null;
        }
        if (!this.cached || this.cached.source !== source) {
            this.cached = { source, value: safeMarkup(source) };
        }
        return this.cached.value;
    }

    get roleClass() {
        return `o_agentic_ai_bubble_${this.props.message.role}`;
    }

    get toolLabel() {
        const message = this.props.message;
        return message.role === "tool_call" ? message.tool_name : `${message.tool_name || ""} →`;
    }

    get statusClass() {
        return {
            done: "text-success",
            error: "text-danger",
            rejected: "text-warning",
            cancelled: "text-muted",
            unknown: "text-warning",
        }[this.props.message.status] || "text-muted";
    }

    toggle() {
        this.state.open = !this.state.open;
    }
}
