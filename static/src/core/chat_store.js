import { markRaw, reactive } from "@odoo/owl";
import { _t } from "@web/core/l10n/translation";
import { rpc } from "@web/core/network/rpc";
import { registry } from "@web/core/registry";
import { browser } from "@web/core/browser/browser";
import { StreamingHandler } from "./streaming_handler";
import { SHOWN_ROLES, normalizeRow } from "./transcript_row";

/** The tab's last open conversation (sessionStorage): coming back from a
 * record's form, or reloading, reopens it. */
export const LAST_THREAD_KEY = "agentic_ai.chat.thread_id";

function errorText(error) {
    return (error && error.data && error.data.message) || (error && error.message) || String(error);
}

/**
 * The conversation the chat shows, and every call to the server about it
 * (the way `mail.store` holds Discuss's state for its components): the
 * agents and conversations the user may open, the open thread and its
 * transcript, the run being followed (its streamed text, whether it thinks
 * or waits in the queue), its plan, its token and cost figures, and the
 * last error with what retrying does. Components read it and call its
 * methods; none of them calls a route itself.
 *
 * Routes (controllers/chat_controller.py, stream_controller.py):
 * `/agentic_ai/agents`, `/agentic_ai/thread/list|create|messages|plan|stats`,
 * `/agentic_ai/chat/stream|send_async|poll|cancel`, `/agentic_ai/confirm/*`
 * (the last three through core/streaming_handler.js); renaming and
 * archiving write `agentic.ai.thread` through the ORM.
 *
 * One run is followed at a time: while it runs, another conversation is not
 * opened (the user is told why). The store is the service
 * `agentic_ai.chat_store`, reactive: `useState(useService(...))` renders a
 * component again when what it read changes.
 */
export class ChatStore {
    /**
     * @param {import("@web/env").OdooEnv} env
     * @param {{orm: object, notification: object}} services
     */
    constructor(env, { orm, notification }) {
        // Services and the handler stay raw: a reactive proxy around them would track their insides.
        this.services = markRaw({ orm, notification });
        // The conversation being loaded (its promise) and a count of the loads asked: only the
        // last one asked is shown.
        this.loads = markRaw({ opening: null, count: 0 });
        /** @type {{id: number, name: string, streaming: boolean}[]} */
        this.agents = [];
        /** the agent a new conversation is started with */
        this.agentId = null;
        /** the user's conversations, newest first (`/agentic_ai/thread/list`) */
        this.threads = [];
        /** the open conversation, as the routes give it ({id, name, state, agent_id, confirmation, ...}) */
        this.thread = null;
        /** its rows as the bubbles show them (core/transcript_row.js) */
        this.messages = [];
        /** the reply being streamed, not stored yet */
        this.streamingText = "";
        /** a run of this conversation is being followed */
        this.running = false;
        /** the run is at work and no token came since its last step */
        this.thinking = false;
        /** the run waits in the queue (streaming off, or the fallback) */
        this.queued = false;
        /** the message sent, shown until its stored row arrives */
        this.pendingText = "";
        /** the latest plan of the conversation (`/agentic_ai/thread/plan`, `plan_update` events) */
        this.plan = null;
        /** the last error shown, and what Retry does */
        this.error = null;
        this.retry = null;
        /** the token and cost figures when shown (`/agentic_ai/thread/stats`) */
        this.stats = null;
        this.handler = null;
        /** the page (chat_action) that shows the store, by its token */
        this.page = null;
    }

    // ------------------------------------------------------------- opening
    /**
     * A page shows the chat: load the agents and conversations, then open
     * `threadId`, else the tab's last conversation while it is still the
     * user's, else a new one. The run a previous page followed is left.
     *
     * @param {number|null} threadId the conversation the page was asked to show
     * @param {symbol} page the page's own token, given back to `leave`
     */
    async start(threadId, page) {
        this.leave(this.page);
        this.page = page;
        this.resetConversation();
        await Promise.all([this.loadAgents(), this.loadThreads()]);
        if (threadId > 0) {
            return this.openThread(threadId);
        }
        const last = parseInt(browser.sessionStorage.getItem(LAST_THREAD_KEY), 10);
        if (last > 0 && this.threads.some((t) => t.id === last)) {
            return this.openThread(last);
        }
    }

    /**
     * The page `page` is gone: stop following the run it showed (the
     * server stops the run at its next step when its stream closes). A page
     * that is no longer the store's (the chat was opened again before the
     * old page was unmounted) leaves nothing: the run is the new page's.
     *
     * @param {symbol} page the token the page gave to `start`
     */
    leave(page) {
        if (page !== this.page) {
            return;
        }
        if (this.handler) {
            this.handler.abort();
        }
        Object.assign(this, {
            page: null,
            handler: null,
            running: false,
            thinking: false,
            queued: false,
            streamingText: "",
            pendingText: "",
        });
    }

    async loadAgents() {
        this.agents = await rpc("/agentic_ai/agents", {});
        if (!this.agentId && this.agents.length) {
            this.agentId = this.agents[0].id;
        }
    }

    async loadThreads() {
        this.threads = await rpc("/agentic_ai/thread/list", { limit: 200 });
    }

    /** Tell the user why a conversation cannot be left while its run is followed. */
    refuseWhileRunning() {
        this.services.notification.add(
            _t(
                "A reply is being written in this conversation: wait for it, or press Stop, before opening another one."
            ),
            { type: "warning" }
        );
    }

    /** Remember `threadId` as the tab's open conversation (null: none). */
    remember(threadId) {
        if (threadId) {
            browser.sessionStorage.setItem(LAST_THREAD_KEY, String(threadId));
        } else {
            browser.sessionStorage.removeItem(LAST_THREAD_KEY);
        }
    }

    /**
     * Show the conversation `threadId` with its transcript and plan; follow
     * its run when one is going (another tab, the queue).
     *
     * @returns {Promise<boolean>} whether it is the one shown now
     */
    async openThread(threadId) {
        if (this.running) {
            if (!this.thread || this.thread.id !== threadId) {
                this.refuseWhileRunning();
                return false;
            }
            return true;
        }
        const load = ++this.loads.count;
        const opening = this.loadThread(threadId, load);
        this.loads.opening = opening;
        try {
            return await opening;
        } finally {
            if (this.loads.opening === opening) {
                this.loads.opening = null;
            }
        }
    }

    /** Load and show `threadId` unless another load was asked meanwhile (`load` is no
     * longer the last) or a run of another conversation is followed by then. */
    async loadThread(threadId, load) {
        let answer;
        try {
            answer = await rpc("/agentic_ai/thread/messages", {
                thread_id: threadId,
                limit: 500,
            });
        } catch (error) {
            if (load === this.loads.count) {
                this.showError(errorText(error), () => this.openThread(threadId));
            }
            return load === this.loads.count;
        }
        if (load !== this.loads.count || (this.handler && this.thread.id !== threadId)) {
            return false;
        }
        Object.assign(this, { error: null, stats: null, plan: null });
        this.thread = answer.thread;
        this.agentId = answer.thread.agent_id;
        this.messages = answer.messages.filter((m) => SHOWN_ROLES.has(m.role)).map(normalizeRow);
        this.remember(threadId);
        this.loadPlan(threadId);
        if (["queued", "executing"].includes(answer.thread.state)) {
            // A run started elsewhere (another tab, the queue): follow it.
            this.follow(
                (handler) => handler.poll(),
                () => this.openThread(threadId)
            );
        }
        return true;
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
        if (this.thread && this.thread.id === threadId && answer.plan) {
            this.plan = answer.plan;
        }
    }

    /**
     * Start a new conversation: the next message creates its thread.
     *
     * @returns {boolean} false when a run is followed (the user is told why)
     */
    newThread() {
        if (this.running) {
            this.refuseWhileRunning();
            return false;
        }
        this.resetConversation();
        this.remember(null);
        return true;
    }

    /** Show no conversation (a new one); one still loading is not shown when it arrives. */
    resetConversation() {
        this.loads.count++;
        Object.assign(this, { thread: null, messages: [], error: null, stats: null, plan: null });
    }

    /** Rows after the last one shown, and the thread (its state and confirmation). */
    async sync() {
        if (!this.thread) {
            return;
        }
        const answer = await rpc("/agentic_ai/thread/messages", {
            thread_id: this.thread.id,
            after_id: this.lastId,
            limit: 500,
        });
        answer.messages.forEach((row) => this.addRow(row));
        this.thread = answer.thread;
    }

    /** The id of the last row shown (0: none). */
    get lastId() {
        return this.messages.reduce((max, row) => Math.max(max, row.id || 0), 0);
    }

    get agentName() {
        const agent = this.agents.find((a) => a.id === this.agentId);
        return agent ? agent.name : (this.thread && this.thread.agent_name) || "";
    }

    /** False when an administrator turned streaming off for the agent
     * (`streaming` of `/agentic_ai/agents`): runs are queued and polled. */
    get streaming() {
        const agentId = this.thread ? this.thread.agent_id : this.agentId;
        const agent = this.agents.find((a) => a.id === agentId);
        return !agent || agent.streaming !== false;
    }

    /** The confirmation waiting for the user's word ({confirmation_id, tool_name,
     * arguments, changes, risk_level, ...}), or null. */
    get confirmation() {
        const thread = this.thread;
        return !this.running && thread && thread.state === "waiting_confirmation"
            ? thread.confirmation
            : null;
    }

    /** @param {number|null} agentId the agent of the next new conversation */
    selectAgent(agentId) {
        this.agentId = agentId || null;
    }

    // ------------------------------------------------------------- the list
    async renameThread(thread, name) {
        await this.services.orm.write("agentic.ai.thread", [thread.id], { name });
        await this.loadThreads();
        if (this.thread && this.thread.id === thread.id) {
            this.thread.name = this.threads.find((t) => t.id === thread.id)?.name || name;
        }
    }

    async archiveThread(thread) {
        await this.services.orm.write("agentic.ai.thread", [thread.id], { active: false });
        if (this.thread && this.thread.id === thread.id) {
            this.newThread();
        }
        await this.loadThreads();
    }

    // ------------------------------------------------------------- runs
    /**
     * Send `text` to the conversation shown (a new one is created first) and
     * follow its run. A conversation still loading is waited for: the
     * message goes to the one the user chose. While the thread is created
     * the store counts as running, so a second message waits in the
     * composer instead of creating a second conversation.
     */
    async send(text) {
        if (this.running) {
            return;
        }
        this.error = null;
        this.running = true;
        this.pendingText = text;
        if (this.loads.opening) {
            await this.loads.opening;
        }
        let thread = this.thread;
        if (!thread) {
            if (!this.agentId) {
                Object.assign(this, { running: false, pendingText: "" });
                return this.showError(_t("Choose an agent first."), null);
            }
            try {
                thread = await rpc("/agentic_ai/thread/create", {
                    agent_id: this.agentId,
                    name: text.trim().split("\n")[0].slice(0, 60),
                });
            } catch (error) {
                Object.assign(this, { running: false, pendingText: "" });
                return this.showError(errorText(error), () => this.send(text));
            }
            this.thread = thread;
            this.remember(thread.id);
            // In the list at once: the list route may answer only after the run (one worker, a busy proxy).
            this.threads = [thread, ...this.threads.filter((t) => t.id !== thread.id)];
            this.loadThreads();
        }
        // Retry sends the message again only when it never reached the conversation.
        this.follow(
            (handler) => handler.send(text),
            () => this.send(text),
            { resends: "user" }
        );
    }

    /** Approve (or reject, with `reason`) the waiting confirmation and follow the run. */
    answer(approve, reason = "") {
        const confirmation = this.confirmation;
        if (!confirmation) {
            return;
        }
        this.error = null;
        this.follow(
            (handler) => handler.answer(approve, confirmation.confirmation_id, reason),
            () => this.answer(approve, reason),
            { resends: "confirmation_response" }
        );
    }

    /** Cancel the waiting confirmation: the call does not run, the turn ends. */
    async cancelConfirmation() {
        this.error = null;
        try {
            const answer = await rpc("/agentic_ai/chat/cancel", { thread_id: this.thread.id });
            answer.messages.forEach((row) => this.addRow(row));
            this.thread = answer.thread;
        } catch (error) {
            this.showError(errorText(error), () => this.cancelConfirmation());
        }
    }

    /**
     * Start a run with `start(handler)` and show its events as they come.
     *
     * @param {Function} start given the handler, starts or joins the run
     * @param {Function} retry what Retry does after an error
     * @param {{resends?: string}} [options] `resends`: the role of the row
     *      `retry` would write again; once such a row is stored, Retry is not
     *      offered (it would ask the same thing twice)
     */
    follow(start, retry, { resends = null } = {}) {
        Object.assign(this, {
            running: true,
            thinking: true,
            queued: false,
            streamingText: "",
            stats: null,
        });
        this.thread.state = "executing";
        const handler = markRaw(
            new StreamingHandler({
                threadId: this.thread.id,
                afterId: this.lastId,
                streaming: this.streaming,
            })
        );
        handler.callbacks = this.callbacks(handler, retry);
        handler.resent = markRaw({ role: resends, afterId: this.lastId });
        this.handler = handler;
        start(handler);
    }

    /** The callbacks of `handler` (core/streaming_handler.js); each does nothing once the
     * store no longer follows that handler (the run was left or ended). */
    callbacks(handler, retry) {
        const followed = (callback) => (data) => {
            if (this.handler === handler) {
                callback(data);
            }
        };
        return Object.fromEntries(
            Object.entries({
                onToken: (data) => {
                    this.thinking = false;
                    this.streamingText = data.reset ? "" : this.streamingText + (data.text || "");
                },
                onMessage: (row) => {
                    if (row.role === "assistant") {
                        this.streamingText = "";
                        this.thinking = false;
                    }
                    this.addRow(row);
                },
                onToolCall: (row) => {
                    this.streamingText = "";
                    this.thinking = true;
                    this.addRow(row);
                },
                onToolResult: (row) => this.addRow(row),
                onConfirmationRequest: (row) => this.addRow(row),
                onPlanUpdate: (data) => {
                    this.plan = data.plan || data;
                },
                onError: (data) =>
                    this.showError(
                        data.message || _t("The agent failed."),
                        this.resentRow(handler) ? null : retry
                    ),
                onPollState: (data) => {
                    this.queued = data.state === "queued";
                    // No plan_update event comes by polling: read the plan as it advances.
                    if (data.state === "executing") {
                        this.loadPlan(this.thread.id);
                    }
                },
                onDone: (result) => this.finish(result),
            }).map(([name, callback]) => [name, followed(callback)])
        );
    }

    /** Whether the row that `handler`'s Retry would write again (its message, its answer)
     * is stored already: then Retry would ask the same thing twice, and is not offered. */
    resentRow(handler) {
        const resent = handler.resent;
        return Boolean(
            resent &&
                resent.role &&
                this.messages.some((m) => m.role === resent.role && m.id > resent.afterId)
        );
    }

    /** Show a stored row once (rows come from the stream, the poll and the JSON answers). */
    addRow(row) {
        if (!SHOWN_ROLES.has(row.role) || this.messages.some((m) => m.id === row.id)) {
            return;
        }
        if (row.role === "user") {
            this.pendingText = "";
        }
        const normalized = normalizeRow(row);
        if (row.role === "tool_result") {
            const call = this.messages.find(
                (m) => m.role === "tool_call" && m.tool_call_id === normalized.tool_call_id
            );
            if (call) {
                call.status = normalized.status;
            }
        }
        this.messages.push(normalized);
    }

    /** The run ended (`result`: the stream's done event or the poll's last answer). */
    async finish(result) {
        const resent = this.handler && this.handler.resent;
        const runRetry = this.retry;
        this.handler = null;
        Object.assign(this, { thinking: false, queued: false });
        try {
            await this.sync();
        } catch (error) {
            this.showError(errorText(error), () => this.sync());
        }
        // The streamed text is in its row now (or was dropped by a refusal).
        Object.assign(this, { running: false, streamingText: "", pendingText: "" });
        if (this.retry === runRetry && resent && this.resentRow({ resent })) {
            this.retry = null;
        }
        if (result && result.state === "interrupted" && !this.error) {
            this.services.notification.add(_t("The run was stopped; what it did is kept."), {
                type: "info",
            });
        }
        this.loadThreads();
        if (this.thread) {
            this.loadPlan(this.thread.id); // its final state, and a plan followed by polling
        }
    }

    /** Stop the run followed: what it did is kept. */
    async stop() {
        const thread = this.thread;
        if (!thread || !this.handler) {
            return;
        }
        // Leaving the stream stops the run at its next step; chat/cancel
        // also stops a run this page follows by polling.
        this.handler.abort();
        try {
            await rpc("/agentic_ai/chat/cancel", { thread_id: thread.id }, { silent: true });
        } catch {
            // Already stopped: nothing running to cancel.
        }
        await this.waitUntilIdle(thread.id);
        await this.finish({ state: "interrupted" });
    }

    /** Poll until the thread is no longer queued or executing (at most 60 polls, 500 ms apart). */
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
    /** Show or hide the open conversation's tokens and cost. */
    async toggleStats() {
        if (this.stats) {
            this.stats = null;
            return;
        }
        try {
            this.stats = await rpc("/agentic_ai/thread/stats", { thread_id: this.thread.id });
        } catch (error) {
            this.showError(errorText(error), () => this.toggleStats());
        }
    }

    /** @param {string} message @param {Function|null} retry what Retry does (null: no Retry) */
    showError(message, retry) {
        this.error = message;
        this.retry = retry;
    }

    closeError() {
        this.error = null;
    }

    onRetry() {
        const retry = this.retry;
        this.error = null;
        this.retry = null;
        if (retry) {
            retry();
        }
    }
}

export const chatStoreService = {
    dependencies: ["orm", "notification"],
    /**
     * @param {import("@web/env").OdooEnv} env
     * @param {{orm: object, notification: object}} services
     * @returns {ChatStore} reactive
     */
    start(env, services) {
        return reactive(new ChatStore(env, services));
    },
};

registry.category("services").add("agentic_ai.chat_store", chatStoreService);
