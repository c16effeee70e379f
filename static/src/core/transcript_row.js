/** The roles of agentic.ai.thread.message the chat shows as bubbles (the
 * one left out, `system`, is the model's context only). */
export const SHOWN_ROLES = new Set([
    "user",
    "assistant",
    "tool_call",
    "tool_result",
    "confirmation_request",
    "confirmation_response",
]);

/**
 * A transcript row as the bubbles show it. The row has one shape in the
 * routes, the stream events and the poll (agentic.ai.thread.message._payloads):
 * {id, role, content, content_html, references, tool_name, tool_call_id,
 * tool_arguments, tool_status, ...}. `tool_arguments` is the JSON object or
 * array the model sent, or its raw text when that was not valid JSON; it
 * becomes the text shown (`arguments`), as it is.
 *
 * @param {object} row
 * @returns {{id: number, role: string, content: string, content_html: string|null,
 *            references: object[], tool_name: string, tool_call_id: string,
 *            arguments: string, status: string}}
 */
export function normalizeRow(row) {
    const args = row.tool_arguments;
    return {
        id: row.id,
        role: row.role,
        content: row.content || "",
        content_html: row.content_html || null,
        references: Array.isArray(row.references) ? row.references : [],
        tool_name: row.tool_name || "",
        tool_call_id: row.tool_call_id || "",
        arguments:
            args === null || args === undefined
                ? ""
                : typeof args === "string"
                ? args
                : JSON.stringify(args, null, 2),
        status: row.tool_status || "",
    };
}
