/**
 * Parse server-sent-event text. Feed it chunks; it returns the complete
 * events found so far as `{name, data}` (`data` parsed as JSON when it is)
 * and `{name: "comment", data: text}` for comment lines. Lines end with
 * CR, LF or CRLF and a blank line ends an event, as the WHATWG HTML
 * standard's "interpreting an event stream" says (the `id` and `retry`
 * fields are read by nobody here and ignored).
 */
export class SSEParser {
    constructor() {
        this.buffer = "";
        this.eventName = "";
        this.dataLines = [];
    }

    /** @param {string} text @returns {{name: string, data: any}[]} */
    feed(text) {
        this.buffer += text;
        const events = [];
        let index;
        while ((index = this.buffer.search(/\r\n|\r|\n/)) >= 0) {
            const line = this.buffer.slice(0, index);
            const newline = this.buffer.startsWith("\r\n", index) ? 2 : 1;
            this.buffer = this.buffer.slice(index + newline);
            const event = this.line(line);
            if (event) {
                events.push(event);
            }
        }
        return events;
    }

    line(line) {
        if (line === "") {
            if (!this.dataLines.length) {
                this.eventName = "";
                return null;
            }
            const text = this.dataLines.join("\n");
            const name = this.eventName || "message";
            this.eventName = "";
            this.dataLines = [];
            let data = text;
            try {
                data = JSON.parse(text);
            } catch {
                // Not JSON: the text as sent.
            }
            return { name, data };
        }
        if (line.startsWith(":")) {
            return { name: "comment", data: line.slice(1).trim() };
        }
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? "" : line.slice(colon + 1);
        if (value.startsWith(" ")) {
            value = value.slice(1);
        }
        if (field === "event") {
            this.eventName = value;
        } else if (field === "data") {
            this.dataLines.push(value);
        }
        return null;
    }
}
