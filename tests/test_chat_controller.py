"""The chat routes over HTTP (spec 000 §11.1): a salesperson's quotation
through /agentic_ai/chat/send (issue 2, acceptance test (a)), agents and
threads a user may or may not reach, parameters refused with a clear
message, and transcript helpers that cannot be called over RPC (test (f))."""
import json
import logging
import re
import time

from odoo.tests import HttpCase, new_test_user, tagged
from odoo.tests.common import JsonRpcException

from .common import AgenticSetupMixin, observation_field, observation_records, tool_call

_logger = logging.getLogger(__name__)

REQUEST = "Create a quotation for Azure Interior: 3 Large Desk and 2 Office Chair Black, then tell me its number."


@tagged("post_install", "-at_install")
class TestChatController(AgenticSetupMixin, HttpCase):
    """Issue 2, acceptance tests (a) and (f): the routes as a salesperson."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.setup_agentic()
        cls.salesperson = cls.env.ref("base.user_demo")
        cls.azure = cls.env.ref("base.res_partner_12")
        cls.large_desk = cls.env.ref("product.product_product_8")  # Large Desk (Wood)
        cls.chair = cls.env["product.product"].search([("name", "=", "Office Chair Black")], limit=1)

    def _quotation_script(self):
        """Find the customer; create the quotation by names. Odoo 19's demo
        "Large Desk" has three variants (Wood, Glass, Metal), so the tool
        answers with the candidates instead of guessing, and the model
        retries with the id of the first one (Wood)."""
        lines = [{"product": "Large Desk", "quantity": 3}, {"product": "Office Chair Black", "quantity": 2}]

        def create_quotation(request):
            partner_id = observation_records(request)[0]["id"]
            return tool_call("create_quotation", {"partner": partner_id, "lines": lines})

        def retry_with_variant(request):
            content = request["messages"][-1]["content"]
            partner_id = next(m for m in request["messages"] if m.get("tool_calls")
                              and m["tool_calls"][0]["function"]["name"] == "create_quotation")
            variant_id = int(re.search(r"Large Desk \(Wood\) \(id (\d+)\)", content).group(1))
            arguments = json.loads(partner_id["tool_calls"][0]["function"]["arguments"])
            arguments["lines"][0]["product"] = variant_id
            return tool_call("create_quotation", arguments)

        def final_answer(request):
            return {"content": f"Done: quotation {observation_field(request, 'name')} was created for Azure Interior."}

        self.script(
            tool_call("odoo_search_read", {"model": "res.partner", "domain": [["name", "=", "Azure Interior"]],
                                           "fields": ["id", "name"]}),
            create_quotation,
            retry_with_variant,
            final_answer,
        )

    def test_salesperson_creates_quotation_through_the_agent(self):
        self.assertTrue(self.azure.name == "Azure Interior" and self.large_desk and self.chair, "demo data missing")
        self._quotation_script()
        self.authenticate("demo", "demo")
        thread = self.make_jsonrpc_request("/agentic_ai/thread/create", {"agent_id": self.agent.id})
        started = time.monotonic()
        answer = self.make_jsonrpc_request("/agentic_ai/chat/send", {"thread_id": thread["id"], "message": REQUEST})
        elapsed = time.monotonic() - started

        order = self.env["sale.order"].search([("partner_id", "=", self.azure.id),
                                               ("create_uid", "=", self.salesperson.id)])
        transcript = "\n".join(f"{m['role']}: {m['content']}" for m in answer["messages"])
        self.assertEqual(len(order), 1,
                         f"exactly one quotation should have been created by the salesperson:\n{transcript}")
        self.assertEqual(order.state, "draft")
        self.assertEqual(sorted((line.product_id, line.product_uom_qty) for line in order.order_line),
                         sorted([(self.large_desk, 3.0), (self.chair, 2.0)]))
        # Prices are those Odoo's pricelist gives for the same order made by hand.
        reference = self.env["sale.order"].with_user(self.salesperson).create({
            "partner_id": self.azure.id,
            "order_line": [(0, 0, {"product_id": self.large_desk.id, "product_uom_qty": 3}),
                           (0, 0, {"product_id": self.chair.id, "product_uom_qty": 2})]})
        self.assertEqual({line.product_id: line.price_unit for line in order.order_line},
                         {line.product_id: line.price_unit for line in reference.order_line})
        self.assertIn(order.name, answer["result"]["reply"])
        self.assertEqual(answer["result"]["state"], "completed")

        messages = self.env["agentic.ai.thread"].browse(thread["id"]).message_ids.sorted("id")
        self.assertEqual(messages.mapped("role"),
                         ["user"] + ["tool_call", "tool_result"] * 3 + ["assistant"])
        self.assertEqual(messages.filtered(lambda m: m.role == "tool_call").mapped("tool_name"),
                         ["odoo_search_read", "create_quotation", "create_quotation"])
        self.assertIn("3 product records match 'Large Desk'",
                      messages.filtered(lambda m: m.role == "tool_result")[1].content)
        self.assertEqual([m["role"] for m in answer["messages"]], messages.mapped("role"))

        logs = self.env["agentic.ai.execution.log"].search([("thread_id", "=", thread["id"])])
        llm_logs = logs.filtered(lambda log: log.action_type == "llm_call")
        self.assertEqual(len(llm_logs), 4)
        self.assertTrue(all(log.input_tokens > 0 and log.output_tokens > 0 and log.cost > 0 for log in llm_logs))
        tool_logs = logs.filtered(lambda log: log.action_type == "tool_execution")
        self.assertEqual(sorted(tool_logs.mapped("tool_name")),
                         ["create_quotation", "create_quotation", "odoo_search_read"])
        self.assertEqual(tool_logs.sorted("id").mapped("success"), [True, False, True])
        self.assertEqual(tool_logs.user_id, self.salesperson)
        self.assertEqual(set(tool_logs.mapped("tool_call_id")),
                         set(messages.filtered(lambda m: m.role == "tool_call").mapped("tool_call_id")))

        requests = self.scenario.chat_requests()
        offered = {t["function"]["name"] for t in requests[0]["tools"]}
        self.assertEqual(offered, set(self.agent.with_user(self.salesperson)._get_available_tools().mapped("name")))
        self.assertIn("create_quotation", offered)
        self.assertIn("Azure Interior", requests[1]["messages"][-1]["content"])
        self.assertIn(order.name, requests[3]["messages"][-1]["content"])
        self.assertEqual(requests[0]["messages"][0]["role"], "system")
        # Time outside the scripted LLM server, for the closing note.
        server_ms = sum(r.get("server_ms", 0) for r in self.scenario.requests)
        _logger.info("[timing] test (a), one agent turn through /agentic_ai/chat/send (4 LLM calls, 3 tool calls): "
                     "%.0f ms end to end, %.0f ms inside the scripted LLM server, %.0f ms outside it",
                     elapsed * 1000, server_ms, elapsed * 1000 - server_ms)

    def test_user_outside_agent_access_gets_an_error_and_no_thread(self):
        allowed = new_test_user(self.env, "agent_allowed", groups="base.group_user")
        new_test_user(self.env, "agent_outsider", groups="base.group_user")
        self.agent.write({"user_ids": [(6, 0, allowed.ids)]})
        before = self.env["agentic.ai.thread"].sudo().search_count([])
        self.authenticate("agent_outsider", "agent_outsider")
        with self.assertRaises(JsonRpcException) as error:
            self.make_jsonrpc_request("/agentic_ai/thread/create", {"agent_id": self.agent.id})
        self.assertIn("AccessError", str(error.exception))
        self.assertEqual(self.env["agentic.ai.thread"].sudo().search_count([]), before)
        agents = self.make_jsonrpc_request("/agentic_ai/agents", {})
        self.assertNotIn(self.agent.id, [a["id"] for a in agents])

    def test_routes_refuse_other_users_threads(self):
        owner = new_test_user(self.env, "thread_owner", groups="base.group_user")
        new_test_user(self.env, "thread_intruder", groups="base.group_user")
        thread = self.agent.with_user(owner).start_thread(name="private")
        self.authenticate("thread_intruder", "thread_intruder")
        for route, params in (("/agentic_ai/thread/messages", {"thread_id": thread.id}),
                              ("/agentic_ai/chat/send", {"thread_id": thread.id, "message": "hello"})):
            with self.assertRaises(JsonRpcException, msg=route):
                self.make_jsonrpc_request(route, params)
        self.assertFalse(thread.message_ids)

    def test_agents_route_lists_active_agents_for_user(self):
        self.authenticate("demo", "demo")
        agents = self.make_jsonrpc_request("/agentic_ai/agents", {})
        self.assertIn("general_assistant", [a["code"] for a in agents])
        thread = self.make_jsonrpc_request("/agentic_ai/thread/create", {"agent_id": self.agent.id})
        threads = self.make_jsonrpc_request("/agentic_ai/thread/list", {})
        demo = self.env.ref("base.user_demo")
        own = self.env["agentic.ai.thread"].search([("user_id", "=", demo.id)], limit=50)
        self.assertEqual([t["id"] for t in threads], own.ids, "the user's own threads, newest first")
        self.assertEqual(threads[0]["id"], thread["id"], "the new one first")

    def test_bad_route_parameters_get_clear_errors(self):
        self.authenticate("demo", "demo")
        thread = self.make_jsonrpc_request("/agentic_ai/thread/create", {"agent_id": self.agent.id})
        cases = [
            ("/agentic_ai/thread/list", {"limit": -1}, "limit"),
            ("/agentic_ai/thread/list", {"offset": 1e30}, "offset"),
            ("/agentic_ai/thread/list", {"offset": 10**30}, "offset"),
            ("/agentic_ai/thread/messages", {"thread_id": "²"}, "thread_id"),
            ("/agentic_ai/thread/messages", {"thread_id": thread["id"], "limit": -5}, "limit"),
            ("/agentic_ai/thread/messages", {"thread_id": [1]}, "thread_id"),
            ("/agentic_ai/thread/create", {"agent_id": "abc"}, "agent_id"),
            ("/agentic_ai/thread/create", {}, "agent_id"),
            ("/agentic_ai/thread/create", {"agent_id": self.agent.id, "initial_message": {"a": 1}}, "message"),
            ("/agentic_ai/chat/send", {"thread_id": thread["id"]}, "message"),
            ("/agentic_ai/chat/send", {"thread_id": thread["id"], "message": "x" * 20001}, "too long"),
        ]
        for route, params, needle in cases:
            response = self.url_open(route, json={"jsonrpc": "2.0", "method": "call", "id": 1, "params": params})
            error = response.json().get("error", {}).get("data", {})
            self.assertEqual(error.get("name"), "odoo.exceptions.UserError", f"{route} {params}: {error}")
            self.assertIn(needle, error.get("message", ""), f"{route} {params}: {error}")
        # 0 would be "no limit" to Odoo: it reads one row.
        self.make_jsonrpc_request("/agentic_ai/thread/create", {"agent_id": self.agent.id})
        self.assertEqual(len(self.make_jsonrpc_request("/agentic_ai/thread/list", {"limit": 0})), 1)

    def test_transcript_cannot_be_written_over_rpc(self):
        self.authenticate("demo", "demo")
        thread = self.make_jsonrpc_request("/agentic_ai/thread/create", {"agent_id": self.agent.id})
        with self.assertRaises(JsonRpcException):
            self.make_jsonrpc_request("/web/dataset/call_kw", {
                "model": "agentic.ai.thread", "method": "add_user_message",
                "args": [[thread["id"]], "injected"], "kwargs": {}})
        with self.assertRaises(JsonRpcException):
            self.make_jsonrpc_request("/web/dataset/call_kw", {
                "model": "agentic.ai.execution.log", "method": "log", "args": ["error"], "kwargs": {}})
        self.assertFalse(self.env["agentic.ai.thread"].browse(thread["id"]).message_ids)
