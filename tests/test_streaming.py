"""/agentic_ai/chat/stream over real HTTP (issue 10 point 2, spec 000
§10.2): tokens relayed as the scripted provider writes them, the run's
steps as events, heartbeats through a slow provider (case BR-15), a client
that leaves mid-answer (case BR-30), answers to a confirmation, and bad
requests refused before anything runs."""
import json
import time

from odoo.tests import HttpCase, new_test_user, tagged

from .common import PROVIDER_MATRIX, AgenticSetupMixin, tool_call
from .sse_client import open_stream


@tagged("post_install", "-at_install")
class TestStreaming(AgenticSetupMixin, HttpCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.setup_agentic()
        cls.user = new_test_user(cls.env, "stream_user", groups="base.group_user,agentic_ai.group_agentic_ai_user,"
                                                                 "sales_team.group_sale_salesman,base.group_partner_manager")
        cls.other = new_test_user(cls.env, "stream_other", groups="base.group_user,agentic_ai.group_agentic_ai_user")

    def setUp(self):
        super().setUp()
        self.thread = self.agent.with_user(self.user).start_thread(name="stream")
        self.authenticate("stream_user", "stream_user")

    def stream(self, body, **kwargs):
        """All the events of one streamed request, in order."""
        with open_stream(self, body, **kwargs) as stream:
            return list(stream.events())

    def test_first_token_reaches_the_client_before_the_provider_finishes(self):
        words = " ".join(f"word{i}" for i in range(20))
        self.script({"content": words, "chunk_delay": 0.05})
        with open_stream(self, {"thread_id": self.thread.id, "message": "talk"}) as stream:
            events, sent_when_first_token_arrived = [], None
            for event in stream.events():
                events.append(event)
                if event.name == "token" and sent_when_first_token_arrived is None:
                    sent_when_first_token_arrived = self.scenario.requests[-1]["stream"]["sent"]
            total = self.scenario.requests[-1]["stream"]["total"]
        self.assertLess(sent_when_first_token_arrived, total - 5,
                        "the first token reached the client only after the provider's last chunks")
        tokens = "".join(e.data["text"] for e in events if e.name == "token")
        self.assertEqual(tokens, words)
        names = [e.name for e in events if e.name != "comment"]
        self.assertEqual(names[0], "message", "the user's message is the first event")
        self.assertEqual(names[-1], "done")
        done = events[-1].data
        self.assertEqual((done["state"], done["reply"]), ("completed", words))
        self.assertEqual(self.thread.message_ids.sorted("id")[-1].content, words)

    def test_every_provider_streams_its_tokens(self):
        root = self.llm.base_url.removesuffix("/v1")
        for name, (provider_type, path, extra) in PROVIDER_MATRIX.items():
            with self.subTest(provider=name):
                self.agent.llm_provider_id = self.env["agentic.ai.llm.provider"].create({
                    "name": name, "provider_type": provider_type, "api_base_url": root + path,
                    "api_key": "key-" + name, "default_model": "model-" + name, "timeout_seconds": 5, **extra})
                self.script({"content": f"streamed by {name} in several words"})
                events = self.stream({"thread_id": self.thread.id, "message": "hello"})
                tokens = [e.data["text"] for e in events if e.name == "token"]
                self.assertGreater(len(tokens), 1, "the answer came in one piece")
                self.assertEqual("".join(tokens), f"streamed by {name} in several words")
                self.assertEqual(events[-1].data["state"], "completed")
                self.assertTrue(self.scenario.requests[-1].get("stream"), "the provider was not asked to stream")

    def test_steps_are_events(self):
        partner = self.env["res.partner"].create({"name": "Streamed Partner"})
        self.script(tool_call("odoo_search_read", {"model": "res.partner", "domain": [["id", "=", partner.id]],
                                                   "fields": ["name"]}),
                    {"content": "Found Streamed Partner."})
        events = [e for e in self.stream({"thread_id": self.thread.id, "message": "find it"}) if e.name != "comment"]
        names = [e.name for e in events]
        for name in ("message", "tool_call", "tool_result", "token", "done"):
            self.assertIn(name, names)
        self.assertLess(names.index("tool_call"), names.index("tool_result"))
        call = next(e.data for e in events if e.name == "tool_call")
        self.assertEqual((call["tool_name"], call["tool_arguments"]["model"]), ("odoo_search_read", "res.partner"))
        result = next(e.data for e in events if e.name == "tool_result")
        self.assertIn("Streamed Partner", result["content"])
        self.assertEqual(result["tool_call_id"], call["tool_call_id"])

    def test_br15_headers_heartbeat_and_final_done(self):
        """BR-15: no buffering, no compression, no length; a provider silent
        for longer than the heartbeat gets ``: ping`` comments; a final done."""
        self.env["ir.config_parameter"].sudo().set_param("agentic_ai.stream_heartbeat_seconds", "0.3")
        self.script({"content": "late answer", "delay": 1.5})
        with open_stream(self, {"thread_id": self.thread.id, "message": "slow"}) as stream:
            headers = stream.response.headers
            events = list(stream.events())
        self.assertEqual(headers["Content-Type"].split(";")[0], "text/event-stream")
        self.assertEqual(headers["Cache-Control"], "no-cache")
        self.assertEqual(headers["X-Accel-Buffering"], "no")
        self.assertNotIn("Content-Length", headers)
        self.assertNotIn("gzip", headers.get("Content-Encoding", ""))
        first_token = next(i for i, e in enumerate(events) if e.name == "token")
        pings = [e for e in events[:first_token] if e.name == "comment" and e.data == "ping"]
        self.assertGreaterEqual(len(pings), 2, f"no heartbeat while the provider was silent: {events}")
        self.assertEqual(events[-1].name, "done")
        self.assertEqual(events[-1].data["state"], "completed")

    def test_br30_client_gone_stops_the_run(self):
        """BR-30: 200 chunks 100 ms apart, then create_quotation; the client
        reads 5 events and leaves."""
        customer = self.env["res.partner"].create({"name": "BR30 Customer"})
        product = self.env["product.product"].create({"name": "BR30 Product", "list_price": 10})
        words = " ".join(f"w{i}" for i in range(200))
        reply = {"content": words, "chunk_delay": 0.1,
                 **tool_call("create_quotation", {"partner": customer.id,
                                                  "lines": [{"product": product.id, "quantity": 1}]})}
        self.script(reply, {"content": "quotation created"})
        with open_stream(self, {"thread_id": self.thread.id, "message": "make a quotation"}) as stream:
            received = []
            for event in stream.events():
                received.append(event)
                if len([e for e in received if e.name == "token"]) == 5:
                    break
            stream.close()
        # Leaving the block waits for the run's cursor: the run has stopped.
        self.authenticate("stream_other", "stream_other")
        agents = self.make_jsonrpc_request("/agentic_ai/agents", {})
        self.assertTrue(agents, "a second user's request is answered")
        upstream = self.scenario.requests[0]["stream"]
        deadline = time.monotonic() + 10  # the scripted server notices at its next write, 100 ms apart
        while not upstream["dropped"] and upstream["sent"] < upstream["total"] and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertTrue(upstream["dropped"], "the provider's stream was not closed")
        self.assertLess(upstream["sent"], 150, f"the provider kept streaming: {upstream['sent']} chunks sent")
        self.assertEqual(len(self.scenario.chat_requests()), 1, "the model was called again")
        self.assertFalse(self.env["sale.order"].search([("partner_id", "=", customer.id)]), "a quotation was made")
        self.thread.invalidate_recordset()
        self.assertEqual(self.thread.state, "interrupted")
        last = self.thread.message_ids.sorted("id")[-1]
        self.assertEqual(last.role, "assistant")
        self.assertTrue(last.content.startswith("w0 w1 w2"), last.content)
        self.assertIn("Interrupted", last.content)
        log = self.thread.execution_log_ids.filtered(lambda r: r.action_type == "llm_call")
        self.assertEqual(len(log), 1)
        self.assertGreater(log.output_tokens, 0, "no usage recorded for the partial answer")
        self.assertLess(log.output_tokens, 150, "the whole answer's usage was recorded")
        self.assertGreater(log.input_tokens, 0)
        self.assertEqual((log.usage_estimated, log.estimated_figures), (True, "input_tokens, output_tokens"),
                         "the provider sent no usage for the cut answer: our counts are flagged estimates")
        self.assertFalse(log.success)

    def test_confirmation_answered_through_the_stream(self):
        self.agent.require_confirmation = "destructive"
        partner = self.env["res.partner"].create({"name": "Stream Delete Me"})
        self.script(tool_call("odoo_unlink", {"model": "res.partner", "record_ids": [partner.id]}),
                    {"content": "Deleted."})
        events = self.stream({"thread_id": self.thread.id, "message": "delete it"})
        row = next(e.data for e in events if e.name == "confirmation_request")
        request = row["confirmation"]  # the event is the transcript row, with the question as the thread gives it
        self.assertEqual((row["role"], row["tool_name"]), ("confirmation_request", "odoo_unlink"))
        self.assertEqual(request["tool"], "odoo_unlink")
        self.assertEqual(request["records"], [{"id": partner.id, "name": "Stream Delete Me"}])
        self.assertEqual(events[-1].data["state"], "waiting_confirmation")
        # Another call id, or another question's id, is refused before the stream opens.
        for other in ({"tool_call_id": "other"}, {"confirmation_id": request["confirmation_id"] + 1}):
            response = self.url_open("/agentic_ai/chat/stream", headers={"Content-Type": "application/json"},
                                     data=json.dumps({"thread_id": self.thread.id, "approve": True, **other}))
            self.assertEqual(response.status_code, 400, other)
            self.assertIn("nothing was run", response.json()["error"]["message"])
        self.assertTrue(partner.exists())
        self.assertEqual(request["confirmation_id"], row["id"], "the question's id is its transcript row")
        events = self.stream({"thread_id": self.thread.id, "approve": True,
                              "confirmation_id": request["confirmation_id"]})
        self.assertEqual(events[-1].data["state"], "completed")
        self.assertFalse(partner.exists())

    def test_bad_requests_are_refused_before_anything_runs(self):
        self.script({"content": "never"})
        url = "/agentic_ai/chat/stream"
        cases = [
            (b"not json", {}, 400),
            (b"[1, 2]", {}, 400),
            (json.dumps({"thread_id": self.thread.id, "message": "  "}).encode(), {}, 400),
            (json.dumps({"thread_id": "x", "message": "hi"}).encode(), {}, 400),
            (json.dumps({"thread_id": self.thread.id, "message": "hi"}).encode(), {"Content-Type": "text/plain"}, 415),
        ]
        for body, headers, status in cases:
            response = self.url_open(url, data=body, headers={"Content-Type": "application/json", **headers})
            self.assertEqual(response.status_code, status, body)
            self.assertIn("error", response.json())
        mine = self.thread
        self.authenticate("stream_other", "stream_other")
        response = self.url_open(url, data=json.dumps({"thread_id": mine.id, "message": "hi"}).encode(),
                                 headers={"Content-Type": "application/json"})
        self.assertEqual(response.status_code, 403, "another user's thread")
        self.assertEqual(self.scenario.requests, [], "the model was called")
