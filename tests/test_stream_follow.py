"""``GET /agentic_ai/chat/stream`` (issue 27 point 3, spec 000 §10.2): what
an EventSource opens to follow a thread's current run, over real HTTP.
Row events carry their row's id; ``Last-Event-ID`` (or ``last_event_id`` on
a first connection) resumes after it with nothing repeated or lost; a
finished run ends with its ``done``; a run whose client left with nobody
following stops after the grace; a run of the queue is followed from the
database. A POST stream cut mid-answer and resumed by a GET while its run
goes on needs two requests served at once, which a test's shared cursor
serializes: dev/stream_resume_check.py checks it on a real server, in a
real browser."""
import json
import threading
import time

from odoo import SUPERUSER_ID, api
from odoo.tests import HttpCase, new_test_user, tagged

from ..engine.doors.event_relay import STOP_GRACE_SECONDS
from .common import AgenticSetupMixin
from .sse_client import follow_stream, open_stream

CRON = "agentic_ai.ir_cron_process_pending_tasks"


@tagged("post_install", "-at_install")
class TestStreamFollow(AgenticSetupMixin, HttpCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.setup_agentic()
        cls.user = new_test_user(cls.env, "follow_user", groups="base.group_user,agentic_ai.group_agentic_ai_user")
        cls.other = new_test_user(cls.env, "follow_other", groups="base.group_user,agentic_ai.group_agentic_ai_user")

    def setUp(self):
        super().setUp()
        self.thread = self.agent.with_user(self.user).start_thread(name="follow")
        self.authenticate("follow_user", "follow_user")

    def followed(self, **kwargs):
        with follow_stream(self, self.thread.id, **kwargs) as stream:
            return [event for event in stream.events() if event.name != "comment"]

    def rows(self):
        return self.thread.message_ids.sorted("id")

    def test_a_finished_run_is_replayed_after_the_last_event_id(self):
        self.script({"content": "hello there"})
        with open_stream(self, {"thread_id": self.thread.id, "message": "hi"}) as stream:
            posted = [event for event in stream.events() if event.name != "comment"]
        user_row, answer_row = self.rows()
        numbered = [(event.name, event.id) for event in posted if event.id is not None]
        self.assertEqual(numbered, [("message", str(user_row.id)), ("message", str(answer_row.id))],
                         "the POST stream numbers its rows' events with their ids")

        everything = self.followed(last_event_id=0)
        self.assertEqual([(event.name, event.id) for event in everything],
                         [("message", str(user_row.id)), ("message", str(answer_row.id)), ("done", None)])
        self.assertEqual(everything[1].data["content"], "hello there")
        self.assertEqual((everything[-1].data["state"], everything[-1].data["reply"]), ("completed", "hello there"))

        after_user = self.followed(header=user_row.id)
        self.assertEqual([(event.name, event.id) for event in after_user],
                         [("message", str(answer_row.id)), ("done", None)], "resumed after Last-Event-ID")
        self.assertEqual([event.name for event in self.followed(header=answer_row.id, last_event_id=0)], ["done"],
                         "the header wins over the query parameter; nothing repeated")
        self.assertEqual(len(self.scenario.chat_requests()), 1, "following runs nothing")

    def test_without_a_follower_the_run_stops_after_the_grace(self):
        """BR-30 kept: a client that leaves and nobody follows: the run
        stops, STOP_GRACE_SECONDS later, what it did kept."""
        words = " ".join(f"w{i}" for i in range(200))
        self.script({"content": words, "chunk_delay": 0.05})
        with open_stream(self, {"thread_id": self.thread.id, "message": "a long answer please"}) as stream:
            for event in stream.events():
                if event.name == "token":
                    break
            stream.close()
        deadline = time.monotonic() + STOP_GRACE_SECONDS + 10
        while time.monotonic() < deadline:
            self.thread.invalidate_recordset()
            if self.thread.state != "executing":
                break
            time.sleep(0.2)
        self.assertEqual(self.thread.state, "interrupted")
        upstream = self.scenario.requests[0]["stream"]
        self.assertLess(upstream["sent"], upstream["total"], "the provider's answer was cut short")
        events = self.followed(last_event_id=0)
        self.assertEqual(events[-1].name, "done")
        self.assertEqual(events[-1].data["state"], "interrupted")

    def test_a_queued_run_is_followed_from_the_database(self):
        """send_async queues the message; the GET follows it while the
        queue's processor runs it (another process in production): its rows
        as they are stored, then ``done``."""
        self.script({"content": "done in the background"})
        queued = self.make_jsonrpc_request("/agentic_ai/chat/send_async",
                                           {"thread_id": self.thread.id, "message": "in the background"})
        self.assertEqual(queued["state"], "queued")
        errors = []

        def processor():  # the cron, as another process runs it, while the GET is open
            threading.current_thread().testing = True
            time.sleep(1.0)
            try:
                with self.registry.cursor() as cr:
                    api.Environment(cr, SUPERUSER_ID, {}).ref(CRON).method_direct_trigger()
            except Exception as exc:  # noqa: BLE001 - re-raised below
                errors.append(exc)

        worker = threading.Thread(target=processor)
        with follow_stream(self, self.thread.id, last_event_id=0) as stream:
            worker.start()
            received = [event for event in stream.events() if event.name != "comment"]
        worker.join(30)
        if errors:
            raise errors[0]
        self.assertEqual([event.name for event in received], ["message", "message", "done"])
        self.assertEqual([event.data["content"] for event in received[:2]],
                         ["in the background", "done in the background"])
        self.assertEqual(received[-1].data["state"], "completed")

    def test_bad_requests_are_refused_before_anything_is_sent(self):
        others = self.agent.with_user(self.other).start_thread(name="not yours")
        for params, status in (({"thread_id": others.id}, (403, 404)), ({"thread_id": "x"}, (400,)),
                               ({"thread_id": self.thread.id, "last_event_id": "-1"}, (400,)),
                               ({"thread_id": 2**31}, (400,)), ({"thread_id": "9" * 5000}, (400,)),
                               ({"thread_id": self.thread.id, "last_event_id": "9" * 5000}, (400,))):
            with self.subTest(params=params):
                response = self.url_open("/agentic_ai/chat/stream?" + "&".join(
                    f"{key}={value}" for key, value in params.items()))
                self.assertIn(response.status_code, status, response.text)
                self.assertIn("error", json.loads(response.text))
