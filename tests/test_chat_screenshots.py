"""Screenshots of the chat for the README (issue 11 point 6), made in a real
browser: tours (static/tests/tours/chat_screenshots_tour.js) stop the chat
idle, streaming, with a tool step expanded, asking for a confirmation and in
the dark theme; at each state tests/browser_probe.py captures the page.

The tours and their checks always run; the PNGs are written into the
addon's ``docs/`` only when ``AGENTIC_AI_SCREENSHOTS=1`` (so ``make test``
never rewrites the committed ones)::

    AGENTIC_AI_SCREENSHOTS=1 AGENTIC_AI_TEST_TAGS=/agentic_ai:TestChatScreenshots bash dev/test.sh
"""
import os
import re
from pathlib import Path
from unittest.mock import patch

from odoo.tests import HttpCase, new_test_user, tagged

from .browser_probe import PageProbe
from .common import AgenticSetupMixin, tool_call

DOCS = Path(__file__).resolve().parent.parent / "docs"
PNG = b"\x89PNG\r\n\x1a\n"
DARK_PAGE = "rgb(38, 42, 54)"  # $o-agentic-dark-page of static/src/core/variables.dark.scss


@tagged("post_install", "-at_install")
class TestChatScreenshots(AgenticSetupMixin, HttpCase):
    browser_size = "1280x800"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.setup_agentic()
        cls.salesperson = new_test_user(
            cls.env, "chat_shots", name="Sally Sales",
            groups="base.group_user,agentic_ai.group_agentic_ai_user,"
                   "sales_team.group_sale_salesman,base.group_partner_manager")

    def tour(self, name, *expected):
        """Run the tour ``name`` while a PageProbe serves it; check it took the
        screenshots ``expected`` and write them to docs/ when asked."""
        probe = PageProbe(self.base_url())
        with probe.serving():
            self.start_tour("/odoo/action-agentic_ai.chat_action", name, login="chat_shots", timeout=120)
        self.assertEqual(sorted(probe.shots), sorted(expected), f"screenshots taken (probe errors: {probe.errors})")
        for shot, png in probe.shots.items():
            self.assertTrue(png.startswith(PNG), f"{shot} is a PNG")
            if os.environ.get("AGENTIC_AI_SCREENSHOTS") == "1":
                DOCS.mkdir(exist_ok=True)
                (DOCS / f"{shot}.png").write_bytes(png)
        return probe

    def test_idle_streaming_and_tool_step(self):
        words = ("It is a draft: check the prices and the delivery date, then send it to the customer from "
                 "the quotation's form or ask me to send it. The chairs are in stock; the cabinet ships from "
                 "the main warehouse within five days, so the expected delivery is next week.")

        def answer(request):
            name = re.search(r"S\d{5}", request["messages"][-1]["content"])
            return {"content": f"Your quotation {name and name.group(0)} for Azure Interior is ready: "
                               f"3 Office Chair Black and 1 Large Cabinet. {words}", "chunk_delay": 0.15}

        self.script(tool_call("create_quotation", {"partner": "Azure Interior", "lines": [
            {"product": "Office Chair Black", "quantity": 3}, {"product": "Large Cabinet", "quantity": 1}]},
            "call_quote"), answer)
        probe = self.tour("agentic_ai_chat_screenshots_stream", "chat-idle", "chat-streaming", "chat-tool-step")
        self.assertNotEqual(probe.data["chat-idle"]["chat"], DARK_PAGE, "the dark rules stay out of the light theme")
        stream = self.scenario.requests[-1]["stream"]
        self.assertEqual(stream["sent"], stream["total"], "the answer streamed to its end")

    def test_confirmation_bar(self):
        self.agent.require_confirmation = "always"
        partner = self.env["res.partner"].create({
            "name": "Screenshot Partner", "phone": "+32 2 290 34 90", "email": "info@old.example.com"})
        self.script(tool_call("odoo_write", {"model": "res.partner", "record_ids": [partner.id], "values": {
            "phone": "+32 2 555 01 99", "email": "contact@new.example.com"}}, "call_write"),
            {"content": "Done: the phone and email of Screenshot Partner are updated."})
        self.tour("agentic_ai_chat_screenshots_confirmation", "chat-confirmation")
        self.assertEqual((partner.phone, partner.email), ("+32 2 555 01 99", "contact@new.example.com"),
                         "the approved change ran")

    def test_dark_theme(self):
        self.script(tool_call("odoo_search_read", {"model": "res.partner", "domain": [["customer_rank", ">", 0]],
                                                   "fields": ["name"], "limit": 3}, "call_read"),
                    {"content": "**Deco Addict** ordered most this month:\n\n| Customer | Orders |\n|---|---|\n"
                                "| Deco Addict | 4 |\n| Azure Interior | 2 |\n\nWant me to draft a follow-up?"})
        # Simulates Odoo Enterprise's dark mode: Community's ir.http.color_scheme()
        # always answers "light"; Enterprise reads the color_scheme cookie and the
        # web client then loads the web.assets_web_dark bundle, as here.
        with patch.object(type(self.env["ir.http"]), "color_scheme", lambda _self: "dark"):
            probe = self.tour("agentic_ai_chat_screenshots_dark", "chat-dark")
        self.assertEqual(probe.data["chat-dark"]["chat"], DARK_PAGE, "the chat's dark rules apply")
        for role in ("assistant", "user", "tool"):
            contrast = probe.data["chat-dark"][role]
            self.assertGreaterEqual(contrast["ratio"], 4.5, f"the {role} bubble is readable in the dark theme: "
                                                            f"{contrast}")
