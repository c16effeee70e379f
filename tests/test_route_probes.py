"""Adversarial probes of every way into a run (issue 10): the JSON-RPC
routes, the stream and the queue (webhooks: tests/test_webhook_probes.py), driven over real HTTP as an
attacker or a careless integrator would. Each test names its probe; bad
input must get a clear error (never a 500, a traceback or an ERROR log
line) and lose nothing."""
import json

from odoo import fields
from odoo.exceptions import UserError
from odoo.tests import HttpCase, new_test_user, tagged

from ..dev.scripted_llm.scenario import last_user_contains
from ..engine.doors.event_relay import HEARTBEAT_SECONDS, MIN_HEARTBEAT_SECONDS, EventRelay
from .common import AgenticSetupMixin, live_run_elsewhere, tool_call
from .probes import leave_dead_run, no_error_logs, strict_json
from .sse_client import open_stream

STREAM = "/agentic_ai/chat/stream"
THREAD_ROUTES = {  # route: the parameters it needs besides thread_id
    "/agentic_ai/thread/messages": {},
    "/agentic_ai/chat/send": {"message": "hi"},
    "/agentic_ai/chat/send_async": {"message": "hi"},
    "/agentic_ai/chat/poll": {},
    "/agentic_ai/confirm/approve": {"tool_call_id": "call_x"},
    "/agentic_ai/confirm/reject": {"tool_call_id": "call_x"},
    "/agentic_ai/confirm/approve_async": {"tool_call_id": "call_x"},
    "/agentic_ai/confirm/reject_async": {"tool_call_id": "call_x"},
    "/agentic_ai/chat/cancel": {},
    "/agentic_ai/thread/stats": {},
}
CLEAR_ERRORS = ("odoo.exceptions.UserError", "odoo.exceptions.AccessError", "odoo.exceptions.MissingError",
                "odoo.exceptions.LockError")


@tagged("post_install", "-at_install")
class TestRouteProbes(AgenticSetupMixin, HttpCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.setup_agentic()
        groups = "base.group_user,agentic_ai.group_agentic_ai_user,base.group_partner_manager"
        cls.owner = new_test_user(cls.env, "probe_owner", groups=groups)
        cls.other = new_test_user(cls.env, "probe_other", groups=groups)
        cls.operator = new_test_user(cls.env, "probe_operator", groups=groups + ",agentic_ai.group_agentic_ai_operator")
        cls.portal = new_test_user(cls.env, "probe_portal", groups="base.group_portal")

    def setUp(self):
        super().setUp()
        self.thread = self.agent.with_user(self.owner).start_thread(name="probe")
        self.authenticate("probe_owner", "probe_owner")
        self.script()

    # ------------------------------------------------------------- helpers
    def rpc(self, route, **params):
        """``(result, error data)`` of a raw JSON-RPC call; one of them is None."""
        response = self.url_open(route, json={"jsonrpc": "2.0", "method": "call", "id": 1, "params": params})
        self.assertEqual(response.status_code, 200, f"{route} {params}: {response.text[:300]}")
        answer = strict_json(response.text)
        return answer.get("result"), (answer["error"]["data"] if "error" in answer else None)

    def refused(self, route, needle="", **params):
        """The route answers a clear Odoo error (UserError family,
        AccessError, MissingError) whose name or message holds ``needle``."""
        result, error = self.rpc(route, **params)
        self.assertIsNotNone(error, f"{route} accepted {params}: {result}")
        self.assertIn(error["name"], CLEAR_ERRORS, f"{route} {params}: {error['name']}: {error['message']}")
        self.assertIn(needle, f"{error['name']}: {error['message']}", f"{route} {params}")
        return error

    def post_stream(self, body, content_type="application/json", path=STREAM):
        """A raw POST to the stream route (bytes, or a dict sent as JSON)."""
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        return self.url_open(path, data=data, headers={"Content-Type": content_type})

    def stream(self, body):
        with open_stream(self, body) as stream:
            return [e for e in stream.events() if e.name != "comment"]

    def send_by(self, way, message):
        """Send ``message`` on the thread by chat/send or the stream (``way``);
        returns the run's final state."""
        if way == "send":
            result, error = self.rpc("/agentic_ai/chat/send", thread_id=self.thread.id, message=message)
            self.assertIsNone(error, error)
            return result["result"]["state"]
        return self.stream({"thread_id": self.thread.id, "message": message})[-1].data["state"]

    def pause(self, name="Probe Partner"):
        """The owner's thread waits for the confirmation of deleting a new
        partner ``name``; returns ``(call id, partner)``."""
        self.agent.require_confirmation = "destructive"
        partner = self.env["res.partner"].create({"name": name})
        self.script(tool_call("odoo_unlink", {"model": "res.partner", "record_ids": [partner.id]}, "call_del"),
                    {"content": "Deleted."})
        result, error = self.rpc("/agentic_ai/chat/send", thread_id=self.thread.id, message=f"delete {name}")
        self.assertIsNone(error, error)
        self.assertEqual(result["thread"]["state"], "waiting_confirmation")
        return result["thread"]["confirmation"]["tool_call_id"], partner

    def dead_run(self):
        return leave_dead_run(self.agent.with_user(self.owner).start_thread(name="dead run"))

    def tool_runs(self, thread):
        return thread.execution_log_ids.filtered(lambda r: r.action_type == "tool_execution")

    # ------------------------------------------------------------- access and ids
    def test_thread_ids_of_every_json_type_get_a_clear_error(self):
        """Probe: thread_id as negative, float, huge, list, dict, boolean,
        null, full-width digits, on every JSON route and the stream."""
        bad_ids = [-1, 1.5, 2**63, [self.thread.id], {"id": self.thread.id}, True, None, "１", "1e3"]
        with no_error_logs(self):
            for route, params in THREAD_ROUTES.items():
                for bad in bad_ids:
                    with self.subTest(route=route, thread_id=bad):
                        self.refused(route, "thread_id", thread_id=bad, **params)
            for bad in bad_ids:
                with self.subTest(route=STREAM, thread_id=bad):
                    response = self.post_stream({"thread_id": bad, "message": "hi"})
                    self.assertEqual(response.status_code, 400, response.text)
            for bad in (-1, 1.5, [self.agent.id], None, False, 2**40):
                with self.subTest(agent_id=bad):
                    self.refused("/agentic_ai/thread/create", "agent_id", agent_id=bad)
            for params in ({"limit": -5}, {"limit": "ten"}, {"offset": 1.5}, {"offset": [1]}):
                with self.subTest(params=params):
                    self.refused("/agentic_ai/thread/list", "", **params)
        self.assertEqual(self.thread.state, "active")
        self.assertFalse(self.scenario.requests, "the model was called")

    def test_operator_and_portal_cannot_act_in_anothers_thread(self):
        """Probe: an AI operator (who may read every thread) and a portal
        user on every acting route and the stream, on a thread waiting for
        a confirmation."""
        call_id, partner = self.pause()
        for login in ("probe_operator", "probe_other", "probe_portal"):
            self.authenticate(login, login)
            with no_error_logs(self):
                for route, params in THREAD_ROUTES.items():
                    if route in ("/agentic_ai/thread/messages", "/agentic_ai/chat/poll",
                                 "/agentic_ai/thread/stats") and login == "probe_operator":
                        continue  # operators may read
                    with self.subTest(login=login, route=route):
                        self.refused(route, "AccessError", thread_id=self.thread.id,
                                     **{**params, "tool_call_id": call_id} if "tool_call_id" in params else params)
                for body in ({"message": "hi"}, {"approve": True, "tool_call_id": call_id}):
                    with self.subTest(login=login, stream=body):
                        response = self.post_stream({"thread_id": self.thread.id, **body})
                        self.assertEqual(response.status_code, 403, response.text)
        self.thread.invalidate_recordset()
        self.assertEqual(self.thread.state, "waiting_confirmation")
        self.assertTrue(partner.exists())
        self.assertFalse(self.tool_runs(self.thread))

    def test_user_removed_from_the_agent_cannot_go_on(self):
        """Probe: the agent's allowed users change after the thread was
        created (and the agent is archived): send, stream, approve refused."""
        call_id, partner = self.pause()
        self.agent.user_ids = [(6, 0, self.other.ids)]
        with no_error_logs(self):
            self.refused("/agentic_ai/chat/send", "AccessError", thread_id=self.thread.id, message="hi")
            self.refused("/agentic_ai/chat/send_async", "AccessError", thread_id=self.thread.id, message="hi")
            self.refused("/agentic_ai/confirm/approve", "AccessError", thread_id=self.thread.id, tool_call_id=call_id)
            self.assertEqual(self.post_stream({"thread_id": self.thread.id, "approve": True,
                                               "tool_call_id": call_id}).status_code, 403)
            self.agent.user_ids = [(5,)]
            self.agent.action_set_archived()
            self.refused("/agentic_ai/chat/send", "not active", thread_id=self.thread.id, message="hi")
            self.refused("/agentic_ai/confirm/approve", "not active", thread_id=self.thread.id, tool_call_id=call_id)
            self.assertEqual(self.post_stream({"thread_id": self.thread.id, "message": "hi"}).status_code, 400)
        self.assertTrue(partner.exists())
        self.agent.action_activate()

    # ------------------------------------------------------------- confirmations
    def test_approve_through_the_stream_then_the_json_route_runs_once(self):
        """Probe: approve via the stream, then again via JSON (and reject),
        and a call id of another thread: the call runs once."""
        call_id, partner = self.pause()
        events = self.stream({"thread_id": self.thread.id, "approve": True, "tool_call_id": call_id})
        self.assertEqual(events[-1].data["state"], "completed")
        self.assertFalse(partner.exists())
        with no_error_logs(self):
            self.refused("/agentic_ai/confirm/approve", "not waiting", thread_id=self.thread.id, tool_call_id=call_id)
            self.refused("/agentic_ai/confirm/reject", "not waiting", thread_id=self.thread.id, tool_call_id=call_id)
            again = self.stream({"thread_id": self.thread.id, "approve": True, "tool_call_id": call_id})
        self.assertEqual([e.name for e in again], [])  # refused before the stream opened
        self.assertEqual(len(self.tool_runs(self.thread)), 1)

    def test_blank_messages_are_refused_by_every_door(self):
        """Probe (found by a break-it trial): a message of nothing but
        control, format and white-space characters is empty at every door,
        before anything is stored or run."""
        for message in ("\x00", "\x00\x01 \u200b", "\u200b\u200c\ufeff", "\t\r\n\x1f"):
            with self.subTest(message=repr(message)):
                self.refused("/agentic_ai/chat/send", "non-empty", thread_id=self.thread.id, message=message)
                self.refused("/agentic_ai/chat/send_async", "non-empty", thread_id=self.thread.id, message=message)
                response = self.post_stream({"thread_id": self.thread.id, "message": message})
                self.assertEqual(response.status_code, 400, response.text)
        self.assertFalse(self.thread.message_ids, "nothing was stored")
        self.assertFalse(self.scenario.requests, "the model was not called")

    def test_arguments_that_are_not_strict_json_travel_as_their_text(self):
        """Probe (found by a break-it trial): a call whose arguments are
        not a JSON object of strict JSON (NaN, Infinity, a bare value) is
        given as the text the model sent, by the routes and the stream
        alike, and every answer is strict JSON."""
        raw = ["[NaN]", "Infinity", '"just text"', "{not json"]
        self.script(*[{"tool_calls": [{"name": "odoo_search_read", "arguments": text, "id": f"call_raw_{i}"}]}
                      for i, text in enumerate(raw)], {"content": "Sorry."})
        events = self.stream({"thread_id": self.thread.id, "message": "find something"})
        streamed = [e.data["tool_arguments"] for e in events if e.name == "tool_call"]
        response = self.url_open("/agentic_ai/thread/messages", json={
            "jsonrpc": "2.0", "method": "call", "id": 1, "params": {"thread_id": self.thread.id}})
        rows = strict_json(response.text)["result"]["messages"]
        routed = [row["tool_arguments"] for row in rows if row["role"] == "tool_call"]
        self.assertEqual(routed, raw)
        self.assertEqual(streamed, raw)

    def test_client_that_leaves_at_the_confirmation_can_answer_later(self):
        """Probe: the client closes the stream as soon as the confirmation
        request arrives; the thread waits, and the JSON route answers it."""
        self.agent.require_confirmation = "destructive"
        partner = self.env["res.partner"].create({"name": "Left Partner"})
        self.script(tool_call("odoo_unlink", {"model": "res.partner", "record_ids": [partner.id]}, "call_left"),
                    {"content": "Deleted."})
        with no_error_logs(self):
            with open_stream(self, {"thread_id": self.thread.id, "message": "delete it"}) as stream:
                for event in stream.events():
                    if event.name == "confirmation_request":
                        stream.close()
                        break
            result, error = self.rpc("/agentic_ai/confirm/approve", thread_id=self.thread.id,
                                     tool_call_id="call_left")
        self.assertIsNone(error, error)
        self.assertEqual(result["result"]["state"], "completed")
        self.assertFalse(partner.exists())
        self.assertEqual(len(self.tool_runs(self.thread)), 1)

    def test_answers_with_bad_values_are_refused(self):
        """Probe: reject with a huge or non-text reason, approve with a
        non-text call id, a call id of another thread, approve: "yes"."""
        call_id, partner = self.pause()
        other = self.agent.with_user(self.owner).start_thread(name="second")
        with no_error_logs(self):
            for reason in ("x" * 2001, 5, ["a"], {"a": 1}):
                self.refused("/agentic_ai/confirm/reject", "reason", thread_id=self.thread.id, tool_call_id=call_id,
                             reason=reason)
            for bad in (None, 5, ["call_del"], {"id": call_id}, ""):
                self.refused("/agentic_ai/confirm/approve", "tool_call_id", thread_id=self.thread.id,
                             tool_call_id=bad)
            self.refused("/agentic_ai/confirm/approve", "not waiting", thread_id=other.id, tool_call_id=call_id)
            for approve in ("yes", 1, None):
                response = self.post_stream({"thread_id": self.thread.id, "approve": approve, "tool_call_id": call_id})
                self.assertEqual(response.status_code, 400, response.text)
        self.assertTrue(partner.exists())
        self.assertFalse(self.tool_runs(self.thread))

    # ------------------------------------------------------------- stream input
    def test_stream_bodies_that_are_not_a_message(self):
        """Probe: params not an object, a JSON scalar, form and text bodies,
        a body not UTF-8 or nested 5,000 deep, a message in the query
        string only: refused before anything runs."""
        with no_error_logs(self):
            for body, content_type, status in (
                    (b'{"jsonrpc": "2.0", "params": [1, 2]}', "application/json", 400),
                    (b'"just text"', "application/json", 400),
                    (b"thread_id=1&message=hi", "application/x-www-form-urlencoded", 415),
                    (b"hi", "text/plain", 415),
                    (b"\xff\xfe{", "application/json", 400),
                    (b"[" * 5000, "application/json", 400)):
                with self.subTest(body=body[:40], content_type=content_type):
                    response = self.post_stream(body, content_type)
                    self.assertEqual(response.status_code, status, response.text)
            response = self.post_stream({"thread_id": self.thread.id},
                                        path=f"{STREAM}?message=from+the+url&thread_id={self.thread.id}")
            self.assertEqual(response.status_code, 400, "the message in the URL was used")
        self.assertFalse(self.thread.message_ids)
        self.assertFalse(self.scenario.requests)

    def test_too_long_message_is_refused_before_the_stream_opens(self):
        """Probe: a message of 20,001 characters (NUL bytes not counted, as
        the runtime counts): 400 at once, as the README promises, not a
        stream whose only event is the error; the JSON routes say the same."""
        threads = self.env["agentic.ai.thread"].search_count([])
        with no_error_logs(self):
            response = self.post_stream({"thread_id": self.thread.id, "message": "x" * 20001})
            self.assertEqual(response.status_code, 400, f"a too long message opened a stream: {response.text[:200]}")
            self.assertIn("too long", response.json()["error"]["message"])
            for route in ("/agentic_ai/chat/send", "/agentic_ai/chat/send_async"):
                self.refused(route, "too long", thread_id=self.thread.id, message="x" * 20001)
            self.refused("/agentic_ai/thread/create", "too long", agent_id=self.agent.id, initial_message="x" * 20001)
            self.script({"content": "ok"})
            events = self.stream({"thread_id": self.thread.id, "message": "x" * 20000 + "\x00" * 10})
        self.assertEqual(events[-1].data["state"], "completed")
        self.assertEqual(len(self.thread.message_ids.filtered(lambda m: m.role == "user").content), 20000)
        self.assertEqual(self.env["agentic.ai.thread"].search_count([]), threads,
                         "a refused initial message left a thread")

    def test_stream_json_rpc_envelope_and_nul_in_message(self):
        """Probe: the JSON-RPC envelope, a message with NUL bytes and a
        lone surrogate: stored cleaned, answered."""
        self.script({"content": "ok"})
        with no_error_logs(self):
            events = self.stream({"jsonrpc": "2.0", "params": {"thread_id": self.thread.id,
                                                               "message": "a\x00b \ud800 c"}})
        self.assertEqual(events[-1].data["state"], "completed", events)
        user = self.thread.message_ids.filtered(lambda m: m.role == "user")
        self.assertEqual(user.content, "ab \ufffd c")

    def test_nonsense_heartbeat_settings_keep_the_pings(self):
        """Probe: agentic_ai.stream_heartbeat_seconds set to nan, -1, inf or
        text. NaN passed min/max and made the relay wait forever between
        pings; every value now gives a finite heartbeat, and a silent
        provider still gets ``: ping`` comments at the smallest one."""
        for value in (float("nan"), float("inf"), float("-inf"), -1.0, 0.0, 1e400, "15"):
            self.assertTrue(MIN_HEARTBEAT_SECONDS <= EventRelay(value).heartbeat <= HEARTBEAT_SECONDS, value)
        self.assertEqual(EventRelay(float("nan")).heartbeat, HEARTBEAT_SECONDS)
        for raw in ("nan", "-1", "soon"):
            with self.subTest(heartbeat=raw):
                self.env["ir.config_parameter"].sudo().set_param("agentic_ai.stream_heartbeat_seconds", raw)
                self.script({"content": "late", "delay": 0.7 if raw == "-1" else 0})
                with open_stream(self, {"thread_id": self.thread.id, "message": "slow"}) as stream:
                    events = list(stream.events())
                self.assertEqual(events[-1].data["state"], "completed")
                if raw == "-1":  # the one value of the loop that turns pings on (a delayed answer is waited for)
                    self.assertIn("ping", [e.data for e in events if e.name == "comment"], events)

    def test_client_that_leaves_at_once_frees_the_thread(self):
        """Probe: the client closes the stream as soon as its message is
        stored, while the provider is still silent: the thread ends, its
        run lock is released, and the next message runs. (Closed before the
        first event, the run's thread could start after the next message's
        request and store its message second: seen once in a full run.)"""
        self.script(({"content": "never read", "delay": 0.5}, last_user_contains("first")),
                    ({"content": "second answer"}, last_user_contains("second")))
        with no_error_logs(self):
            with open_stream(self, {"thread_id": self.thread.id, "message": "first"}) as stream:
                next(event for event in stream.events() if event.name == "message")  # the user's row, stored
                stream.close()
            result, error = self.rpc("/agentic_ai/chat/send", thread_id=self.thread.id, message="second")
        self.assertIsNone(error, error)
        self.assertEqual(result["result"]["reply"], "second answer")
        self.assertEqual(self.thread.message_ids.filtered(lambda m: m.role == "user").mapped("content"),
                         ["first", "second"])

    def test_stream_while_another_session_runs_the_thread(self):
        """Probe: two runs on the same thread at once (the other holds the
        run lock in its own database session, before its state says so): a
        409 before the stream opens, no ERROR."""
        with live_run_elsewhere(self.thread), no_error_logs(self):
            response = self.post_stream({"thread_id": self.thread.id, "message": "hi"})
            self.refused("/agentic_ai/chat/send", "already being processed", thread_id=self.thread.id,
                         message="hi")
        self.assertEqual(response.status_code, 409, response.text[:300])
        self.assertIn("already being processed", response.json()["error"]["message"])
        self.assertFalse(self.scenario.requests)

    # ------------------------------------------------------------- JSON out
    def test_values_that_are_not_json_on_every_outward_path(self):
        """Probe: a Python-code tool returns NaN, infinity, bytes, a
        datetime, a set, a recordset and a script tag: the route's answer,
        the stream's events, the transcript and the log stay strict JSON."""
        tool = self.env["agentic.ai.tool"].create({
            "name": "probe_odd_values", "description": "x", "tool_type": "python_code", "risk_level": "low",
            "python_code": "result = {'nan': float('nan'), 'inf': float('-inf'), 'raw': b'\\xff\\x00', "
                           "'when': env.cr.now(), 'set': {3, 1, 2}, 'partners': env['res.partner'].browse([1, 2]), "
                           "'html': '<script>alert(1)</script>'}"})
        self.agent.tool_ids = [(4, tool.id)]
        for way in ("send", "stream"):
            with self.subTest(way=way):
                self.script(tool_call("probe_odd_values", {}), {"content": "Odd values seen."})
                with no_error_logs(self):
                    self.assertEqual(self.send_by(way, "odd"), "completed")
                    messages, error = self.rpc("/agentic_ai/thread/messages", thread_id=self.thread.id)
                    self.assertIsNone(error, error)
                    self.assertIn("tool_result", [m["role"] for m in messages["messages"]])
                    stats, error = self.rpc("/agentic_ai/thread/stats", thread_id=self.thread.id)
                    self.assertIsNone(error, error)
                    self.assertGreaterEqual(stats["tool_calls"], 1)
        data = self.thread.message_ids.filtered(lambda m: m.role == "tool_result")[-1].tool_result_data
        strict_json(data)
        for row in self.tool_runs(self.thread):
            strict_json(row.output_data)

    def test_provider_error_with_a_lone_surrogate(self):
        """Probe: the provider's error message holds a lone UTF-16
        surrogate (valid JSON escape, not storable text): the run ends
        ``error`` with a clear reply, on the route and the stream."""
        for way in ("send", "stream"):
            with self.subTest(way=way), no_error_logs(self):
                self.script({"status": 400, "error": "bad \ud800 request"})
                self.assertEqual(self.send_by(way, "hi"), "error")
                self.thread.invalidate_recordset()
                self.assertEqual(self.thread.state, "error")
                self.assertIn("bad", self.thread.last_error)

    # ------------------------------------------------------------- queue
    def run_cron(self):
        self.env.ref("agentic_ai.ir_cron_process_pending_tasks").method_direct_trigger()

    def test_queued_message_of_a_user_archived_since_is_not_run(self):
        """Probe: send_async, then the user is archived before the
        processor runs: nothing runs as that user."""
        self.env["ir.config_parameter"].sudo().set_param("agentic_ai.queue_max_attempts", "1")
        self.script({"content": "ran as an archived user"})
        _result, error = self.rpc("/agentic_ai/chat/send_async", thread_id=self.thread.id, message="later")
        self.assertIsNone(error, error)
        self.owner.active = False
        with self.assertLogs("odoo.addons.agentic_ai.models.agent_thread_queue", "WARNING") as logs:
            self.run_cron()
        self.assertIn("is archived", "\n".join(logs.output))
        self.assertFalse(self.scenario.requests, "the queued message ran as an archived user")
        self.thread.invalidate_recordset()
        self.assertEqual(self.thread.state, "error")
        self.owner.active = True

    def test_queue_flood_cancel_and_delete(self):
        """Probe: a second send_async on a queued thread, a queued message
        cancelled then polled, a queued thread deleted, three threads
        queued at once: each message runs once, no ERROR."""
        threads = [self.agent.with_user(self.owner).start_thread(name=f"flood {i}") for i in range(3)]
        cancelled = self.agent.with_user(self.owner).start_thread(name="cancelled")
        deleted = self.agent.with_user(self.owner).start_thread(name="deleted")
        self.script(*[{"content": f"answer {i}"} for i in range(3)])
        with no_error_logs(self):
            for thread in (*threads, cancelled, deleted):
                self.assertIsNone(self.rpc("/agentic_ai/chat/send_async", thread_id=thread.id, message="go")[1])
            self.refused("/agentic_ai/chat/send_async", "busy", thread_id=threads[0].id, message="again")
            self.refused("/agentic_ai/chat/send", "busy", thread_id=threads[0].id, message="again")
            self.assertIsNone(self.rpc("/agentic_ai/chat/cancel", thread_id=cancelled.id)[1])
            polled, _error = self.rpc("/agentic_ai/chat/poll", thread_id=cancelled.id)
            self.assertEqual((polled["state"], polled["done"]), ("active", True))
            deleted.with_user(self.owner).unlink()
            self.run_cron()
        self.assertEqual(len(self.scenario.chat_requests()), 3)
        for thread in threads:
            self.assertEqual(thread.state, "completed")
        self.assertFalse(cancelled.message_ids.filtered(lambda m: m.role == "user"))

    # ------------------------------------------------------------- durability
    def test_dead_run_through_every_route_is_repaired_once(self):
        """Probe: a thread a dead run left executing, reached through each
        route: repaired once, the dangling call never run again."""
        ways = {
            "/agentic_ai/thread/messages": {}, "/agentic_ai/chat/poll": {}, "/agentic_ai/thread/stats": {},
            "/agentic_ai/chat/cancel": {}, "/agentic_ai/chat/send_async": {"message": "did it work?"},
            "/agentic_ai/chat/send": {"message": "did it work?"},
            "/agentic_ai/confirm/approve": {"tool_call_id": "call_dead"}, STREAM: {"message": "did it work?"},
        }
        for route, params in ways.items():
            with self.subTest(route=route):
                thread = self.dead_run()
                self.script({"content": "I will check first."})
                with no_error_logs(self):
                    if route == STREAM:
                        self.stream({"thread_id": thread.id, **params})
                    else:
                        self.rpc(route, thread_id=thread.id, **params)
                    self.rpc("/agentic_ai/thread/messages", thread_id=thread.id)  # loaded again
                thread.invalidate_recordset()
                self.assertNotEqual(thread.state, "executing")
                unknown = thread.message_ids.filtered(lambda m: m.role == "tool_result" and m.tool_status == "unknown")
                self.assertEqual(len(unknown), 1, "the dangling call got one result")
                repairs = thread.execution_log_ids.filtered(lambda r: r.action_type == "error")
                self.assertEqual(len(repairs), 1, "repaired once")
                self.assertFalse(self.tool_runs(thread), "the dangling call was run again")
                self.assertFalse(self.env["res.partner"].search([("name", "=", "Dangling Partner")]))

    def test_cron_repairs_a_dead_run(self):
        """Probe: a streamed or synchronous run died; nobody opens the
        thread again: the queue processor's run repairs it."""
        thread = self.dead_run()
        self.run_cron()
        thread.invalidate_recordset()
        self.assertEqual(thread.state, "interrupted")

    def test_running_thread_cannot_be_deleted(self):
        """Probe: the user deletes a conversation whose run is alive in
        another worker: refused (the run would fail on its next row); a
        dead one is repaired and deleted."""
        thread = self.dead_run()
        with live_run_elsewhere(thread), self.assertRaises(UserError):
            thread.with_user(self.owner).unlink()
        self.assertTrue(thread.exists())
        thread.with_user(self.owner).unlink()
        self.assertFalse(thread.exists())
        queued = self.agent.with_user(self.owner).start_thread(name="claimed")
        queued._set_runtime_state(state="queued", pending_message="go", queue_claimed_at=fields.Datetime.now())
        with self.assertRaises(UserError):
            queued.with_user(self.owner).unlink()
