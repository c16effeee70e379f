import { Component, useState } from "@odoo/owl";

/**
 * The user's conversations, newest first, with a search box filtering
 * them by name, a button for a new one, and rename / archive on each.
 */
export class ThreadSidebar extends Component {
    static template = "agentic_ai.ThreadSidebar";
    static props = {
        threads: Array,
        currentId: { type: [Number, { value: null }], optional: true },
        busyId: { type: [Number, { value: null }], optional: true },
        onOpen: Function,
        onNew: Function,
        onRename: Function,
        onArchive: Function,
    };

    setup() {
        this.state = useState({ search: "", editingId: null, name: "" });
    }

    get visibleThreads() {
        const search = this.state.search.trim().toLowerCase();
        return search
            ? this.props.threads.filter((thread) =>
                  (thread.name || "").toLowerCase().includes(search)
              )
            : this.props.threads;
    }

    /** A conversation whose run is going cannot be renamed or archived
     * until it ends (its run holds its row: the change would wait for it). */
    isBusy(thread) {
        return thread.id === this.props.busyId || ["queued", "executing"].includes(thread.state);
    }

    startRename(thread) {
        this.state.editingId = thread.id;
        this.state.name = thread.name || "";
    }

    async saveRename(thread) {
        const name = this.state.name.trim();
        this.state.editingId = null;
        if (name && name !== thread.name) {
            await this.props.onRename(thread, name);
        }
    }

    onRenameKeydown(ev, thread) {
        if (ev.key === "Enter") {
            ev.preventDefault();
            this.saveRename(thread);
        } else if (ev.key === "Escape") {
            this.state.editingId = null;
        }
    }
}
