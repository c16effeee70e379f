import { Component, onWillStart, onWillUnmount, useEffect, useState } from "@odoo/owl";
import { registry } from "@web/core/registry";
import { useService } from "@web/core/utils/hooks";
import { standardActionServiceProps } from "@web/webclient/actions/action_service";
import { ChatStats } from "../chat_stats/chat_stats";
import { Composer } from "../composer/composer";
import { ConfirmationBar } from "../confirmation_bar/confirmation_bar";
import { MessageList } from "../message_list/message_list";
import { ThreadSidebar } from "../thread_sidebar/thread_sidebar";

/**
 * The chat (spec 000 §10.1, issue 11 point 1): an OWL client action laying
 * out the agent selector, the conversations, the transcript as bubbles, the
 * confirmation bar and the composer. The conversation itself (its rows, its
 * run, every call to the server) is the `agentic_ai.chat_store` service
 * (core/chat_store.js); the action keeps only how it is shown (the
 * conversations' panel open or not) and the URL: `action.params.thread_id`
 * opens a thread, and the thread shown is written back to it.
 */
export class ChatAction extends Component {
    static template = "agentic_ai.ChatAction";
    static components = { ChatStats, Composer, ConfirmationBar, MessageList, ThreadSidebar };
    static props = { ...standardActionServiceProps };

    setup() {
        this.store = useState(useService("agentic_ai.chat_store"));
        this.ui = useService("ui");
        this.state = useState({ sidebarOpen: !this.ui.isSmall });
        const page = Symbol("agentic_ai.chat_action");
        onWillStart(() => {
            const action = this.props.action;
            const asked =
                (action.params || {}).thread_id || ((action.context || {}).params || {}).thread_id;
            return this.store.start(parseInt(asked, 10) || null, page);
        });
        useEffect(
            (threadId) => {
                if (this.props.updateActionState) {
                    this.props.updateActionState({ thread_id: threadId || undefined });
                }
            },
            () => [this.store.thread && this.store.thread.id]
        );
        onWillUnmount(() => this.store.leave(page));
    }

    /** On a phone the conversations' panel covers the transcript: it closes once one is chosen. */
    closeSidebarOnPhone() {
        if (this.ui.isSmall) {
            this.state.sidebarOpen = false;
        }
    }

    async openThread(threadId) {
        if (await this.store.openThread(threadId)) {
            this.closeSidebarOnPhone();
        }
    }

    newThread() {
        if (this.store.newThread()) {
            this.closeSidebarOnPhone();
        }
    }

    onAgentChange(ev) {
        this.store.selectAgent(parseInt(ev.target.value, 10));
    }

    toggleSidebar() {
        this.state.sidebarOpen = !this.state.sidebarOpen;
    }
}

registry.category("actions").add("agentic_ai.chat_action", ChatAction);
