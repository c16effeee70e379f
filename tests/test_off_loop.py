"""Long pure-Python work kept off the gevent server's event loop
(engine/durable/off_loop.py, issue 26 point 1): on the gevent server it
runs in a thread of gevent's pool while the loop serves other greenlets;
elsewhere it runs where it is called."""
import sys
import threading
import time

import gevent
from lxml import html

import odoo
from odoo.tests import TransactionCase, tagged

from ..engine.durable import off_loop


@tagged("post_install", "-at_install")
class TestOffLoop(TransactionCase):

    def test_elsewhere_the_work_runs_here(self):
        self.assertFalse(off_loop.on_gevent_server(), "the suite's server is not the gevent process")
        self.assertEqual(off_loop.off_loop(threading.get_ident), threading.get_ident())
        interval = sys.getswitchinterval()
        self.assertFalse(off_loop.install())
        self.assertEqual(sys.getswitchinterval(), interval, "the interpreter's switch interval is left alone")

    def test_on_the_gevent_server_the_loop_runs_while_the_work_does(self):
        self.patch(odoo, "evented", True)
        ticks = []

        def tick():
            while True:
                ticks.append(time.monotonic())
                gevent.sleep(0.01)
        ticker = gevent.spawn(tick)
        self.addCleanup(ticker.kill)
        gevent.sleep(0)  # the ticker's first tick
        started = time.monotonic()
        worker = off_loop.off_loop(lambda: (time.sleep(0.3), threading.get_ident())[1])
        self.assertNotEqual(worker, threading.get_ident(), "the work ran in another thread")
        during = [t for t in ticks if t > started]
        self.assertGreater(len(during), 10, "the loop served another greenlet while the work ran")
        with self.assertRaises(ZeroDivisionError, msg="the work's error reaches the caller"):
            off_loop.off_loop(lambda: 1 / 0)

    def test_an_answer_is_rendered_off_the_loop_the_same(self):
        """The assistant row's Markdown, rendered in gevent's pool, with the
        foreign image's label translated before it left."""
        thread = self.env["agentic.ai.thread"].create({
            "agent_id": self.env.ref("agentic_ai.agent_general_assistant").id, "user_id": self.env.uid,
            "name": "off loop"})
        text = "**Done**: [S1](/odoo/sale.order/1)\n\n![c](https://attacker.invalid/c.png)"
        here = str(thread.add_assistant_message(text).content_html)
        self.patch(odoo, "evented", True)
        there = str(thread.add_assistant_message(text).content_html)
        self.assertEqual(there, here)
        tree = html.fromstring(there)
        self.assertEqual(tree.xpath("//button/text()"), ["Load image from attacker.invalid"])
