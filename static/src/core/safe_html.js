import { markup } from "@odoo/owl";

/**
 * The last gate before model text becomes DOM (issue 11 point 3). The
 * server sends `content_html` already sanitized; it is sanitized again here
 * with DOMPurify (bundled in web.assets_backend), on an instance of our own
 * so that our hooks never touch Odoo's other uses of it. Nothing else the
 * model writes is ever inserted as HTML: plain text goes through t-esc.
 */
let purifier = null;

function getPurifier() {
    if (!purifier) {
        purifier = window.DOMPurify(window);
        purifier.addHook("afterSanitizeAttributes", (node) => {
            if (node.tagName === "A") {
                const href = node.getAttribute("href") || "";
                let url = null;
                try {
                    url = new URL(href, window.location.origin);
                } catch {
                    url = null;
                }
                if (!url || !["http:", "https:", "mailto:"].includes(url.protocol)) {
                    node.removeAttribute("href");
                } else if (url.origin !== window.location.origin) {
                    node.setAttribute("target", "_blank");
                    node.setAttribute("rel", "noopener noreferrer");
                }
            }
            if (node.tagName === "IMG") {
                // Only this Odoo's own images load by themselves; the server
                // turns others into placeholders the user clicks.
                let url = null;
                try {
                    url = new URL(node.getAttribute("src") || "", window.location.origin);
                } catch {
                    url = null;
                }
                if (!url || url.origin !== window.location.origin) {
                    node.remove();
                }
            }
        });
    }
    return purifier;
}

/** `html` sanitized for display, as an owl markup string. */
export function safeMarkup(html) {
    return markup(
        getPurifier().sanitize(html, {
            FORBID_TAGS: [
                "style",
                "form",
                "input",
                "textarea",
                "select",
                "iframe",
                "object",
                "embed",
                "svg",
                "math",
            ],
            FORBID_ATTR: ["style", "srcset", "formaction", "action"],
        })
    );
}

/** The http(s) URL of an image placeholder, or null. */
export function placeholderUrl(button) {
    try {
        const url = new URL(button.dataset.src || "", window.location.origin);
        return ["http:", "https:"].includes(url.protocol) ? url.href : null;
    } catch {
        return null;
    }
}
