import { Component, useState } from "@odoo/owl";
import { safeMarkup } from "../core/safe_html";

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

    /** The knowledge excerpts the answer was given, numbered as the model
     * was asked to cite them ([1], [2]…), one link per source to open. */
    get citations() {
        const references = this.props.message.references || [];
        return references
            .filter((ref) => Number.isInteger(ref.source_id) && ref.source_id > 0)
            .map((ref, index) => ({
                key: index,
                number: index + 1,
                source_id: ref.source_id,
                source: String(ref.source || ""),
                excerpt: String(ref.content || "").slice(0, 300),
            }));
    }

    get roleClass() {
        return `o_agentic_ai_bubble_${this.props.message.role}`;
    }

    get toolLabel() {
        const message = this.props.message;
        return message.role === "tool_call" ? message.tool_name : `${message.tool_name || ""} →`;
    }

    get statusClass() {
        return (
            {
                done: "text-success",
                error: "text-danger",
                rejected: "text-warning",
                cancelled: "text-muted",
                unknown: "text-warning",
            }[this.props.message.status] || "text-muted"
        );
    }

    toggle() {
        this.state.open = !this.state.open;
    }
}
