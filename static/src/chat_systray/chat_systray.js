import { Component, onWillStart } from "@odoo/owl";
import { registry } from "@web/core/registry";
import { user } from "@web/core/user";
import { useService } from "@web/core/utils/hooks";

/** A systray icon that opens the chat, shown to AI users only. */
export class ChatSystray extends Component {
    static template = "agentic_ai.ChatSystray";
    static props = {};

    setup() {
        this.action = useService("action");
        this.visible = false;
        onWillStart(async () => {
            this.visible = await user.hasGroup("agentic_ai.group_agentic_ai_user");
        });
    }

    open() {
        this.action.doAction("agentic_ai.chat_action");
    }
}

registry
    .category("systray")
    .add("agentic_ai.chat_systray", { Component: ChatSystray }, { sequence: 30 });
