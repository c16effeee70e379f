import { Component } from "@odoo/owl";

/**
 * The open conversation's tokens and cost, as `/agentic_ai/thread/stats`
 * gives them: {input_tokens, output_tokens, cache_read_tokens,
 * reasoning_tokens, total_tokens, cost (USD), llm_calls, tool_calls,
 * duration_ms, usage_estimated, estimated_llm_calls}. Calls for which the
 * provider sent no counts say they were estimated.
 */
export class ChatStats extends Component {
    static template = "agentic_ai.ChatStats";
    static props = { stats: Object };

    get cost() {
        return `$${Number(this.props.stats.cost || 0).toFixed(4)}`;
    }

    get seconds() {
        return (this.props.stats.duration_ms / 1000).toFixed(1);
    }
}
