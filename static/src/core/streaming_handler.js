import { rpc } from "@web/core/network/rpc";
import { SSEParser } from "./sse_parser";

/**
 * Client of `/agentic_ai/chat/stream` (spec 000 §10.2, README "Streaming").
 *
 * The request is a POST with a JSON body (the message never travels in a
 * URL, so no EventSource); the answer is read with `response.body.getReader()`
 * and parsed as server-sent events. Every event goes to a callback:
 * `onToken({text} | {reset})`, `onMessage(row)`, `onToolCall(row)`,
 * `onToolResult(row)`, `onPlanUpdate(data)`, `onConfirmationRequest(row)`,
 * `onError({message})`, `onDone(result)`.
 *
 * A turn is never sent twice. When the stream drops, the handler follows
 * the run again with an EventSource on `GET /agentic_ai/chat/stream`
 * (issue 27 point 3), from the last row it saw (`last_event_id`, then the
 * `Last-Event-ID` the EventSource sends on its own reconnections): the rows
 * it missed, then the run's events, and `done`. When that cannot be opened
 * (an HTTP worker answers 503, a proxy refuses it) or fails
 * `maxFollowFailures` times in a row, and when no byte arrives within
 * `firstByteTimeout` ms (a proxy that buffers), the handler polls
 * `/agentic_ai/chat/poll` after the last row it saw until the thread is done.
 * Rows followed or polled are handed to the same callbacks (the caller drops
 * ids it already has). When the stream route answers that streaming is unavailable
 * (no JSON error: the route is missing or a proxy failed) before anything
 * ran, the message goes through `chat/send_async` (an answer to a
 * confirmation through `confirm/approve_async` or `confirm/reject_async`) and
 * is polled.
 * With `streaming: false` (an administrator turned streaming off, see the
 * `streaming` key of `/agentic_ai/agents`) the stream route is never tried:
 * every run takes that same way. Each poll answer's state goes to
 * `onPollState({state, thread})` ("queued" until the processor takes it).
 */
export const STREAM_URL = "/agentic_ai/chat/stream";

/** Statuses of a JSON refusal by the route itself: nothing ran, nothing to poll. */
const REFUSALS = new Set([400, 403, 404, 409, 415]);

/** The events of the stream, as an EventSource is told to listen to them. */
const STREAM_EVENTS = [
    "token",
    "message",
    "tool_call",
    "tool_result",
    "plan_update",
    "confirmation_request",
];

const ROW_EVENTS = {
    user: "message",
    assistant: "message",
    tool_call: "tool_call",
    tool_result: "tool_result",
    confirmation_request: "confirmation_request",
};

export class StreamingHandler {
    /**
     * @param {object} options
     * @param {number} options.threadId
     * @param {number} [options.afterId] the last row id the caller shows
     * @param {object} options.callbacks see the class comment
     * @param {number} [options.firstByteTimeout] ms to wait for the first byte
     * @param {number} [options.pollInterval] ms between two polls
     * @param {boolean} [options.streaming] false: queue and poll, never stream
     */
    constructor({
        threadId,
        afterId = 0,
        callbacks = {},
        firstByteTimeout = 10000,
        pollInterval = 1000,
        streaming = true,
        maxFollowFailures = 3,
    }) {
        this.maxFollowFailures = maxFollowFailures;
        this.source = null;
        this.streaming = streaming;
        this.threadId = threadId;
        this.afterId = afterId;
        this.callbacks = callbacks;
        this.firstByteTimeout = firstByteTimeout;
        this.pollInterval = pollInterval;
        this.controller = new AbortController();
        this.aborted = false;
        this.finished = false;
        this.mode = "stream";
    }

    /** Send a message and follow its run. */
    send(message) {
        return this.start({ thread_id: this.threadId, message }, () =>
            rpc("/agentic_ai/chat/send_async", { thread_id: this.threadId, message })
        );
    }

    /** Answer the waiting confirmation `confirmationId` and follow the run. */
    answer(approve, confirmationId, reason = "") {
        const params = { thread_id: this.threadId, confirmation_id: confirmationId };
        const body = { ...params, approve };
        if (!approve) {
            body.reason = params.reason = reason;
        }
        // Without the stream (an HTTP worker of a multi-process Odoo, or polling on), the answer is queued and
        // polled, as a message is: no HTTP worker waits for the approved call and the model (issue 26 point 1).
        return this.start(body, () =>
            rpc(
                approve ? "/agentic_ai/confirm/approve_async" : "/agentic_ai/confirm/reject_async",
                params
            )
        );
    }

    /** Stop reading and polling; the server stops the run at its next step. */
    abort() {
        this.aborted = true;
        this.controller.abort();
        this.closeSource();
    }

    closeSource() {
        if (this.source) {
            this.source.close();
            this.source = null;
        }
    }

    async start(body, fallback) {
        if (!this.streaming) {
            return this.fallBack(fallback);
        }
        let response;
        try {
            response = await fetch(STREAM_URL, {
                method: "POST",
                headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
                body: JSON.stringify(body),
                credentials: "same-origin",
                signal: this.controller.signal,
            });
        } catch (error) {
            if (this.aborted) {
                return;
            }
            // No answer at all: whether the run started is unknown, so it is
            // followed or looked up, never sent again.
            return this.follow(String(error));
        }
        if (
            !response.ok ||
            !(response.headers.get("Content-Type") || "").includes("text/event-stream")
        ) {
            const refusal = await this.refusal(response);
            if (refusal) {
                this.emit("error", { message: refusal });
                return this.finish({
                    thread_id: this.threadId,
                    state: null,
                    error: refusal,
                    refused: true,
                });
            }
            return this.fallBack(fallback);
        }
        return this.read(response);
    }

    /** The route's own JSON refusal message, or null (streaming unavailable). */
    async refusal(response) {
        if (!REFUSALS.has(response.status)) {
            return null;
        }
        try {
            const payload = await response.json();
            return (payload && payload.error && payload.error.message) || null;
        } catch {
            return null;
        }
    }

    async fallBack(fallback) {
        this.mode = "fallback";
        try {
            const answer = await fallback();
            if (answer && answer.after_id !== undefined) {
                this.afterId = Math.max(this.afterId, answer.after_id);
            }
            if (answer && answer.state) {
                this.emit("poll_state", { state: answer.state, thread: answer.thread });
            }
        } catch (error) {
            const message = (error.data && error.data.message) || error.message || String(error);
            this.emit("error", { message });
            return this.finish({
                thread_id: this.threadId,
                state: null,
                error: message,
                refused: true,
            });
        }
        return this.poll();
    }

    async read(response) {
        const reader = response.body.getReader();
        const decoder = new TextDecoder();
        const parser = new SSEParser();
        let gotByte = false;
        let timedOut = false;
        const timer = setTimeout(() => {
            if (!gotByte) {
                timedOut = true;
                // A proxy holds the stream back: poll instead. The reader is
                // left open (closing it would stop the run on the server) and
                // cancelled once the polls see the end.
                this.poll("no byte arrived");
            }
        }, this.firstByteTimeout);
        try {
            while (!this.aborted && !this.finished) {
                const { value, done } = await reader.read();
                if (done) {
                    break;
                }
                gotByte = true;
                if (timedOut) {
                    continue;
                }
                for (const event of parser.feed(decoder.decode(value, { stream: true }))) {
                    this.dispatch(event);
                }
            }
        } catch {
            // The connection dropped: handled below.
        } finally {
            clearTimeout(timer);
        }
        if (this.finished || this.aborted) {
            reader.cancel().catch(() => {});
            return;
        }
        if (!timedOut) {
            return this.follow("the stream ended before its done event");
        }
    }

    /**
     * Follow the run with an EventSource from the last row seen; poll when
     * it cannot be opened, fails `maxFollowFailures` times in a row, or
     * opens no byte within `firstByteTimeout` ms. Resolves once done.
     */
    follow(reason = "") {
        if (this.mode !== "stream" || typeof EventSource === "undefined") {
            return this.poll(reason);
        }
        this.mode = "follow";
        if (this.callbacks.onFollowing) {
            this.callbacks.onFollowing(reason);
        }
        const query = new URLSearchParams({
            thread_id: this.threadId,
            last_event_id: this.afterId,
        });
        const source = new EventSource(`${STREAM_URL}?${query}`, { withCredentials: true });
        this.source = source;
        return new Promise((resolve) => {
            let opened = false;
            let failures = 0;
            const end = (next) => {
                clearTimeout(timer);
                if (this.source === source) {
                    this.closeSource();
                }
                source.close();
                resolve(next && next());
            };
            const giveUp = (why) => end(() => this.poll(why));
            const timer = setTimeout(() => {
                if (!opened) {
                    giveUp("the run could not be followed again");
                }
            }, this.firstByteTimeout);
            source.addEventListener("open", () => {
                opened = true;
                failures = 0;
            });
            const read = (name) => (event) => {
                if (this.aborted || this.finished) {
                    return end();
                }
                let data;
                try {
                    data = JSON.parse(event.data);
                } catch {
                    return;
                }
                this.dispatch({ name, data });
                if (name === "done") {
                    end();
                }
            };
            for (const name of [...STREAM_EVENTS, "done"]) {
                source.addEventListener(name, read(name));
            }
            // "error" is both the server's event (with data) and the EventSource's own failure (without).
            source.addEventListener("error", (event) => {
                if (event.data !== undefined) {
                    return read("error")(event);
                }
                if (this.aborted || this.finished) {
                    return end();
                }
                failures += 1;
                if (
                    source.readyState === EventSource.CLOSED ||
                    failures >= this.maxFollowFailures
                ) {
                    giveUp("the run could not be followed again");
                }
            });
        });
    }

    dispatch(event) {
        const data = event.data;
        if (
            data &&
            typeof data === "object" &&
            typeof data.id === "number" &&
            event.name !== "done"
        ) {
            this.afterId = Math.max(this.afterId, data.id);
        }
        if (event.name === "done") {
            return this.finish(data);
        }
        this.emit(event.name, data);
    }

    /** A stored row (from poll or a JSON answer) as the event it stands for. */
    dispatchRow(row) {
        this.afterId = Math.max(this.afterId, row.id);
        const name = ROW_EVENTS[row.role];
        if (name) {
            this.emit(name, row);
        }
    }

    emit(name, data) {
        const callback = {
            token: "onToken",
            message: "onMessage",
            tool_call: "onToolCall",
            tool_result: "onToolResult",
            plan_update: "onPlanUpdate",
            confirmation_request: "onConfirmationRequest",
            error: "onError",
            comment: "onComment",
            poll_state: "onPollState",
        }[name];
        if (callback && this.callbacks[callback]) {
            this.callbacks[callback](data);
        }
    }

    finish(result) {
        if (this.finished) {
            return;
        }
        this.finished = true;
        this.controller.abort();
        this.closeSource();
        if (this.callbacks.onDone) {
            this.callbacks.onDone(result);
        }
    }

    /** Poll the thread after the last row seen until it is done. */
    async poll(reason = "") {
        if (this.mode === "poll") {
            return;
        }
        this.mode = "poll";
        if (this.callbacks.onPolling) {
            this.callbacks.onPolling(reason);
        }
        while (!this.aborted && !this.finished) {
            let answer;
            try {
                answer = await rpc("/agentic_ai/chat/poll", {
                    thread_id: this.threadId,
                    after_id: this.afterId,
                });
            } catch {
                answer = null; // offline for a moment: try again
            }
            if (this.aborted || this.finished) {
                return;
            }
            if (answer) {
                this.emit("poll_state", { state: answer.state, thread: answer.thread });
                for (const row of answer.messages) {
                    this.dispatchRow(row);
                }
                if (answer.done) {
                    if (answer.error && answer.state === "error") {
                        this.emit("error", { message: answer.error });
                    }
                    return this.finish({
                        thread_id: this.threadId,
                        state: answer.state,
                        error: answer.error,
                        thread: answer.thread,
                        polled: true,
                    });
                }
            }
            await new Promise((resolve) => setTimeout(resolve, this.pollInterval));
        }
    }
}
