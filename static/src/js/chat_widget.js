import { Component, onWillStart, onWillUnmount, useState } from "@odoo/owl";
import { _t } from "@web/core/l10n/translation";
import { rpc } from "@web/core/network/rpc";
import { registry } from "@web/core/registry";
import { browser } from "@web/core/browser/browser";
import { useService } from "@web/core/utils/hooks";
import { standardActionServiceProps } from "@web/webclient/actions/action_service";
import { Composer } from "./composer";
import { ConfirmationBar } from "./confirmation_bar";
import { MessageList } from "./message_list";
import { StreamingHandler } from "./streaming_handler";
import { ThreadSidebar } from "./thread_sidebar";

const SHOWN_ROLES = new Set([
    "user",
    "assistant",
    "tool_call",
    "tool_result",
    "confirmation_request",
    "confirmation_response",
]);

/** A transcript row (one shape in the routes, the stream and the poll:
 * agentic.ai.thread.message._payloads) as the bubbles show it. */
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
        // Arguments that were not valid JSON come as the text the model sent, shown as it is.
        arguments:
            args === null || args === undefined
                ? ""
                : typeof args === "string"
                ? args
                : JSON.stringify(args, null, 2),
        status: row.tool_status || "",
    };
}

/** The tab's last open conversation (sessionStorage): coming back from a
 * record's form, or reloading, reopens it. */
const LAST_THREAD_KEY = "agentic_ai.chat.thread_id";

function errorText(error) {
    return (error && error.data && error.data.message) || (error && error.message) || String(error);
}

/**
 * The chat (spec 000 §10.1, issue 11 point 1): an OWL client action with
 * the agent selector, the thread sidebar, the transcript as bubbles, the
 * confirmation bar and the composer. A run is followed through the stream
 * route (streaming_handler.js); `action.params.thread_id` opens a thread.
 */
export class ChatAction extends Component {
    static template = "agentic_ai.ChatAction";
    static components = { Composer, ConfirmationBar, MessageList, ThreadSidebar };
    static props = { ...standardActionServiceProps };

    setup() {
        this.orm = useService("orm");
        this.notification = useService("notification");
        this.ui = useService("ui");
        this.state = useState({
            agents: [],
            agentId: null,
            threads: [],
            thread: null,
            messages: [],
            streamingText: "",
            running: false,
            thinking: false,
            queued: false,
            pendingText: "",
            plan: null,
            error: null,
            stats: null,
            sidebarOpen: !this.ui.isSmall,
        });
        this.handler = null;
        this.retry = null;
        onWillStart(async () => {
            const action = this.props.action;
            const asked =
                (action.params || {}).thread_id || ((action.context || {}).params || {}).thread_id;
            await Promise.all([this.loadAgents(), this.loadThreads()]);
            const threadId = parseInt(asked, 10);
            if (threadId > 0) {
                await this.openThread(threadId);
            } else {
                const last = parseInt(browser.sessionStorage.getItem(LAST_THREAD_KEY), 10);
                if (last > 0 && this.state.threads.some((t) => t.id === last)) {
                    await this.openThread(last);
                }
            }
        });
        onWillUnmount(() => this.handler && this.handler.abort());
    }

    // ------------------------------------------------------------- loading
    async loadAgents() {
        this.state.agents = await rpc("/agentic_ai/agents", {});
        if (!this.state.agentId && this.state.agents.length) {
            this.state.agentId = this.state.agents[0].id;
        }
    }

    async loadThreads() {
        this.state.threads = await rpc("/agentic_ai/thread/list", { limit: 200 });
    }

    /** Tell the user why a conversation cannot be left while its run is followed. */
    refuseWhileRunning() {
        this.notification.add(
            _t(
                "A reply is being written in this conversation: wait for it, or press Stop, before opening another one."
            ),
            { type: "warning" }
        );
    }

    /** Remember ``thread`` as the one shown (the URL and the tab's storage). */
    remember(threadId) {
        if (threadId) {
            browser.sessionStorage.setItem(LAST_THREAD_KEY, String(threadId));
        } else {
            browser.sessionStorage.removeItem(LAST_THREAD_KEY);
        }
        if (this.props.updateActionState) {
            this.props.updateActionState({ thread_id: threadId || undefined });
        }
    }

    async openThread(threadId) {
        if (this.state.running) {
            if (!this.state.thread || this.state.thread.id !== threadId) {
                this.refuseWhileRunning();
            }
            return;
        }
        this.state.error = null;
        this.state.stats = null;
        this.state.plan = null;
        try {
            const answer = await rpc("/agentic_ai/thread/messages", {
                thread_id: threadId,
                limit: 500,
            });
            this.state.thread = answer.thread;
            this.state.agentId = answer.thread.agent_id;
            this.state.messages = answer.messages
                .filter((m) => SHOWN_ROLES.has(m.role))
                .map(normalizeRow);
            this.remember(threadId);
            this.loadPlan(threadId);
            if (["queued", "executing"].includes(answer.thread.state)) {
                // A run started elsewhere (another tab, the queue): follow it.
                this.follow(
                    (handler) => handler.poll(),
                    () => this.openThread(threadId)
                );
            }
        } catch (error) {
            this.showError(errorText(error), () => this.openThread(threadId));
        }
        if (this.ui.isSmall) {
            this.state.sidebarOpen = false;
        }
    }

    /** Show the latest plan of the thread (`/agentic_ai/thread/plan`), if it has one. */
    async loadPlan(threadId) {
        let answer;
        try {
            answer = await rpc(
                "/agentic_ai/thread/plan",
                { thread_id: threadId },
                { silent: true }
            );
        } catch {
            return; // the panel is an extra: the conversation itself loaded
        }
        if (this.state.thread && this.state.thread.id === threadId && answer.plan) {
            this.state.plan = answer.plan;
        }
    }

    newThread() {
        if (this.state.running) {
            return this.refuseWhileRunning();
        }
        Object.assign(this.state, {
            thread: null,
            messages: [],
            error: null,
            stats: null,
            plan: null,
        });
        this.remember(null);
        if (this.ui.isSmall) {
            this.state.sidebarOpen = false;
        }
    }

    /** Rows after the last one shown, and the thread (its state and confirmation). */
    async sync() {
        if (!this.state.thread) {
            return;
        }
        const answer = await rpc("/agentic_ai/thread/messages", {
            thread_id: this.state.thread.id,
            after_id: this.lastId,
            limit: 500,
        });
        answer.messages.forEach((row) => this.addRow(row));
        this.state.thread = answer.thread;
    }

    get lastId() {
        return this.state.messages.reduce((max, row) => Math.max(max, row.id || 0), 0);
    }

    get agentName() {
        const agent = this.state.agents.find((a) => a.id === this.state.agentId);
        return agent ? agent.name : (this.state.thread && this.state.thread.agent_name) || "";
    }

    /** False when an administrator turned streaming off for the agent
     * (`streaming` of `/agentic_ai/agents`): runs are queued and polled. */
    get streaming() {
        const agentId = this.state.thread ? this.state.thread.agent_id : this.state.agentId;
        const agent = this.state.agents.find((a) => a.id === agentId);
        return !agent || agent.streaming !== false;
    }

    get confirmation() {
        const thread = this.state.thread;
        return !this.state.running && thread && thread.state === "waiting_confirmation"
            ? thread.confirmation
            : null;
    }

    // ------------------------------------------------------------- sidebar
    async renameThread(thread, name) {
        await this.orm.write("agentic.ai.thread", [thread.id], { name });
        await this.loadThreads();
        if (this.state.thread && this.state.thread.id === thread.id) {
            this.state.thread.name =
                this.state.threads.find((t) => t.id === thread.id)?.name || name;
        }
    }

    async archiveThread(thread) {
        await this.orm.write("agentic.ai.thread", [thread.id], { active: false });
        if (this.state.thread && this.state.thread.id === thread.id) {
            this.newThread();
        }
        await this.loadThreads();
    }

    onAgentChange(ev) {
        this.state.agentId = parseInt(ev.target.value, 10) || null;
    }

    toggleSidebar() {
        this.state.sidebarOpen = !this.state.sidebarOpen;
    }

    // ------------------------------------------------------------- runs
    async send(text) {
        this.state.error = null;
        let thread = this.state.thread;
        if (!thread) {
            if (!this.state.agentId) {
                return this.showError(_t("Choose an agent first."), null);
            }
            try {
                thread = await rpc("/agentic_ai/thread/create", {
                    agent_id: this.state.agentId,
                    name: text.trim().split("\n")[0].slice(0, 60),
                });
            } catch (error) {
                return this.showError(errorText(error), () => this.send(text));
            }
            this.state.thread = thread;
            this.remember(thread.id);
            // In the sidebar at once: the list route may answer only after the run (one worker, a busy proxy).
            this.state.threads = [thread, ...this.state.threads.filter((t) => t.id !== thread.id)];
            this.loadThreads();
        }
        // Shown as the user's bubble until its stored row arrives.
        this.state.pendingText = text;
        this.follow(
            (handler) => handler.send(text),
            () => this.send(text)
        );
    }

    answer(approve, reason = "") {
        const confirmation = this.confirmation;
        if (!confirmation) {
            return;
        }
        this.state.error = null;
        const retry = () => this.answer(approve, reason);
        this.follow(
            (handler) => handler.answer(approve, confirmation.confirmation_id, reason),
            retry
        );
    }

    async cancelConfirmation() {
        const thread = this.state.thread;
        this.state.error = null;
        try {
            const answer = await rpc("/agentic_ai/chat/cancel", { thread_id: thread.id });
            answer.messages.forEach((row) => this.addRow(row));
            this.state.thread = answer.thread;
        } catch (error) {
            this.showError(errorText(error), () => this.cancelConfirmation());
        }
    }

    /** Start a run with `start(handler)` and show its events as they come. */
    follow(start, retry) {
        Object.assign(this.state, {
            running: true,
            thinking: true,
            queued: false,
            streamingText: "",
            stats: null,
        });
        this.state.thread.state = "executing";
        const handler = new StreamingHandler({
            threadId: this.state.thread.id,
            afterId: this.lastId,
            callbacks: this.callbacks(retry),
            streaming: this.streaming,
        });
        this.handler = handler;
        start(handler);
    }

    callbacks(retry) {
        return {
            onToken: (data) => {
                this.state.thinking = false;
                this.state.streamingText = data.reset
                    ? ""
                    : this.state.streamingText + (data.text || "");
            },
            onMessage: (row) => {
                if (row.role === "assistant") {
                    this.state.streamingText = "";
                    this.state.thinking = false;
                }
                this.addRow(row);
            },
            onToolCall: (row) => {
                this.state.streamingText = "";
                this.state.thinking = true;
                this.addRow(row);
            },
            onToolResult: (row) => this.addRow(row),
            onConfirmationRequest: (row) => this.addRow(row),
            onPlanUpdate: (data) => {
                this.state.plan = data.plan || data;
            },
            onError: (data) => this.showError(data.message || _t("The agent failed."), retry),
            onPollState: (data) => {
                this.state.queued = data.state === "queued";
                // No plan_update event comes by polling: read the plan as it advances.
                if (data.state === "executing") {
                    this.loadPlan(this.state.thread.id);
                }
            },
            onDone: (result) => this.finish(result),
        };
    }

    addRow(row) {
        if (!SHOWN_ROLES.has(row.role) || this.state.messages.some((m) => m.id === row.id)) {
            return;
        }
        if (row.role === "user") {
            this.state.pendingText = "";
        }
        const normalized = normalizeRow(row);
        if (row.role === "tool_result") {
            const call = this.state.messages.find(
                (m) => m.role === "tool_call" && m.tool_call_id === normalized.tool_call_id
            );
            if (call) {
                call.status = normalized.status;
            }
        }
        this.state.messages.push(normalized);
    }

    async finish(result) {
        this.handler = null;
        Object.assign(this.state, { thinking: false, queued: false });
        try {
            await this.sync();
        } catch (error) {
            this.showError(errorText(error), () => this.sync());
        }
        // The streamed text is in its row now (or was dropped by a refusal).
        Object.assign(this.state, { running: false, streamingText: "", pendingText: "" });
        if (result && result.state === "interrupted" && !this.state.error) {
            this.notification.add(_t("The run was stopped; what it did is kept."), {
                type: "info",
            });
        }
        this.loadThreads();
        if (this.state.thread) {
            this.loadPlan(this.state.thread.id); // its final state, and a plan followed by polling
        }
    }

    async stop() {
        const thread = this.state.thread;
        if (!thread || !this.handler) {
            return;
        }
        const handler = this.handler;
        // Leaving the stream stops the run at its next step; chat/cancel
        // also stops a run this page follows by polling.
        handler.abort();
        try {
            await rpc("/agentic_ai/chat/cancel", { thread_id: thread.id }, { silent: true });
        } catch {
            // Already stopped: nothing running to cancel.
        }
        await this.waitUntilIdle(thread.id);
        await this.finish({ state: "interrupted" });
    }

    /** Poll until the thread is no longer queued or executing. */
    async waitUntilIdle(threadId) {
        for (let attempt = 0; attempt < 60; attempt++) {
            const answer = await rpc("/agentic_ai/chat/poll", {
                thread_id: threadId,
                after_id: this.lastId,
            });
            answer.messages.forEach((row) => this.addRow(row));
            if (answer.done) {
                return;
            }
            await new Promise((resolve) => setTimeout(resolve, 500));
        }
    }

    // ------------------------------------------------------------- extras
    async toggleStats() {
        if (this.state.stats) {
            this.state.stats = null;
            return;
        }
        try {
            this.state.stats = await rpc("/agentic_ai/thread/stats", {
                thread_id: this.state.thread.id,
            });
        } catch (error) {
            this.showError(errorText(error), () => this.toggleStats());
        }
    }

    formatCost(cost) {
        return `$${Number(cost || 0).toFixed(4)}`;
    }

    showError(message, retry) {
        this.state.error = message;
        this.retry = retry;
    }

    closeError() {
        this.state.error = null;
    }

    onRetry() {
        const retry = this.retry;
        this.state.error = null;
        this.retry = null;
        if (retry) {
            retry();
        }
    }
}

registry.category("actions").add("agentic_ai.chat_action", ChatAction);
