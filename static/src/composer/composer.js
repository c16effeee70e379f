import { Component, useRef, useState } from "@odoo/owl";

/**
 * Where the user writes: Enter sends, Shift+Enter breaks the line. While
 * a run is going, the Stop button replaces Send.
 */
export class Composer extends Component {
    static template = "agentic_ai.Composer";
    static props = {
        running: Boolean,
        disabled: { type: Boolean, optional: true },
        onSend: Function,
        onStop: Function,
    };

    setup() {
        this.state = useState({ text: "" });
        this.input = useRef("input");
    }

    onKeydown(ev) {
        if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) {
            ev.preventDefault();
            this.send();
        }
    }

    send() {
        const text = this.state.text;
        if (!text.trim() || this.props.running || this.props.disabled) {
            return;
        }
        this.state.text = "";
        this.props.onSend(text);
    }
}
