"""How long a run waited for a database connection or for a lock, and how
much of that wait its server's core was busy running other work (issue 26
point 5).

A wait has two causes that look alike from inside: a resource that is
scarce (every connection of the gate or the pool in use by runs that wait on
something, a row lock held by another transaction), or a core that is busy
(the runs that hold the connections are working, but the one core their
Python runs on is shared by every request and run of the process, so they
give the connections back only as fast as the core gets through their
work). The first is what a bigger pool, more workers or shorter locks cure;
the second only less CPU per run or more cores.

``Waits.timing()`` tells them apart the way an off-CPU profile does: it
reads, beside the wall time of the wait, the CPU time of the operating-system
thread the waiting code runs on (``time.thread_time``). On Odoo's gevent
server every request and every run is a greenlet of one thread, so that
figure is the CPU the process's event loop spent on everyone else's work
while this one waited: ``core_busy``. What is left (``seconds - core_busy``)
is time the core was idle while the run still waited: the resource, not the
CPU. The split is meant for the gevent server, where the streams run and
the bench measures. On a multi-threaded server (Odoo's threaded server, the
cron's runs) the waiting thread's own CPU is nearly nothing, while the
threads holding the connections still share the interpreter's one lock:
nearly every second of a wait counts there as the resource's, an upper
bound. CPU spent by threads the gevent server runs beside its loop
(engine/durable/off_loop.py) is not seen as the loop's, and the waiting
greenlet's own CPU inside the block (a lock statement's) counts as busy.
"""
from __future__ import annotations

import time
from contextlib import contextmanager


class Waits:
    """The waits of one run (or one kind of wait of it): ``seconds`` of
    wall time in all, ``core_busy`` seconds of them during which this
    thread's core ran other work (at most ``seconds``), and ``count``."""

    __slots__ = ("core_busy", "count", "seconds")

    def __init__(self):
        self.seconds = self.core_busy = 0.0
        self.count = 0

    @contextmanager
    def timing(self):
        """Count the block as one wait (also when it raises)."""
        started, cpu = time.monotonic(), time.thread_time()
        try:
            yield
        finally:
            self.add(time.monotonic() - started, time.thread_time() - cpu)

    def add(self, seconds: float, core_busy: float) -> None:
        """Count one wait of ``seconds``, ``core_busy`` of them with the core
        busy (bounded by ``seconds`` and 0: the thread's clock and the wall
        clock are read a moment apart)."""
        self.seconds += seconds
        self.core_busy += min(seconds, max(0.0, core_busy))
        self.count += 1
