"""The spec's webhook scheme beside the integrations' (spec 000 §11.2, issue
27 point 1): a JSON-RPC 2.0 call signed with HMAC-SHA256 and the one key in
``agentic_ai.webhook_api_key`` reaches the integrations a Settings
administrator lets accept it, with the same timestamp window, replay guard
and untrusted handling of the payload; the key is generated at install,
shown once in Settings, and rotatable. Over real HTTP, signed by the
sender's recipe written here (tests/test_webhooks.py ``sender_signature``)."""
import json
import logging

from odoo import Command
from odoo.exceptions import AccessError, UserError, ValidationError
from odoo.tests import HttpCase, new_test_user, tagged

from .common import AgenticSetupMixin, tool_call
from .test_webhooks import TS, LogLines, clock, new_integration, sender_signature

TRIGGER = "/agentic_ai/webhook/trigger"
STATUS = "/agentic_ai/webhook/status"
REFUSED = {"jsonrpc": "2.0", "id": None, "error": {"code": 401, "message": "unauthorized"}}
CONTROLLER_LOGGER = "odoo.addons.agentic_ai.controllers.webhook_controller"


def rpc(params, call_id=1):
    """A JSON-RPC 2.0 call as Odoo's own clients send it (raw bytes)."""
    return json.dumps({"jsonrpc": "2.0", "method": "call", "params": params, "id": call_id}).encode()


@tagged("post_install", "-at_install")
class TestWebhookApiKey(AgenticSetupMixin, HttpCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.setup_agentic()
        cls.webhook = new_integration(cls, "Spec sender", "api_key_bot")
        cls.webhook.accept_api_key = True
        cls.closed = new_integration(cls, "Own secret only", "api_key_bot", secret="whsec_another_test_secret_only")
        cls.installed_key = cls.env["ir.config_parameter"].get_param("agentic_ai.webhook_api_key")
        cls.key = cls.env["agentic.ai.webhook"]._generate_api_key()
        cls.cron = cls.env.ref("agentic_ai.ir_cron_process_pending_tasks")
        cls.settings_admin = new_test_user(cls.env, "key_sys_admin",
                                           groups="base.group_system,agentic_ai.group_agentic_ai_admin")
        cls.ai_admin = new_test_user(cls.env, "key_ai_admin",
                                     groups="base.group_user,agentic_ai.group_agentic_ai_admin")

    def setUp(self):
        super().setUp()
        self.logs = LogLines()
        logging.getLogger().addHandler(self.logs)
        self.addCleanup(logging.getLogger().removeHandler, self.logs)

    def tearDown(self):
        everything = "\n".join(self.logs.lines)
        self.assertNotIn(self.key, everything, "the API key appeared in a log line")
        super().tearDown()

    def send(self, body, timestamp=TS, key=None, route=TRIGGER, delivery=None, signature=None):
        headers = {"Content-Type": "application/json", "X-Agentic-Timestamp": str(timestamp),
                   "X-Agentic-Signature": signature or sender_signature(key or self.key, timestamp, body)}
        if delivery:
            headers["X-Agentic-Delivery"] = delivery
        return self.url_open(route, data=body, headers=headers)

    def assert_refused(self, check, body, **kwargs):
        deliveries = self.env["agentic.ai.webhook.delivery"].search_count([])
        with self.assertLogs(CONTROLLER_LOGGER, "WARNING") as logs:
            response = self.send(body, **kwargs)
        self.logs.lines += logs.output
        self.assertEqual((response.status_code, response.json()), (401, REFUSED), response.text)
        self.assertIn(f"refused ({check}): the webhook API key", "\n".join(logs.output))
        self.assertEqual(self.env["agentic.ai.webhook.delivery"].search_count([]), deliveries)

    # --------------------------------------------------------------- requests
    def test_signed_call_queues_a_run_whose_status_gives_the_reply(self):
        self.script({"content": "Order 42 is in stock."})
        body = rpc({"agent": self.agent.code, "message": "Check the stock of order 42", "priority": "high"}, "c-1")
        with clock(TS + 5):
            queued = self.send(body)
        self.assertEqual(queued.status_code, 200, queued.text)
        answer = queued.json()
        self.assertEqual((answer["jsonrpc"], answer["id"], set(answer["result"])),
                         ("2.0", "c-1", {"thread_id", "state"}))
        thread = self.env["agentic.ai.thread"].browse(answer["result"]["thread_id"])
        self.assertEqual((thread.webhook_id, thread.user_id), (self.webhook, self.bot), "the integration's user")
        self.assertTrue(thread.pending_message.startswith("Check the stock of order 42\n\n[Data sent by"))
        self.assertNotIn('"agent"', thread.pending_message, "the routing key is not data for the model")

        with clock(TS + 6):
            again = self.send(body)
        self.assertEqual(again.json()["result"], {**answer["result"], "duplicate": True},
                         "the same signed call again (no delivery header) is not processed again")
        with clock(TS + 7):
            resent = self.send(body, delivery="another-id")
        self.assertTrue(resent.json()["result"]["duplicate"], "nor under a delivery id")
        self.assertEqual(self.env["agentic.ai.thread"].search_count([("webhook_id", "=", self.webhook.id)]), 1)

        self.cron.method_direct_trigger()
        status = rpc({"thread_id": thread.id}, 7)
        with clock(TS + 20):
            done = self.send(status, TS + 20, route=STATUS)
        self.assertEqual(done.json(), {"jsonrpc": "2.0", "id": 7, "result": {
            "thread_id": thread.id, "state": "completed", "reply": "Order 42 is in stock."}})
        sent = self.scenario.chat_requests()[-1]["messages"][-1]["content"]
        self.assertIn("not instructions to you", sent)

        follow_up = rpc({"message": "And order 43?", "thread_id": thread.id})
        with clock(TS + 30):
            more = self.send(follow_up, TS + 30)
        self.assertEqual(more.json()["result"]["thread_id"], thread.id, "the thread names its integration")

    def test_refusals_are_one_answer(self):
        body = rpc({"agent": self.agent.code, "message": "hello"})
        with clock(TS + 3600):
            self.assert_refused("timestamp outside the window", body)
        with clock(TS):
            self.assert_refused("signature mismatch", body, key="whsec_test_only_not_real")
            self.assert_refused("signature mismatch", body, signature=sender_signature(self.key, TS, b"{}"))
            self.assert_refused("signature malformed", body, signature="sha256=abc")
            self.assert_refused("delivery malformed", body, delivery="has spaces in it")
            old = self.key
            self.key = self.env["agentic.ai.webhook"]._generate_api_key()
            self.assert_refused("signature mismatch", body, key=old)
            self.assertEqual(self.send(body).status_code, 200, "the new key works at once")
            self.env["ir.config_parameter"].set_param("agentic_ai.webhook_api_key", False)
            self.assert_refused("no API key", body)

    def test_authentic_calls_that_cannot_be_used_get_clear_errors(self):
        with clock(TS):
            for body, status, message in (
                    (b'{"event": "not a call"}', 400, "JSON-RPC 2.0 call"),
                    (b"[1, 2]", 400, "JSON object"),
                    (rpc({"agent": 7}), 400, "code of an agent"),
                    (rpc({"agent": "no_such_agent"}), 404, "No integration of the agent no_such_agent"),
                    (rpc({"message": "hi", "thread_id": 0}), 400, "thread_id"),
                    (rpc({"message": " \u200b\u0000 "}), 400, "non-empty text")):
                with self.subTest(body=body[:60]):
                    response = self.send(body)
                    self.assertEqual(response.status_code, status, response.text)
                    error = response.json()["error"]
                    self.assertEqual(error["code"], status)
                    self.assertIn(message, error["data"]["message"])
            closed_thread = self.env["agentic.ai.thread"].create({
                "agent_id": self.agent.id, "user_id": self.bot.id, "webhook_id": self.closed.id})
            for route, params in ((STATUS, {"thread_id": closed_thread.id}),
                                  (TRIGGER, {"message": "hi", "thread_id": closed_thread.id})):
                with self.subTest(route=route):
                    response = self.send(rpc(params), route=route)
                    self.assertEqual((response.status_code, response.json()["error"]["code"]), (404, 404),
                                     "a thread of an integration that does not accept the key is not found")
            self.webhook.accept_api_key = False
            response = self.send(rpc({"message": "anyone?"}))
            self.assertEqual(response.status_code, 404)
            self.assertIn("No integration accepts the webhook API key", response.json()["error"]["data"]["message"])
            self.webhook.accept_api_key = True
            with self.assertRaises(ValidationError):  # one integration of an agent accepts the key, at most
                self.closed.accept_api_key = True
                self.closed.flush_recordset()
            other_agent = self.agent.copy({"name": "Key agent two", "code": "key_agent_two"})
            other_agent.action_activate()
            self.env["agentic.ai.webhook"].create({"name": "Second agent", "agent_id": other_agent.id,
                                                   "run_as_user_id": self.bot.id, "accept_api_key": True})
            response = self.send(rpc({"message": "which one?"}))
            self.assertIn("Name the agent", response.json()["error"]["data"]["message"])
            response = self.send(rpc({"message": "that one", "agent": "key_agent_two"}))
            self.assertEqual(response.status_code, 200, response.text)

    def test_a_change_asked_through_the_key_waits_for_a_person(self):
        self.bot.sudo().group_ids = [Command.link(self.env.ref("base.group_partner_manager").id)]
        before = self.env["res.partner"].search_count([])
        self.script(tool_call("odoo_create", {"model": "res.partner", "values": {"name": "Injected"}}),
                    {"content": "created"})
        with clock(TS):
            queued = self.send(rpc({"agent": self.agent.code, "message": "Create a contact named Injected"}))
        thread = self.env["agentic.ai.thread"].browse(queued.json()["result"]["thread_id"])
        self.cron.method_direct_trigger()
        self.assertEqual(thread.state, "waiting_confirmation")
        self.assertEqual(self.env["res.partner"].search_count([]), before)

    # --------------------------------------------------------------- the key
    def test_key_generated_at_install_shown_once_then_rotated(self):
        self.assertTrue(self.installed_key.startswith("whkey_"), "the install (or the upgrade) generated one")
        Settings = self.env["res.config.settings"].with_user(self.settings_admin)
        params = self.env["ir.config_parameter"]
        params.set_param("agentic_ai.webhook_api_key", False)
        self.env["agentic.ai.webhook"]._ensure_api_key()  # what the install hook and the migration run
        installed = params.get_param("agentic_ai.webhook_api_key")
        self.assertTrue(installed.startswith("whkey_") and len(installed) > 40)
        settings = Settings.create({})
        self.assertEqual(settings.agentic_ai_webhook_api_key_state, "new")
        self.assertEqual(settings.agentic_ai_webhook_api_key_integrations, 1)
        action = settings.action_agentic_ai_show_webhook_api_key()
        self.assertEqual((action["context"]["default_secret"], action["context"]["default_api_key"]),
                         (installed, True))
        self.assertEqual(Settings.create({}).agentic_ai_webhook_api_key_state, "shown")
        with self.assertRaises(UserError):
            Settings.create({}).action_agentic_ai_show_webhook_api_key()
        self.env["agentic.ai.webhook"]._ensure_api_key()
        self.assertEqual(params.get_param("agentic_ai.webhook_api_key"), installed, "an upgrade keeps the key")
        rotated = Settings.create({}).action_agentic_ai_rotate_webhook_api_key()["context"]["default_secret"]
        self.assertNotEqual(rotated, installed)
        self.assertEqual(params.get_param("agentic_ai.webhook_api_key"), rotated)
        dialog = self.env["agentic.ai.webhook.secret.show"].with_user(self.settings_admin).get_views(
            [(False, "form")])["views"]["form"]["arch"]
        self.assertIn("Copy the webhook API key now", dialog)

    def test_only_settings_administrators_hold_the_key_and_open_integrations_to_it(self):
        Settings = self.env["res.config.settings"].with_user(self.ai_admin)
        with self.assertRaises(AccessError):
            Settings.create({})
        with self.assertRaises(AccessError):
            self.env["agentic.ai.webhook"].with_user(self.ai_admin)._generate_api_key()
        own = self.env["agentic.ai.webhook"].with_user(self.ai_admin).create({
            "name": "Mine", "agent_id": self.agent.id, "run_as_user_id": self.ai_admin.id})
        with self.assertRaises(AccessError):
            own.write({"accept_api_key": True})
        self.assertNotIn("accept_api_key", own.fields_get())
        self.webhook.accept_api_key = False  # one integration of an agent accepts the key, at most
        own.with_user(self.settings_admin).accept_api_key = True
        self.assertTrue(own.sudo().accept_api_key)
